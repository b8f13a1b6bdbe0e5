#!/usr/bin/env python3
"""Hill-shaded crops of BHEF maps of one world, side by side, each at its own full resolution
(the README's build comparison, issue #34).

usage: hillshade_crops.py OUT.png EXTENT_M X0_M Y0_M SIDE_M FILE=LABEL [FILE=LABEL ...]

Every map covers the same world of EXTENT_M metres across, so a file of n nodes has cells of
EXTENT_M / (n - 1) metres. The square of SIDE_M metres from (X0_M, Y0_M) is cut from each, shaded
from the north-west (azimuth 315°, altitude 40°) with slopes in metres per metre, and scaled to
512 pixels by nearest neighbour (a coarse map's cells show as blocks, never smoothed).
Needs numpy and Pillow.
"""
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFont


def load_bhef(path):
    raw = open(path, "rb").read()
    w, h = np.frombuffer(raw[:8], "<i4")
    rec = np.frombuffer(raw[8:], dtype=[("i", "<i4"), ("j", "<i4"), ("h", "<f4")])
    out = np.zeros((h, w), np.float32)
    out[rec["j"], rec["i"]] = rec["h"]
    return out


def shade(c, cell):
    gy, gx = np.gradient(c.astype(np.float64), cell)
    az, alt = np.radians(315.0), np.radians(40.0)
    slope = np.arctan(np.hypot(gx, gy))
    aspect = np.arctan2(-gx, gy)
    s = np.sin(alt) * np.cos(slope) + np.cos(alt) * np.sin(slope) * np.cos(az - aspect)
    return (np.clip(s, 0.0, 1.0) * 255).astype(np.uint8)


def main():
    out, extent = sys.argv[1], float(sys.argv[2])
    x0, y0, side = map(float, sys.argv[3:6])
    size, label_h = 512, 22
    try:
        font = ImageFont.truetype("DejaVuSans.ttf", 15)
    except OSError:
        font = ImageFont.load_default()
    tiles = []
    for spec in sys.argv[6:]:
        path, _, label = spec.partition("=")
        h = load_bhef(path)
        n = h.shape[1]
        cell = extent / (n - 1)
        i0, j0, k = round(x0 / cell), round(y0 / cell), round(side / cell)
        img = Image.fromarray(shade(h[j0 : j0 + k + 1, i0 : i0 + k + 1], cell)).resize((size, size), Image.NEAREST)
        tile = Image.new("L", (size, size + label_h), 0)
        tile.paste(img, (0, label_h))
        ImageDraw.Draw(tile).text((6, 3), f"{label or path} · {n}² · {cell:g} m cells", fill=255, font=font)
        tiles.append(tile)
    gap = 6
    sheet = Image.new("L", (len(tiles) * size + (len(tiles) - 1) * gap, size + label_h), 0)
    for k, t in enumerate(tiles):
        sheet.paste(t, (k * (size + gap), 0))
    sheet.save(out)


if __name__ == "__main__":
    main()
