"""The fake's GIF writer (tests/claude_extension/gif.py): PNG decoding of every row filter,
GIF round trips through a minimal decoder written here, and Chromium's own screenshots
(whose GIF Chromium itself then decodes, as an independent reader)."""

from __future__ import annotations

import base64
import json
import random
import struct
import zlib
from dataclasses import dataclass

import pytest

from bridge.cdp.direct import DirectCdp
from tests.claude_extension.gif import Image, decode_png, encode_gif, pngs_to_gif

# -- a PNG writer with every filter type (the test's own) --------------------------------


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def _filtered(kind: int, row: bytes, prev: bytes, bpp: int) -> bytes:
    out = bytearray()
    for i, x in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        predictor = [0, a, b, (a + b) // 2, _paeth(a, b, c)][kind]
        out.append((x - predictor) & 255)
    return bytes(out)


def make_png(
    width: int, height: int, pixels: bytes, channels: int, filters: list[int], **ihdr: int
) -> bytes:
    """A PNG of ``pixels`` (``channels`` bytes each), row y filtered with ``filters[y % n]``."""
    header = {"depth": 8, "colour": 2 if channels == 3 else 6, "interlace": 0} | ihdr
    stride = width * channels
    raw, prev = bytearray(), bytes(stride)
    for y in range(height):
        row = pixels[y * stride : (y + 1) * stride]
        kind = filters[y % len(filters)]
        raw += bytes([kind]) + _filtered(kind, row, prev, channels)
        prev = row
    ihdr_body = struct.pack(
        ">IIBBBBB", width, height, header["depth"], header["colour"], 0, 0, header["interlace"]
    )
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", ihdr_body)
        + _chunk(b"IDAT", zlib.compress(bytes(raw))[:20])
        + _chunk(b"IDAT", zlib.compress(bytes(raw))[20:])  # split across two IDATs
        + _chunk(b"IEND", b"")
    )


# -- a minimal GIF decoder (the test's own) ----------------------------------------------


@dataclass
class Decoded:
    width: int
    height: int
    palette: list[tuple[int, int, int]]
    frames: list[tuple[int, int, bytes]]  # (width, height, palette indices)
    delays: list[int]
    loops: int | None

    def colour(self, frame: int, x: int, y: int) -> tuple[int, int, int]:
        width, _, indices = self.frames[frame]
        return self.palette[indices[y * width + x]]


