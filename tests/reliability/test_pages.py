"""Reliability cases 16-19: pages of unusual shapes, dialogs, background windows, many tabs.

Already proven elsewhere, by tests this module does not repeat:
- 17: tests/tools/test_browsing.py::test_dialogs_never_hang_a_call (a click opens alert,
  confirm or prompt), ::test_a_beforeunload_dialog_is_reported (a navigation opens
  beforeunload);
- 18: tests/tools/test_browsing.py::test_background_tab_acts_and_screenshots_without_focus
  (a background tab in the person's window), tests/providers/test_asking.py::
  test_background_tab_text_is_revealed_without_stealing_focus (an ask in such a tab).
Here: what those leave out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Awaitable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bridge.app.facade import Bridge
from bridge.app.launcher import LaunchedBrowser
from bridge.app.runtime import Runtime, RuntimeOptions
from bridge.cdp.browser import Browser
from bridge.cdp.direct import DirectCdp
from bridge.errors import BridgeError, BridgeTimeout, CommandFailed, TabClosed
from bridge.fakes import FakeSites
from bridge.testing.plugin import BridgeOptions, NewTab
from bridge.tools.browsing import BrowserTools, DialogOpen
from bridge.waiting import scaled
from bridge.wire.extension import extension_dir
from tests.reliability.site import serve

pytestmark = pytest.mark.e2e

PNG = b"\x89PNG\r\n\x1a\n"
LOADED = (
    "document.readyState === 'complete' ? location.href"
    " : new Promise((r) => addEventListener('load', () => r(location.href)))"
)


@pytest.fixture(scope="module")
def rsite() -> Iterator[str]:
    """The pages of tests/reliability/site.py, at http://127.0.0.1:PORT."""
    yield from serve()


# -- 16: a page with its own service worker; a page with another extension's frame -------


@pytest.mark.reliability(16)
async def test_a_page_controlled_by_its_own_service_worker_is_driven(
    tools: BrowserTools,
    rsite: str,
    new_tab: NewTab,
    extension_link: Browser,
) -> None:
    url = f"{rsite}/sw"
    await tools.navigate(url)
    await tools.wait(text="controlled by the service worker", time=20)
    snap = await tools.snapshot()
    assert 'button "Ask the worker"' in snap, snap
    await tools.click("#ask")  # a fetch only the service worker answers
    await tools.wait(text="hello from the service worker", time=20)
    script = "() => navigator.serviceWorker.controller.scriptURL"
    assert await tools.evaluate(script) == f"{rsite}/sw.js"
    controlled = (
        "navigator.serviceWorker.controller && navigator.serviceWorker.controller.scriptURL"
    )
    # bridge.cdp.browser: a new tab attached before it loads the controlled page...
    fresh = await new_tab(url)
    assert await fresh.evaluate(controlled) == f"{rsite}/sw.js"
    # ...and a tab that already shows it, opened without bridge, attached afterwards.
    created = await extension_link.request("createTab", {"url": f"{url}?later", "active": False})
    try:
        later = await extension_link.attach(int(created["tabId"]))
        # Attached so early it may still show the initial about:blank: wait for the load.
        loaded = later.expect_event("Page.loadEventFired")
        await later.send("Page.enable")
        shown = await later.evaluate("document.readyState === 'complete' ? location.href : ''")
        if shown in ("", "about:blank"):
            await loaded.wait(scaled(20.0))
        else:
            loaded.close()
        assert await later.evaluate("location.href") == f"{url}?later"
        assert await later.evaluate(controlled) == f"{rsite}/sw.js"
    finally:
        await extension_link.close_tab(int(created["tabId"]))


OTHER_MANIFEST = {
    "manifest_version": 3,
    "name": "another extension (bridge reliability test)",
    "version": "1.0",
    "web_accessible_resources": [{"resources": ["frame.html"], "matches": ["<all_urls>"]}],
    # Marks one page with the extension's id: how the test learns the id from the browser.
    "content_scripts": [
        {"matches": ["http://127.0.0.1/ext-whoami*"], "js": ["whoami.js"], "run_at": "document_end"}
    ],
}


