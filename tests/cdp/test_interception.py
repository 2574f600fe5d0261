"""The origin guard and read-only in real Chromium through the extension, played as an
attacker would: a page that redirects, frames, fetches or opens its way to a blocked origin.

One loopback server answers as two origins: http://127.0.0.1:PORT (allowed) and
http://localhost:PORT (blocked). It logs every request with the host it was sent to, so a
test asserts what matters: the blocked origin never heard of the request.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import pytest_asyncio

from bridge.cdp.browser import Browser
from bridge.errors import BridgeError, OriginBlocked, ReadOnlyRefused
from bridge.policy.guard import Guard
from bridge.policy.origins import OriginPolicy
from bridge.policy.routing import Route
from bridge.tools.browsing import BrowserTools, ToolHub
from bridge.waiting import scaled, wait_for
from tests.local_http import serve_http
from tests.raw_cdp import raw_cdp

pytestmark = pytest.mark.e2e

SEEN: list[tuple[str, str]] = []  # (Host header, path) of every request the server got
ROUTED: list[str] = []  # the X-Route header of each request that had one

PAGES = {
    "/": "<!doctype html><title>home</title><button id=b onclick=\"this.textContent='hit'\">"
    "press</button>",
    "/api": "real",
    "/frame": "<!doctype html><title>frame</title><iframe id=f src='{to}'></iframe>",
    "/oopif": "<!doctype html><title>oopif</title><script>window.ready = new Promise(r => "
    "addEventListener('message', e => e.data === 'ready' && r()));</script>"
    "<iframe id=f src='{to}'></iframe>",
    "/fetcher": "<!doctype html><title>fetcher</title><script>addEventListener('message', e =>"
    " fetch(e.data).then(r => r.text(), x => 'failed: ' + x.message)"
    ".then(t => parent.postMessage(t, '*'))); parent.postMessage('ready', '*');</script>",
    "/opener": "<!doctype html><title>opener</title><a id=a href='{to}' target=_blank>go</a>",
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        SEEN.append((self.headers.get("Host", ""), parts.path))
        if self.headers.get("X-Route") is not None:
            ROUTED.append(str(self.headers.get("X-Route")))
        query = parse_qs(parts.query)
        if parts.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", query["to"][0])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = PAGES.get(parts.path, "not found").replace("{to}", query.get("to", [""])[0])
        data = body.encode()
        self.send_response(200 if parts.path in PAGES else 404)
        self.send_header("Content-Type", "text/html" if body.startswith("<!") else "text/plain")
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def origins() -> Iterator[tuple[str, str]]:
    """(allowed base URL, blocked base URL): one server, two origins."""
    for url, port in serve_http(_Handler):
        yield url, f"http://localhost:{port}"


@pytest.fixture(scope="module")
def third_site() -> Iterator[str]:
    """A third site (127.0.0.2): an iframe from there is out of process in either origin."""
    server = ThreadingHTTPServer(("127.0.0.2", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.2:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def blocked_heard(blocked: str) -> list[str]:
    host = urlsplit(blocked).netloc
    return [path for seen_host, path in SEEN if seen_host == host]


@pytest_asyncio.fixture(loop_scope="session")
async def guarded(extension_link: Browser) -> AsyncIterator[Browser]:
    """The session's browser with a guard the test sets; the guard is lifted after it."""
    SEEN.clear()
    yield extension_link
    extension_link.guard = Guard()


FETCH = """(url) => fetch(url).then(r => r.text(), e => 'failed: ' + e.message)"""


async def fetch_from(tools: BrowserTools, url: str) -> str:
    return str(await tools.evaluate(f"() => ({FETCH})({url!r})"))


async def refused_by_guard(browser: Browser, tools: BrowserTools, blocked: str) -> None:
    """Until the tab's interception has refused a request to ``blocked`` (bounded)."""
    await browser.interceptions[tools.current or 0].refusal(blocked, scaled(10.0))


async def test_a_blocked_origin_is_neither_opened_nor_fetched(
    guarded: Browser, tools: BrowserTools, origins: tuple[str, str]
) -> None:
    allowed, blocked = origins
    guarded.guard = Guard(OriginPolicy.from_flags(None, blocked))
    with pytest.raises(OriginBlocked, match="--blocked-origins"):
        await tools.navigate(f"{blocked}/")
    await tools.navigate(f"{allowed}/")
    assert await fetch_from(tools, f"{allowed}/api") == "real"
    assert (await fetch_from(tools, f"{blocked}/api")).startswith("failed:")
    assert blocked_heard(blocked) == []


