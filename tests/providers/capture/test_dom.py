"""What a capture keeps of a page's elements (bridge.providers.capture.dom): structure yes,
the person's text never; and the capture rebuilt as a document that can neither run nor
load anything."""

from __future__ import annotations

import json
from typing import Any

from bridge.providers.capture.dom import entry_matches, sanitize_nodes, shape, skeleton_html

QUESTION = "What is the capital of Atlantis, my secret project?"
ANSWER = "Atlantis has no capital; it is a legend."


def _raw(i: int, p: int, tag: str, attrs: dict[str, str], *, c: int = 0, listed: int = 0) -> Any:
    return {"i": i, "p": p, "tag": tag, "attrs": attrs, "text": [5, 40, 3000], "c": c, "l": listed}


def test_text_is_kept_as_length_classes_only() -> None:
    nodes, kept = sanitize_nodes([_raw(0, -1, "body", {})], secrets=[QUESTION])
    assert nodes[0]["text"] == [1, 3, 6]
    assert kept == []


def test_a_controls_label_outside_the_conversation_is_kept_and_listed() -> None:
    raw = [_raw(0, -1, "button", {"aria-label": "Send prompt", "data-testid": "send-button"})]
    nodes, kept = sanitize_nodes(raw, secrets=[QUESTION, ANSWER])
    assert nodes[0]["attrs"] == {"aria-label": "Send prompt", "data-testid": "send-button"}
    assert kept == ["Send prompt"]


def test_labels_inside_content_lists_or_sharing_the_question_are_replaced() -> None:
    raw = [
        _raw(0, -1, "div", {"aria-label": "Atlantis notes"}, c=1),  # inside a message
        _raw(
            1, -1, "a", {"aria-label": "Trip to Rome", "title": "Trip to Rome"}, listed=1
        ),  # a list
        _raw(2, -1, "button", {"aria-label": "capital of Atlantis"}),  # shares the question
        _raw(3, -1, "button", {"title": "x" * 200}),  # too long for a label
    ]
    nodes, kept = sanitize_nodes(raw, secrets=[QUESTION, ANSWER])
    assert kept == []
    text = json.dumps(nodes)
    for secret in ("Atlantis", "Rome"):
        assert secret not in text
    assert nodes[1]["attrs"]["aria-label"] == "x" * len("Trip to Rome")


def test_other_values_keep_their_shape_not_their_content() -> None:
    raw = [
        _raw(
            0,
            -1,
            "a",
            {
                "href": "https://chatgpt.com/c/6740d3f1-1234-4a5b-9c8d-0123456789ab?q=secret",
                "data-message-id": "6740d3f1-1234-4a5b-9c8d-0123456789ab",
                "onclick": "steal()",
                "value": "typed text",
                "style": "color: red; view-transition-name: var(--vt-composer-speech-button)",
                "class": "markdown prose wcDTda_fallback 9f8e7d6c5b4a3f2e1d0c",
                "data-note": "a long sentence about someone",
                "contenteditable": "true",
            },
        )
    ]
    nodes, _ = sanitize_nodes(raw, secrets=[QUESTION])
    attrs = nodes[0]["attrs"]
    assert attrs["href"] == "https://chatgpt.com/c/:id?q"
    assert attrs["data-message-id"] == ":id"
    assert "onclick" not in attrs and "value" not in attrs
    assert attrs["style"] == "--vt-composer-speech-button"
    assert attrs["class"] == "markdown prose wcDTda_fallback"
    assert attrs["data-note"] == "x" * len("a long sentence about someone")
    assert attrs["contenteditable"] == "true"


def test_inside_content_only_structural_values_are_kept() -> None:
    raw = [_raw(0, -1, "div", {"data-title": "Paris", "data-testid": "turn-1", "role": "x"}, c=1)]
    nodes, _ = sanitize_nodes(raw, secrets=[])
    assert nodes[0]["attrs"] == {"data-title": "xxxxx", "data-testid": "turn-1", "role": "x"}


def _page() -> list[dict[str, Any]]:
    raw = [
        _raw(0, -1, "body", {}),
        _raw(1, 0, "form", {"data-type": "unified-composer"}),
        _raw(2, 1, "div", {"id": "composer-background"}),
        _raw(3, 2, "button", {"data-testid": "send-button", "aria-label": "Send prompt"}),
    ]
    return sanitize_nodes(raw, secrets=[])[0]


