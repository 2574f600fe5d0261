"""Idle links, a link lost under an MCP client, a browser the person restarts (cases 10, 21, 26)."""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bridge.app.facade import Bridge
from bridge.app.launcher import LaunchedBrowser, LaunchOptions
from bridge.cdp.browser import Browser
from bridge.cdp.direct import DirectCdp
from bridge.fakes import FakeSites
from bridge.link.relay import Relay
from bridge.mcp.server import build_server
from bridge.waiting import scaled
from tests.extension_worker import stop_worker
from tests.idle import IdleBrowsers

pytestmark = pytest.mark.e2e

QUESTION = "How do I read a file asynchronously in Python?"


@pytest.mark.reliability(10)
@pytest.mark.parametrize(("idle", "pings"), [("35 s", 3), ("5 min", 20)])
async def test_after_idling_the_next_command_answers_on_the_same_link(
    idle_browsers: IdleBrowsers, idle: str, pings: int
) -> None:
    """Past MV3's 30 s idle stop, and long after it: the link stays up by itself. Time
    passes as keepalive pings (one per 15 s), each an event this test waits for. The
    browser was started and left alone when the session began (tests/idle.py), so the
    idle time has mostly passed while other tests ran: one browser per case, untouched
    until this command."""
    found = await idle_browsers.check(idle, pings)
    assert not found.error, found.error
    assert found.title == "home"
    assert found.same_link, f"the link dropped while idle ({idle})"


@pytest.mark.reliability(21)
async def test_an_mcp_call_in_flight_when_the_link_drops_fails_typed_and_the_next_works(
    bridge: Bridge, direct_cdp: DirectCdp, pages: str
) -> None:
    async with Client(build_server(lambda: bridge, groups=("browser",))) as client:
        opened = await client.call_tool("browser_navigate", {"url": f"{pages}/"})
        assert not opened.is_error, opened.content[0].text  # type: ignore[union-attr]
        hanging = asyncio.ensure_future(
            client.call_tool("browser_evaluate", {"function": "() => new Promise(() => {})"})
        )
        link = bridge.browser.connector.current
        assert link is not None
        async with asyncio.timeout(scaled(10.0)):  # the call has reached the browser
            while not any(m == "cdpCommand" for m, _ in _pending(link)):
                await bridge.browser.list_tabs()
        await stop_worker(direct_cdp)
        failed = await asyncio.wait_for(hanging, scaled(5.0))
        assert failed.is_error
        assert "[extension_disconnected]" in failed.content[0].text  # type: ignore[union-attr]
        again = await asyncio.wait_for(
            client.call_tool("browser_evaluate", {"function": "() => document.title"}),
            scaled(5.0),
        )
        assert not again.is_error and "home" in again.content[0].text  # type: ignore[union-attr]


def _pending(link: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(method, params) for method, params, _ in link._pending.values()]


@pytest.mark.reliability(26)
async def test_a_browser_restarted_by_the_person_is_found_again_with_its_chat_tab(
    fake_sites: FakeSites, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The person quits the browser and starts it again with the same profile: bridge takes
    the new instance's link and asks in the restored ChatGPT tab, found by its URL."""
    profile = Path(tempfile.mkdtemp(prefix="bridge-profile-keep-"))
    fake_sites.chatgpt.reset()
    args = [*fake_sites.chromium_args(), "--restore-last-session"]

    def browser() -> LaunchedBrowser:
        # The person's own browser (not an island): its host hands over the person's secret.
        options = LaunchOptions(
            headless=True, profile_dir=profile, extra_args=args, island=False, debug_pipe=True
        )
        return LaunchedBrowser(options)

    relay = await Relay().start()  # the person's everyday relay: their secret
    try:
        first = await browser().start()
        try:
            await relay.wait_for_link(scaled(30.0))
            one = Bridge(Browser(relay), state_dir=tmp_path, session_key="restart")
            before = await one.ask("chatgpt", QUESTION, new_chat=True)
            chat_url = before.url
        finally:
            # The person quits (Chromium 156 no longer saves its session on SIGTERM).
            async with first.direct_cdp() as cdp:
                await cdp.call("Browser.close")
            assert first.process is not None
            await asyncio.wait_for(first.process.wait(), scaled(30.0))
            await first.stop()
        second = await browser().start()
        try:
            restarted = Browser(relay)
            # Chromium may restore the tab after the extension linked: each new tab is an
            # event (tabCreated), and the listing is read again after each.
            created = asyncio.Event()
            restarted.tab_created_listeners.append(lambda _: created.set())
            await relay.wait_for_link(scaled(30.0))
            async with asyncio.timeout(scaled(30.0)):
                while not (
                    restored := [t for t in await restarted.list_tabs() if t.url == chat_url]
                ):
                    await created.wait()
                    created.clear()
            assert len(restored) == 1, "Chromium restored the chat tab"
            two = Bridge(restarted, state_dir=tmp_path, session_key="restart")
            caplog.set_level(logging.INFO, logger="bridge.providers.tab")
            after = await two.ask("chatgpt", QUESTION)
            assert after.url == chat_url  # the same chat, not a new one
            chats = [t for t in await restarted.list_tabs() if t.url.startswith(chat_url)]
            # Found, not reopened; if not, why the restored tab was passed over.
            why = f"tab taken: {after.used.tab}; {[r.getMessage() for r in caplog.records]}"
            assert [t.tab_id for t in chats] == [restored[0].tab_id], why
        finally:
            await second.stop()
    finally:
        await relay.stop()
        shutil.rmtree(profile, ignore_errors=True)
