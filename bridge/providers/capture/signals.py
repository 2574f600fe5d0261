"""The completion signals of a capture (pure): the page observations the detector was fed,
as they came, and the detector replayed on them offline (docs/captures.md).

An observation is what page.js reports of the page (counts, flags, text lengths: page.js
``observe``); a capture keeps its numbers and flags, never a string (a string could carry
text). Replaying them into a fresh detector on a virtual clock answers "would bridge, as it
is now, decide this answer is done?" without a browser or a wait.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bridge.providers.capture.findings import Finding
from bridge.providers.completion import CompletionTimings, Phase, Verdict
from bridge.providers.specs import CompletionDetector

__all__ = ["SIGNAL_SOURCES", "check_signals", "replay", "signals_from"]

#: Which pack entry feeds each observation an answer waits for (page.js ``observe``): what to
#: fix when a signal never came.
SIGNAL_SOURCES: Mapping[str, str] = {
    "has_stop_button": "selectors.stop_button (or texts.stop_labels)",
    "action_bar": "selectors.action_bar",
    "speech_button": "selectors.speech_button",
    "send_button_present": "selectors.send_button",
    "has_feedback_buttons": "texts.feedback_labels",
    "response_complete": "selectors.response_complete",
    "assistant_count": "selectors.assistant_message",
    "model_response_count": "selectors.assistant_message",
    "last_assistant_text_len": "selectors.answer",
    "last_response_text_len": "selectors.answer",
}
#: The signals each provider's answer ends on (docs/sites.md#completion-chatgpt,
#: #completion-gemini): one of them must have come for a DONE verdict.
_ENDINGS = {
    "chatgpt": ("has_stop_button", "action_bar", "speech_button"),
    "gemini": ("has_stop_button", "has_feedback_buttons", "response_complete"),
}
#: A replay never runs away: the detector's deadlines are finite, but a hostile capture
#: could hold thousands of observations.
_MAX_STEPS = 5000


def signals_from(
    observations: Sequence[Mapping[str, Any]],
    *,
    sent_at_s: float,
    initial_answers: int,
    verdicts: Sequence[str],
) -> dict[str, Any]:
    """The Signals of docs/captures.md from an ask's observations (``{"t": seconds since the
    ask began, …}``): times in milliseconds after the send, numbers and flags only, and the
    timeline of each signal's first value and every change."""
    kept: list[dict[str, Any]] = []
    timeline: list[dict[str, Any]] = []
    last: dict[str, Any] = {}
    for raw in observations:
        t_ms = round((float(raw.get("t", 0.0)) - sent_at_s) * 1000)
        row: dict[str, Any] = {"t_ms": t_ms}
        for key, value in raw.items():
            if key == "t" or isinstance(value, str) or value is None:
                continue
            if isinstance(value, bool | int | float):
                row[key] = value
        kept.append(row)
        for key, value in row.items():
            if key != "t_ms" and last.get(key, ...) != value:
                timeline.append({"signal": key, "value": value, "t_ms": t_ms})
                last[key] = value
    return {
        "initial_answers": initial_answers,
        "observations": kept,
        "timeline": timeline,
        "verdicts": list(verdicts),
    }


def replay(
    signals: Mapping[str, Any],
    new_detector: Callable[[int, float, CompletionTimings], CompletionDetector],
    timings: CompletionTimings | None = None,
) -> list[tuple[float, Verdict]]:
    """Each verdict of a fresh detector fed the observations on a virtual clock (the send
    at t = 0 s), with the ticks its deadlines ask for in between and after the last one,
    until it decides or has nothing left to wait for."""
    detector = new_detector(
        int(signals.get("initial_answers", 0)), 0.0, timings or CompletionTimings()
    )
    out: list[tuple[float, Verdict]] = []
    now = 0.0
    steps = 0

    def tick_until(limit: float | None) -> None:
        nonlocal now, steps
        verdict = detector.verdict
        while not verdict.phase.terminal and steps < _MAX_STEPS:
            deadline = verdict.next_deadline
            if deadline is None or (limit is not None and deadline > limit):
                return
            now = max(now, deadline)
            verdict = detector.tick(now)
            out.append((now, verdict))
            steps += 1

    for observation in signals.get("observations", []):
        t = max(now, float(observation.get("t_ms", 0)) / 1000)
        tick_until(t)
        if detector.verdict.phase.terminal or steps >= _MAX_STEPS:
            break
        now = t
        raw = {k: v for k, v in observation.items() if k != "t_ms"}
        out.append((now, detector.observe(now, raw)))
        steps += 1
    tick_until(None)
    return out


def check_signals(
    signals: Mapping[str, Any],
    new_detector: Callable[[int, float, CompletionTimings], CompletionDetector],
    expected_reason: str | None,
    timings: CompletionTimings | None = None,
    *,
    provider: str = "",
) -> list[Finding]:
    """Whether the detector decides DONE on the captured signals, and if not, which signal
    it waited for in vain and which pack entry feeds it."""
    try:
        verdicts = replay(signals, new_detector, timings)
    except (TypeError, ValueError) as exc:  # a capture's observations it cannot take
        return [Finding("signals", "signals", False, f"the observations cannot be replayed: {exc}")]
    final = verdicts[-1][1] if verdicts else None
    if final is not None and final.phase is Phase.DONE and not final.used_fallback:
        note = ""
        if expected_reason and final.reason != expected_reason:
            note = f" (when captured it was {expected_reason})"
        return [
            Finding(
                "signals",
                "signals",
                True,
                f"the detector decides done ({final.reason}) {verdicts[-1][0]:.2f} s after "
                f"the send{note}",
            )
        ]
    seen = {
        key
        for observation in signals.get("observations", [])
        for key, value in observation.items()
        if key != "t_ms" and value not in (False, 0)
    }
    endings = _ENDINGS.get(provider) or tuple(k for k in SIGNAL_SOURCES if k.startswith("has_"))
    never = [key for key in endings if key not in seen]
    subject = f"signal {never[0]}" if never else "signals"
    missing = f"never seen: {', '.join(never) or 'nothing missing'}"
    if never and never[0] in SIGNAL_SOURCES:
        missing += (
            f"; it comes from {SIGNAL_SOURCES[never[0]]}: check that entry against the capture"
        )
    if final is not None and final.phase is Phase.DONE:
        # Done, but only by a fallback (a stop button gone, text that stopped changing):
        # bridge still answers, later and less surely; the signal meant to end it is lost.
        at = verdicts[-1][0]
        said = f"decides done only by a fallback ({final.reason}, {at:.2f} s after the send)"
    else:
        state = f"{final.phase.value} ({final.reason})" if final is not None else "no verdict"
        said = f"never decides done on the captured signals: last verdict {state}"
    return [Finding("signals", subject, False, f"the detector {said}; {missing}")]
