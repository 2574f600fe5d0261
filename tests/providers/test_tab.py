"""Which tab an ask uses (bridge/providers/tab.py, docs/flows.md#tab-reuse), in real Chromium
with the fake sites: an open tab of the site is taken only when no other project (session
key) owns it, also when two projects ask at the same moment. The health check's handling of
a tab still loading is tested through fakes of the session and the browser's listing."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from bridge.app.facade import Bridge
from bridge.cdp.browser import TabInfo
from bridge.errors import BridgeTimeout
from bridge.fakes import Behaviour, FakeSites
from bridge.providers import specs
from bridge.providers.tab import HEALTH_S, PATIENT_S, try_tab
from bridge.waiting import scaled


async def _tab_of(bridge: Bridge, key: str) -> int:
    entry = await bridge.store.get_session_async(key, "chatgpt")
    assert entry is not None and entry.tab_id is not None
    return entry.tab_id


@pytest.mark.e2e
async def test_two_projects_asking_at_once_never_share_a_tab(
    bridge: Bridge, fakes: FakeSites
) -> None:
    # A ChatGPT tab the person left open, recorded for nobody: one project may take it.
    await bridge.browser.new_tab("https://chatgpt.com/")
    fakes.chatgpt.set_behaviour(Behaviour(duration_ms=600))
    first, second = await asyncio.gather(
        bridge.ask("chatgpt", "Project A: what is a monad?", session_key="project-a"),
        bridge.ask("chatgpt", "Project B: what is a functor?", session_key="project-b"),
    )
    assert await _tab_of(bridge, "project-a") != await _tab_of(bridge, "project-b")
    assert {first.used.tab, second.used.tab} <= {"open_tab", "new_tab"}
    by_text = {r.text: r for r in fakes.chatgpt.records}
    a = by_text["Project A: what is a monad?"]
    b = by_text["Project B: what is a functor?"]
    assert a.conversation_id != b.conversation_id  # two conversations, not one mixed
    assert first.answer.startswith(a.answer.splitlines()[0])
    assert second.answer.startswith(b.answer.splitlines()[0])


@pytest.mark.e2e
async def test_a_tab_recorded_for_another_project_is_not_taken(
    bridge: Bridge, fakes: FakeSites
) -> None:
    await bridge.ask("chatgpt", "Project A's question", session_key="project-a")
    owned = await _tab_of(bridge, "project-a")
    other = Bridge(bridge.browser, state_dir=bridge.store.root, session_key="project-c")
    result = await other.ask("chatgpt", "Project C's question")
    assert result.used.tab == "new_tab"
    assert await _tab_of(other, "project-c") != owned


CHAT = "https://chatgpt.com/c/restored"


class _Restoring:
    """A tab the browser is restoring: its page answers nothing until the restore commits,
    then the pending evaluate fails as navigated (what CI showed under load)."""

    def __init__(self, hangs: int) -> None:
        self.hangs = hangs
        self.loaded = asyncio.Event()
        self.calls: list[str] = []
        self.timeouts: list[float] = []

    async def evaluate(self, expression: str, *, timeout: float) -> Any:
        self.calls.append(expression)
        self.timeouts.append(timeout)
        if self.hangs:
            self.hangs -= 1
            raise BridgeTimeout("the extension to answer Runtime.evaluate", timeout)
        if expression == "document.readyState":
            return "complete" if self.loaded.is_set() else "loading"
        return CHAT

    async def send(self, method: str, params: Any = None) -> dict[str, Any]:
        self.calls.append(method)
        return {}

    def expect_event(self, method: str) -> Any:
        loaded = self.loaded

        async def wait(timeout: float) -> dict[str, Any]:
            await asyncio.wait_for(loaded.wait(), timeout)
            return {}

        return SimpleNamespace(wait=wait, close=lambda: None)


def _context(session: _Restoring, *, loading: bool) -> Any:
    async def attach(tab_id: int) -> _Restoring:
        return session

    async def list_tabs() -> list[TabInfo]:
        return [TabInfo(7, CHAT, "ChatGPT", False, True, loading=loading)]

    browser = SimpleNamespace(attach=attach, list_tabs=list_tabs)
    return SimpleNamespace(browser=browser, spec=specs.provider_spec("chatgpt"))


async def test_a_restored_tab_that_answers_nothing_while_loading_is_waited_for() -> None:
    session = _Restoring(hangs=1)
    ctx = _context(session, loading=True)
    asyncio.get_running_loop().call_soon(session.loaded.set)  # the restore commits
    found = await asyncio.wait_for(try_tab(ctx, 7), 30)
    assert found is not None and found[1] == CHAT
    assert "Page.enable" in session.calls  # it waited for the load, then asked again


async def test_a_loaded_tab_that_answers_nothing_is_not_reused() -> None:
    session = _Restoring(hangs=1)
    found = await asyncio.wait_for(try_tab(_context(session, loading=False), 7), 30)
    assert found is None  # a hung page: the ask opens a new tab
    assert session.calls == ["location.href"]


async def test_a_tab_showing_the_asked_conversation_gets_a_navigations_patience() -> None:
    """On a busy machine the page of the very conversation asked for may answer later than
    the health check: it is waited for as a navigation is, not replaced by a second tab."""
    patient, hasty = _Restoring(hangs=0), _Restoring(hangs=0)
    assert await try_tab(_context(patient, loading=False), 7, patient=True) is not None
    assert await try_tab(_context(hasty, loading=False), 7) is not None
    assert patient.timeouts == [scaled(PATIENT_S)] and hasty.timeouts == [scaled(HEALTH_S)]
