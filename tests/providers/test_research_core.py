"""Deep Research's pure core (docs/sites.md#research): the widget in the conversation JSON
(SITE-FACTS C9.9), its report and sources (C9.10), and the wait's decisions."""

from __future__ import annotations

import json
from typing import Any

from bridge.providers.research_core import (
    PageLook,
    Step,
    Widget,
    chain_messages,
    decide,
    find_widget,
    newest_reply,
    report_markdown,
    sources_of,
)

CITE0 = "\ue200cite\ue202turn0view0\ue201"
CITE1 = "\ue200cite\ue202turn0view1\ue201"
REFS = [
    {
        "type": "grouped_webpages",
        "matched_text": CITE0,
        "items": [{"title": "A", "url": "https://a.example/1"}],
    },
    {
        "type": "grouped_webpages",
        "matched_text": CITE1,
        "items": [
            {"title": "B", "url": "https://b.example/2"},
            {"title": "A again", "url": "https://a.example/1"},
        ],
    },
]


def _conversation(*messages: dict[str, Any]) -> dict[str, Any]:
    """A C7.8 tree: root, then the messages in a chain."""
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None}}
    parent = "root"
    for n, message in enumerate(messages):
        mapping[f"m{n}"] = {"id": f"m{n}", "message": message, "parent": parent}
        parent = f"m{n}"
    return {"mapping": mapping, "current_node": parent}


def _text(role: str, text: str, **more: Any) -> dict[str, Any]:
    return {
        "author": {"role": role},
        "content": {"content_type": "text", "parts": [text]},
        "status": "finished_successfully",
        "recipient": "all",
        **more,
    }


def _widget(status: str, report: str | None = None) -> dict[str, Any]:
    state: dict[str, Any] = {"status": status, "research_started_at": 1700000000}
    if report is not None:
        state["report_message"] = {
            "status": "finished_successfully",
            "content": {"content_type": "text", "parts": [report]},
            "metadata": {"content_references": REFS},
        }
    return {
        "author": {"role": "tool", "name": "api_tool.call_tool"},
        "content": {"content_type": "code"},
        "metadata": {
            "chatgpt_sdk": {
                "resource_name": "Deep Research App_start",
                "attribution_id": "connector_openai_deep_research",
                "widget_state": json.dumps(state),
            }
        },
    }


def test_the_chain_is_walked_from_the_current_node() -> None:
    conv = _conversation(_text("user", "q"), _text("assistant", "a"))
    assert [m["content"]["parts"][0] for m in chain_messages(conv)] == ["q", "a"]
    assert chain_messages({"messages": [_text("user", "q")]})[0]["author"]["role"] == "user"


def test_the_newest_widget_after_this_asks_question_is_found() -> None:
    old = _widget("completed", "old report")
    conv = _conversation(
        _text("user", "first"), old, _text("user", "second"), _widget("researching")
    )
    widget = find_widget(conv, users_before=1)
    assert widget is not None and widget.status == "researching" and not widget.completed
    # An older completed widget is not this ask's (C9.9: lifecycle).
    assert find_widget(_conversation(_text("user", "first"), old, _text("user", "x")), 1) is None
    assert find_widget(conv, users_before=0) is not None


def test_the_second_carrier_is_read_too() -> None:
    state = json.dumps(
        {
            "status": "completed",
            "report_message": {"status": "finished_successfully", "content": {"parts": ["R"]}},
        }
    )
    carrier = {
        "author": {"role": "tool", "name": "api_tool.widget_state"},
        "content": {
            "content_type": "text",
            "parts": [f"The latest state of the widget is: {state}"],
        },
        "metadata": {"exclusive_key": "widget_state:Deep Research App_start"},
    }
    widget = find_widget(_conversation(_text("user", "q"), carrier), 0)
    assert widget is not None and widget.completed and widget.report == "R"


def test_the_report_gets_numbered_links_and_a_sources_list() -> None:
    widget = Widget(
        "completed",
        f"First claim.{CITE0}\n\nSecond claim.{CITE1} \ue200stray\ue201",
        "finished_successfully",
        tuple(REFS),
    )
    report = report_markdown(widget)
    assert [s.url for s in report.sources] == ["https://a.example/1", "https://b.example/2"]
    assert "First claim. [[1]](https://a.example/1)" in report.markdown
    assert "Second claim. [[2]](https://b.example/2)[[1]](https://a.example/1)" in report.markdown
    assert "\ue200" not in report.markdown and "\ue201" not in report.markdown
    assert report.markdown.endswith(
        "## Sources\n\n1. [A](https://a.example/1)\n2. [B](https://b.example/2)"
    )


def test_sources_come_from_items_sources_and_fallbacks_once_each() -> None:
    refs = [
        {"sources": [{"title": "S", "url": "https://s.example"}]},
        {"fallback_items": [{"url": "https://f.example"}]},
        {"items": [{"title": "dup", "url": "https://s.example"}, {"title": "no url"}]},
    ]
    assert [(s.title, s.url) for s in sources_of(refs)] == [
        ("S", "https://s.example"),
        ("https://f.example", "https://f.example"),
    ]


def test_a_clarifying_turn_is_the_newest_finished_visible_reply() -> None:
    conv = _conversation(
        _text("user", "q"),
        _text("assistant", "hidden", metadata={"is_visually_hidden_from_conversation": True}),
        _text("assistant", "Which period?"),
    )
    assert newest_reply(conv, 0) == "Which period?"
    assert newest_reply(_conversation(_text("user", "q")), 0) is None


def test_decisions() -> None:
    done = Widget("completed", "R", "finished_successfully")
    running = Widget("researching")
    assert decide(PageLook(widget=done), started=False) is Step.DONE
    assert decide(PageLook(widget=running, start=True), started=False) is Step.WAIT
    assert decide(PageLook(start=True, plan=True), started=False) is Step.PRESS_START
    assert decide(PageLook(plan=True, reply="Research plan"), started=False) is Step.WAIT
    assert decide(PageLook(running=True, reply="x"), started=False) is Step.WAIT
    assert decide(PageLook(reply="Which period?", generating=True), started=False) is Step.WAIT
    assert decide(PageLook(reply="Which period?"), started=False) is Step.QUESTIONS
    # After research evidence a quiet turn is no question: the report is awaited.
    assert decide(PageLook(reply="Research plan"), started=True) is Step.WAIT
    assert decide(PageLook(), started=False) is Step.WAIT
    assert decide(PageLook(done=True), started=True) is Step.DONE  # a page-side done signal
