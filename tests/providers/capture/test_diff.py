"""Two captures of one site compared (bridge.providers.capture.diff): what matters to bridge
is listed, what always differs is not."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from bridge.providers.capture.diff import diff_captures, render_diff

KEPT = Path(__file__).resolve().parents[2] / "captures"


def _kept(provider: str = "chatgpt") -> dict[str, Any]:
    return json.loads((KEPT / f"{provider}-fake.json").read_text(encoding="utf-8"))


def _differences(a: dict[str, Any], b: dict[str, Any]) -> dict[str, str]:
    return {
        f.subject: f.message for f in diff_captures(a, b, a_name="fake", b_name="live") if not f.ok
    }


def test_what_always_differs_is_no_difference() -> None:
    a = _kept()
    b = copy.deepcopy(a)
    b["taken_at"] = "2030-01-01T00:00:00Z"
    b["versions"]["browser"] = "Chrome/999.0"
    for page in b["phases"].values():
        page["t_ms"] += 500
        page["nodes"].append(
            {"i": len(page["nodes"]), "p": 0, "tag": "div", "attrs": {}, "text": []}
        )
    for observation in b["signals"]["observations"]:
        observation["t_ms"] += 30
    assert _differences(a, b) == {}
    assert render_diff(diff_captures(a, b)).endswith("no difference that matters to bridge")


def test_a_renamed_send_button_is_a_difference_with_both_sides() -> None:
    a = _kept()
    b = copy.deepcopy(a)
    for row in b["phases"]["typed"]["entries"]["send_button"]:
        row["count"], row["first"] = 0, None
    found = _differences(a, b)
    message = found["selectors.send_button in page typed"]
    assert "fake: button[data-testid=send-button]" in message
    assert "live: nothing matched" in message


def test_a_changed_match_shows_what_changed() -> None:
    a = _kept()
    b = copy.deepcopy(a)
    row = next(r for r in b["phases"]["done"]["entries"]["answer"] if r["count"])
    row["first"]["tag"] = "section"
    row["first"]["classes"] = ["markdown", "prose-v2"]
    message = _differences(a, b)["selectors.answer in page done"]
    assert "tag 'div' vs 'section'" in message and "only in b: ['prose-v2']" in message


def test_stream_and_signals_differences_are_listed() -> None:
    a = _kept("gemini")
    b = copy.deepcopy(a)
    b["stream"]["status"] = 203
    b["stream"]["events"].append({"frame": [["wrb.fr", None, {"$json": [None, None, "xx"]}]]})
    b["signals"]["timeline"] = [
        row for row in b["signals"]["timeline"] if row["signal"] != "response_complete"
    ]
    b["site"]["ui_language"] = "ja"
    found = _differences(a, b)
    assert found["stream status"] == "200 vs 203"
    assert "only live has events" in found["stream event"]
    assert found["signal response_complete"] == "only fake saw it"
    assert found["UI language"] == f"{a['site']['ui_language']!r} vs 'ja'"


def test_a_fake_and_another_fake_differ_where_the_sites_do() -> None:
    """The two fakes are different sites: the diff says so at every level."""
    found = _differences(_kept("chatgpt"), _kept("gemini"))
    assert any(s.startswith("selectors.") for s in found)
    assert "stream url" in found and "stream format" in found


def test_an_entry_of_the_accounts_state_is_said_not_counted() -> None:
    """History items come with the account's conversations, not with the site's markup."""
    a = _kept()
    b = copy.deepcopy(a)
    for row in a["phases"]["done"]["entries"]["conversation_item"]:
        row["count"], row["first"] = 0, None  # an account with no conversations yet
    item = {"tag": "a", "testid": "history-item-0", "ancestors": [{"tag": "nav"}]}
    b["phases"]["done"]["entries"]["conversation_item"] = [
        {"css": '[data-testid^="history-item-"]', "count": 3, "first": item}
    ]
    findings = diff_captures(a, b)
    said = [f for f in findings if f.subject == "selectors.conversation_item in page done"]
    assert len(said) == 1 and said[0].ok
