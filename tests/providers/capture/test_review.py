"""What a person reads before sharing a capture (bridge.providers.capture.review)."""

from __future__ import annotations

from pathlib import Path

from bridge.providers.capture.review import review

CAPTURE = {
    "provider": "chatgpt",
    "site": {"url": "https://chatgpt.com/c/:id", "ui_language": "en-US"},
    "versions": {"bridge": "0.2.0", "browser": "Chrome/131.0.1"},
    "ask": {
        "outcome": "answered",
        "completion": "speech_button_back",
        "question_chars": 30,
        "answer_chars": 2,
    },
    "phases": {
        "typed": {
            "t_ms": 0,
            "nodes": [{}, {}, {}],
            "entries": {
                "send_button": [{"css": "b", "count": 1}],
                "stop_button": [{"css": "s", "count": 0}],
            },
        }
    },
    "missing": {"answering": "the answer ended before it could be taken"},
    "stream": {
        "method": "POST",
        "url": "https://chatgpt.com/backend-api/f/conversation",
        "status": 200,
        "content_type": "text/event-stream",
        "events": [{}, {}],
    },
    "signals": {"observations": [{}], "timeline": [{}, {}], "verdicts": ["done:x"]},
    "kept_texts": ["Send prompt", "Attach files"],
}


def test_the_review_says_each_part_and_lists_every_verbatim_string() -> None:
    text = review(CAPTURE, Path("/tmp/c/chatgpt.json"))
    assert text.splitlines()[0] == "chatgpt capture: /tmp/c/chatgpt.json"
    assert "browser Chrome/131.0.1, bridge 0.2.0" in text
    assert "question 30 characters, answer 2 (neither is in the file)" in text
    assert "page typed (0 ms after send): 3 elements" in text
    assert "1 of 2 pack entries matched: send_button" in text
    assert "page answering: not taken (the answer ended before it could be taken)" in text
    assert (
        "POST https://chatgpt.com/backend-api/f/conversation → 200" in text and "2 events" in text
    )
    assert "verdict done:x" in text
    assert "kept verbatim (2 UI labels" in text
    assert "    'Send prompt'\n    'Attach files'" in text
    assert text.rstrip().endswith("until you share it")