async def test_an_allowed_list_blocks_every_other_origin(
    guarded: Browser, tools: BrowserTools, origins: tuple[str, str]
) -> None:
    allowed, blocked = origins
    guarded.guard = Guard(OriginPolicy.from_flags(allowed, None))
    await tools.navigate(f"{allowed}/")
    with pytest.raises(OriginBlocked, match="--allowed-origins"):
        await tools.navigate(f"{blocked}/")
    assert (await fetch_from(tools, f"{blocked}/api")).startswith("failed:")
    assert blocked_heard(blocked) == []


async def test_a_redirect_to_a_blocked_origin_is_blocked(
    guarded: Browser, tools: BrowserTools, origins: tuple[str, str]
) -> None:
    allowed, blocked = origins
    guarded.guard = Guard(OriginPolicy.from_flags(None, blocked))
    await tools.navigate(f"{allowed}/")
    hop = f"{allowed}/redirect?to={blocked}/api"
    assert (await fetch_from(tools, hop)).startswith("failed:")  # a script's request
    with pytest.raises(BridgeError, match="ERR_BLOCKED_BY_CLIENT"):
        await tools.navigate(hop)  # and a document's: the page never gets there
    assert ("/redirect" in [p for _, p in SEEN]) and blocked_heard(blocked) == []


async def test_an_iframe_to_a_blocked_origin_is_blocked(
    guarded: Browser, tools: BrowserTools, origins: tuple[str, str]
) -> None:
    allowed, blocked = origins
    guarded.guard = Guard(OriginPolicy.from_flags(None, blocked))
    await tools.navigate(f"{allowed}/frame?to={blocked}/")
    await refused_by_guard(guarded, tools, blocked)
    assert blocked_heard(blocked) == []


async def test_a_pages_own_navigation_to_a_blocked_origin_is_blocked(
    guarded: Browser, tools: BrowserTools, origins: tuple[str, str]
) -> None:
    allowed, blocked = origins
    guarded.guard = Guard(OriginPolicy.from_flags(None, blocked))
    await tools.navigate(f"{allowed}/")
    await tools.evaluate(f"() => {{ location.href = '{blocked}/'; }}")
    await refused_by_guard(guarded, tools, blocked)
    assert blocked_heard(blocked) == []


async def test_an_out_of_process_iframe_cannot_fetch_a_blocked_origin(
    guarded: Browser, tools: BrowserTools, origins: tuple[str, str], third_site: str
) -> None:
    """The iframe is another process (its own DevTools target): its requests are not the
    tab's Fetch domain but its child session's, which gets the guard's Fetch before the
    iframe runs (it waits for the debugger: the recorder lets it go after)."""
    allowed, blocked = origins
    guarded.guard = Guard(OriginPolicy.from_flags(None, blocked))
    await tools.navigate(f"{allowed}/oopif?to={third_site}/fetcher")
    await tools.evaluate("() => window.ready")
    asked = f"{blocked}/api"
    got = await tools.evaluate(
        "() => new Promise(r => { addEventListener('message', e => r(e.data), {once: true});"
        f" document.getElementById('f').contentWindow.postMessage({asked!r}, '*'); }})"
    )
    assert str(got).startswith("failed:")
    assert blocked_heard(blocked) == []


async def test_a_tab_the_page_opens_to_a_blocked_origin_is_refused_or_closed(
    guarded: Browser, tools: BrowserTools, origins: tuple[str, str]
) -> None:
    allowed, blocked = origins
    guarded.guard = Guard(OriginPolicy.from_flags(None, blocked))
    await tools.navigate(f"{allowed}/opener?to={blocked}/")
    opened: list[int] = []

    def created(params: dict[str, Any]) -> None:
        if params.get("openerTabId") == tools.current:
            opened.append(int(params["tabId"]))

    guarded.tab_created_listeners.append(created)
    try:
        await tools.click("#a")

        def refused_in(tab: int) -> bool:
            interception = guarded.interceptions.get(tab)
            return interception is not None and any(
                url.startswith(blocked) for url, _ in interception.blocked
            )

        async def stopped() -> None:
            # Either the guard attached the popup before its request (refused there: it
            # shows an error page) or after (the popup is closed): never left on that page.
            while not opened or not (
                refused_in(opened[0])
                or opened[0] not in {t.tab_id for t in await guarded.list_tabs()}
            ):
                await tools.evaluate("() => 0")

        await wait_for(stopped(), scaled(10.0), "the popup to be refused or closed")
    finally:
        guarded.tab_created_listeners.remove(created)


