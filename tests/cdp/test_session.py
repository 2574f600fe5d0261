"""CdpSession end to end: real Chromium, the real extension, the real relay."""

from __future__ import annotations

import asyncio
import base64
import struct

import pytest

from bridge.cdp.browser import Browser
from bridge.cdp.direct import DirectCdp
from bridge.cdp.session import CdpSession, JavaScriptError
from bridge.errors import CdpError, DebuggerDetached, TabClosed

pytestmark = pytest.mark.e2e


async def test_evaluate_in_a_local_page(tab: CdpSession, pages: str) -> None:
    await tab.navigate(f"{pages}/")
    assert await tab.evaluate("document.querySelector('h1').textContent") == "bridge test page"
    assert await tab.evaluate("Promise.resolve(6 * 7)", await_promise=True) == 42


async def test_javascript_exception_is_a_typed_error(tab: CdpSession) -> None:
    with pytest.raises(JavaScriptError, match="boom"):
        await tab.evaluate("(() => { throw new Error('boom') })()")


async def test_cdp_error_carries_the_method(tab: CdpSession) -> None:
    with pytest.raises(CdpError, match=r"Nope\.nothing"):
        await tab.send("Nope.nothing")


async def test_commands_sent_together_run_in_order_and_the_first_failure_is_raised(
    tab: CdpSession,
) -> None:
    def append(letter: str) -> tuple[str, dict[str, str]]:
        return "Runtime.evaluate", {"expression": f"window.seq = (window.seq || '') + '{letter}'"}

    await tab.evaluate("window.seq = ''")
    results = await tab.send_all([append(c) for c in "abcdefghij"])
    assert [r["result"]["value"] for r in results][-1] == "abcdefghij"
    assert await tab.evaluate("window.seq") == "abcdefghij"
    # A failing command in the middle: the ones after it were sent and ran all the same.
    with pytest.raises(CdpError, match=r"Nope\.nothing"):
        await tab.send_all([append("x"), ("Nope.nothing", {}), append("y")])
    assert await tab.evaluate("window.seq") == "abcdefghijxy"


async def test_console_events_arrive(tab: CdpSession, pages: str) -> None:
    await tab.navigate(f"{pages}/console")
    await tab.send("Runtime.enable")
    logged = tab.expect_event(
        "Runtime.consoleAPICalled", lambda p: p["args"][0].get("value") == "clicked"
    )
    await tab.evaluate("document.getElementById('b').click()")
    params = await logged.wait(10)
    assert [a.get("value") for a in params["args"]] == ["clicked", 42]


async def test_listeners_see_every_event_until_unsubscribed(tab: CdpSession) -> None:
    await tab.send("Runtime.enable")
    seen: list[str] = []
    unsubscribe = tab.on("Runtime.consoleAPICalled", lambda p: seen.append(p["args"][0]["value"]))
    last = tab.expect_event("Runtime.consoleAPICalled", lambda p: p["args"][0]["value"] == "c")
    await tab.evaluate("console.log('a'); console.log('b'); console.log('c')")
    await last.wait(10)
    unsubscribe()
    assert seen == ["a", "b", "c"]


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


async def test_screenshot_over_2mb_arrives_whole(tab: CdpSession, pages: str) -> None:
    await tab.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1920, "height": 1080, "deviceScaleFactor": 2, "mobile": False},
    )
    await tab.navigate(f"{pages}/noise")
    assert await tab.evaluate("document.title") == "noise ready"
    shot = await tab.send("Page.captureScreenshot", {"format": "png"}, timeout=60)
    png = base64.b64decode(shot["data"])
    assert len(png) > 2 * 1024 * 1024
    assert _png_size(png) == (3840, 2160)
    assert png.endswith(b"IEND\xaeB`\x82")  # the last chunk is there: nothing was cut


@pytest.mark.reliability(15)
async def test_tab_closed_during_a_command_fails_fast(
    tab: CdpSession, direct_cdp: DirectCdp, pages: str
) -> None:
    await tab.navigate(f"{pages}/")
    # A command that would never finish by itself (default timeout is 30 s).
    never = asyncio.ensure_future(tab.evaluate("new Promise(() => {})", await_promise=True))
    waiter = tab.expect_event("Page.frameNavigated")
    target = next(t for t in await direct_cdp.targets("page") if t["url"] == f"{pages}/")
    await direct_cdp.call("Target.closeTarget", {"targetId": target["targetId"]})
    # Bounded well below the command's own timeout: "tab closed" must not wait for it.
    async with asyncio.timeout(5):
        with pytest.raises(TabClosed):
            await never
        with pytest.raises(TabClosed):
            await waiter.wait(30)
    with pytest.raises(TabClosed):
        await tab.send("Runtime.evaluate", {"expression": "1"})


async def test_new_tab_in_the_background_does_not_take_focus(
    extension_link: Browser, pages: str
) -> None:
    before = {t.tab_id for t in await extension_link.list_tabs() if t.active}
    session = await extension_link.new_tab(f"{pages}/", active=False)
    try:
        after = {t.tab_id for t in await extension_link.list_tabs() if t.active}
        assert session.tab_id not in after
        assert after == before
    finally:
        await session.close()


@pytest.mark.reliability(14)
async def test_debugger_detached_ends_waits_at_once_with_the_reason(
    tab: CdpSession, direct_cdp: DirectCdp, pages: str
) -> None:
    await tab.navigate(f"{pages}/")
    waiter = tab.expect_event("Page.frameNavigated")
    pending = asyncio.ensure_future(tab.evaluate("new Promise(() => {})", await_promise=True))
    target = next(t for t in await direct_cdp.targets("page") if t["url"] == f"{pages}/")
    session = await direct_cdp.attach(target["targetId"])
    # Chrome takes an extension's debugger away from a tab that opens a chrome:// page.
    await direct_cdp.call("Page.navigate", {"url": "chrome://version"}, session)
    async with asyncio.timeout(5):
        with pytest.raises(DebuggerDetached, match="chrome://"):
            await waiter.wait(30)
        with pytest.raises((DebuggerDetached, CdpError)):
            await pending
    with pytest.raises(DebuggerDetached):
        await tab.send("Runtime.evaluate", {"expression": "1"})
