#!/usr/bin/env python3
"""Count the pixels of a PNG that are within TOL of an RGB colour (the
dashboard tests look for the change points' red in a screenshot). Reads
8-bit RGB or RGBA, non-interlaced, as Chromium writes them.

usage: png-colour.py FILE RRGGBB [TOL]"""
import struct, sys, zlib

path, colour = sys.argv[1], sys.argv[2]
tol = int(sys.argv[3]) if len(sys.argv) > 3 else 40
want = tuple(int(colour[i:i + 2], 16) for i in (0, 2, 4))
data = open(path, 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat = 8, b''
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
        assert depth == 8 and ctype in (2, 6) and interlace == 0, 'unsupported PNG'
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
count = 0
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        if all(abs(line[x + k] - want[k]) <= tol for k in range(3)):
            count += 1
    prev = line
print(count)
