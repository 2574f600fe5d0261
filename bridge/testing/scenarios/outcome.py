"""What running a scenario produced: per provider an answer or a typed error, and the steps.

Plain data, filled by the runner and read by the checks, the report and the Allure glue, so
those never need a browser to be tested.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bridge.providers.capture.findings import Finding
from bridge.providers.results import AskResult, Progress, Provider

__all__ = [
    "FakeEvidence",
    "ProviderOutcome",
    "ScenarioOutcome",
    "Span",
    "StepMark",
    "step_spans",
]

# The steps a person reads in a report (Allure steps, docs/flows.md#ask-steps), from progress
# phases.
_STEP_OF_PHASE = {
    "connect": "connect",
    "mode": "input",  # choosing the mode and uploading files prepare the input
    "attach": "input",
    "input": "input",
    "send": "send",
    "waiting": "wait",
    "thinking": "wait",
    "streaming": "wait",
    "awaiting_text": "wait",
    "extracting": "extract",
}


@dataclass(frozen=True)
class StepMark:
    """A progress phase as it was reported: when, and how many answer characters so far.

    ``elapsed_s`` counts from the scenario's ask on one clock, not the attempt's own
    ``Progress.elapsed_s``, which restarts when a stuck Gemini is retried.
    """

    phase: str
    elapsed_s: float
    chars: int = 0

    @classmethod
    def of(cls, progress: Progress, elapsed_s: float) -> StepMark:
        return cls(progress.phase, elapsed_s, progress.chars)


class Span(NamedTuple):
    """One step of an ask (connect, input, send, wait, extract) on the scenario's clock."""

    step: str
    start_s: float
    duration_ms: float
    attempt: int
    """1, or 2 and 3 for the retries of a stuck Gemini (docs/flows.md#retries)."""


@dataclass(frozen=True)
class FakeEvidence:
    """Fake mode only: what the fake site itself saw, to compare with what bridge returned."""

    received: bool
    """The site received exactly the question (docs/flows.md#known-problem-2: input not
    reflected)."""
    sent_answer: str | None
    """The markdown the site answered this question with."""


@dataclass
class ProviderOutcome:
    """What one provider did in a scenario: its result or error, its steps, the fake's evidence."""

    provider: Provider
    result: AskResult | None = None
    error_code: str | None = None
    error_message: str | None = None
    steps: list[StepMark] = field(default_factory=list)
    fake: FakeEvidence | None = None
    #: With ``ask.capture``: the capture (docs/captures.md) and what its check found.
    capture: dict[str, Any] | None = None
    capture_findings: list[Finding] = field(default_factory=list)

    @property
    def answered(self) -> bool:
        return self.result is not None

    @property
    def answer(self) -> str:
        return self.result.answer if self.result is not None else ""


@dataclass
class ScenarioOutcome:
    """What a scenario run did, per provider: the report's record of it."""

    scenario_id: str
    question: str
    live: bool
    started_at: str
    """UTC, ISO 8601."""
    providers: dict[Provider, ProviderOutcome] = field(default_factory=dict)
    primer: dict[Provider, ProviderOutcome] = field(default_factory=dict)
    """The primer asks that opened the existing chat (setup.requireExistingTab)."""
    duration_ms: float = 0.0

    def to_dict(self, preview_chars: int = 300) -> dict[str, Any]:
        """The report's view: previews, not whole answers (history.jsonl keeps those)."""
        return {
            "question": self.question,
            "mode": "live" if self.live else "fake",
            "started_at": self.started_at,
            "duration_ms": round(self.duration_ms, 1),
            "providers": {p: _provider_dict(o, preview_chars) for p, o in self.providers.items()},
            "primer": {p: _provider_dict(o, 120) for p, o in self.primer.items()},
        }


def _provider_dict(outcome: ProviderOutcome, preview_chars: int) -> dict[str, Any]:
    out: dict[str, Any] = {"ok": outcome.answered}
    if outcome.result is not None:
        result = outcome.result
        out.update(
            answer_preview=result.answer[:preview_chars],
            answer_length=len(result.answer),
            url=result.url,
            timings=result.timings.to_dict(),
            used=result.used.to_dict(),
            suspicious=result.suspicious,
        )
    if outcome.error_code is not None:
        out["error"] = {"code": outcome.error_code, "message": outcome.error_message}
    if outcome.steps:
        out["steps"] = [_span_dict(span) for span in step_spans(outcome.steps)]
    return out


def _span_dict(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {
        "step": span.step,
        "start_s": round(span.start_s, 3),
        "duration_ms": round(span.duration_ms, 1),
    }
    if span.attempt > 1:
        out["attempt"] = span.attempt
    return out


def step_spans(marks: list[StepMark]) -> list[Span]:
    """Consecutive phases folded into steps.

    A step lasts until the next step's first mark; the last one until "done" (or, for an
    ask that failed, until the last mark seen). A "connect" after the first starts the next
    attempt (a retry).
    """
    spans: list[Span] = []
    current: tuple[str, float] | None = None
    attempt = 0
    for mark in marks:
        step = _STEP_OF_PHASE.get(mark.phase)
        if current is not None and step != current[0]:
            spans.append(
                Span(current[0], current[1], (mark.elapsed_s - current[1]) * 1000, attempt)
            )
            current = None
        if step is not None and current is None:
            attempt += step == "connect"
            current = (step, mark.elapsed_s)
    if current is not None:
        last = marks[-1].elapsed_s if marks else current[1]
        spans.append(Span(current[0], current[1], (last - current[1]) * 1000, attempt))
    return spans
