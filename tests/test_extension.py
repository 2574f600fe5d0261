"""The MV3 extension's life: discovery, reconnection, service-worker restarts, many relays."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest

from bridge.app.launcher import LaunchedBrowser
from bridge.cdp.browser import Browser
from bridge.cdp.direct import DirectCdp
from bridge.cdp.session import CdpSession
from bridge.errors import CdpError, CommandFailed, ExtensionDisconnected
from bridge.link.relay import Relay
from bridge.waiting import scaled
from bridge.wire.extension import EXTENSION_ID
from tests.extension_worker import stop_worker

pytestmark = pytest.mark.e2e


def _mine(launched_browser: LaunchedBrowser | None) -> LaunchedBrowser:
    if launched_browser is None:
        pytest.skip("needs the launched test browser (not in --live mode)")
    return launched_browser


@pytest.mark.reliability(20)
async def test_extension_connects_to_a_new_relay_within_a_second(
    extension_link: Browser, launched_browser: LaunchedBrowser | None
) -> None:
    browser = _mine(launched_browser)
    async with browser.relay() as second:
        started = time.monotonic()
        # The requirement is "connected within 1 s of the relay starting"; the bound here
        # is scaled for slow machines, and the measured figure is in the closing note.
        link = await second.wait_for_link(scaled(2.0))
        assert time.monotonic() - started < scaled(2.0)
        assert link.hello.extension_version
        assert link.instance_id == extension_link.connector.current.instance_id  # type: ignore[union-attr]


async def test_relay_restart_is_followed_by_a_working_command_within_2s(
    extension_link: Browser, launched_browser: LaunchedBrowser | None, pages: str
) -> None:
    browser = _mine(launched_browser)
    first = await browser.relay().start()
    port = first.port
    await first.wait_for_link(scaled(5.0))
    await first.stop()
    restarted = browser.relay(port=port)
    await restarted.start()
    try:
        other = Browser(restarted, connect_timeout=scaled(2.0))
        async with asyncio.timeout(scaled(2.0)):
            tabs = await other.list_tabs()
        assert any(t.url.startswith("data:text/html") for t in tabs)
    finally:
        await restarted.stop()


@pytest.mark.reliability(9)
async def test_stopped_service_worker_comes_back_and_the_next_command_works(
    extension_link: Browser, direct_cdp: DirectCdp, tab: CdpSession, pages: str
) -> None:
    await tab.navigate(f"{pages}/")
    link = extension_link.connector.current
    assert link is not None
    pending = asyncio.ensure_future(tab.evaluate("new Promise(() => {})", await_promise=True))
    await stop_worker(direct_cdp)
    # In flight when the worker died: fails at once, typed, instead of at its timeout.
    async with asyncio.timeout(scaled(5.0)):
        with pytest.raises(ExtensionDisconnected):
            await pending
    # The worker's alarm brings it back; the session re-attaches through the new link.
    async with asyncio.timeout(scaled(15.0)):
        assert await tab.evaluate("document.title") == "home"
    assert extension_link.connector.current is not link


@pytest.mark.reliability(22)
async def test_two_relays_are_served_at_once_without_crosstalk(
    extension_link: Browser, launched_browser: LaunchedBrowser | None, new_tab: object, pages: str
) -> None:
    browser = _mine(launched_browser)
    async with browser.relay() as second_relay:
        await second_relay.wait_for_link(scaled(5.0))
        second = Browser(second_relay)
        mine = await extension_link.new_tab(f"{pages}/console")
        theirs = await second.new_tab(f"{pages}/console")
        try:
            await mine.send("Runtime.enable")
            await theirs.send("Runtime.enable")
            seen_mine: list[str] = []
            seen_theirs: list[str] = []
            mine.on("Runtime.consoleAPICalled", lambda p: seen_mine.append(p["args"][0]["value"]))
            theirs.on(
                "Runtime.consoleAPICalled", lambda p: seen_theirs.append(p["args"][0]["value"])
            )
            done_mine = mine.expect_event("Runtime.consoleAPICalled")
            done_theirs = theirs.expect_event("Runtime.consoleAPICalled")
            await mine.evaluate("console.log('for the first relay')")
            await theirs.evaluate("console.log('for the second relay')")
            await done_mine.wait(10)
            await done_theirs.wait(10)
            assert seen_mine == ["for the first relay"]
            assert seen_theirs == ["for the second relay"]
            # Each relay owns its tabs: the other cannot drive them.
            link = second_relay.link
            assert link is not None
            with pytest.raises(CommandFailed) as refused:
                await link.request(
                    "cdpCommand",
                    {
                        "tabId": mine.tab_id,
                        "method": "Runtime.evaluate",
                        "params": {"expression": "1"},
                    },
                )
            assert refused.value.error_code == "not_attached"
            with pytest.raises(CommandFailed) as taken:
                await link.request("attachTab", {"tabId": mine.tab_id})
            assert taken.value.error_code == "attached_elsewhere"
        finally:
            await mine.close()
            await theirs.close()


@pytest.mark.reliability(6)
async def test_a_web_page_cannot_read_relay_info_or_open_the_extension_socket(
    tab: CdpSession, pages: str, relay: Relay
) -> None:
    await tab.navigate(f"{pages}/")
    port = relay.port
    outcome = await tab.evaluate(
        f"""(async () => {{
            const out = {{}};
            try {{ const r = await fetch('http://127.0.0.1:{port}/relay-info');
                   out.fetch = 'read ' + r.status + ' ' + (await r.text()).slice(0, 40); }}
            catch (e) {{ out.fetch = 'blocked'; }}
            try {{ const r = await fetch('http://127.0.0.1:{port}/relay-info', {{mode: 'no-cors'}});
                   out.noCors = r.type; }}
            catch (e) {{ out.noCors = 'blocked'; }}
            out.ws = await new Promise((resolve) => {{
                const ws = new WebSocket('ws://127.0.0.1:{port}/extension');
                ws.onopen = () => resolve('open');
                ws.onerror = () => resolve('refused');
            }});
            return out;
        }})()""",
        await_promise=True,
    )
    assert outcome["fetch"] == "blocked"
    assert outcome["noCors"] in {"opaque", "blocked"}  # an opaque response has no readable body
    assert outcome["ws"] == "refused"
    assert relay.links == [relay.link]


async def test_listing_tabs_reports_which_are_attached_here(
    extension_link: Browser, tab: CdpSession, direct_cdp: DirectCdp, pages: str
) -> None:
    created = await direct_cdp.call("Target.createTarget", {"url": f"{pages}/"})
    try:
        listed = await extension_link.list_tabs()
        assert {t.tab_id: t for t in listed}[tab.tab_id].attached_here
        by_target = {t.target_id: t for t in listed}
        assert not by_target[created["targetId"]].attached_here  # a tab nobody attached
    finally:
        await direct_cdp.call("Target.closeTarget", {"targetId": created["targetId"]})


async def test_popup_shows_the_relay_and_the_attached_tab(
    relay: Relay, direct_cdp: DirectCdp, tab: CdpSession
) -> None:
    created = await direct_cdp.call(
        "Target.createTarget", {"url": f"chrome-extension://{EXTENSION_ID}/popup.html"}
    )
    session = await direct_cdp.attach(created["targetId"])
    port = relay.port
    relay_row = f"127.0.0.1:{port} — connected"
    tab_row = f"tab {tab.tab_id} → relay {port}"
    # Resolves on the DOM mutation that shows both rows, bounded by a page-side deadline.
    expression = f"""new Promise((resolve) => {{
        const text = () => (document.body ? document.body.innerText : '');
        const ok = () => text().includes({relay_row!r}) && text().includes({tab_row!r});
        if (ok()) return resolve(text());
        new MutationObserver(() => ok() && resolve(text()))
            .observe(document, {{subtree: true, childList: true, characterData: true}});
        setTimeout(() => resolve(text()), 10000);
    }})"""
    try:
        text = ""
        for _ in range(3):  # the first evaluation may hit the initial about:blank going away
            try:
                result = await direct_cdp.call(
                    "Runtime.evaluate",
                    {"expression": expression, "awaitPromise": True, "returnByValue": True},
                    session,
                )
            except CdpError as exc:
                if "context" not in str(exc):
                    raise
                continue
            text = result["result"]["value"]
            break
        assert relay_row in text
        assert tab_row in text
    finally:
        await direct_cdp.call("Target.closeTarget", {"targetId": created["targetId"]})


# -- errors are never answered with errors (no ping-pong between relay and extension) ------------


@pytest.mark.reliability(5)
async def test_a_malformed_frame_starts_no_error_ping_pong(
    extension_link: Browser, relay: Relay
) -> None:
    link = await relay.wait_for_link(scaled(15.0))
    before = link.malformed_frames
    # The extension answers a frame it cannot read with {"id": null, "error": ...}. The relay
    # used to take that for a malformed frame and answer it, the extension answered that in
    # turn, and so on forever, each lap one more malformed frame counted here.
    await link.ws.send("not json")
    # The extension handles frames in order: its answer to the bad frame precedes this reply.
    await link.request("ping", timeout=scaled(10.0))
    first = link.malformed_frames
    assert first - before <= 1
    # A round trip later (a ping-pong would have gone another lap by now): no growth.
    await link.request("ping", timeout=scaled(10.0))
    assert link.malformed_frames == first


async def test_the_extension_never_answers_a_reply_or_an_error(
    extension_link: Browser, relay: Relay, caplog: pytest.LogCaptureFixture
) -> None:
    link = await relay.wait_for_link(scaled(15.0))
    caplog.set_level(logging.DEBUG, logger="bridge.link.extension_link")
    before = link.malformed_frames
    stray = [
        {"id": None, "error": {"code": "malformed", "message": "the relay's answer to junk"}},
        {"id": 2**40, "error": {"code": "x", "message": "an error for no command"}},
        {"id": 2**40 + 1, "result": {}},
    ]
    await link.ws.send(json.dumps(stray))
    # In order: anything the extension said back to those arrives before the ping's reply.
    await link.request("ping", timeout=scaled(10.0))
    heard = [r.getMessage() for r in caplog.records if r.name == "bridge.link.extension_link"]
    assert not [m for m in heard if "reports an error" in m or "not pending" in m], heard
    assert link.malformed_frames == before


# -- timeCdpCommand: the floor under a CDP round trip (docs/protocol.md#timing) -------------------


async def test_the_extension_times_a_cdp_command_on_a_tab_it_attached(
    extension_link: Browser, relay: Relay, tab: CdpSession
) -> None:
    link = await relay.wait_for_link(scaled(15.0))
    counted = {"expression": "window.timedCalls = (window.timedCalls || 0) + 1"}
    result = await link.request(
        "timeCdpCommand",
        {
            "tabId": tab.tab_id,
            "method": "Runtime.evaluate",
            "params": counted,
            "count": 12,
            "inFlight": 3,
            "rounds": 4,
        },
    )
    assert result["count"] == 12 and result["inFlight"] == 3
    assert len(result["perCallMs"]) == 4
    assert all(isinstance(ms, int | float) and ms >= 0 for ms in result["perCallMs"])
    # Each call reached the page: the command ran exactly count times, none dropped or repeated.
    assert await tab.evaluate("window.timedCalls") == 12
    # Defaults: 100 calls, one at a time, one round.
    plain = await link.request(
        "timeCdpCommand", {"tabId": tab.tab_id, "method": "Runtime.evaluate", "params": counted}
    )
    assert (plain["count"], plain["inFlight"], len(plain["perCallMs"])) == (100, 1, 1)
    assert await tab.evaluate("window.timedCalls") == 112


async def test_timing_refuses_what_a_cdp_command_would_refuse(
    extension_link: Browser, relay: Relay, tab: CdpSession
) -> None:
    link = await relay.wait_for_link(scaled(15.0))

    async def refused(params: dict[str, object]) -> str:
        with pytest.raises(CommandFailed) as failed:
            await link.request("timeCdpCommand", params)
        return failed.value.error_code

    evaluate = {"tabId": tab.tab_id, "method": "Runtime.evaluate", "params": {"expression": "1"}}
    # A tab this relay did not attach (here: no tab at all) is not this relay's to drive.
    assert await refused({**evaluate, "tabId": 2**31 - 1}) == "not_attached"
    assert await refused({**evaluate, "tabId": "one"}) == "bad_request"
    assert await refused({**evaluate, "method": ""}) == "bad_request"
    for bad in ({"count": 0}, {"count": 10001}, {"inFlight": 101}, {"rounds": 2, "count": 1}):
        assert await refused({**evaluate, **bad}) == "bad_request", bad
    assert await refused({**evaluate, "method": "Nope.nothing"}) == "cdp_error"
    # The tab still answers: a failed measurement leaves nothing behind.
    assert await tab.evaluate("1 + 1") == 2