def _other_extension(root: Path) -> Path:
    """A second unpacked MV3 extension whose frame.html any page may embed."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps(OTHER_MANIFEST))
    (root / "whoami.js").write_text(
        "document.documentElement.dataset.otherExtension = chrome.runtime.id;\n"
    )
    (root / "frame.html").write_text(
        "<!doctype html><title>other frame</title><p>inside the other extension</p>"
        "<script src=frame.js></script>"
    )
    (root / "frame.js").write_text("parent.postMessage('hello from ' + location.origin, '*');\n")
    return root.resolve()


@pytest_asyncio.fixture(loop_scope="session")
async def two_extensions(
    tmp_path: Path, launched_browser: LaunchedBrowser | None, bridge_options: BridgeOptions
) -> AsyncIterator[Runtime]:
    """A browser of this test's own with bridge's extension and another one, and its relay.

    Chromium honours the last ``--load-extension`` and ``--disable-extensions-except`` it
    is given; extra arguments come after bridge's own, so both lists name both extensions.
    """
    if launched_browser is None:
        pytest.skip("launches a browser of its own with a second extension (not in --live mode)")
    both = f"{extension_dir().resolve()},{_other_extension(tmp_path / 'other-extension')}"
    options = RuntimeOptions(  # an island of its own: not the session browser's relays
        launch=True,
        headless=True,
        isolated=True,
        browser_path=bridge_options.browser_path,
        chrome_args=[f"--disable-extensions-except={both}", f"--load-extension={both}"],
        state_dir=tmp_path / "state",
    )
    async with Runtime(options) as runtime:
        await runtime.connected(scaled(30.0))
        yield runtime


# What bridge says when Chrome keeps the debugger off such a page: Chrome's own words, or
# that the tab shows a page extensions may not debug.
REFUSED = re.compile(
    r"Cannot access a chrome-extension:// URL of different extension|extensions may not debug"
)


@pytest.mark.reliability(16)
async def test_a_page_with_another_extensions_frame_is_refused_typed_and_clearly(
    two_extensions: Runtime, rsite: str
) -> None:
    """Chrome refuses ``chrome.debugger`` on a page that embeds another extension's frame.

    Attaching to a tab that shows such a page fails at once with Chrome's reason; driving a
    tab into such a page fails typed and bounded, saying why, or (while Chrome holds the
    frame back) answers; either way bridge keeps serving its other tabs.
    """
    browser = two_extensions.browser
    tools = two_extensions.bridge.browser_tools("case-16")
    await tools.navigate(f"{rsite}/ext-whoami")
    await tools.wait(selector="html[data-other-extension]", time=20)
    other_id = await tools.evaluate("() => document.documentElement.dataset.otherExtension")
    assert re.fullmatch(r"[a-p]{32}", str(other_id)), other_id
    page = f"{rsite}/ext-frame?id={other_id}"

    # A tab bridge is not attached to shows the page; its frame says hello to the listener.
    await tools.navigate(f"{rsite}/ext-listen")
    listener = tools.current
    created = await browser.request("createTab", {"url": page, "active": False})
    shown = int(created["tabId"])
    await tools.wait(text=f"hello from chrome-extension://{other_id}", time=20)
    async with asyncio.timeout(scaled(15.0)):
        with pytest.raises(CommandFailed, match=REFUSED) as refused:
            await browser.attach(shown)
        assert refused.value.error_code == "attach_failed"
        with pytest.raises(BridgeError, match=REFUSED):
            await tools.evaluate("() => document.title", tab=shown)
    assert await tools.evaluate("() => 1 + 1", tab=listener) == 2

    # Tabs bridge is attached to go to the page: each call ends at once, typed, saying why.
    outcomes: list[str] = []
    for n in range(2):
        driver = two_extensions.bridge.browser_tools(f"case-16-{n}")
        outcomes.append(await _outcome(driver.navigate(f"{page}&n={n}")))
        outcomes.append(await _outcome(driver.evaluate("() => document.title")))
        outcomes.append(await _outcome(driver.snapshot()))
        outcomes.append(await _outcome(_new_tab_evaluate(browser, f"{page}&new={n}")))
    assert await tools.evaluate("() => 1 + 1", tab=listener) == 2, outcomes


async def _outcome(call: Awaitable[object]) -> str:
    """ "answered", or the name of the typed error that names the cause; bounded."""
    try:
        async with asyncio.timeout(scaled(30.0)):
            await call
    except BridgeError as exc:
        assert REFUSED.search(str(exc)), f"{type(exc).__name__}: {exc}"
        return type(exc).__name__
    return "answered"


async def _new_tab_evaluate(browser: Browser, url: str) -> None:
    fresh = await browser.new_tab(url)
    await fresh.evaluate("document.title")


# -- 17: dialogs the existing tests leave out -----------------------------------------


@pytest.mark.reliability(17)
async def test_a_dialog_opened_by_evaluated_code_ends_the_call(
    tools: BrowserTools, rsite: str
) -> None:
    await tools.navigate(f"{rsite}/plain")
    async with asyncio.timeout(scaled(10.0)):  # the call's own timeout is 30 s
        with pytest.raises(DialogOpen, match=r"alert dialog .*'from evaluate'"):
            await tools.evaluate("() => { alert('from evaluate'); return 1 }")
    await tools.handle_dialog(True)
    assert await tools.evaluate("() => document.title") == "plain"


@pytest.mark.reliability(17)
async def test_a_dialog_a_timer_opens_during_a_wait_ends_the_wait(
    tools: BrowserTools, rsite: str
) -> None:
    await tools.navigate(f"{rsite}/plain")
    # The page's own timer; the wait is in the page long before it fires.
    delay_ms = int(scaled(1.0) * 1000)
    await tools.evaluate(
        f"() => {{ setTimeout(() => {{ document.body.dataset.answer = confirm('Leave?') }}, "
        f"{delay_ms}) }}"
    )
    async with asyncio.timeout(scaled(10.0)):  # the wait itself would last 20 s
        with pytest.raises(DialogOpen, match=r"confirm dialog .*'Leave\?'"):
            await tools.wait(text="never shows", time=20)
    await tools.handle_dialog(True)
    assert await tools.evaluate("() => document.body.dataset.answer") == "true"


# -- 18: a tab behind another in an unfocused window ------------------------------------


async def _show(direct_cdp: DirectCdp, target_id: str, url: str, *, opens: str = "") -> None:
    """Through the browser's own DevTools pipe (bridge not attached): load ``url`` in the
    tab, and then, with a user gesture, open ``opens`` in front of it in its window."""
    session = await direct_cdp.attach(target_id)
    try:
        await direct_cdp.call("Page.navigate", {"url": url}, session)
        loaded = await direct_cdp.call(
            "Runtime.evaluate",
            {"expression": LOADED, "awaitPromise": True, "returnByValue": True},
            session,
        )
        assert loaded["result"].get("value") == url, loaded
        if opens:
            await direct_cdp.call(
                "Runtime.evaluate",
                {"expression": f"void window.open({opens!r})", "userGesture": True},
                session,
            )
    finally:
        await direct_cdp.call("Target.detachFromTarget", {"sessionId": session})


async def _evaluate_direct(direct_cdp: DirectCdp, target_id: str, expression: str) -> Any:
    session = await direct_cdp.attach(target_id)
    try:
        result = await direct_cdp.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session
        )
        return result["result"].get("value")
    finally:
        await direct_cdp.call("Target.detachFromTarget", {"sessionId": session})


async def _active(browser: Browser) -> dict[int, bool]:
    return {t.tab_id: t.active for t in await browser.list_tabs()}


@contextlib.asynccontextmanager
async def _behind_in_a_background_window(
    direct_cdp: DirectCdp, browser: Browser, url: str, rsite: str
) -> AsyncIterator[tuple[int, str]]:
    """``url`` in a tab behind another in a second, unfocused window; the person's own
    window (opened last, so focused) in front. Yields (the hidden tab's id, the person's
    DevTools target id); every tab it opened is closed afterwards."""
    before = {t.tab_id for t in await browser.list_tabs()}
    try:
        created = await direct_cdp.call(
            "Target.createTarget", {"url": "about:blank", "newWindow": True, "background": True}
        )
        hidden = created["targetId"]
        await _show(direct_cdp, hidden, url, opens=f"{rsite}/plain?front")
        person = (
            await direct_cdp.call("Target.createTarget", {"url": "about:blank", "newWindow": True})
        )["targetId"]
        await _show(direct_cdp, person, f"{rsite}/plain?person")
        tabs = await browser.list_tabs()
        tab_id = next(t.tab_id for t in tabs if t.target_id == hidden)
        front = next(t for t in tabs if t.url == f"{rsite}/plain?front")
        assert front.active and not next(t for t in tabs if t.tab_id == tab_id).active
        yield tab_id, person
    finally:
        for info in await browser.list_tabs():
            if info.tab_id not in before:
                with contextlib.suppress(BridgeError):
                    await browser.close_tab(info.tab_id)


# Headless Chromium keeps no window focus (activating another window fires no blur in
# the person's page), so what shows stolen focus there is a tab made active; under
# --headed the person's document.hasFocus() is meaningful too.
FOCUS = "[document.hasFocus(), document.visibilityState]"


@pytest.mark.reliability(18)
async def test_a_tab_behind_another_in_an_unfocused_window_is_read_without_taking_focus(
    tools: BrowserTools, rsite: str, direct_cdp: DirectCdp, extension_link: Browser
) -> None:
    async with _behind_in_a_background_window(
        direct_cdp, extension_link, f"{rsite}/plain?hidden", rsite
    ) as (tab_id, person):
        active = await _active(extension_link)
        assert await _evaluate_direct(direct_cdp, person, FOCUS) == [True, "visible"]
        for _ in range(2):
            png, kind = await tools.screenshot(tab=tab_id)
            assert kind == "png" and png[:8] == PNG
        snap = await tools.snapshot(tab=tab_id)
        assert snap.startswith(f"tab {tab_id}: {rsite}/plain?hidden")
        assert 'heading "Plain page"' in snap, snap
        assert await tools.evaluate("() => document.body.innerText", tab=tab_id) == (
            "Plain page\n\nready"
        )
        assert await _active(extension_link) == active  # no tab brought forward anywhere
        assert await _evaluate_direct(direct_cdp, person, FOCUS) == [True, "visible"]


@pytest.mark.reliability(18)
async def test_an_ask_in_a_tab_behind_another_in_an_unfocused_window(
    bridge: Bridge, fakes: FakeSites, rsite: str, direct_cdp: DirectCdp, extension_link: Browser
) -> None:
    home = "https://chatgpt.com/"
    async with _behind_in_a_background_window(direct_cdp, extension_link, home, rsite) as (
        tab_id,
        person,
    ):
        bridge.store.put_session(bridge.session_key, "chatgpt", home, tab_id)
        active = await _active(extension_link)
        result = await bridge.ask("chatgpt", "How do I read files asynchronously in Python?")
        assert result.used.tab == "session"  # the tab in the background window
        sent = fakes.chatgpt.records[-1].answer
        assert result.answer.startswith(sent.strip().splitlines()[0])
        assert result.used.focus_emulated and not result.used.brought_to_front
        assert await _active(extension_link) == active
        assert await _evaluate_direct(direct_cdp, person, FOCUS) == [True, "visible"]


# -- 19: twenty tabs, one hung ---------------------------------------------------------


@pytest.mark.reliability(19)
async def test_one_hung_tab_of_twenty_never_stalls_the_other_nineteen(
    new_tab: NewTab, rsite: str
) -> None:
    # The hung tab on another site (localhost, not 127.0.0.1): Chrome gives it a renderer of
    # its own, so only bridge could make the others wait for it.
    other_site = rsite.replace("127.0.0.1", "localhost")
    tabs = [await new_tab(f"{rsite}/plain?n={i}") for i in range(19)]
    hung_tab = await new_tab(f"{other_site}/plain?hung")
    hung = asyncio.ensure_future(hung_tab.evaluate("while (true) {}", timeout=scaled(120.0)))
    try:
        answers = await asyncio.wait_for(
            asyncio.gather(*(t.evaluate("1 + 1") for t in tabs)), scaled(30.0)
        )
        assert answers == [2] * 19
        assert not hung.done()
        # A call to the hung tab itself ends at its own deadline, typed.
        with pytest.raises(BridgeTimeout):
            await hung_tab.evaluate("1 + 1", timeout=scaled(2.0))
        searches = await asyncio.wait_for(
            asyncio.gather(*(t.evaluate("location.search") for t in tabs)), scaled(30.0)
        )
        assert searches == [f"?n={i}" for i in range(19)]
        await hung_tab.close()
        with pytest.raises(TabClosed):
            await asyncio.wait_for(hung, scaled(10.0))  # at once, not at its 120 s deadline
    finally:
        hung.cancel()
