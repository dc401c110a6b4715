"""A tiny PNG decoder (8-bit RGB or RGBA, not interlaced): enough to read a browser screenshot."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {2: 3, 6: 4}
"""PNG colour type -> samples per pixel (2: RGB, 6: RGBA)."""


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    channels: int
    rows: list[bytes]
    """Unfiltered scanlines, `width * channels` bytes each."""

    def rgb(self) -> np.ndarray:
        """The pixels as a (height, width, 3) array of uint8, alpha dropped."""
        flat = np.frombuffer(b"".join(self.rows), dtype=np.uint8)
        return flat.reshape(self.height, self.width, self.channels)[:, :, :3]


def decode(data: bytes) -> Image:
    """Decode a PNG; raises ValueError for anything but 8-bit RGB(A) without interlacing."""
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG")
    pos = len(SIGNATURE)
    idat = bytearray()
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color not in CHANNELS or interlace:
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {color}")
            channels = CHANNELS[color]
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        _unfilter(kind, line, prev, channels)
        rows.append(bytes(line))
        prev = line
    return Image(width, height, channels, rows)


def _unfilter(kind: int, line: bytearray, prev: bytearray, bpp: int) -> None:
    if kind == 0:
        return
    if kind == 2:
        line[:] = ((np.frombuffer(line, np.uint8) + np.frombuffer(prev, np.uint8)) & 0xFF).tobytes()
        return
    if kind == 1:
        pixels = np.frombuffer(line, np.uint8).reshape(-1, bpp).astype(np.int64)
        line[:] = (np.cumsum(pixels, axis=0) & 0xFF).astype(np.uint8).tobytes()
        return
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:
            up_left = prev[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + _paeth(left, prev[i], up_left)) & 0xFF
        else:
            raise ValueError(f"bad PNG filter {kind}")


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c
