"""Running one scenario through the facade (``Bridge.ask`` / ``Bridge.ask_both``).

The driver half of the harness: it sets the fake sites up (fake mode), opens an existing chat
when the scenario needs one, asks, and gathers what happened into a ``ScenarioOutcome``. It
decides nothing: the checks do. A typed ``BridgeError`` is an outcome; anything else is a bug
and propagates.
"""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import tempfile
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from bridge.app.facade import Bridge
from bridge.cdp.browser import Browser
from bridge.errors import BridgeError
from bridge.link.relay import Relay
from bridge.providers.capture.check import check_capture
from bridge.providers.capture.matching import capture_matcher
from bridge.providers.capture.take import CaptureRecorder
from bridge.providers.results import PROVIDERS, Progress, Provider
from bridge.providers.specs import provider_spec
from bridge.testing.scenarios.model import Scenario, render_question, template_variables
from bridge.testing.scenarios.outcome import (
    FakeEvidence,
    ProviderOutcome,
    ScenarioOutcome,
    StepMark,
)
from bridge.wire.extension import PORT_RANGE

if TYPE_CHECKING:
    from bridge.fakes.controller import SiteController

__all__ = ["DEFAULT_PRIMER", "FakeSitesLike", "run_scenario"]

# A question following docs/flows.md#forbidden-questions that opens the chat an "existing chat"
# scenario then asks in.
DEFAULT_PRIMER = "Explain Python list comprehensions in one sentence. ID:{{timestamp}}"
# With no extension able to reach the relay, the ask's wait for one is the whole scenario.
_UNCONNECTED_WAIT_S = 1.0


class FakeSitesLike(Protocol):
    """What the runner needs of ``bridge.fakes.FakeSites``: the two sites' controllers."""

    @property
    def chatgpt(self) -> SiteController: ...

    @property
    def gemini(self) -> SiteController: ...


async def run_scenario(
    scenario: Scenario,
    bridge: Bridge | None,
    fakes: FakeSitesLike | None,
    *,
    live: bool,
    now: datetime | None = None,
) -> ScenarioOutcome:
    """Run ``scenario``; ``fakes`` is None when live, ``bridge`` None for unconnected ones."""
    now = now or datetime.now(UTC)
    variables = template_variables(now, scenario.id)
    outcome = ScenarioOutcome(
        scenario_id=scenario.id,
        question=render_question(scenario.template, variables),
        live=live,
        started_at=now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    )
    started = time.monotonic()
    if not scenario.setup.extension_connected:
        async with _unreachable_bridge() as unconnected:
            await _ask(unconnected, scenario, outcome)
    else:
        if bridge is None:
            raise ValueError(f"scenario {scenario.id} needs a bridge")
        sites = None if live else fakes
        await _run_connected(bridge, scenario, outcome, sites, variables)
    outcome.duration_ms = (time.monotonic() - started) * 1000
    return outcome


async def _run_connected(
    bridge: Bridge,
    scenario: Scenario,
    outcome: ScenarioOutcome,
    fakes: FakeSitesLike | None,
    variables: dict[str, str],
) -> None:
    fake = scenario.fake
    if fakes is not None:
        # Page-level settings (login wall, locale, composer) are read when the page loads,
        # so they go in before any tab opens.
        for provider, site in fake.sites.items():
            if site.default is not None:
                _site(fakes, provider).set_behaviour(site.default)
            for place in site.places:  # the account's projects, GPTs, Gems
                _site(fakes, provider).add_place(place)
        if fake.completion_timings is not None:
            settings = dataclasses.replace(bridge.flow.settings, timings=fake.completion_timings)
            bridge.flow = dataclasses.replace(bridge.flow, settings=settings)
    if scenario.setup.require_existing_tab:
        primer = render_question(scenario.setup.primer or DEFAULT_PRIMER, variables)
        await _prime(bridge, scenario, outcome, primer)
        if not all(p.answered for p in outcome.primer.values()):
            return  # no chat to ask in: the checks report the primer's failure
    if fakes is not None:
        # Per-question behaviours after the primer, so the primer never consumes them.
        for provider, site in fake.sites.items():
            if site.queue:
                _site(fakes, provider).queue(*site.queue)
    await _ask(bridge, scenario, outcome)
    if fakes is not None:
        for provider, result in outcome.providers.items():
            result.fake = _evidence(_site(fakes, provider), outcome.question, result)


async def _prime(bridge: Bridge, scenario: Scenario, outcome: ScenarioOutcome, primer: str) -> None:
    """Open a fresh chat with one exchange: the "existing chat" the scenario then asks in."""
    for provider in scenario.providers:
        outcome.primer[provider] = ProviderOutcome(provider)
    if scenario.provider == "both":
        both = await bridge.ask_both(primer, new_chat=True)
        for provider, result in both.results.items():
            outcome.primer[provider].result = result
        for provider, error in both.errors.items():
            _set_error(outcome.primer[provider], error)
        return
    provider = scenario.providers[0]
    try:
        outcome.primer[provider].result = await bridge.ask(provider, primer, new_chat=True)
    except BridgeError as exc:
        _set_error(outcome.primer[provider], exc)