def test_an_entrys_match_shows_the_element_and_its_ancestors() -> None:
    nodes = _page()
    assert shape(nodes, 3) == {
        "tag": "button",
        "role": None,
        "testid": "send-button",
        "aria_label": "Send prompt",
        "classes": [],
        "ancestors": [
            {
                "tag": "div",
                "role": None,
                "testid": None,
                "id": "composer-background",
                "classes": [],
            },
            {"tag": "form", "role": None, "testid": None, "id": None, "classes": []},
            {"tag": "body", "role": None, "testid": None, "id": None, "classes": []},
        ],
    }
    rows = entry_matches({"send_button": ["a", "b", "c("]}, {"a": [], "b": [3], "c(": "bad"}, nodes)
    assert [(r["css"], r["count"]) for r in rows["send_button"]] == [("a", 0), ("b", 1), ("c(", 0)]
    assert rows["send_button"][1]["first"]["testid"] == "send-button"
    assert rows["send_button"][2]["error"] == "bad"


def test_the_rebuilt_document_can_neither_run_nor_load_anything() -> None:
    """A capture file is input: one written by an attacker must not run in the checker's
    page or make it fetch anything."""
    hostile = [
        {"i": 0, "p": -1, "tag": "body", "attrs": {"onload": "alert(1)"}, "text": []},
        {"i": 1, "p": 0, "tag": "script", "attrs": {}, "text": [3]},
        {"i": 2, "p": 0, "tag": "img", "attrs": {"src": "https://evil.example/x.png"}, "text": []},
        {"i": 3, "p": 0, "tag": "iframe", "attrs": {"src": "https://evil.example/"}, "text": []},
        {"i": 4, "p": 0, "tag": 'div"><script>alert(1)</script', "attrs": {}, "text": []},
        {
            "i": 5,
            "p": 0,
            "tag": "div",
            "attrs": {"title": '"><script>alert(2)</script>'},
            "text": [],
        },
    ]
    html = skeleton_html(hostile)
    assert "default-src 'none'" in html
    assert "onload" not in html and "<script" not in html and "<iframe" not in html
    assert 'title="&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;"' in html
    assert '<img src="https://evil.example/x.png" data-bridge-i="2">' in html  # CSP blocks it


def test_a_label_naming_the_person_is_never_kept() -> None:
    """Google's account button: "Google Account: <name> (<address>)" is no UI text."""
    raw = [
        _raw(0, -1, "a", {"aria-label": "Google Account: Ada Lovelace (ada@example.com)"}),
        _raw(1, -1, "button", {"title": "Call +44 20 7946 0958"}),
    ]
    nodes, kept = sanitize_nodes(raw, secrets=[])
    assert kept == []
    assert "Lovelace" not in json.dumps(nodes) and "7946" not in json.dumps(nodes)


def test_a_links_path_in_the_conversation_or_a_list_keeps_only_its_route() -> None:
    """A cited page's path names what was asked about; a file's link names the file."""
    raw = [
        _raw(0, -1, "a", {"href": "https://en.wikipedia.org/wiki/Atlantis_myth?x=1"}, c=1),
        _raw(1, -1, "a", {"href": "sandbox:/mnt/data/tax-return-2025.pdf"}, c=1),
        _raw(2, -1, "a", {"href": "/g/g-p-abc-my-secret-project/c/6740"}, listed=1),
        _raw(3, -1, "a", {"href": "https://chatgpt.com/backend-api/files"}),  # site chrome
    ]
    nodes, _ = sanitize_nodes(raw, secrets=[])
    assert [n["attrs"]["href"] for n in nodes] == [
        "https://en.wikipedia.org/wiki/:x",
        "sandbox:/mnt/:x/:x",
        "/g/:x/:x/:x",
        "https://chatgpt.com/backend-api/files",
    ]


def test_a_label_is_kept_only_on_a_control() -> None:
    """A heading's title may be the conversation's; a button's label is the site's."""
    raw = [
        _raw(0, -1, "h1", {"title": "Trip planning"}),
        _raw(1, -1, "div", {"role": "menuitem", "aria-label": "Rename"}),
        _raw(2, -1, "gem-icon-button", {"aria-label": "Tools"}),
    ]
    nodes, kept = sanitize_nodes(raw, secrets=[])
    assert kept == ["Rename", "Tools"]
    assert nodes[0]["attrs"]["title"] == "x" * len("Trip planning")
