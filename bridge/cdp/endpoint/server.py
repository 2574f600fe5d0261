"""The DevTools endpoint as the relay serves it (``link.relay.DevToolsService``): the
``/json/*`` answers, one ``CdpClient`` per ``/cdp`` connection, which tabs clients may see,
and the browser's news every client hears (new tabs, tabs gone to a page no client drives)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from websockets.asyncio.server import ServerConnection

from bridge.cdp.browser import Browser, TabInfo
from bridge.cdp.endpoint.client import CdpClient
from bridge.cdp.endpoint.targets import Params, target_id
from bridge.link.transport import Transport
from bridge.policy.pages import page_refusal
from bridge.wire.protocol import Event

__all__ = ["CdpEndpoint"]

_DEBUGGABLE = re.compile(r"^(https?:|about:blank|data:|file:)")


class CdpEndpoint:
    """The endpoint for every client: the policy (which pages clients may drive) and the
    browser's events, shared; each connection is a ``CdpClient`` of its own."""

    def __init__(
        self,
        browser: Browser,
        token: str,
        *,
        allow_file_urls: bool = False,
        downloads_dir: Path | None = None,
    ) -> None:
        self.browser = browser
        self.token = token
        #: The person's --allow-file-urls, as the browser tools get it (ToolSettings).
        self.allow_file_urls = allow_file_urls
        #: Where the browser saves downloads, when bridge knows it (a browser it launched
        #: with a temporary profile: bridge.app.launcher); None: anywhere (the person's Chrome).
        self.downloads_dir = downloads_dir
        self.clients: set[CdpClient] = set()
        self._unsubscribe: Callable[[], None] = lambda: None

    def drivable(self, url: str) -> bool:
        """Whether a page showing ``url`` is listed and driven for clients."""
        return bool(_DEBUGGABLE.match(url)) and self.refusal(url) is None

    def usable(self, info: TabInfo) -> bool:
        """May a client see and drive this tab? A page it may drive (``drivable``) in a tab
        bridge opened or the person shared, unless bridge acts on every tab
        (bridge.policy.tabs: the person's other tabs are the person's)."""
        return self.drivable(info.url) and self.browser.access(info.tab_id) != "not shared"

    def refusal(self, url: str) -> str | None:
        return page_refusal(url, allow_file=self.allow_file_urls)

    def user_agent(self) -> str:
        """The user agent the extension reported in its hello ("" before any link)."""
        link = self.browser.connector.current
        return str(getattr(getattr(link, "hello", None), "user_agent", "") or "")

    def product(self) -> str:
        """``Chrome/<version>`` from the extension's user agent (what Playwright parses)."""
        match = re.search(r"(?:Headless)?Chrome/[\d.]+", self.user_agent())
        return match.group(0) if match else "Chrome/0.0.0.0"

    def version(self, host: str) -> Params:
        return {
            "Browser": self.product(),
            "Protocol-Version": "1.3",
            "User-Agent": self.user_agent(),
            "webSocketDebuggerUrl": f"ws://{host}/cdp",  # the token goes in the request
        }

    async def target_list(self, host: str) -> list[Params]:
        return [
            {
                "id": target_id(t),
                "type": "page",
                "title": t.title,
                "url": t.url,
                "webSocketDebuggerUrl": f"ws://{host}/cdp",
            }
            for t in await self.browser.list_tabs()
            if self.usable(t)
        ]

    async def serve(self, ws: ServerConnection) -> None:
        client = CdpClient(self, ws)
        self.clients.add(client)
        if len(self.clients) == 1:
            self.browser.tab_created_listeners.append(self._tab_created)
            self._unsubscribe = self.browser.connector.subscribe(self)
        try:
            await client.run()
        finally:
            self.clients.discard(client)
            await client.close(self.clients)
            if not self.clients and self._tab_created in self.browser.tab_created_listeners:
                self.browser.tab_created_listeners.remove(self._tab_created)
                self._unsubscribe()

    def transport_event(self, transport: Transport, event: Event) -> None:
        """A tab the extension reports gone to a page no client may drive (the person went
        there): every client's sessions on it end at once, not only at their next command,
        and whoever attaches again meets the page in the tab's history
        (``sessions.ClientSessions``)."""
        if event.method != "tabUpdated" or not isinstance(event.params.get("url"), str):
            return
        if self.refusal(event.params["url"]) is not None:
            for client in list(self.clients):
                client.sessions.leave_tab(int(event.params["tabId"]))

    def transport_lost(self, transport: Transport) -> None:
        """Nothing to do: the tabs' sessions end through the Browser."""

    def _tab_created(self, params: Params) -> None:
        for client in list(self.clients):
            client.sessions.popup(params)
