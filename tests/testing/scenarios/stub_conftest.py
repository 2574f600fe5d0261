"""The conftest the plugin's pytester tests run with: bridge without a browser.

It overrides the ``fakes`` and ``bridge`` fixtures. ``fakes`` is a pair of the fake sites'
real ``SiteController`` objects (their bookkeeping, no server); ``StubBridge`` answers each
question as the fake site would, at once, and records what it was asked, so the scenario
plugin (collection, markers, checks, reports, Allure) is tested black-box in well under a
second per run. The real browser path is covered by running ``scenarios/`` itself.

Knobs, for tests: ``STUB_LOGGED_OUT=chatgpt,gemini`` puts login walls up for a --live run
(fake mode resets the sites per test, as the real ``fakes`` fixture does);
a question containing ``INTERRUPT`` raises KeyboardInterrupt, as a person's Ctrl-C would.
"""

from __future__ import annotations

import asyncio
import base64
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from bridge.cdp.browser import TabInfo
from bridge.errors import BridgeError, LoginRequired, ProviderErrorTurn, ProviderStuck, RateLimited
from bridge.fakes.behaviour import Behaviour
from bridge.fakes.controller import SiteController
from bridge.providers.flow import AskFlow
from bridge.providers.results import AskResult, BothResult, Progress, Timings, Used
from bridge.store.state import StateStore

# The smallest valid PNG: what the stub tab "screenshots".
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
BASES = {"chatgpt": "https://chatgpt.com/c/", "gemini": "https://gemini.google.com/app/"}


class StubSites:
    def __init__(self) -> None:
        self.chatgpt = SiteController("chatgpt")
        self.gemini = SiteController("gemini")
        for name in filter(None, os.environ.get("STUB_LOGGED_OUT", "").split(",")):
            getattr(self, name).set_behaviour(Behaviour(state="logged_out"))


class StubSession:
    """A provider tab as the evidence capture sees it."""

    ended = None

    async def evaluate(self, expression: str, **_: Any) -> Any:
        return "visible" if expression == "document.visibilityState" else "<html>stub</html>"

    async def send(self, method: str, params: Any = None, **_: Any) -> dict[str, Any]:
        return (
            {"data": base64.b64encode(PNG).decode()} if method == "Page.captureScreenshot" else {}
        )


class StubBrowser:
    def __init__(self) -> None:
        self.sessions: dict[int, StubSession] = {}
        self.tabs: list[TabInfo] = []

    async def list_tabs(self) -> list[TabInfo]:
        return list(self.tabs)


class StubBridge:
    def __init__(self, sites: StubSites, state_dir: Path, session_key: str) -> None:
        self.sites = sites
        self.store = StateStore(state_dir)
        self.session_key = session_key
        self.flow: Any = AskFlow()
        self.browser = StubBrowser()
        self.asked: list[tuple[str, str]] = []
        self._conversations: dict[str, str] = {}

    async def ask(
        self,
        provider: str,
        question: str,
        *,
        new_chat: bool = False,
        timeout: float | None = None,
        session_key: str | None = None,
        skip_thinking: bool = False,
        on_progress: Callable[[Progress], Any] | None = None,
    ) -> AskResult:
        if "INTERRUPT" in question:
            raise KeyboardInterrupt
        self.asked.append((provider, question))
        started = time.monotonic()

        def progress(phase: str) -> None:
            if on_progress is not None:
                on_progress(Progress(provider, phase, time.monotonic() - started, 0))  # type: ignore[arg-type]

        for phase in ("connect", "input", "send", "waiting"):
            progress(phase)
            await asyncio.sleep(0)
        site: SiteController = getattr(self.sites, provider)
        conversation = None if new_chat else self._conversations.get(provider)
        record = site.open_question(question, conversation)
        tab_id = 1 if provider == "chatgpt" else 2
        self.browser.sessions[tab_id] = StubSession()
        url = BASES[provider] + record.conversation_id
        self.browser.tabs = [t for t in self.browser.tabs if t.tab_id != tab_id]
        self.browser.tabs.append(TabInfo(tab_id, url, "", False, True))
        state = record.behaviour.state
        errors: dict[str, BridgeError] = {
            "logged_out": LoginRequired(provider),
            "rate_limited": RateLimited(provider, "You've reached your limit."),
            "error_turn": ProviderErrorTurn(provider, "Something went wrong."),
            "stuck": ProviderStuck(provider, "stuck_stop_button", 1),
        }
        if state in errors:
            raise errors[state]
        self._conversations[provider] = record.conversation_id
        progress("extracting")
        used = Used(tab="new_tab" if new_chat else "session", input_phase=1, send_method="js_click")
        total = (time.monotonic() - started) * 1000
        progress("done")
        return AskResult(
            provider,  # type: ignore[arg-type]
            question,
            record.answer,
            url,
            Timings(total_ms=total, wait_response_ms=total),
            used,
            session_key or self.session_key,
        )

    async def ask_both(
        self,
        question: str,
        *,
        new_chat: bool = False,
        timeout: float | None = None,
        session_key: str | None = None,
        providers: Sequence[str] = ("chatgpt", "gemini"),
        on_progress: Callable[[Progress], Any] | None = None,
    ) -> BothResult:
        started = time.monotonic()
        outcomes = await asyncio.gather(
            *(self.ask(p, question, new_chat=new_chat, on_progress=on_progress) for p in providers),
            return_exceptions=True,
        )
        return BothResult.from_outcomes(providers, outcomes, (time.monotonic() - started) * 1000)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def stub_sites() -> StubSites:
    return StubSites()


@pytest.fixture
def fakes(stub_sites: StubSites) -> StubSites:
    stub_sites.chatgpt.reset()
    stub_sites.gemini.reset()
    return stub_sites


@pytest.fixture
def bridge(stub_sites: StubSites, tmp_path: Path, request: pytest.FixtureRequest) -> StubBridge:
    return StubBridge(stub_sites, tmp_path, f"test-{request.node.name}")
