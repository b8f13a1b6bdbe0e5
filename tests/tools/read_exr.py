# Reads the channels of an EXR with the OpenEXR Python bindings (PyPI OpenEXR) and prints
# {"size", "channels": {name: [values row by row from the top]}} as JSON.
import json, sys
import OpenEXR

with OpenEXR.File(sys.argv[1]) as f:
    part = f.parts[0]
    out = {"size": [part.width(), part.height()], "channels": {}}
    for name, ch in part.channels.items():
        out["channels"][name] = [float(v) for v in ch.pixels.reshape(-1)]
print(json.dumps(out))
