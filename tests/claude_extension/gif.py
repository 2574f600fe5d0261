"""A small pure-Python animated GIF writer for the fake Claude extension's ``gif_creator``.

``decode_png`` reads the PNGs Chromium's ``Page.captureScreenshot`` produces: 8-bit RGB or
RGBA, non-interlaced (zlib, then the five row filters); anything else is refused with a
``ValueError`` naming what. Alpha is dropped (screenshots are opaque).

``encode_gif`` writes a GIF89a that loops forever (NETSCAPE2.0 extension), one graphic
control extension per frame (its delay in hundredths of a second). Frames are first
**downscaled by an integer factor** (nearest pixel: every f-th pixel of every f-th row) so
the longer side of the largest frame is at most ``max_side`` (400) px, then mapped to a fixed
palette of 6x7x6 levels of red, green and blue (252 colours, nearest level, no dithering;
the last four entries are unused black), then LZW-compressed (8-bit minimum code size,
variable code width up to 12 bits, a clear code when the table reaches 4095). Simple and
deterministic; the palette, the scaling and the delay are the fake's own choices.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

__all__ = ["PALETTE", "Image", "decode_png", "encode_gif", "pngs_to_gif"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_SIDE = 400
DELAY_CS = 50

_R_LEVELS, _G_LEVELS, _B_LEVELS = 6, 7, 6
#: byte -> its palette contribution (level times the channel's stride in the palette).
_R_TABLE = bytes(((v * (_R_LEVELS - 1) + 127) // 255) * _G_LEVELS * _B_LEVELS for v in range(256))
_G_TABLE = bytes(((v * (_G_LEVELS - 1) + 127) // 255) * _B_LEVELS for v in range(256))
_B_TABLE = bytes((v * (_B_LEVELS - 1) + 127) // 255 for v in range(256))


def _palette() -> bytes:
    out = bytearray()
    for r in range(_R_LEVELS):
        for g in range(_G_LEVELS):
            for b in range(_B_LEVELS):
                out += bytes(
                    round(level * 255 / (levels - 1))
                    for level, levels in ((r, _R_LEVELS), (g, _G_LEVELS), (b, _B_LEVELS))
                )
    return bytes(out.ljust(256 * 3, b"\0"))


#: The GIF's global colour table: 256 RGB triples.
PALETTE = _palette()


@dataclass(frozen=True)
class Image:
    """``width`` x ``height`` pixels, row by row, 3 bytes (R, G, B) each."""

    width: int
    height: int
    rgb: bytes


# -- PNG ---------------------------------------------------------------------------------


def decode_png(data: bytes) -> Image:
    """An 8-bit RGB or RGBA non-interlaced PNG's pixels (alpha dropped)."""
    if not data.startswith(PNG_SIGNATURE):
        raise ValueError("not a PNG (bad signature)")
    pos, header, idat = len(PNG_SIGNATURE), None, bytearray()
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if len(body) != length or pos + 12 + length > len(data):
            raise ValueError(f"truncated PNG chunk {kind!r}")
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        if zlib.crc32(kind + body) != crc:
            raise ValueError(f"PNG chunk {kind!r} fails its CRC")
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("PNG without IHDR")
    width, height, depth, colour, _compression, _filter, interlace = header
    if depth != 8 or colour not in (2, 6):
        raise ValueError(
            f"unsupported PNG: bit depth {depth}, colour type {colour} (only 8-bit RGB or RGBA)"
        )
    if interlace != 0:
        raise ValueError("unsupported PNG: interlaced")
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(bytes(idat))
    if len(raw) != height * (stride + 1):
        raise ValueError(f"PNG data is {len(raw)} bytes, expected {height * (stride + 1)}")
    low = int.from_bytes(b"\x7f" * stride, "little")
    high = int.from_bytes(b"\x80" * stride, "little")
    pixels = bytearray()
    prev = bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], raw[start + 1 : start + 1 + stride]
        if kind == 0:
            cur = line
        elif kind == 1:
            cur = _unsub(line, bpp)
        elif kind == 2:
            cur = _add(line, prev, low, high)
        elif kind == 3:
            cur = _unaverage(line, prev, bpp)
        elif kind == 4:
            cur = _unpaeth(line, prev, bpp)
        else:
            raise ValueError(f"PNG row {y} has unknown filter type {kind}")
        pixels += cur
        prev = cur
    if bpp == 4:  # drop alpha
        rgb = bytearray(width * height * 3)
        rgb[0::3], rgb[1::3], rgb[2::3] = pixels[0::4], pixels[1::4], pixels[2::4]
        pixels = rgb
    return Image(width, height, bytes(pixels))


def _add(a: bytes, b: bytes, low: int, high: int) -> bytes:
    """Bytewise ``(a + b) % 256`` over whole rows at once (no carry between bytes)."""
    x, y = int.from_bytes(a, "little"), int.from_bytes(b, "little")
    return (((x & low) + (y & low)) ^ ((x ^ y) & high)).to_bytes(len(a), "little")


