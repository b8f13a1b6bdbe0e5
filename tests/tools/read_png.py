# Reads a greyscale PNG (or, with "r16 W H", a headerless little-endian u16 file) with Pillow and
# prints {"mode", "size", "pixels"} as JSON, pixels row by row from the top.
import json, sys
from PIL import Image

if sys.argv[1] == "r16":
    w, h = int(sys.argv[3]), int(sys.argv[4])
    img = Image.frombytes("I;16", (w, h), open(sys.argv[2], "rb").read())
else:
    img = Image.open(sys.argv[1])
    img.load()
w, h = img.size
print(json.dumps({"mode": img.mode, "size": [w, h], "pixels": [img.getpixel((x, y)) for y in range(h) for x in range(w)]}))
