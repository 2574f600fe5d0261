"""Native-messaging framing: split reads, several messages per read, bad ones skipped."""

from __future__ import annotations

import itertools
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.wire.native_framing import FrameDecoder, FrameError, FrameTooLarge, encode


def _raw(body: bytes) -> bytes:
    return struct.pack("<I", len(body)) + body


def test_one_message_round_trips() -> None:
    assert FrameDecoder().feed(encode({"type": "hello", "n": 1})) == [{"type": "hello", "n": 1}]


def test_length_is_little_endian_utf8_bytes() -> None:
    frame = encode({"t": "é"})
    assert frame[:4] == struct.pack("<I", len('{"t":"é"}'.encode()))


def test_split_reads_byte_by_byte() -> None:
    decoder = FrameDecoder()
    frame = encode({"a": [1, 2, 3]})
    got = [m for i in range(len(frame)) for m in decoder.feed(frame[i : i + 1])]
    assert got == [{"a": [1, 2, 3]}]
    assert decoder.pending == 0


def test_several_messages_in_one_read() -> None:
    frames = b"".join(encode({"i": i}) for i in range(5))
    assert FrameDecoder().feed(frames) == [{"i": i} for i in range(5)]


def test_zero_length_is_an_error_and_the_next_message_still_decodes() -> None:
    got = FrameDecoder().feed(_raw(b"") + encode({"ok": True}))
    assert isinstance(got[0], FrameError) and "empty" in got[0].message
    assert got[1] == {"ok": True}


def test_garbage_and_non_objects_are_errors_without_desync() -> None:
    stream = _raw(b"\xff\xfe not json") + _raw(b"[1, 2]") + _raw(b"{oops") + encode({"n": 2})
    got = FrameDecoder().feed(stream)
    assert [isinstance(m, FrameError) for m in got] == [True, True, True, False]
    assert got[-1] == {"n": 2}


def test_over_limit_is_skipped_across_reads_without_buffering() -> None:
    decoder = FrameDecoder(limit=100)
    body = b"x" * 1000
    first = decoder.feed(struct.pack("<I", len(body)) + body[:10])
    assert len(first) == 1 and isinstance(first[0], FrameError) and "limit" in first[0].message
    assert decoder.pending == 990  # to be skipped, not held
    assert decoder.feed(body[10:500]) == []
    assert decoder.feed(body[500:] + encode({"after": 1})) == [{"after": 1}]
    assert decoder.pending == 0


def test_encode_refuses_what_chrome_would_refuse() -> None:
    with pytest.raises(FrameTooLarge):
        encode({"data": "x" * (1024 * 1024)})
    assert len(encode({"data": "x" * 1000}, limit=2000)) < 2000


@given(
    messages=st.lists(
        st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=20), max_size=4),
        max_size=6,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8),
)
def test_any_split_of_any_stream_gives_the_same_messages(
    messages: list[dict[str, object]], cuts: list[int]
) -> None:
    stream = b"".join(encode(m) for m in messages)
    points = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})
    decoder = FrameDecoder()
    got = [m for a, b in itertools.pairwise(points) for m in decoder.feed(stream[a:b])]
    assert got == messages
