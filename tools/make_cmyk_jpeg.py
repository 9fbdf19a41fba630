#!/usr/bin/python3
"""Writes src/feed/testdata/cmyk_adobe_32x24.jpg: a CMYK JPEG as print tools write them.

Made with Debian's python3-pil, which (like Photoshop) stores the inks inverted and marks the file with
Adobe's APP14 segment. Four 16x12 quadrants, top-left to bottom-right: red, green, blue and 50% grey, each
given as inks so the test knows the RGB it must decode to:
    red = (C 0, M 255, Y 255, K 0), green = (255, 0, 255, 0), blue = (255, 255, 0, 0),
    grey = (0, 0, 0, 128) -> RGB (127, 127, 127).
Usage: tools/make_cmyk_jpeg.py [OUT]
"""
import sys

from PIL import Image

QUADRANTS = [(0, 255, 255, 0), (255, 0, 255, 0), (255, 255, 0, 0), (0, 0, 0, 128)]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "src/feed/testdata/cmyk_adobe_32x24.jpg"
    img = Image.new("CMYK", (32, 24))
    for y in range(24):
        for x in range(32):
            img.putpixel((x, y), QUADRANTS[(y // 12) * 2 + x // 16])
    img.save(out, quality=95, subsampling=0)


if __name__ == "__main__":
    main()
