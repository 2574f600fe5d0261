"""Which tab an ask uses (bridge/providers/tab.py, docs/flows.md#tab-reuse), in real Chromium
with the fake sites: an open tab of the site is taken only when no other project (session
key) owns it, also when two projects ask at the same moment."""

from __future__ import annotations

import asyncio

import pytest

from bridge.app.facade import Bridge
from bridge.fakes import Behaviour, FakeSites

pytestmark = pytest.mark.e2e


async def _tab_of(bridge: Bridge, key: str) -> int:
    entry = await bridge.store.get_session_async(key, "chatgpt")
    assert entry is not None and entry.tab_id is not None
    return entry.tab_id


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


async def test_a_tab_recorded_for_another_project_is_not_taken(
    bridge: Bridge, fakes: FakeSites
) -> None:
    await bridge.ask("chatgpt", "Project A's question", session_key="project-a")
    owned = await _tab_of(bridge, "project-a")
    other = Bridge(bridge.browser, state_dir=bridge.store.root, session_key="project-c")
    result = await other.ask("chatgpt", "Project C's question")
    assert result.used.tab == "new_tab"
    assert await _tab_of(other, "project-c") != owned