async def test_read_only_refuses_input_and_navigation_outside_the_allowed_list(
    guarded: Browser, hub: ToolHub, tools: BrowserTools, origins: tuple[str, str]
) -> None:
    allowed, blocked = origins
    await tools.navigate(f"{allowed}/")  # opened before: read-only reads tabs already there
    guarded.guard = Guard(OriginPolicy.from_flags(allowed, None), read_only=True)
    assert "press" in await tools.snapshot()
    with pytest.raises(ReadOnlyRefused, match="--read-only"):
        await tools.click("#b")
    assert await tools.evaluate("() => document.getElementById('b').textContent") == "press"
    await tools.navigate(f"{allowed}/?again")  # within the allowed list
    with pytest.raises(OriginBlocked):
        await tools.navigate(f"{blocked}/")
    guarded.guard = Guard(read_only=True)  # no allowed list: no navigation at all
    with pytest.raises(ReadOnlyRefused):
        await tools.navigate(f"{allowed}/")


def _error(reply: dict[str, Any]) -> str:
    assert "error" in reply, reply
    return str(reply["error"].get("message", ""))


async def test_the_guard_comes_before_the_clients_routes(
    guarded: Browser, tools: BrowserTools, origins: tuple[str, str]
) -> None:
    """One interception per tab: a route cannot answer, or let through, what the guard
    refuses; what the guard allows, the routes then see (here: a header added on the way)."""
    allowed, blocked = origins
    guarded.guard = Guard(OriginPolicy.from_flags(None, blocked))
    await tools.navigate(f"{allowed}/")
    await tools.route(Route(f"{blocked}/**", body="mocked"))
    await tools.route(Route(f"{allowed}/api", headers={"X-Route": "yes"}))
    assert (await fetch_from(tools, f"{blocked}/api")).startswith("failed:")
    ROUTED.clear()
    assert await fetch_from(tools, f"{allowed}/api") == "real"
    assert ROUTED == ["yes"]
    assert blocked_heard(blocked) == []
    await tools.unroute()


async def test_the_devtools_endpoint_obeys_the_same_guard(
    guarded: Browser, bridge_cdp_url: str, origins: tuple[str, str]
) -> None:
    """What Playwright would send, written by hand: the guard sits below the endpoint too."""
    allowed, blocked = origins
    guarded.guard = Guard(OriginPolicy.from_flags(allowed, None), read_only=True)
    async with raw_cdp(bridge_cdp_url) as cdp:
        refused = await cdp.call("Target.createTarget", {"url": f"{blocked}/"})
        assert "--allowed-origins" in _error(refused)
        created = await cdp.result("Target.createTarget", {"url": f"{allowed}/"})
        attach = {"targetId": created["targetId"], "flatten": True}
        page = (await cdp.result("Target.attachToTarget", attach))["sessionId"]
        click = {"type": "mousePressed", "x": 10, "y": 10, "button": "left", "clickCount": 1}
        assert "--read-only" in _error(await cdp.call("Input.dispatchMouseEvent", click, page))
        navigate = await cdp.call("Page.navigate", {"url": f"{blocked}/"}, page)
        assert "--allowed-origins" in _error(navigate)
        # Its own Fetch would replace the guard's patterns (or end them): refused.
        assert "intercepts" in _error(await cdp.call("Fetch.disable", {}, page))
        fetched = await cdp.result(
            "Runtime.evaluate",
            {"expression": f"({FETCH})('{blocked}/api')", "awaitPromise": True},
            page,
        )
        assert fetched["result"]["value"].startswith("failed:")
        await cdp.call("Target.closeTarget", {"targetId": created["targetId"]})
    assert blocked_heard(blocked) == []
