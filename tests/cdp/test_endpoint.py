"""The DevTools endpoint with Playwright for Python as the real client, through the extension
in real Chromium: what a pytest-playwright suite or a script pointed at bridge would do."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Playwright, async_playwright, expect

from bridge.app.runtime import Runtime
from bridge.cdp.browser import Browser as BridgeBrowser
from bridge.cdp.direct import DirectCdp
from bridge.cdp.session import CdpSession
from bridge.wire.extension import EXTENSION_ID
from tests.raw_cdp import RawCdp, raw_cdp
from tests.tools.site import serve

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    yield from serve()


@pytest_asyncio.fixture(loop_scope="session")
async def playwright() -> AsyncIterator[Playwright]:
    async with async_playwright() as pw:
        yield pw


@pytest_asyncio.fixture(loop_scope="session")
async def browser(playwright: Playwright, bridge_cdp_url: str) -> AsyncIterator[Browser]:
    connected = await playwright.chromium.connect_over_cdp(bridge_cdp_url, timeout=30_000)
    yield connected
    await connected.close()


def _token(url: str) -> str:
    match = re.search(r"token=([^&]+)", url)
    assert match
    return match.group(1)


async def test_connect_by_http_url_with_the_header(
    playwright: Playwright, bridge_cdp_url: str, bridge_runtime: Runtime
) -> None:
    headers = {"Authorization": f"Bearer {_token(bridge_cdp_url)}"}
    browser = await playwright.chromium.connect_over_cdp(
        bridge_runtime.cdp_http_url, headers=headers, timeout=30_000
    )
    try:
        assert browser.version.startswith(("156", "1")) and len(browser.contexts) == 1
        urls = [p.url for p in browser.contexts[0].pages]
        assert any(u.startswith("data:text/html") for u in urls)  # the existing start page
    finally:
        await browser.close()


async def test_a_form_with_locators_and_expect(browser: Browser, site: str) -> None:
    page = await browser.contexts[0].new_page()
    await page.goto(f"{site}/form")
    await page.locator("#name").fill("Ada")
    await page.get_by_label("Country").select_option("jp")
    await page.get_by_role("button", name="Create account").click()
    await expect(page.locator("#out")).to_have_text(re.compile(r'"name":"Ada".*"country":"jp"'))
    assert await page.evaluate("() => 6 * 7") == 42
    png = await page.screenshot()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    await page.close()


async def test_page_close_closes_the_tab_and_browser_close_keeps_the_browser(
    playwright: Playwright, bridge_cdp_url: str, extension_link: BridgeBrowser, site: str
) -> None:
    browser = await playwright.chromium.connect_over_cdp(bridge_cdp_url, timeout=30_000)
    page = await browser.contexts[0].new_page()
    await page.goto(f"{site}/form")
    before = {t.tab_id for t in await extension_link.list_tabs()}
    await page.close()
    after = {t.tab_id for t in await extension_link.list_tabs()}
    assert len(before - after) == 1
    await browser.close()
    assert await extension_link.list_tabs()  # the person's browser is still there


async def test_cross_origin_iframe_route_and_cdp_session(browser: Browser, site: str) -> None:
    page = await browser.contexts[0].new_page()
    await page.route("**/api/data*", lambda route: route.fulfill(json={"answer": "routed"}))
    await page.goto(f"{site}/fetch")
    await page.click("#go")
    await expect(page.locator("#r")).to_have_text("routed")
    await page.goto(f"{site}/frames")
    frame = page.frame_locator("#cross")
    await frame.get_by_role("button").click()
    await expect(frame.get_by_role("button")).to_have_text(re.compile(r"Clicked inside localhost"))
    session = await page.context.new_cdp_session(page)
    result = await session.send("Runtime.evaluate", {"expression": "1 + 1", "returnByValue": True})
    assert result["result"]["value"] == 2
    await page.close()


async def test_popup_and_dialog(browser: Browser, site: str) -> None:
    page = await browser.contexts[0].new_page()
    await page.goto(f"{site}/dialogs")
    page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept("Bob")))
    await page.click("#prompt")
    await expect(page.locator("#r")).to_have_text("name=Bob")
    await page.goto(f"{site}/popup")
    async with page.expect_popup(timeout=15_000) as popup_info:
        await page.click("#blank")
    popup = await popup_info.value
    await popup.wait_for_load_state()
    assert popup.url.endswith("/form")
    await popup.close()
    await page.close()


async def test_new_contexts_group_their_pages(
    playwright: Playwright, bridge_cdp_url: str, extension_link: BridgeBrowser, site: str
) -> None:
    """browser.new_context() works (its pages share the person's profile) and closing it,
    or disconnecting, closes its tabs."""
    browser = await playwright.chromium.connect_over_cdp(bridge_cdp_url, timeout=30_000)
    before = {t.tab_id for t in await extension_link.list_tabs()}
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(f"{site}/form")
    await page.fill("#name", "Ada")
    assert await page.input_value("#name") == "Ada"
    assert len({t.tab_id for t in await extension_link.list_tabs()} - before) == 1
    await context.close()
    assert {t.tab_id for t in await extension_link.list_tabs()} == before
    other = await browser.new_context()
    await (await other.new_page()).goto(f"{site}/dialogs")
    (left,) = {t.tab_id for t in await extension_link.list_tabs()} - before
    gone: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    extension_link.sessions[left].on_end(gone.set_result)  # the tab's end, as an event
    await browser.close()  # a client gone: its contexts' tabs go too
    await asyncio.wait_for(gone, 10)
    assert {t.tab_id for t in await extension_link.list_tabs()} == before


async def test_what_an_extension_cannot_set_is_refused_not_faked(browser: Browser) -> None:
    """A proxy or permissions for a context would silently not apply: the client is told."""
    with pytest.raises(Exception, match="proxy per context is not available"):
        await browser.new_context(proxy={"server": "http://127.0.0.1:9"})
    with pytest.raises(Exception, match="granting permissions is not available"):
        await browser.new_context(permissions=["geolocation"])
    assert len(browser.contexts) == 1  # neither left a context behind


async def test_cookies_through_a_page_in_use_but_never_cleared_wholesale(
    browser: Browser, site: str
) -> None:
    context = browser.contexts[0]
    page = await context.new_page()
    await page.goto(f"{site}/form")
    await context.add_cookies([{"name": "bridge-test", "value": "1", "url": site}])
    assert await page.evaluate("document.cookie") == "bridge-test=1"
    assert [c["value"] for c in await context.cookies(site) if c["name"] == "bridge-test"] == ["1"]
    with pytest.raises(Exception, match="would sign the person out"):
        await context.clear_cookies()
    await context.add_cookies(  # expired: deleted (what a test does instead of clearing)
        [{"name": "bridge-test", "value": "", "url": site, "expires": 1}]
    )
    assert await page.evaluate("document.cookie") == ""
    await page.close()


async def test_a_client_gone_detaches_only_the_tabs_it_attached(
    playwright: Playwright,
    bridge_cdp_url: str,
    extension_link: BridgeBrowser,
    direct_cdp: DirectCdp,
    tab: CdpSession,
    site: str,
) -> None:
    """The person's tab a client drove is let go of when it leaves (no debugging bar left
    behind); a tab bridge had attached before the client came stays attached."""
    created = await direct_cdp.call("Target.createTarget", {"url": f"{site}/form"})
    try:
        browser = await playwright.chromium.connect_over_cdp(bridge_cdp_url, timeout=30_000)
        page = next(p for p in browser.contexts[0].pages if p.url == f"{site}/form")
        await page.fill("#name", "Ada")  # attaches the person's tab through the endpoint
        listed = {t.url: t for t in await extension_link.list_tabs()}
        assert listed[f"{site}/form"].attached_here
        await browser.close()
        async with asyncio.timeout(10):  # the endpoint sees the socket close just after
            while (listed := {t.url: t for t in await extension_link.list_tabs()})[
                f"{site}/form"
            ].attached_here:
                pass  # each round trip is the event waited for
        assert not listed[f"{site}/form"].attached_here  # released with the client
        assert any(t.tab_id == tab.tab_id and t.attached_here for t in listed.values())
    finally:
        await direct_cdp.call("Target.closeTarget", {"targetId": created["targetId"]})


async def test_a_tab_the_person_opens_later_appears(
    browser: Browser, extension_link: BridgeBrowser, site: str
) -> None:
    context = browser.contexts[0]
    async with context.expect_page(timeout=15_000) as new_page:
        opened = await extension_link.new_tab(f"{site}/dialogs")  # not through Playwright
    page = await new_page.value
    await page.wait_for_load_state()
    assert await page.title() == "Dialogs"
    await extension_link.close_tab(opened.tab_id)


async def test_a_download(browser: Browser, site: str) -> None:
    page = await browser.contexts[0].new_page()
    await page.goto(f"{site}/download")
    async with page.expect_download(timeout=15_000) as download_info:
        await page.click("#dl")
    download = await download_info.value
    assert download.suggested_filename == "report.csv"
    assert Path(await download.path()).read_bytes() == b"a,b\n1,2\n"
    await page.close()


@pytest.mark.reliability(22)
async def test_two_clients_at_once(playwright: Playwright, bridge_cdp_url: str, site: str) -> None:
    one = await playwright.chromium.connect_over_cdp(bridge_cdp_url, timeout=30_000)
    two = await playwright.chromium.connect_over_cdp(bridge_cdp_url, timeout=30_000)
    try:
        a = await one.contexts[0].new_page()
        b = await two.contexts[0].new_page()
        await asyncio.gather(a.goto(f"{site}/form"), b.goto(f"{site}/dialogs"))
        assert await a.title() == "Sign up" and await b.title() == "Dialogs"
        await one.close()  # the other client goes on
        assert await b.evaluate("() => document.title") == "Dialogs"
        await b.close()
    finally:
        await two.close()


@pytest.mark.parametrize("path", ["/json/version", "/json/version/", "/json/list", "/json", "/cdp"])
@pytest.mark.reliability(1)
@pytest.mark.reliability(3)
async def test_no_token_wrong_token_or_a_web_origin_is_refused(
    bridge_runtime: Runtime, bridge_cdp_url: str, path: str
) -> None:
    base = bridge_runtime.cdp_http_url
    token = _token(bridge_cdp_url)
    cases = [
        ({}, 401),
        ({"Authorization": "Bearer wrong"}, 401),
        ({"Authorization": f"Bearer {token}", "Origin": "https://evil.example"}, 403),
        ({"Authorization": f"Bearer {token}", "Host": "evil.example"}, 421),
    ]
    for headers, status in cases:
        code, body = await asyncio.to_thread(_get, base + path, headers)
        assert code == status, (path, headers)
        assert token not in body and "webSocketDebuggerUrl" not in body
        assert "Access-Control-Allow-Origin" not in body
    code, body = await asyncio.to_thread(_get, f"{base}/json/version?token=wrong", {})
    assert code == 401
    if path.startswith("/json/version"):
        code, body = await asyncio.to_thread(
            _get, base + path, {"Authorization": f"Bearer {token}"}
        )
        assert code == 200 and '"webSocketDebuggerUrl"' in body and token not in body


def _get(url: str, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode() + str(dict(exc.headers))


# -- the URL policy: what a client holding the token may open and drive ---------------------

POPUP = f"chrome-extension://{EXTENSION_ID}/popup.html"
REFUSED_URLS = [
    ("file:///etc/passwd", "--allow-file-urls"),
    (POPUP, "the bridge extension's own page"),
    ("chrome-extension://abcdefghijklmnopabcdefghijklmnop/options.html", "extension pages"),
]


def _refused(reply: dict[str, object], why: str) -> bool:
    error = reply.get("error")
    return isinstance(error, dict) and why in str(error.get("message")) and "result" not in reply


async def _href(cdp: RawCdp, session: str) -> str:
    found = await cdp.result(
        "Runtime.evaluate", {"expression": "location.href", "returnByValue": True}, session
    )
    return str(found["result"]["value"])


@pytest.mark.reliability(37)
@pytest.mark.reliability(7)
async def test_file_and_extension_urls_are_refused_in_every_session(
    bridge_cdp_url: str, extension_link: BridgeBrowser, site: str
) -> None:
    """The attacker holds the token and writes CDP by hand: new tabs, the page's session,
    an iframe's child session. Nothing opens a local file or an extension page."""
    before = {t.tab_id for t in await extension_link.list_tabs()}
    async with raw_cdp(bridge_cdp_url) as cdp:
        for url, why in REFUSED_URLS:
            assert _refused(await cdp.call("Target.createTarget", {"url": url}), why), url
        frames = f"{site}/frames"
        created = await cdp.result("Target.createTarget", {"url": frames})
        attach = {"targetId": created["targetId"], "flatten": True}
        page = (await cdp.result("Target.attachToTarget", attach))["sessionId"]
        auto = {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True}
        await cdp.result("Target.setAutoAttach", auto, page)
        iframe = await cdp.next_event(
            lambda e: (
                e.get("method") == "Target.attachedToTarget"
                and e.get("sessionId") == page
                and e["params"]["targetInfo"]["type"] == "iframe"
            )
        )
        child = iframe["params"]["sessionId"]
        inner = await _href(cdp, child)
        assert inner.endswith("/inner")
        for session in (page, child):
            for url, why in REFUSED_URLS:
                navigate = await cdp.call("Page.navigate", {"url": url}, session)
                assert _refused(navigate, why), (session, url, navigate)
                # Chrome lets a page's session open a new tab too: the same policy.
                opened = await cdp.call("Target.createTarget", {"url": url}, session)
                assert _refused(opened, why), (session, url, opened)
        assert await _href(cdp, page) == frames and await _href(cdp, child) == inner
        listed = {t.tab_id: t.url for t in await extension_link.list_tabs()}
        assert {tab: url for tab, url in listed.items() if tab not in before} == {
            next(tab for tab, url in listed.items() if url == frames and tab not in before): frames
        }  # the one page the client opened, still where it was; no other tab
        assert not [u for u in listed.values() if u.startswith(("file:", "chrome-extension:"))]
        await cdp.result("Target.closeTarget", {"targetId": created["targetId"]})


