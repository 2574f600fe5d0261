"""Small, valid images for the fakes' generated outputs (docs/sites.md#outputs): real PNG
bytes made with the standard library, so a test can check that what bridge saved is the
very image the site served, byte for byte."""

from __future__ import annotations

import hashlib
import struct
import zlib

__all__ = ["png"]


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(seed: str, size: int = 16) -> bytes:
    """A ``size``×``size`` RGB PNG whose colours come from ``seed`` (deterministic)."""
    digest = hashlib.sha256(seed.encode("utf-8")).digest()
    rows = b"".join(
        b"\x00" + b"".join(digest[(x + y) % 30 : (x + y) % 30 + 3] for x in range(size))
        for y in range(size)
    )
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows))
        + _chunk(b"IEND", b"")
    )
