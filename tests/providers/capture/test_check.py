"""The label check of a capture (bridge.providers.capture.check.check_label): the label the
page shows on a control against the pack's label texts, its fallback."""

from __future__ import annotations

from typing import Any

from bridge.providers.capture.check import check_label, label_texts
from bridge.providers.specs import provider_spec


def _nodes(label: str) -> list[dict[str, Any]]:
    return [
        {"i": 0, "p": -1, "tag": "form", "attrs": {}, "text": []},
        {"i": 1, "p": 0, "tag": "button", "attrs": {"aria-label": label}, "text": []},
        {"i": 2, "p": 1, "tag": "mat-icon", "attrs": {"fonticon": "send"}, "text": []},
    ]


KNOWN = label_texts(provider_spec("gemini"))


def test_a_known_label_passes_whatever_its_case() -> None:
    finding = check_label("send_button", _nodes("send MESSAGE"), 2, KNOWN, "en")
    assert finding is not None and finding.ok and finding.subject == "texts.send_labels"


def test_a_label_the_pack_lacks_fails_with_the_override_for_the_pages_language() -> None:
    """A German Gemini: the page's label is found on the icon's button."""
    finding = check_label("send_button", _nodes("Nachricht senden"), 2, KNOWN, "de-DE")
    assert finding is not None and not finding.ok
    assert (
        "'Nachricht senden'" in finding.message
        and "label fallback finds nothing" in finding.message
    )
    assert finding.proposal == {"texts": {"send_labels": {"texts": {"de": ["Nachricht senden"]}}}}
    japanese = check_label("send_button", _nodes("メッセージを送る"), 2, KNOWN, "ja")
    assert japanese is not None and japanese.proposal is not None
    assert japanese.proposal["texts"]["send_labels"]["texts"]["ja"] == [
        "送信",
        "プロンプトを送信",
        "メッセージを送る",
    ]


def test_nothing_to_compare_is_no_finding() -> None:
    assert check_label("send_button", _nodes("xxxxxxxx"), 2, KNOWN, "en") is None  # replaced
    assert check_label("input", _nodes("Send message"), 2, KNOWN, "en") is None  # no labels
