"""Browser and extension faults, in real Chromium with the real extension (cases 8-15).

Faults are injected through the launched browser's own DevTools port (``direct_cdp``): a
test-only pipe to a browser the tests started, never through the extension's code paths.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from bridge.app.facade import Bridge
from bridge.cdp.browser import Browser
from bridge.cdp.direct import DirectCdp
from bridge.cdp.session import CdpSession
from bridge.errors import DebuggerDetached, ExtensionDisconnected, NavigatedAway, TabCrashed
from bridge.fakes import Behaviour, FakeSites
from bridge.waiting import scaled
from tests.extension_worker import stop_worker

pytestmark = pytest.mark.e2e

QUESTION = "How do I read a file asynchronously in Python?"


async def _page_target(cdp: DirectCdp, url: str) -> str:
    return str(next(t for t in await cdp.targets("page") if t["url"] == url)["targetId"])


async def _asking_target(bridge: Bridge) -> str:
    """The DevTools target of the tab the running ChatGPT ask uses (not any ChatGPT tab)."""
    tab = await bridge.provider_tab("chatgpt")
    return next(t.target_id for t in await bridge.browser.list_tabs() if t.tab_id == tab.tab_id)


async def _stop_worker(browser: Browser, cdp: DirectCdp) -> None:
    """Stop the extension's service worker and wait until its link is gone."""
    link = browser.connector.current
    assert link is not None
    await stop_worker(cdp)
    async with asyncio.timeout(scaled(5.0)):
        await link.closed  # type: ignore[attr-defined]


@pytest.mark.reliability(8)
async def test_a_worker_stopped_while_idle_answers_the_next_command_at_the_wake_alarm(
    extension_link: Browser, direct_cdp: DirectCdp, tab: CdpSession, pages: str
) -> None:
    await tab.navigate(f"{pages}/")
    await _stop_worker(extension_link, direct_cdp)
    # The worker's wake alarm (every 1.5 s while bridge is in use) brings it back and the
    # command waits for the new link: about 2 s on a quiet machine. The bound is generous
    # (two alarm periods and a slow start) so a loaded CI run does not fail a working wake.
    async with asyncio.timeout(scaled(4.0)):
        assert await tab.evaluate("document.title") == "home"


@pytest.mark.reliability(12)
async def test_an_attachment_survives_a_worker_restart_and_is_reused(
    extension_link: Browser, direct_cdp: DirectCdp, tab: CdpSession, pages: str
) -> None:
    await tab.navigate(f"{pages}/console")
    await tab.send("Runtime.enable")
    await _stop_worker(extension_link, direct_cdp)
    link = await extension_link.transport()
    reply = await link.request("attachTab", {"tabId": tab.tab_id}, timeout=scaled(10.0))
    assert reply["reused"] is True  # the extension found its own attachment alive
    # Reused, not re-made: Runtime stays enabled without asking again, events still come.
    logged = tab.expect_event(
        "Runtime.consoleAPICalled", lambda p: p["args"][0].get("value") == "after restart"
    )
    await tab.evaluate("console.log('after restart')")
    await logged.wait(scaled(5.0))


@pytest.mark.reliability(13)
@pytest.mark.reliability(14)
async def test_a_tab_taken_to_chrome_urls_says_so_then_continues_when_back(
    extension_link: Browser, direct_cdp: DirectCdp, tab: CdpSession, pages: str
) -> None:
    await tab.navigate(f"{pages}/")
    await tab.send("Page.enable")
    waiter = tab.expect_event("Page.frameNavigated")
    pending = asyncio.ensure_future(tab.evaluate("new Promise(() => {})", await_promise=True))
    session = await direct_cdp.attach(await _page_target(direct_cdp, f"{pages}/"))
    # Chrome takes an extension's debugger away from a tab that shows a chrome:// page.
    await direct_cdp.call("Page.navigate", {"url": "chrome://version"}, session)
    async with asyncio.timeout(scaled(5.0)):
        with pytest.raises(DebuggerDetached, match="may not debug"):
            await waiter.wait(30)
        with pytest.raises(DebuggerDetached):  # Chrome's own reply may come first
            await pending
    # While it shows chrome://: a clear error, nothing half-attached, the session alive.
    with pytest.raises(DebuggerDetached, match="attaches again as soon as"):
        await tab.evaluate("1")
    assert tab.ended is None
    listed = {t.tab_id: t for t in await extension_link.list_tabs()}
    assert not listed[tab.tab_id].attached_here
    # Back on a web page: the same session continues, its Page events included. (Each try
    # is one attach attempt answered by Chrome: refused until the navigation commits.)
    await direct_cdp.call("Page.navigate", {"url": f"{pages}/console"}, session)
    async with asyncio.timeout(scaled(10.0)):
        while True:
            try:
                title = await tab.evaluate("document.title")
            except DebuggerDetached:
                continue
            if title == "console":
                break
    loaded = tab.expect_event("Page.loadEventFired")
    await tab.send("Page.reload")
    await loaded.wait(scaled(10.0))