@pytest.mark.reliability(37)
@pytest.mark.reliability(7)
async def test_extension_pages_are_never_listed_announced_or_attached(
    bridge_cdp_url: str, bridge_runtime: Runtime, direct_cdp: DirectCdp, site: str
) -> None:
    """The person has bridge's popup open in a tab (where a script has chrome.debugger):
    no client learns of that tab, attaches to it or sends it a command."""
    popup = await direct_cdp.call("Target.createTarget", {"url": POPUP})
    opened: list[str] = [popup["targetId"]]
    try:
        async with raw_cdp(bridge_cdp_url) as cdp:
            infos = (await cdp.result("Target.getTargets"))["targetInfos"]
            assert popup["targetId"] not in [i["targetId"] for i in infos] and infos
            await cdp.result("Target.setDiscoverTargets", {"discover": True})
            auto = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}
            await cdp.result("Target.setAutoAttach", auto)  # announces all it will: then answers
            assert popup["targetId"] not in json.dumps(cdp.events)
            for method in ("Target.attachToTarget", "Target.getTargetInfo", "Target.closeTarget"):
                reply = await cdp.call(method, {"targetId": popup["targetId"], "flatten": True})
                assert _refused(reply, "No target with given id found"), (method, reply)
            # Opened while the client auto-attaches: a web page is announced, the popup never
            # (the popup's tab came first, so its tabCreated was in before the page's).
            again = await direct_cdp.call("Target.createTarget", {"url": POPUP})
            page = await direct_cdp.call("Target.createTarget", {"url": f"{site}/form"})
            opened += [again["targetId"], page["targetId"]]
            await cdp.next_event(
                lambda e: (
                    e.get("method") == "Target.attachedToTarget"
                    and e["params"]["targetInfo"]["targetId"] == page["targetId"]
                )
            )
            assert again["targetId"] not in json.dumps(cdp.events)
        headers = {"Authorization": f"Bearer {_token(bridge_cdp_url)}"}
        url = f"{bridge_runtime.cdp_http_url}/json/list"
        code, body = await asyncio.to_thread(_get, url, headers)
        assert code == 200 and page["targetId"] in body and "chrome-extension:" not in body
    finally:
        for target in opened:
            await direct_cdp.call("Target.closeTarget", {"targetId": target})


