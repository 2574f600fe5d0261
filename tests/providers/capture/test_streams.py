"""The answer request's framing in a capture (bridge.providers.capture.streams): the
person's text replaced, the parsers reading the rebuilt body as they read the real one, and
a changed stream named by its event."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.fakes.wire import GeminiWire, chatgpt_body, chatgpt_events, gemini_body
from bridge.providers.capture.streams import (
    check_stream,
    event_shape,
    rebuild_body,
    sanitize_stream,
    summarize,
)
from bridge.providers.streams import StreamAnswer, chatgpt_answer, gemini_answer

QUESTION_MARKER = "QMARK-7731"
ANSWER_MARKER = "AMARK-5520"
ANSWER = [f"The {ANSWER_MARKER} ", "answer, with ", '"quotes", é, 😀 and\nnew lines.']
URL = "https://chatgpt.com/backend-api/f/conversation"
PARSERS: dict[str, Callable[[str], StreamAnswer | None]] = {
    "chatgpt-sse": chatgpt_answer,
    "gemini-frames": gemini_answer,
}


def _capture(format: str, body: str) -> dict[str, Any]:
    stream = sanitize_stream(
        format, method="POST", url=URL, status=200, content_type="text/event-stream", body=body
    )
    stream["parsed"] = summarize(PARSERS[format](body))
    return stream


BODIES = {
    "chatgpt plain": ("chatgpt-sse", chatgpt_body(ANSWER, title=f"About {QUESTION_MARKER}")),
    "chatgpt thinking": ("chatgpt-sse", chatgpt_body(ANSWER, thinking_seconds=12)),
    "chatgpt batched": ("chatgpt-sse", chatgpt_body(ANSWER * 4, batch_every=2)),
    "gemini plain": ("gemini-frames", gemini_body(ANSWER)),
    "gemini limit": (
        "gemini-frames",
        (lambda w: w.prefix() + w.error(1037) + w.trailer())(
            GeminiWire("c_1a2b3c4d5e6f7a8b", "r_0123456789abcdef", "rc_fedcba9876543210")
        ),
    ),
}


@pytest.mark.parametrize("name", list(BODIES))
def test_the_parser_reads_the_rebuilt_body_as_the_real_one(name: str) -> None:
    format, body = BODIES[name]
    stream = _capture(format, body)
    real = PARSERS[format](body)
    rebuilt = PARSERS[format](rebuild_body(stream))
    assert summarize(rebuilt) == summarize(real)
    assert check_stream(stream, PARSERS[format])[0].ok


@pytest.mark.parametrize("name", list(BODIES))
def test_no_text_of_the_conversation_is_kept(name: str) -> None:
    format, body = BODIES[name]
    text = json.dumps(_capture(format, body), ensure_ascii=False)
    for secret in (QUESTION_MARKER, ANSWER_MARKER, "quotes", "😀", "1a2b3c4d5e6f7a8b"):
        assert secret not in text


def test_the_framing_the_parser_reads_is_kept_and_ids_are_pseudonyms() -> None:
    stream = _capture("chatgpt-sse", BODIES["chatgpt plain"][1])
    events = stream["events"]
    assert events[0] == {"event": "delta_encoding", "data": "v1"}
    text = json.dumps(events)
    for kept in ('"o": "append"', '"p": "/message/content/parts/0"', '"role": "assistant"'):
        assert kept in text
    ids = {
        e["data"]["v"]["message"]["id"]
        for e in events
        if "message" in str(e.get("data"))
        and isinstance(e["data"].get("v"), dict)
        and "message" in e["data"]["v"]
    }
    assert all(i.startswith("00000000-0000-4000-8000-") for i in ids)
    assert stream["url"] == URL


@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=6))
def test_any_text_keeps_its_length_and_never_shows(chunks: list[str]) -> None:
    chunks = ["ZQMARKER ", *chunks]
    for format, body in (
        ("chatgpt-sse", chatgpt_body(chunks)),
        ("gemini-frames", gemini_body(chunks)),
    ):
        stream = _capture(format, body)
        assert check_stream(stream, PARSERS[format])[0].ok, (format, chunks)
        assert "ZQMARKER" not in json.dumps(stream["events"], ensure_ascii=False)


def test_a_new_field_in_every_event_is_still_read() -> None:
    """The site adds a field: the parser ignores what it does not know."""
    events = chatgpt_events(ANSWER)
    body = "".join(events)
    stream = _capture("chatgpt-sse", body)
    for event in stream["events"]:
        if isinstance(event.get("data"), dict):
            event["data"]["x_new"] = {"kind": "xxxx", "n": 3}
    [finding] = check_stream(stream, chatgpt_answer)
    assert finding.ok, finding.line()


def test_a_renamed_operation_is_named_by_its_event() -> None:
    """The site renames "append" in one event: the parser stops following there, and the
    check says which event and what it looks like."""
    stream = _capture("chatgpt-sse", chatgpt_body(ANSWER))
    appends = [
        i
        for i, e in enumerate(stream["events"])
        if isinstance(e.get("data"), dict) and e["data"].get("o") == "append"
    ]
    changed = appends[0]  # the one with "o": the next ones are bare {"v": …} (C7.3)
    stream["events"][changed]["data"]["o"] = "concat"
    [finding] = check_stream(stream, chatgpt_answer)
    assert not finding.ok
    assert finding.subject == f"stream event {changed}"
    assert '"concat"' in finding.message and "text_chars" in finding.message


def test_event_shapes_show_the_framing_not_the_text() -> None:
    shape = event_shape({"p": "/message/content/parts/0", "o": "append", "v": "xxxxx"})
    assert shape == '{p:"/message/content/parts/0",o:"append",v:str}'
    assert event_shape({"frame": [["wrb.fr", None, {"$json": [1, "c_0000000000000001"]}]]}) == (
        '{frame:[["wrb.fr",null,{$json:[num,str]}]]}'
    )


def test_a_bare_value_after_a_status_write_is_text_and_never_kept() -> None:
    """Attacker's view: the answer is a single token-shaped word sent as a bare {"v": …}
    right after the status was written; the parser reads it as answer text, so the capture
    must replace it like text."""
    body = "".join(chatgpt_events(["Hi"])) + (
        'data: {"p": "/message/status", "o": "replace", "v": "in_progress"}\n\n'
        'data: {"v": "MARKER-A-5520"}\n\n'
    )
    stream = _capture("chatgpt-sse", body)
    assert "MARKER-A-5520" not in json.dumps(stream, ensure_ascii=False)
    assert check_stream(stream, chatgpt_answer)[0].ok


def test_an_empty_id_stays_empty_and_ids_are_consistent() -> None:
    body = 'data: {"conversation_id": "", "type": "x"}\n\n' + "".join(chatgpt_events(["Hi"]))
    stream = _capture("chatgpt-sse", body)
    assert stream["events"][0]["data"]["conversation_id"] == ""
    text = json.dumps(stream)
    assert "6740f3a2" not in text and "a1b2c3d4" not in text
    ids = {
        e["data"]["conversation_id"]
        for e in stream["events"]
        if isinstance(e.get("data"), dict) and e["data"].get("conversation_id")
    }
    assert len(ids) == 1


def test_a_cited_pages_path_never_shows() -> None:
    """A URL keeps its scheme and host (Gemini's image URLs must stay https URLs for the
    parser), never its path: a cited page's path names what was asked about."""
    body = 'data: {"type": "citation", "url": "https://en.wikipedia.org/wiki/Atlantis_myth"}\n\n'
    text = json.dumps(_capture("chatgpt-sse", body)["events"])
    assert "Atlantis" not in text and '"https://en.wikipedia.org/xxxxxxxxxxxxxxxxxx"' in text