async def _ask(bridge: Bridge, scenario: Scenario, outcome: ScenarioOutcome) -> None:
    for provider in scenario.providers:
        outcome.providers[provider] = ProviderOutcome(provider)

    asked_at = time.monotonic()

    def on_progress(progress: Progress) -> None:
        mark = StepMark.of(progress, time.monotonic() - asked_at)
        outcome.providers[progress.provider].steps.append(mark)

    # A fresh chat per scenario, as the upstream suite clears sessions between scenarios;
    # an existing-chat scenario asks in the chat its primer just opened.
    ask = scenario.ask
    # A conversation asked for is continued, not a new chat (docs/sites.md#where).
    new_chat = not scenario.setup.require_existing_tab and ask.conversation is None
    timeout = None if ask.timeout_ms is None else ask.timeout_ms / 1000
    # Only what the scenario sets: where to ask (docs/sites.md#where).
    where: dict[str, Any] = {
        k: v
        for k, v in (
            ("project", ask.project),
            ("gpt", ask.gpt),
            ("gem", ask.gem),
            ("temporary", ask.temporary),
            ("effort", ask.effort),  # docs/sites.md#effort
            ("deep_think", ask.deep_think),
            ("research", ask.research),  # docs/sites.md#research
            ("research_answers", ask.research_answers),
        )
        if v
    }
    if ask.conversation is not None and scenario.provider != "both":
        where["conversation"] = ask.conversation
    if scenario.provider == "both":
        if ask.research_answers:  # per site in ask_both: whichever site asks gets them
            where["research_answers"] = dict.fromkeys(PROVIDERS, ask.research_answers)
        if ask.conversation is not None:  # the URL's site says whose conversation it is
            where["conversations"] = {
                p: ask.conversation
                for p in PROVIDERS
                if ask.conversation.startswith(provider_spec(p).url_prefixes)
            }
        both = await bridge.ask_both(
            outcome.question,
            new_chat=new_chat,
            timeout=timeout,
            on_progress=on_progress,
            **where,
        )
        for provider, result in both.results.items():
            outcome.providers[provider].result = result
        for provider, refused in both.errors.items():
            _set_error(outcome.providers[provider], refused)
        return
    provider = scenario.providers[0]
    recorder = None
    if ask.capture:  # docs/captures.md: the capture rides along this ask
        spec = provider_spec(provider, bridge.store.root)
        recorder = CaptureRecorder(spec, source="live" if outcome.live else "fake")
        where["flow"] = recorder.flow(bridge.flow)
    error: BridgeError | None = None
    try:
        outcome.providers[provider].result = await bridge.ask(
            provider,
            outcome.question,
            new_chat=new_chat,
            timeout=timeout,
            skip_thinking=ask.skip_thinking,
            on_progress=on_progress,
            **where,
        )
    except BridgeError as exc:
        error = exc
        _set_error(outcome.providers[provider], exc)
    if recorder is not None:
        await _check_capture(bridge, recorder, outcome, provider, error)


async def _check_capture(
    bridge: Bridge,
    recorder: CaptureRecorder,
    outcome: ScenarioOutcome,
    provider: Provider,
    error: BridgeError | None,
) -> None:
    """The ask's capture, and its check against bridge as it is (a capture scenario's
    checks include it: bridge.testing.scenarios.checks)."""
    result = outcome.providers[provider]
    capture = recorder.build(outcome.question, result.result, error)
    result.capture = capture
    async with capture_matcher(bridge.browser) as matcher:
        result.capture_findings = await check_capture(capture, recorder.spec, matcher)


def _set_error(outcome: ProviderOutcome, error: BridgeError) -> None:
    outcome.error_code = error.code
    outcome.error_message = str(error)


def _site(fakes: FakeSitesLike, provider: Provider) -> SiteController:
    return fakes.chatgpt if provider == "chatgpt" else fakes.gemini


def _evidence(site: SiteController, question: str, outcome: ProviderOutcome) -> FakeEvidence:
    # The newest record of this exact text: after a stuck retry, the attempt that answered.
    record = next((r for r in reversed(site.records) if r.text == question), None)
    if record is None:
        return FakeEvidence(received=False, sent_answer=None)
    # A research's answer is its report (docs/sites.md#research), not what the site streamed
    # (the plan): that record has nothing to compare.
    streamed = outcome.answered and not record.research
    return FakeEvidence(received=True, sent_answer=record.answer if streamed else None)


@contextlib.asynccontextmanager
async def _unreachable_bridge() -> AsyncIterator[Bridge]:
    """A facade over a relay on a port outside the extension's discovery range.

    No extension ever finds it, in fake or live mode, and nothing of the person's Chrome is
    touched: exactly the state of docs/flows.md#known-problem-6 as the facade sees it. It
    is not registered for native hosts either (they would announce it to the extension).
    """
    relay = Relay(
        port=_free_port_outside(PORT_RANGE), name="bridge-scenario-unconnected", register=False
    )
    await relay.start()
    try:
        with tempfile.TemporaryDirectory(prefix="bridge-scenario-") as state:
            browser = Browser(relay, connect_timeout=_UNCONNECTED_WAIT_S)
            yield Bridge(browser, state_dir=Path(state), session_key="scenario-unconnected")
    finally:
        await relay.stop()


def _free_port_outside(excluded: tuple[int, int]) -> int:
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port: int = probe.getsockname()[1]
        if not excluded[0] <= port <= excluded[1]:
            return port
