"""Chrome's native-messaging framing, pure: a 4-byte little-endian length, then UTF-8 JSON.

Chrome writes to the host at most 64 MiB per message and accepts at most 1 MB per message
from it. The decoder never trusts a length: a message over the limit, an empty one or one
that is not a JSON object becomes an error *for that message*, its bytes are skipped (even
when they arrive over many reads, without buffering them), and the next message decodes as
usual, so a bad message never desynchronises the stream. The same framing carries the
host's link to a relay over a Unix socket (``bridge.link.registry``), with larger limits.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "FROM_BROWSER_LIMIT",
    "TO_BROWSER_LIMIT",
    "FrameDecoder",
    "FrameError",
    "FrameTooLarge",
    "encode",
]

TO_BROWSER_LIMIT: Final = 1024 * 1024  # Chrome refuses (and closes the port on) larger
FROM_BROWSER_LIMIT: Final = 64 * 1024 * 1024
_HEADER: Final = struct.Struct("<I")


class FrameTooLarge(ValueError):
    """A message to send is over the limit of its direction (the caller must split it)."""


@dataclass(frozen=True)
class FrameError:
    """One incoming message that could not be read; the stream goes on after it."""

    message: str


def encode(message: dict[str, Any], limit: int = TO_BROWSER_LIMIT) -> bytes:
    body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
    if len(body) > limit:
        raise FrameTooLarge(f"message of {len(body)} bytes over the {limit}-byte limit")
    return _HEADER.pack(len(body)) + body


class FrameDecoder:
    """Feed bytes as they arrive; get back each complete message (a dict) or FrameError."""

    def __init__(self, limit: int = FROM_BROWSER_LIMIT) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._skip = 0  # bytes still to drop of an over-limit message

    def feed(self, data: bytes) -> list[dict[str, Any] | FrameError]:
        out: list[dict[str, Any] | FrameError] = []
        view = memoryview(data)
        if self._skip:
            dropped = min(self._skip, len(view))
            self._skip -= dropped
            view = view[dropped:]
        self._buffer += view
        while True:
            if self._skip:  # an over-limit body: drop what is here, the rest as it comes
                dropped = min(self._skip, len(self._buffer))
                del self._buffer[:dropped]
                self._skip -= dropped
                if self._skip:
                    break
            if len(self._buffer) < _HEADER.size:
                break
            (length,) = _HEADER.unpack_from(self._buffer)
            if length > self.limit:
                del self._buffer[: _HEADER.size]
                self._skip = length
                out.append(
                    FrameError(f"message of {length} bytes over the {self.limit}-byte limit")
                )
                continue
            if len(self._buffer) < _HEADER.size + length:
                break
            body = bytes(self._buffer[_HEADER.size : _HEADER.size + length])
            del self._buffer[: _HEADER.size + length]
            out.append(_parse(body))
        return out

    @property
    def pending(self) -> int:
        """Bytes of an incomplete message held (0 between messages): for end-of-stream checks."""
        return len(self._buffer) + self._skip


def _parse(body: bytes) -> dict[str, Any] | FrameError:
    if not body:
        return FrameError("empty message (length 0)")
    try:
        value = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return FrameError(f"message is not UTF-8 JSON: {exc}")
    if not isinstance(value, dict):
        return FrameError("message must be a JSON object")
    return value
