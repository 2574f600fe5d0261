"""Allure results for a scenario: steps, attachments, and on failure a screenshot and the DOM
(captured by :mod:`bridge.testing.scenarios.evidence`).

Used only when pytest runs with ``--alluredir`` (allure-pytest then collects what is recorded
here), so ordinary runs do not import allure.

Steps are recorded after the ask, from its progress marks, rather than opened live: the two
providers of a parallel scenario progress at once on one thread, and Allure's step stack
would nest one provider's steps inside the other's. Each step's title carries its measured
duration.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest

from bridge.testing.scenarios.checks import Check
from bridge.testing.scenarios.evidence import Evidence
from bridge.testing.scenarios.model import Scenario
from bridge.testing.scenarios.outcome import ScenarioOutcome, Span, step_spans

__all__ = ["allure_enabled", "attach_evidence", "record"]


class StepFailed(AssertionError):
    """Raised inside a step to mark it failed (Allure reads the status from the exception)."""


def allure_enabled(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "allure_report_dir", None))


def record(scenario: Scenario, outcome: ScenarioOutcome, checks: list[Check]) -> None:
    """Title, description, steps per provider, and the question/answers/timings/checks."""
    import allure

    dynamic: Any = allure.dynamic  # untyped in allure-pytest
    dynamic.title(f"{scenario.name} [{scenario.id}]")
    if scenario.description:
        dynamic.description(scenario.description)
    allure.attach(outcome.question, name="question", attachment_type=allure.attachment_type.TEXT)
    for provider, result in outcome.providers.items():
        failure = (
            None
            if result.error_code is None
            else StepFailed(f"{result.error_code}: {result.error_message}")
        )
        with contextlib.suppress(StepFailed), allure.step(provider):
            # The ask ended in its last step: that one (and the provider's) fails with it.
            spans = step_spans(result.steps) or [Span("connect", 0.0, 0.0, 1)]
            for index, span in enumerate(spans):
                retry = f", attempt {span.attempt}" if span.attempt > 1 else ""
                title = f"{span.step} ({span.duration_ms:.0f} ms at {span.start_s:.2f} s{retry})"
                with contextlib.suppress(StepFailed), allure.step(title):
                    if failure is not None and index == len(spans) - 1:
                        raise failure
            if failure is not None:
                raise failure
        if result.result is not None:
            allure.attach(
                result.result.answer,
                name=f"{provider} answer",
                attachment_type=allure.attachment_type.TEXT,
            )
            _attach_json(f"{provider} timings", result.result.timings.to_dict())
            _attach_json(f"{provider} used", result.result.used.to_dict())
    failed = [c for c in checks if not c.passed]
    with (
        contextlib.suppress(StepFailed),
        allure.step(f"checks: {len(checks) - len(failed)} of {len(checks)} passed"),
    ):
        if failed:
            raise StepFailed(
                "; ".join(f"{c.label}: {c.actual!r}, expected {c.expected!r}" for c in failed)
            )
    _attach_json("checks", [c.to_dict() for c in checks])


def _attach_json(name: str, value: Any) -> None:
    import allure

    allure.attach(
        json.dumps(value, indent=2, ensure_ascii=False, default=str),
        name=name,
        attachment_type=allure.attachment_type.JSON,
    )


def attach_evidence(evidence: list[Evidence]) -> None:
    """Each piece whole: the full DOM, the screenshot as the browser gave it."""
    import allure

    kinds = {
        "png": allure.attachment_type.PNG,
        "jpeg": allure.attachment_type.JPG,
        "html": allure.attachment_type.HTML,
        "text": allure.attachment_type.TEXT,
    }
    for item in evidence:
        allure.attach(item.body, name=item.name, attachment_type=kinds[item.kind])
