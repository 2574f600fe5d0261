"""Allure results for a scenario: steps, attachments, and on failure a screenshot and the DOM.

Used only when pytest runs with ``--alluredir`` (allure-pytest then collects what is recorded
here), so ordinary runs neither import allure nor touch the page after a failure.

Steps are recorded after the ask, from its progress marks, rather than opened live: the two
providers of a parallel scenario progress at once on one thread, and Allure's step stack
would nest one provider's steps inside the other's. Each step's title carries its measured
duration.
"""

from __future__ import annotations

import base64
import contextlib
import json
from dataclasses import dataclass
from typing import Any

import pytest

from bridge.core import Bridge
from bridge.errors import BridgeError
from bridge.providers.specs import PROVIDER_SPECS
from bridge.results import Provider
from bridge.scenarios.checks import Check
from bridge.scenarios.model import Scenario
from bridge.scenarios.outcome import ScenarioOutcome, Span, step_spans
from bridge.waiting import scaled

__all__ = ["Evidence", "allure_enabled", "attach_evidence", "capture_evidence", "record"]

# Shadow roots are where Gemini keeps its turns: serialise the open ones with the page.
_DOM_JS = """(() => {
  const roots = [];
  const walk = (node) => {
    for (const el of node.querySelectorAll('*')) {
      if (el.shadowRoot) { roots.push(el.shadowRoot); walk(el.shadowRoot); }
    }
  };
  walk(document);
  const root = document.documentElement;
  return root.getHTML ? root.getHTML({shadowRoots: roots}) : root.outerHTML;
})()"""


class StepFailed(AssertionError):
    """Raised inside a step to mark it failed (Allure reads the status from the exception)."""


@dataclass(frozen=True)
class Evidence:
    name: str
    body: bytes | str
    kind: str  # "png", "html" or "text"


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


async def capture_evidence(bridge: Bridge, providers: tuple[Provider, ...]) -> list[Evidence]:
    """A screenshot and the DOM of each provider tab this test's bridge has attached."""
    evidence: list[Evidence] = []
    try:
        tabs = await bridge.browser.list_tabs()
    except BridgeError as exc:
        return [Evidence("evidence", f"could not list tabs: {exc}", "text")]
    for provider in providers:
        prefixes = PROVIDER_SPECS[provider].url_prefixes
        for info in tabs:
            session = bridge.browser.sessions.get(info.tab_id)
            if session is None or session.ended is not None or not info.url.startswith(prefixes):
                continue
            name = f"{provider} tab {info.tab_id}"
            try:
                if await session.evaluate("document.visibilityState") == "hidden":
                    # A hidden tab paints no frames, so a screenshot would wait for one forever.
                    await session.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
                shot = await session.send(
                    "Page.captureScreenshot", {"format": "png"}, timeout=scaled(10.0)
                )
                png = base64.b64decode(shot["data"])
                evidence.append(Evidence(f"{name} screenshot", png, "png"))
                dom = await session.evaluate(_DOM_JS, timeout=scaled(10.0))
                evidence.append(Evidence(f"{name} DOM", str(dom), "html"))
            except BridgeError as exc:
                evidence.append(Evidence(f"{name} evidence", f"could not capture: {exc}", "text"))
    return evidence


def attach_evidence(evidence: list[Evidence]) -> None:
    import allure

    kinds = {
        "png": allure.attachment_type.PNG,
        "html": allure.attachment_type.HTML,
        "text": allure.attachment_type.TEXT,
    }
    for item in evidence:
        allure.attach(item.body, name=item.name, attachment_type=kinds[item.kind])