def _lzw_decode(data: bytes, min_size: int) -> bytes:
    clear, end = 1 << min_size, (1 << min_size) + 1
    pos = 0  # in bits

    def read(size: int) -> int:
        nonlocal pos
        value = int.from_bytes(data[pos // 8 : pos // 8 + 3].ljust(3, b"\0"), "little")
        value = (value >> (pos % 8)) & ((1 << size) - 1)
        pos += size
        return value

    out = bytearray()
    table: list[bytes] = []
    size, prev = min_size + 1, None
    while True:
        code = read(size)
        if code == clear:
            table = [bytes([i]) for i in range(clear)] + [b"", b""]
            size, prev = min_size + 1, None
            continue
        if code == end:
            return bytes(out)
        if prev is None:
            entry = table[code]
        else:
            entry = table[code] if code < len(table) else prev + prev[:1]
            if len(table) < 4096:
                table.append(prev + entry[:1])
        out += entry
        prev = entry
        if len(table) == 1 << size and size < 12:
            size += 1


def decode_gif(data: bytes) -> Decoded:
    assert data[:6] == b"GIF89a"
    width, height, packed, _, _ = struct.unpack("<HHBBB", data[6:13])
    assert packed & 0x80, "a global colour table"
    count = 2 << (packed & 7)
    table = data[13 : 13 + 3 * count]
    palette = [(table[i], table[i + 1], table[i + 2]) for i in range(0, len(table), 3)]
    pos, frames, delays, loops = 13 + 3 * count, [], [], None

    def blocks() -> bytes:
        nonlocal pos
        out = bytearray()
        while data[pos]:
            out += data[pos + 1 : pos + 1 + data[pos]]
            pos += 1 + data[pos]
        pos += 1
        return bytes(out)

    while data[pos] != 0x3B:
        if data[pos] == 0x21:
            label = data[pos + 1]
            pos += 2
            body = blocks()
            if label == 0xF9:
                delays.append(struct.unpack("<H", body[1:3])[0])
            elif label == 0xFF and body.startswith(b"NETSCAPE2.0"):
                loops = struct.unpack("<H", body[12:14])[0]
        elif data[pos] == 0x2C:
            _, _, w, h, flags = struct.unpack("<HHHHB", data[pos + 1 : pos + 10])
            assert flags == 0, "no local table, not interlaced"
            min_size = data[pos + 10]
            pos += 11
            indices = _lzw_decode(blocks(), min_size)
            assert len(indices) == w * h
            frames.append((w, h, indices))
        else:
            raise AssertionError(f"unexpected block {data[pos]:#x} at {pos}")
    assert pos == len(data) - 1, "the trailer ends the file"
    return Decoded(width, height, palette, frames, delays, loops)


def nearest(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """The palette colour the writer should pick: each channel's nearest level."""
    levels = [6, 7, 6]
    out = []
    for value, n in zip(rgb, levels, strict=True):
        candidates = [round(k * 255 / (n - 1)) for k in range(n)]
        out.append(min(candidates, key=lambda c: abs(c - value)))
    return out[0], out[1], out[2]


# -- the tests ---------------------------------------------------------------------------


@pytest.mark.parametrize("channels", [3, 4])
def test_decode_png_every_filter_type(channels: int) -> None:
    rng = random.Random(channels)
    width, height = 7, 10
    pixels = bytes(rng.randrange(256) for _ in range(width * height * channels))
    png = make_png(width, height, pixels, channels, [0, 1, 2, 3, 4])
    image = decode_png(png)
    assert (image.width, image.height) == (width, height)
    if channels == 3:
        assert image.rgb == pixels
    else:
        assert image.rgb == bytes(b for i, b in enumerate(pixels) if i % 4 != 3)


@pytest.mark.parametrize(
    ("ihdr", "message"),
    [
        ({"depth": 16}, "bit depth 16, colour type 2"),
        ({"colour": 0}, "bit depth 8, colour type 0"),
        ({"interlace": 1}, "interlaced"),
    ],
)
def test_decode_png_refuses_other_kinds(ihdr: dict[str, int], message: str) -> None:
    png = make_png(2, 2, bytes(12), 3, [0], **ihdr)
    with pytest.raises(ValueError, match=f"unsupported PNG: {message}"):
        decode_png(png)
    with pytest.raises(ValueError, match="not a PNG"):
        decode_png(b"GIF89a")


def test_gif_round_trip_frames_size_delays_and_colours() -> None:
    red, blue, odd = (255, 0, 0), (0, 0, 255), (51, 85, 204)  # all three in the palette
    width, height = 10, 6
    first = Image(width, height, bytes(red) * (width * height))
    second_rgb = bytearray(bytes(blue) * (width * height))
    second_rgb[3 * (2 * width + 7) : 3 * (2 * width + 8)] = bytes(odd)  # (7, 2)
    second_rgb[0:3] = bytes((200, 100, 17))  # not in it: the nearest levels
    data = encode_gif([first, Image(width, height, bytes(second_rgb))], delay_cs=30)
    gif = decode_gif(data)
    assert (gif.width, gif.height, len(gif.frames)) == (width, height, 2)
    assert gif.delays == [30, 30] and gif.loops == 0
    assert gif.colour(0, 0, 0) == gif.colour(0, 9, 5) == red
    assert gif.colour(1, 7, 2) == odd and gif.colour(1, 8, 2) == blue
    assert gif.colour(1, 0, 0) == nearest((200, 100, 17)) == (204, 85, 0)


def test_gif_downscales_and_survives_a_full_table() -> None:
    rng = random.Random(7)
    width, height = 900, 300  # factor 3: 300 x 100, 30 000 random pixels: many clear codes
    rgb = bytes(rng.randrange(256) for _ in range(width * height * 3))
    gif = decode_gif(encode_gif([Image(width, height, rgb)]))
    assert (gif.width, gif.height) == (300, 100)
    for x, y in ((0, 0), (299, 99), (123, 45), (7, 88)):
        at = 3 * (3 * y * width + 3 * x)
        assert gif.colour(0, x, y) == nearest((rgb[at], rgb[at + 1], rgb[at + 2]))
    small = decode_gif(encode_gif([Image(1, 1, b"\0\0\0")], max_side=400))
    assert (small.width, small.height, small.colour(0, 0, 0)) == (1, 1, (0, 0, 0))
    with pytest.raises(ValueError, match="no frames"):
        encode_gif([])


BLOCKS = (
    "<body style='margin:0'>"
    "<div style='position:fixed;left:0;top:0;width:200px;height:200px;background:#ff0000'></div>"
    "<div style='position:fixed;left:200px;top:0;width:200px;height:200px;"
    "background:#0000ff'></div></body>"
)

DECODE_IN_PAGE = """
new Promise((resolve, reject) => {
  const img = new window.Image();
  img.onload = () => {
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth;
    canvas.height = img.naturalHeight;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const at = (x, y) => Array.from(ctx.getImageData(x, y, 1, 1).data.slice(0, 3));
    resolve({w: img.naturalWidth, h: img.naturalHeight, points: __POINTS__.map(([x, y]) => at(x, y))});
  };
  img.onerror = () => reject(new Error('Chromium cannot decode the GIF'));
  img.src = 'data:image/gif;base64,' + __GIF__;
})
"""


async def decoded_by_chromium(
    cdp: DirectCdp, session: str, data: bytes, points: list[tuple[int, int]]
) -> list[list[int]]:
    """The first frame's colours at ``points`` as Chromium decodes the GIF (its size checked)."""
    script = DECODE_IN_PAGE.replace("__POINTS__", json.dumps(points))
    script = script.replace("__GIF__", json.dumps(base64.b64encode(data).decode()))
    params = {"expression": script, "awaitPromise": True, "returnByValue": True}
    result = await cdp.call("Runtime.evaluate", params, session)
    assert "exceptionDetails" not in result, result
    seen = result["result"]["value"]
    gif = decode_gif(data)
    assert (seen["w"], seen["h"]) == (gif.width, gif.height)
    return list(seen["points"])


async def test_chromium_screenshots_encode_and_chromium_decodes_the_gif(
    direct_cdp: DirectCdp,
) -> None:
    created = await direct_cdp.call(
        "Target.createTarget", {"url": "about:blank", "background": True, "newWindow": True}
    )
    target = created["targetId"]
    try:
        session = await direct_cdp.attach(target)
        html = f"document.documentElement.innerHTML = {BLOCKS!r}"
        await direct_cdp.call("Runtime.evaluate", {"expression": html}, session)
        shots = []
        for _ in range(2):
            shot = await direct_cdp.call("Page.captureScreenshot", {"format": "png"}, session)
            shots.append(base64.b64decode(shot["data"]))
        image = decode_png(shots[0])
        assert image.width >= 400 and image.height >= 200
        at = 3 * (50 * image.width + 50)
        assert image.rgb[at : at + 3] == b"\xff\x00\x00"
        data = pngs_to_gif(shots)
        gif = decode_gif(data)
        assert len(gif.frames) == 2
        factor = -(-max(image.width, image.height) // 400)
        assert gif.width == -(-image.width // factor)
        points = [(10, 10), (300 // factor, 100 // factor), (gif.width - 1, gif.height - 1)]
        ours = [list(gif.colour(0, x, y)) for x, y in points]
        assert ours[:2] == [[255, 0, 0], [0, 0, 255]]
        assert await decoded_by_chromium(direct_cdp, session, data, points) == ours
        rng = random.Random(3)  # and a GIF whose table fills up: clear codes
        noise = Image(120, 90, bytes(rng.randrange(256) for _ in range(120 * 90 * 3)))
        gif = decode_gif(encode_gif([noise]))
        points = [(x, y) for x in range(0, 120, 7) for y in range(0, 90, 11)]
        ours = [list(gif.colour(0, x, y)) for x, y in points]
        assert await decoded_by_chromium(direct_cdp, session, encode_gif([noise]), points) == ours
    finally:
        await direct_cdp.call("Target.closeTarget", {"targetId": target})
