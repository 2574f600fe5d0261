"""The completion signals of a capture (bridge.providers.capture.signals): kept as numbers
and flags, and replayed into the detector on a virtual clock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bridge.providers.capture.signals import check_signals, replay, signals_from
from bridge.providers.completion import Phase
from bridge.providers.specs import provider_spec

KEPT = Path(__file__).resolve().parents[2] / "captures"


def test_strings_are_dropped_and_times_count_from_the_send() -> None:
    signals = signals_from(
        [
            {"t": 1.0, "has_stop_button": False, "note": "secret text", "n": 0},
            {"t": 1.2, "has_stop_button": True, "n": 0},
            {"t": 1.5, "has_stop_button": True, "n": 3},
        ],
        sent_at_s=1.0,
        initial_answers=2,
        verdicts=["streaming:x"],
    )
    assert "secret" not in json.dumps(signals)
    assert [o["t_ms"] for o in signals["observations"]] == [0, 200, 500]
    assert signals["timeline"] == [
        {"signal": "has_stop_button", "value": False, "t_ms": 0},
        {"signal": "n", "value": 0, "t_ms": 0},
        {"signal": "has_stop_button", "value": True, "t_ms": 200},
        {"signal": "n", "value": 3, "t_ms": 500},
    ]
    assert signals["initial_answers"] == 2


def _kept(provider: str) -> dict[str, Any]:
    return json.loads((KEPT / f"{provider}-fake.json").read_text(encoding="utf-8"))["signals"]


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
def test_the_detector_decides_done_on_a_fakes_captured_signals(provider: str) -> None:
    spec = provider_spec(provider)  # type: ignore[arg-type]
    verdicts = replay(_kept(provider), spec.new_detector)
    assert verdicts[-1][1].phase is Phase.DONE
    [finding] = check_signals(_kept(provider), spec.new_detector, None, provider=provider)
    assert finding.ok and "decides done" in finding.message


@pytest.mark.parametrize(
    ("provider", "never"),
    [
        ("chatgpt", "has_stop_button, action_bar, speech_button"),
        ("gemini", "has_stop_button, has_feedback_buttons, response_complete"),
    ],
)
def test_signals_that_never_come_are_named_with_their_pack_entry(provider: str, never: str) -> None:
    """The site renamed what shows an answer's progress and end: as page.js would report it
    with a pack that no longer matches, none of those signals comes. The detector still
    decides, by a fallback (later, less surely); the check names the lost signals and the
    pack entry of the first."""
    signals = _kept(provider)
    lost = {
        "has_stop_button",
        "action_bar",
        "speech_button",
        "has_feedback_buttons",
        "response_complete",
        "has_mic_button",
    }
    for observation in signals["observations"]:
        for key in lost & set(observation):
            observation[key] = False
    spec = provider_spec(provider)  # type: ignore[arg-type]
    [finding] = check_signals(signals, spec.new_detector, "x", provider=provider)
    assert not finding.ok
    assert finding.subject == "signal has_stop_button", finding.line()
    assert f"never seen: {never}" in finding.message
    assert "selectors.stop_button" in finding.message and "only by a fallback" in finding.message