@pytest.mark.reliability(15)
async def test_a_crash_mid_command_fails_typed_at_once_and_a_reload_recovers(
    direct_cdp: DirectCdp, tab: CdpSession, pages: str
) -> None:
    await tab.navigate(f"{pages}/")
    pending = asyncio.ensure_future(tab.evaluate("new Promise(() => {})", await_promise=True))
    crashed = tab.expect_event("Inspector.targetCrashed")
    session = await direct_cdp.attach(await _page_target(direct_cdp, f"{pages}/"))
    crash = asyncio.ensure_future(direct_cdp.call("Page.crash", {}, session, timeout=5))
    await crashed.wait(scaled(10.0))  # Chrome's part: the renderer is gone
    async with asyncio.timeout(scaled(1.0)):  # bridge's part: what waits ends at once
        with pytest.raises(TabCrashed, match="reload"):
            await pending
    with pytest.raises(TabCrashed):  # and at once from then on, not at a deadline
        await asyncio.wait_for(tab.evaluate("1"), scaled(1.0))
    crash.cancel()
    loaded = tab.expect_event("Page.loadEventFired")
    await tab.send("Page.reload")  # what gets through to a crashed page: loading it again
    await loaded.wait(scaled(10.0))
    assert await tab.evaluate("document.title") == "home"


@pytest.mark.reliability(15)
async def test_a_crash_mid_ask_fails_it_typed_at_once_with_state_files_whole(
    bridge: Bridge, fakes: FakeSites, direct_cdp: DirectCdp
) -> None:
    await bridge.ask("chatgpt", QUESTION, new_chat=True)  # a session entry, a history line
    fakes.chatgpt.queue(Behaviour(length="long", chunk_chars=10, chunk_interval_ms=50))
    asking = asyncio.ensure_future(bridge.ask("chatgpt", QUESTION, new_chat=True))
    await fakes.chatgpt.wait_for_record_async(  # this ask's answer (the long one) streaming
        lambda r: r.behaviour.length == "long" and r.first_token_at is not None, 30
    )
    asking_tab = await bridge.provider_tab("chatgpt")
    crashed = asking_tab.expect_event("Inspector.targetCrashed")
    session = await direct_cdp.attach(await _asking_target(bridge))
    crash = asyncio.ensure_future(direct_cdp.call("Page.crash", {}, session, timeout=5))
    await crashed.wait(scaled(10.0))  # Chrome's part: the renderer is gone
    async with asyncio.timeout(scaled(1.0)):  # bridge's part: the ask ends at once
        with pytest.raises(TabCrashed):
            await asyncio.shield(asking)
    crash.cancel()
    sessions = json.loads(bridge.store.sessions_path.read_text())
    assert sessions  # still whole JSON, with the first ask's entry
    for line in bridge.store.history_path.read_text().splitlines():
        json.loads(line)  # every line whole


@pytest.mark.reliability(9)
async def test_a_worker_stopped_mid_command_fails_it_typed_at_once_and_the_next_works(
    extension_link: Browser, direct_cdp: DirectCdp, tab: CdpSession, pages: str
) -> None:
    await tab.navigate(f"{pages}/")
    pending = asyncio.ensure_future(tab.evaluate("new Promise(() => {})", await_promise=True))
    started = time.monotonic()
    await stop_worker(direct_cdp)
    with pytest.raises(ExtensionDisconnected):
        await asyncio.wait_for(pending, scaled(5.0))
    assert time.monotonic() - started < scaled(5.0)
    async with asyncio.timeout(scaled(3.0)):
        assert await tab.evaluate("document.title") == "home"


@pytest.mark.reliability(15)
async def test_a_tab_navigated_away_mid_ask_fails_it_typed_at_once(
    bridge: Bridge, fakes: FakeSites, direct_cdp: DirectCdp, pages: str
) -> None:
    fakes.chatgpt.queue(Behaviour(length="long", chunk_chars=10, chunk_interval_ms=50))
    asking = asyncio.ensure_future(bridge.ask("chatgpt", QUESTION, new_chat=True))
    await fakes.chatgpt.wait_for_record_async(lambda r: r.first_token_at is not None, 30)
    session = await direct_cdp.attach(await _asking_target(bridge))
    await direct_cdp.call("Page.navigate", {"url": f"{pages}/"}, session)
    async with asyncio.timeout(scaled(1.0)):
        with pytest.raises(NavigatedAway, match="ask again"):
            await asyncio.shield(asking)


@pytest.mark.reliability(15)
async def test_a_frozen_tab_still_answers(
    direct_cdp: DirectCdp, tab: CdpSession, pages: str
) -> None:
    """Chrome freezes background tabs to save power; DevTools commands still run in them, so
    a frozen tab answers rather than hanging (no error needed: the call succeeds)."""
    await tab.navigate(f"{pages}/")
    session = await direct_cdp.attach(await _page_target(direct_cdp, f"{pages}/"))
    await direct_cdp.call("Page.setWebLifecycleState", {"state": "frozen"}, session)
    try:
        async with asyncio.timeout(scaled(1.0)):
            assert await tab.evaluate("document.title") == "home"
    finally:
        await direct_cdp.call("Page.setWebLifecycleState", {"state": "active"}, session)