def _unsub(line: bytes, bpp: int) -> bytes:
    out = bytearray(len(line))
    for c in range(bpp):
        out[c::bpp] = bytes(map((255).__and__, accumulate(line[c::bpp])))
    return bytes(out)


def _unaverage(line: bytes, prev: bytes, bpp: int) -> bytes:
    out = bytearray(line)
    for i in range(bpp):
        out[i] = (line[i] + (prev[i] >> 1)) & 255
    for i in range(bpp, len(line)):
        out[i] = (line[i] + ((out[i - bpp] + prev[i]) >> 1)) & 255
    return bytes(out)


def _unpaeth(line: bytes, prev: bytes, bpp: int) -> bytes:
    out = bytearray(line)
    for i in range(bpp):  # a = c = 0: the predictor is b
        out[i] = (line[i] + prev[i]) & 255
    for i in range(bpp, len(line)):
        a, b, c = out[i - bpp], prev[i], prev[i - bpp]
        pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
        if pa <= pb and pa <= pc:
            out[i] = (line[i] + a) & 255
        elif pb <= pc:
            out[i] = (line[i] + b) & 255
        else:
            out[i] = (line[i] + c) & 255
    return bytes(out)


# -- GIF ---------------------------------------------------------------------------------


def _indexed(image: Image, factor: int) -> tuple[int, int, bytes]:
    """The image downscaled by ``factor`` as palette indices: (width, height, indices)."""
    width, height = -(-image.width // factor), -(-image.height // factor)
    row_bytes, step = image.width * 3, 3 * factor
    reds, greens, blues = bytearray(), bytearray(), bytearray()
    for y in range(0, image.height, factor):
        row = image.rgb[y * row_bytes : (y + 1) * row_bytes]
        reds += row[0::step]
        greens += row[1::step]
        blues += row[2::step]
    n = width * height
    total = sum(
        int.from_bytes(channel.translate(table), "little")  # indices < 256: no carries
        for channel, table in ((reds, _R_TABLE), (greens, _G_TABLE), (blues, _B_TABLE))
    )
    return width, height, total.to_bytes(n, "little")


def _lzw(indices: bytes, min_code_size: int = 8) -> bytes:
    """GIF LZW: LSB-first codes, growing from ``min_code_size + 1`` bits to 12."""
    clear, end = 1 << min_code_size, (1 << min_code_size) + 1
    out = bytearray()
    bits = nbits = 0

    def emit(code: int, size: int) -> None:
        nonlocal bits, nbits
        bits |= code << nbits
        nbits += size
        while nbits >= 8:
            out.append(bits & 255)
            bits >>= 8
            nbits -= 8

    size, next_code = min_code_size + 1, end + 1
    table: dict[int, int] = {}
    emit(clear, size)
    if indices:
        prefix = indices[0]
        for pixel in indices[1:]:
            key = prefix << 8 | pixel
            code = table.get(key)
            if code is not None:
                prefix = code
                continue
            emit(prefix, size)
            if next_code < 4096:
                table[key] = next_code
                next_code += 1
                if next_code > 1 << size and size < 12:
                    size += 1
            else:  # the table is full: start afresh
                emit(clear, size)
                table.clear()
                size, next_code = min_code_size + 1, end + 1
            prefix = pixel
        emit(prefix, size)
    emit(end, size)
    if nbits:
        out.append(bits & 255)
    return bytes(out)


def _blocks(data: bytes) -> bytes:
    """Data sub-blocks of at most 255 bytes, then the block terminator."""
    out = bytearray()
    for i in range(0, len(data), 255):
        chunk = data[i : i + 255]
        out.append(len(chunk))
        out += chunk
    return bytes(out + b"\0")


def encode_gif(
    frames: Sequence[Image], delay_cs: int = DELAY_CS, max_side: int = MAX_SIDE
) -> bytes:
    """An endlessly looping GIF89a of ``frames`` (see the module doc for the scaling)."""
    if not frames:
        raise ValueError("no frames")
    longest = max(max(f.width, f.height) for f in frames)
    factor = max(1, -(-longest // max_side))
    indexed = [_indexed(f, factor) for f in frames]
    width = max(w for w, _, _ in indexed)
    height = max(h for _, h, _ in indexed)
    out = bytearray(b"GIF89a")
    out += struct.pack("<HHBBB", width, height, 0xF7, 0, 0)  # global table of 256 colours
    out += PALETTE
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", 0) + b"\0"  # loop forever
    for w, h, indices in indexed:
        out += b"\x21\xf9\x04" + struct.pack("<BHB", 0x04, delay_cs, 0) + b"\0"  # keep, delay
        out += b"\x2c" + struct.pack("<HHHHB", 0, 0, w, h, 0)
        out += b"\x08" + _blocks(_lzw(indices, 8))
    out += b"\x3b"
    return bytes(out)


def pngs_to_gif(pngs: Sequence[bytes], delay_cs: int = DELAY_CS, max_side: int = MAX_SIDE) -> bytes:
    """``encode_gif`` of the decoded PNGs."""
    return encode_gif([decode_png(p) for p in pngs], delay_cs, max_side)