@pytest.mark.reliability(37)
@pytest.mark.reliability(7)
async def test_a_tab_that_shows_an_extension_page_is_let_go_and_stays_refused(
    bridge_cdp_url: str, direct_cdp: DirectCdp, site: str
) -> None:
    """A tab the client drives goes to bridge's popup (the person went there): the client's
    session ends and takes no more commands. Back at a web page, the tab stays refused: its
    history holds the popup, where ``history.back()`` in the page would lead."""
    async with raw_cdp(bridge_cdp_url) as cdp:
        created = await cdp.result("Target.createTarget", {"url": f"{site}/form"})
        target = created["targetId"]
        attach = {"targetId": target, "flatten": True}
        try:
            session = (await cdp.result("Target.attachToTarget", attach))["sessionId"]
            assert await _href(cdp, session) == f"{site}/form"
            person = await direct_cdp.attach(target)
            await direct_cdp.call("Page.navigate", {"url": POPUP}, person)
            await cdp.next_event(
                lambda e: (
                    e.get("method") == "Target.detachedFromTarget"
                    and e["params"]["sessionId"] == session
                )
            )
            evaluate = {"expression": "typeof chrome.debugger", "returnByValue": True}
            gone = await cdp.call("Runtime.evaluate", evaluate, session)
            assert _refused(gone, "Session with given id not found"), gone
            await direct_cdp.call("Page.navigate", {"url": f"{site}/dialogs"}, person)
            await direct_cdp.call("Runtime.evaluate", {"expression": "1"}, person)
            listed = (await cdp.result("Target.getTargets"))["targetInfos"]
            assert [i["url"] for i in listed if i["targetId"] == target] == [f"{site}/dialogs"]
            again = (await cdp.result("Target.attachToTarget", attach))["sessionId"]
            back = {"expression": "history.back()", "returnByValue": True}
            refused = await cdp.call("Runtime.evaluate", back, again)
            assert _refused(refused, "history holds a page of the bridge extension"), refused
            assert (
                await direct_cdp.call("Runtime.evaluate", {"expression": "location.href"}, person)
            )["result"]["value"] == f"{site}/dialogs"  # history.back() never ran
        finally:
            await direct_cdp.call("Target.closeTarget", {"targetId": target})


async def test_with_allow_file_urls_a_client_opens_local_files(
    bridge_cdp_url: str,
    bridge_runtime: Runtime,
    extension_link: BridgeBrowser,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The person's --allow-file-urls opens file: URLs to clients as to the browser tools
    (bridge.app.runtime passes the setting; here it is set on the session's endpoint)."""
    assert bridge_runtime.relay.cdp is not None
    monkeypatch.setattr(bridge_runtime.relay.cdp, "allow_file_urls", True)
    page = tmp_path / "local.html"
    page.write_text("<title>local</title>")
    async with raw_cdp(bridge_cdp_url) as cdp:
        created = await cdp.result("Target.createTarget", {"url": page.as_uri()})
        try:
            attach = {"targetId": created["targetId"], "flatten": True}
            session = (await cdp.result("Target.attachToTarget", attach))["sessionId"]
            assert await _href(cdp, session) == page.as_uri()
            listed = [t.url for t in await extension_link.list_tabs()]
            assert page.as_uri() in listed
            refused = await cdp.call("Page.navigate", {"url": POPUP}, session)
            assert _refused(refused, "the bridge extension's own page"), refused
        finally:
            await cdp.result("Target.closeTarget", {"targetId": created["targetId"]})
