"""Session routing and endings through the transport seam: no browser, no sockets.

A ``MockConnector`` plays the extension: a handler answers commands, the test emits the
events Chrome would send and drops links. These run in milliseconds; the same behaviour is
proved end to end in real Chromium by tests/cdp/test_session.py and tests/test_extension.py.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from bridge.cdp.browser import Browser, ending_of
from bridge.errors import (
    BridgeTimeout,
    CdpError,
    CommandFailed,
    DebuggerDetached,
    ExtensionDisconnected,
    TabClosed,
    TabCrashed,
)
from bridge.link.transport import MockConnector, MockTransport
from bridge.wire.protocol import Event

Params = dict[str, Any]


class FakeExtension:
    """Answers like the extension: tabs 1-3 exist; cdpCommand echoes unless told to hang."""

    def __init__(self) -> None:
        self.tabs = {1, 2, 3}
        self.hang: set[str] = set()  # CDP methods that never get an answer

    async def __call__(self, method: str, params: Params) -> Params:
        if method == "attachTab":
            if params["tabId"] not in self.tabs:
                raise CommandFailed(method, "no_tab", "no such tab")
            return {}
        if method == "cdpCommand":
            if params["method"] in self.hang:
                await asyncio.Future()  # a browser that never answers
            if params["method"] == "Bad.method":
                raise CdpError("Bad.method", "'Bad.method' wasn't found", -32601)
            return {"echo": params["method"], "tabId": params["tabId"]}
        if method == "createTab":
            tab_id = max(self.tabs) + 1
            self.tabs.add(tab_id)
            return {"tabId": tab_id}
        return {}


@pytest.fixture
def ext() -> FakeExtension:
    return FakeExtension()


@pytest.fixture
async def setup(ext: FakeExtension) -> tuple[MockConnector, MockTransport, Browser]:
    connector = MockConnector()
    transport = connector.connect_new(ext)
    return connector, transport, Browser(connector, connect_timeout=1.0)


def cdp_methods(transport: MockTransport) -> list[str]:
    return [p["method"] if m == "cdpCommand" else m for m, p in transport.requests]


async def test_commands_go_to_their_tab_and_replies_come_back(setup: Any) -> None:
    _, transport, browser = setup
    one, two = await browser.attach(1), await browser.attach(2)
    assert await one.send("Page.enable") == {"echo": "Page.enable", "tabId": 1}
    assert await two.send("DOM.enable") == {"echo": "DOM.enable", "tabId": 2}
    assert cdp_methods(transport) == ["attachTab", "attachTab", "Page.enable", "DOM.enable"]


async def test_a_cdp_error_is_typed(setup: Any) -> None:
    _, _, browser = setup
    tab = await browser.attach(1)
    with pytest.raises(CdpError, match=r"Bad\.method"):
        await tab.send("Bad.method")


async def test_events_reach_only_their_tab(setup: Any) -> None:
    _, transport, browser = setup
    one, two = await browser.attach(1), await browser.attach(2)
    seen_one: list[Params] = []
    seen_two: list[Params] = []
    one.on("Page.loadEventFired", seen_one.append)
    two.on("Page.loadEventFired", seen_two.append)
    waiter = two.expect_event("Page.loadEventFired", lambda p: p["n"] == 2)
    transport.cdp_event(1, "Page.loadEventFired", {"n": 1})
    transport.cdp_event(2, "Page.loadEventFired", {"n": 2})
    transport.cdp_event(9, "Page.loadEventFired", {"n": 9})  # no session: ignored
    assert await waiter.wait(1.0) == {"n": 2}
    assert seen_one == [{"n": 1}] and seen_two == [{"n": 2}]


async def test_a_listener_that_raises_does_not_stop_the_others(setup: Any) -> None:
    _, transport, browser = setup
    tab = await browser.attach(1)
    seen: list[Params] = []

    def broken(params: Params) -> None:
        raise RuntimeError("listener bug")

    tab.on("Runtime.consoleAPICalled", broken)
    tab.on("Runtime.consoleAPICalled", seen.append)
    waiter = tab.expect_event("Runtime.consoleAPICalled")
    transport.cdp_event(1, "Runtime.consoleAPICalled", {"x": 1})
    assert seen == [{"x": 1}]
    assert await waiter.wait(1.0) == {"x": 1}


async def test_a_stream_keeps_order_and_times_out_with_none(setup: Any) -> None:
    _, transport, browser = setup
    tab = await browser.attach(1)
    with tab.stream("Runtime.bindingCalled", lambda p: p["name"] == "mine") as events:
        for i in range(3):
            transport.cdp_event(1, "Runtime.bindingCalled", {"name": "mine", "i": i})
            transport.cdp_event(1, "Runtime.bindingCalled", {"name": "other", "i": i})
        assert [(await events.next(1.0) or {})["i"] for _ in range(3)] == [0, 1, 2]
        assert await events.next(0.01) is None


@pytest.mark.parametrize(
    ("event", "params", "error", "detail"),
    [
        ("tabRemoved", {"tabId": 1}, TabClosed, "tab 1 was closed"),
        ("tabDetached", {"tabId": 1, "reason": "target_closed"}, TabClosed, "tab 1 was closed"),
        (
            "tabDetached",
            {"tabId": 1, "reason": "canceled_by_user", "tabExists": True},
            DebuggerDetached,
            "pressed Cancel",
        ),
    ],
)
async def test_endings_fail_pending_commands_and_waits_at_once(
    setup: Any, ext: FakeExtension, event: str, params: Params, error: type, detail: str
) -> None:
    _, transport, browser = setup
    ext.hang.add("Runtime.evaluate")
    tab, other = await browser.attach(1), await browser.attach(2)
    pending = asyncio.ensure_future(tab.send("Runtime.evaluate", timeout=30))
    waiter = tab.expect_event("Page.loadEventFired")
    with tab.stream("Runtime.bindingCalled") as events:
        other_pending = asyncio.ensure_future(other.send("Runtime.evaluate", timeout=30))
        await asyncio.sleep(0)  # let the command reach the (mock) extension
        started = time.monotonic()
        transport.emit(event, params)
        with pytest.raises(error, match=detail):
            await pending
        with pytest.raises(error):
            await waiter.wait(30)
        with pytest.raises(error):
            await events.next(30)
    assert time.monotonic() - started < 1.0  # at once, not at any deadline
    assert isinstance(tab.ended, error) and 1 not in browser.sessions
    with pytest.raises(error):  # and from now on
        await tab.send("Page.enable")
    with pytest.raises(error):
        tab.expect_event("Page.loadEventFired").future.result()
    assert not other_pending.done() and other.ended is None  # the other tab is untouched
    other_pending.cancel()


async def test_link_lost_fails_what_is_pending_and_the_next_command_reattaches(
    setup: Any, ext: FakeExtension
) -> None:
    connector, transport, browser = setup
    ext.hang.add("Runtime.evaluate")
    tab = await browser.attach(1)
    pending = asyncio.ensure_future(tab.send("Runtime.evaluate", timeout=30))
    waiter = tab.expect_event("Page.loadEventFired")
    await asyncio.sleep(0)
    transport.drop("service worker stopped")
    with pytest.raises(ExtensionDisconnected):
        await pending
    with pytest.raises(ExtensionDisconnected):
        await waiter.wait(30)
    assert tab.ended is None  # the tab itself is fine

    # The worker comes back: a new transport; the session re-attaches on its next command.
    ext.hang.clear()
    fresh = connector.connect_new(ext)
    assert await tab.send("Runtime.evaluate") == {"echo": "Runtime.evaluate", "tabId": 1}
    assert cdp_methods(fresh) == ["attachTab", "Runtime.evaluate"]
    await tab.send("Page.enable")  # attached now: no second attachTab
    assert cdp_methods(fresh) == ["attachTab", "Runtime.evaluate", "Page.enable"]


async def test_reattaching_to_a_tab_that_is_gone_ends_the_session(
    setup: Any, ext: FakeExtension
) -> None:
    connector, transport, browser = setup
    tab = await browser.attach(3)
    transport.drop()
    ext.tabs.discard(3)
    connector.connect_new(ext)
    with pytest.raises(TabClosed, match="no longer exists"):
        await tab.send("Page.enable")
    assert isinstance(tab.ended, TabClosed) and 3 not in browser.sessions


async def test_events_of_a_replaced_link_are_ignored(setup: Any, ext: FakeExtension) -> None:
    connector, old, browser = setup
    tab = await browser.attach(1)
    seen: list[Params] = []
    tab.on("Page.loadEventFired", seen.append)
    connector.connect_new(ext)
    old.cdp_event(1, "Page.loadEventFired", {"stale": True})
    old.emit("tabRemoved", {"tabId": 1})
    assert seen == [] and tab.ended is None


async def test_no_transport_is_a_clear_error() -> None:
    browser = Browser(MockConnector(), connect_timeout=0.01)
    with pytest.raises(Exception, match="no mock transport connected"):
        await browser.list_tabs()


async def test_a_command_that_never_answers_times_out_typed(setup: Any, ext: FakeExtension) -> None:
    _, _, browser = setup
    ext.hang.add("Runtime.evaluate")
    tab = await browser.attach(1)
    with pytest.raises(BridgeTimeout, match=r"Runtime\.evaluate|cdpCommand"):
        await tab.send("Runtime.evaluate", timeout=0.01)


@pytest.mark.reliability(15)
async def test_a_crash_fails_what_waits_and_what_is_pending_until_the_tab_loads_again(
    setup: Any, ext: FakeExtension
) -> None:
    _, transport, browser = setup
    ext.hang.add("Runtime.evaluate")
    tab = await browser.attach(1)
    waiter = tab.expect_event("Page.loadEventFired")
    pending = asyncio.ensure_future(tab.send("Runtime.evaluate", timeout=30))
    await asyncio.sleep(0)  # let the command reach the (mock) extension
    transport.cdp_event(1, "Inspector.targetCrashed")
    with pytest.raises(TabCrashed, match="crashed; reload"):
        await waiter.wait(30)
    with pytest.raises(TabCrashed):
        await asyncio.wait_for(pending, 1)  # a crashed page never answers: failed at once
    with pytest.raises(TabCrashed):
        await tab.send("Runtime.evaluate", timeout=30)
    assert tab.ended is None
    assert (await tab.send("Page.reload"))["echo"] == "Page.reload"  # the way out
    transport.emit("tabUpdated", {"tabId": 1, "status": "loading"})
    ext.hang.clear()
    assert (await tab.send("Runtime.evaluate"))["echo"] == "Runtime.evaluate"


async def test_close_and_detach_end_the_session_with_their_own_error(setup: Any) -> None:
    _, transport, browser = setup
    one, two = await browser.attach(1), await browser.attach(2)
    await one.close()
    await two.detach()
    assert isinstance(one.ended, TabClosed) and isinstance(two.ended, DebuggerDetached)
    assert ("closeTab", {"tabId": 1}) in transport.requests
    assert ("detachTab", {"tabId": 2}) in transport.requests
    assert browser.sessions == {}


@pytest.mark.reliability(13)
async def test_a_debugger_taken_from_a_tab_that_stays_is_attached_again(
    setup: Any, ext: FakeExtension
) -> None:
    """Chrome took the debugger (the tab went to chrome://, or Chrome forced it off): what
    waits fails at once, typed; the session lives on, and its next command attaches again
    with the domains it had enabled, once the tab shows a page extensions may debug."""
    _, transport, browser = setup
    ext.hang.add("Runtime.evaluate")
    tab = await browser.attach(1)
    await tab.send("Page.enable")
    await tab.send("Runtime.enable", {"x": 1})
    pending = asyncio.ensure_future(tab.send("Runtime.evaluate", timeout=30))
    waiter = tab.expect_event("Page.loadEventFired")
    await asyncio.sleep(0)  # let the command reach the (mock) extension
    transport.emit("tabDetached", {"tabId": 1, "reason": "target_closed", "tabExists": True})
    with pytest.raises(DebuggerDetached, match="may not debug"):
        await pending
    with pytest.raises(DebuggerDetached):
        await waiter.wait(30)
    assert tab.ended is None and browser.sessions[1] is tab
    ext.hang.clear()
    transport.requests.clear()
    assert await tab.send("DOM.getDocument") == {"echo": "DOM.getDocument", "tabId": 1}
    assert cdp_methods(transport) == [
        "attachTab",
        "Page.enable",
        "Runtime.enable",
        "DOM.getDocument",
    ]
    assert transport.requests[2][1]["params"] == {"x": 1}  # enabled as it was


@pytest.mark.reliability(14)
async def test_while_the_tab_shows_a_page_extensions_may_not_debug_commands_say_so(
    setup: Any, ext: FakeExtension
) -> None:
    _, transport, browser = setup
    tab = await browser.attach(1)
    transport.emit("tabDetached", {"tabId": 1, "reason": "target_closed", "tabExists": True})
    refused = {"attach": True}

    async def handler(method: str, params: Params) -> Params:
        if method == "attachTab" and refused["attach"]:
            raise CommandFailed(method, "attach_failed", "Cannot access a chrome:// URL")
        return await ext(method, params)

    transport.handler = handler
    with pytest.raises(DebuggerDetached, match=r"attaches again as soon as.*chrome://"):
        await tab.send("Runtime.evaluate")
    assert tab.ended is None  # no zombie: not attached, not dead, and says why
    refused["attach"] = False
    assert await tab.send("Runtime.evaluate") == {"echo": "Runtime.evaluate", "tabId": 1}


@pytest.mark.reliability(11)
async def test_cancel_on_the_debugging_bar_releases_every_tab_and_nothing_reattaches(
    setup: Any, ext: FakeExtension
) -> None:
    """Chrome detaches every tab with ``canceled_by_user``; bridge ends each session, says
    what happened, and sends no attachTab of its own; an explicit attach may ask again."""
    _, transport, browser = setup
    tabs = [await browser.attach(i) for i in (1, 2, 3)]
    transport.requests.clear()
    for tab in tabs:
        transport.emit("tabDetached", {"tabId": tab.tab_id, "reason": "canceled_by_user"})
    for tab in tabs:
        assert isinstance(tab.ended, DebuggerDetached)
        assert "pressed Cancel" in str(tab.ended) and "only when asked" in str(tab.ended)
        with pytest.raises(DebuggerDetached, match="pressed Cancel"):
            await tab.send("Runtime.evaluate")
    assert browser.sessions == {} and transport.requests == []  # never re-attached on its own
    again = await browser.attach(1)  # the next explicit call may
    assert again.ended is None and cdp_methods(transport) == ["attachTab"]


def test_ending_of_is_none_for_other_events() -> None:
    assert ending_of(Event("tabUpdated", {"tabId": 1, "url": "x"})) is None
    assert ending_of(Event("cdpEvent", {"tabId": 1, "method": "x"})) is None


async def test_tab_updates_keep_the_sessions_url_and_title(setup: Any) -> None:
    _, transport, browser = setup
    tab = await browser.attach(1)
    transport.emit("tabUpdated", {"tabId": 1, "url": "https://example.test/a", "status": "loading"})
    transport.emit("tabUpdated", {"tabId": 1, "title": "A page"})
    transport.emit("tabUpdated", {"tabId": 2, "title": "not attached: ignored"})
    assert (tab.url, tab.title) == ("https://example.test/a", "A page")
