"""A DevTools endpoint through the extension: Playwright's ``connect_over_cdp`` and
Puppeteer's ``connect`` drive the person's Chrome, which exposes no debugging port.

On the relay's port: ``GET /json/version`` (and ``/json/version/``), ``/json/list`` (and
``/json``), and the ``/cdp`` WebSocket, each only with the token (``Authorization: Bearer``
or ``?token=``; the token is never served). Page-level CDP is forwarded to the tab through
``chrome.debugger``; browser-level CDP, which ``chrome.debugger`` does not have, is emulated
here: version, targets, auto-attach, sessions, contexts. Tabs are attached lazily, on the
first command a client sends to them. Each client has its own sessions; a client that
disconnects detaches nothing another user needs, and never closes the browser.

A client opens only what bridge's browser tools may open (``bridge.policy.urls``):
``Target.createTarget`` and ``Page.navigate``, in any session (page, iframe or browser), are
refused ``file:`` URLs unless the person started bridge with ``--allow-file-urls``, and every
``chrome-extension:`` URL (in bridge's own popup a script has ``chrome.debugger``). A tab
showing such a page is never listed, announced or sent commands, and neither is a tab whose
history holds bridge's own pages or (without the flag) a file: its script could go back there
(``history.back()``), which is no command the endpoint could recognise. Downloads are copied for
the client only once ``bridge.policy.downloads`` has checked what the extension link reported.

Every command frame gets exactly one answer: a frame that is no command (not JSON, not an
object, no integer id) a ``-32700`` error with a null id, a command of the wrong shape or
one that fails an error with its id. A client that sends faster than its commands complete
is slowed down, never dropped: at most ``MAX_IN_FLIGHT`` of its commands run at once, and
meanwhile nothing more is read from it (past ``MAX_QUEUED_FRAMES`` waiting frames, not even
from its socket), so a flood costs bounded memory and other clients keep their share.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from bridge.cdp.browser import Browser, TabInfo
from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError, CdpError, CommandFailed
from bridge.link.transport import Transport
from bridge.policy.downloads import (
    DownloadRefused,
    DownloadStart,
    copy_download,
    download_target,
    is_download_guid,
    source_facts,
)
from bridge.policy.pages import history_refusal, page_refusal
from bridge.policy.urls import check_navigable
from bridge.waiting import scaled
from bridge.wire.extension import EXTENSION_ID
from bridge.wire.protocol import Event

__all__ = ["CONTEXT_ID", "MAX_IN_FLIGHT", "MAX_QUEUED_FRAMES", "CdpEndpoint"]

log = logging.getLogger(__name__)

CONTEXT_ID = "bridge-default-context"  # one context: the person's profile
BROWSER_SESSION = "browser"  # Target.attachToBrowserTarget's session: browser-level again
Params = dict[str, Any]
_DEBUGGABLE = re.compile(r"^(https?:|about:blank|data:|file:)")
#: Commands of one client under way at once; more wait, unread (backpressure, not drops).
MAX_IN_FLIGHT = 256
#: Frames of one client received and not yet read; past this the socket is not read either.
MAX_QUEUED_FRAMES = 64
#: Downloads of one client remembered from their start to their end (a bound, not a limit
#: anyone reaches: a finished download's entry is needed until its last event).
MAX_DOWNLOADS = 256
#: Commands that open a URL in the page they are sent to (or a new one): the URL policy.
_OPENS_URL = ("Page.navigate", "Target.createTarget")


def parse_command(frame: str | bytes) -> Params | str:
    """The command in a client's frame, or why it is none (answered with ``-32700``)."""
    try:
        message = json.loads(frame)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        return f"the frame is not JSON: {exc}"
    if not isinstance(message, dict):
        return f"a CDP command is a JSON object, not {type(message).__name__}"
    request_id = message.get("id")
    if not isinstance(request_id, int) or isinstance(request_id, bool):
        return "a CDP command needs an integer 'id'"
    return message


def _command_shape_error(message: Params) -> str | None:
    """What is wrong with a command's fields (answered with ``-32600`` and its id)."""
    if not isinstance(message.get("method"), str):
        return "'method' must be a string"
    if message.get("params") is not None and not isinstance(message["params"], dict):
        return "'params' must be an object"
    if message.get("sessionId") is not None and not isinstance(message["sessionId"], str):
        return "'sessionId' must be a string"
    return None


def _bound_reading(ws: ServerConnection) -> None:
    """Flow control for this connection: the relay's server queues frames without limit
    (an extension link must never stall), but a CDP client that floods must not fill memory
    with frames nobody reads yet. Past ``MAX_QUEUED_FRAMES`` the socket is not read until the
    queue drains (websockets' own mechanism for ``max_queue``, set per connection here)."""
    assembler = getattr(ws, "recv_messages", None)
    if assembler is not None and getattr(assembler, "high", 0) is None:
        assembler.high, assembler.low = MAX_QUEUED_FRAMES, MAX_QUEUED_FRAMES // 4


def target_id(info: TabInfo) -> str:
    """The tab's DevTools target id: its main frame id, which CDP clients rely on."""
    return info.target_id or f"tab-{info.tab_id}"


def target_info(info: TabInfo, *, attached: bool, context: str = CONTEXT_ID) -> Params:
    return {
        "targetId": target_id(info),
        "type": "page",
        "title": info.title,
        "url": info.url,
        "attached": attached,
        "canAccessOpener": False,
        "browserContextId": context,
    }


class CdpEndpoint:
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

    def product(self) -> str:
        """``Chrome/<version>`` from the extension's user agent (what Playwright parses)."""
        link = self.browser.connector.current
        agent = getattr(getattr(link, "hello", None), "user_agent", "") or ""
        match = re.search(r"(?:Headless)?Chrome/[\d.]+", agent)
        return match.group(0) if match else "Chrome/0.0.0.0"

    def version(self, host: str) -> Params:
        link = self.browser.connector.current
        agent = getattr(getattr(link, "hello", None), "user_agent", "") or ""
        return {
            "Browser": self.product(),
            "Protocol-Version": "1.3",
            "User-Agent": agent,
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
            client.close()
            await client.dispose_contexts()
            await client.release_tabs(self.clients)
            if not self.clients and self._tab_created in self.browser.tab_created_listeners:
                self.browser.tab_created_listeners.remove(self._tab_created)
                self._unsubscribe()

    def transport_event(self, transport: Transport, event: Event) -> None:
        """A tab the extension reports gone to a page no client may drive (the person went
        there): every client's sessions on it end at once, not only at their next command,
        and whoever attaches again meets the page in the tab's history (``_look_at``)."""
        if event.method != "tabUpdated" or not isinstance(event.params.get("url"), str):
            return
        if self.refusal(event.params["url"]) is not None:
            for client in list(self.clients):
                client.leave_tab(int(event.params["tabId"]))

    def transport_lost(self, transport: Transport) -> None:
        """Nothing to do: the tabs' sessions end through the Browser."""

    def _tab_created(self, params: Params) -> None:
        for client in list(self.clients):
            client.popup(params)


@dataclass
class _Alias:
    """One client session on one tab (several may share a tab: attachToTarget twice)."""

    session_id: str
    tab_id: int
    tab: CdpSession | None = None
    untap: Any = None
    unend: Any = None
    target: str = ""  # the DevTools target id, for detach events
    url: str = ""  # the tab's main frame URL as last seen (listing, Page.frameNavigated)
    refused: str | None = None  # why its history makes the tab undrivable (history_refusal)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one attach at a time


@dataclass(eq=False)
class CdpClient:
    endpoint: CdpEndpoint
    ws: ServerConnection
    aliases: dict[str, _Alias] = field(default_factory=dict)
    children: dict[str, str] = field(default_factory=dict)  # child session -> alias
    auto_attach: bool = False
    discover: bool = False
    #: Contexts a client made (``browser.new_context()``): groups of tabs it closes together.
    #: They share the person's profile: cookies and storage are not isolated.
    contexts: dict[str, set[int]] = field(default_factory=dict)
    #: Tabs this client's commands attached (not attached by anyone before it).
    attached_here: set[int] = field(default_factory=set)
    _creating: int = 0  # createTarget calls under way
    _deferred: list[Params] = field(default_factory=list)  # new tabs seen meanwhile
    download_path: str | None = None
    download_events: bool = False
    download_by_guid: bool = False
    #: Downloads announced (Page.downloadWillBegin), by guid, oldest first.
    _downloads: OrderedDict[str, DownloadStart] = field(default_factory=OrderedDict)
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    #: Commands under way now, and the most there ever were at once (at most MAX_IN_FLIGHT).
    in_flight: int = 0
    peak_in_flight: int = 0
    _room: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def browser(self) -> Browser:
        return self.endpoint.browser

    async def run(self) -> None:
        _bound_reading(self.ws)
        closed = asyncio.ensure_future(self.ws.wait_closed())
        try:
            async for frame in self.ws:
                if self.ws.state is not State.OPEN:
                    return  # its answer could not be sent: the client is gone
                message = parse_command(frame)
                if isinstance(message, str):
                    await self._send({"id": None, "error": {"code": -32700, "message": message}})
                    continue
                if not await self._wait_for_room(closed):
                    return
                self.in_flight += 1
                self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
                task = asyncio.ensure_future(self._command(message))
                self._tasks.add(task)
                task.add_done_callback(self._command_done)
        except ConnectionClosed:
            pass
        finally:
            closed.cancel()

    async def _wait_for_room(self, closed: asyncio.Future[None]) -> bool:
        """Until fewer than MAX_IN_FLIGHT commands are under way (meanwhile this client is
        not read: backpressure); False if the connection ends first."""
        while self.in_flight >= MAX_IN_FLIGHT:
            self._room.clear()
            room = asyncio.ensure_future(self._room.wait())
            waits: set[asyncio.Future[Any]] = {room, closed}
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                room.cancel()
            if closed.done():
                return False
        return True

    def _command_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self.in_flight -= 1
        self._room.set()

    async def dispose_contexts(self) -> None:
        """A client gone: the tabs of contexts it made go with it (as disposeOnDetach does);
        the person's own tabs stay."""
        for tabs in self.contexts.values():
            for tab_id in tabs:
                with contextlib.suppress(BridgeError):
                    await self.browser.close_tab(tab_id)
        self.contexts.clear()

    async def release_tabs(self, others: set[CdpClient]) -> None:
        """A client gone: the tabs it attached (and nobody else uses) are detached, so the
        debugging bar and its cost go with it; tabs attached before it came stay as they were."""
        in_use = {a.tab_id for other in others for a in other.aliases.values()}
        for tab_id in self.attached_here - in_use:
            with contextlib.suppress(BridgeError):
                await self.browser.detach(tab_id)
        self.attached_here.clear()

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for alias in self.aliases.values():
            for undo in (alias.untap, alias.unend):
                if undo is not None:
                    undo()
        self.aliases.clear()

    async def _send(self, message: Params) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(json.dumps(message))

    async def _command(self, message: Params) -> None:
        request_id = message["id"]
        reply: Params = {"id": request_id}
        wrong = _command_shape_error(message)
        if wrong is not None:
            reply["error"] = {"code": -32600, "message": wrong}
            await self._send(reply)
            return
        method = str(message["method"])
        params = message.get("params") or {}
        session = message.get("sessionId")
        if session:
            reply["sessionId"] = session
        try:
            if session and session != BROWSER_SESSION:
                result = await self._tab_command(str(session), method, params)
            else:
                result = await self._browser_command(method, params, session)
            reply["result"] = result
        except CdpError as exc:
            reply["error"] = {
                "code": exc.cdp_code or -32000,
                "message": str(exc).split(" failed: ", 1)[-1],
            }
        except (BridgeError, ValueError, KeyError) as exc:
            reply["error"] = {"code": -32000, "message": str(exc)}
        except Exception as exc:  # a parameter of the wrong type: answered, never silent
            log.debug("CDP client command %s failed", method, exc_info=True)
            reply["error"] = {"code": -32602, "message": f"invalid parameters for {method}: {exc}"}
        await self._send(reply)

    # -- browser level (emulated) --------------------------------------------------------

    async def _browser_command(
        self, method: str, params: Params, caller: str | None = None
    ) -> Params:
        if method == "Browser.getVersion":
            link = self.browser.connector.current
            agent = getattr(getattr(link, "hello", None), "user_agent", "")
            return {
                "protocolVersion": "1.3",
                "product": self.endpoint.product(),
                "revision": "",
                "userAgent": agent,
                "jsVersion": "",
            }
        if method == "Target.setDiscoverTargets":
            self.discover = bool(params.get("discover"))
            if self.discover:
                for info in await self._tabs():
                    await self._event(
                        "Target.targetCreated", {"targetInfo": target_info(info, attached=False)}
                    )
            return {}
        if method == "Target.setAutoAttach":
            self.auto_attach = bool(params.get("autoAttach"))
            if self.auto_attach:
                for info in await self._tabs():
                    await self._announce(info, waiting=False)
            return {}
        if method == "Target.getTargets":
            return {
                "targetInfos": [
                    target_info(t, attached=self._has(t.tab_id)) for t in await self._tabs()
                ]
            }
        if method == "Target.getTargetInfo":
            wanted = params.get("targetId")
            if wanted is None:
                return {
                    "targetInfo": {
                        "targetId": "browser",
                        "type": "browser",
                        "title": "",
                        "url": "",
                        "attached": True,
                    }
                }
            info = await self._tab_info(str(wanted))
            return {"targetInfo": target_info(info, attached=self._has(info.tab_id))}
        if method == "Target.attachToTarget":
            # A session of its own on the tab (Playwright's new_cdp_session, Puppeteer's
            # createCDPSession). As Chrome does, the session that asked hears
            # attachedToTarget before the answer: Puppeteer creates its session object from
            # that event. Playwright asks from a browser session of its own
            # (attachToBrowserTarget), so its main session never reads it as a second page.
            info = await self._tab_info(str(params["targetId"]))
            alias = self._alias(info)
            described = target_info(info, attached=True, context=self._context_of(info.tab_id))
            await self._event(
                "Target.attachedToTarget",
                {
                    "sessionId": alias.session_id,
                    "targetInfo": described,
                    "waitingForDebugger": False,
                },
                caller,
            )
            return {"sessionId": alias.session_id}
        if method == "Target.attachToBrowserTarget":
            return {"sessionId": BROWSER_SESSION}
        if method == "Target.detachFromTarget":
            self._drop(str(params.get("sessionId", "")))
            return {}
        if method == "Target.createTarget":
            url = self._navigable(str(params.get("url") or "about:blank"))
            context = params.get("browserContextId")
            if context and context not in self.contexts:
                raise ValueError(f"Failed to find browser context with id {context}")
            self._creating += 1
            try:
                tab = await self.browser.new_tab(url, own_window=True)
            finally:
                self._creating -= 1
            if context:
                self.contexts[str(context)].add(tab.tab_id)
            created = [t for t in await self.browser.list_tabs() if t.tab_id == tab.tab_id]
            if not created:
                raise ValueError("the new tab closed at once")
            if self.auto_attach:
                await self._announce(created[0], waiting=True)
            deferred, self._deferred = self._deferred, []
            for other in deferred:  # tabs others opened meanwhile
                if other["tabId"] != tab.tab_id:
                    self.popup(other)
            return {"targetId": target_id(created[0])}
        if method == "Target.closeTarget":
            info = await self._tab_info(str(params.get("targetId", "")))
            await self.browser.close_tab(info.tab_id)  # ends the tab's aliases (_ended)
            for alias in [a for a in self.aliases.values() if a.tab_id == info.tab_id]:
                self._drop(alias.session_id)  # aliases never used (never attached)
            await self._event("Target.targetDestroyed", {"targetId": target_id(info)})
            return {"success": True}
        if method == "Target.getBrowserContexts":
            return {"browserContextIds": list(self.contexts)}
        if method == "Target.createBrowserContext":
            if params.get("proxyServer"):
                # A context here is a group of tabs in the person's profile: a proxy for it
                # alone would silently not apply. Refused, so the client knows.
                raise CdpError(
                    method,
                    "a proxy per context is not available through the bridge extension "
                    "(contexts share the person's profile); set the proxy in Chrome itself",
                    -32000,
                )
            context = f"bridge-context-{next(self._ids)}"
            self.contexts[context] = set()
            return {"browserContextId": context}
        if method == "Target.disposeBrowserContext":
            tabs = self.contexts.pop(str(params.get("browserContextId")), None)
            if tabs is None:
                raise ValueError(f"Failed to find context with id {params.get('browserContextId')}")
            for tab_id in tabs:
                with contextlib.suppress(BridgeError):  # closed already by the client or person
                    await self.browser.close_tab(tab_id)
            return {}
        if method == "Browser.setDownloadBehavior":
            # The browser's own behaviour stays (extensions may not change it); with events
            # on, downloads are reported as Chrome would, and a copy of each finished file
            # is put where the client asked ("allowAndName": named by its guid).
            wanted = params.get("downloadPath")
            self.download_path = str(wanted) if wanted else None
            self.download_events = bool(params.get("eventsEnabled"))
            self.download_by_guid = params.get("behavior") == "allowAndName"
            return {}
        if method == "Browser.grantPermissions":
            # Extensions cannot grant site permissions; pretending would make a test pass
            # or fail for the wrong reason.
            raise CdpError(
                method,
                "granting permissions is not available through the bridge extension: "
                "grant them in Chrome's site settings for the person's profile",
                -32000,
            )
        if method in ("Storage.getCookies", "Storage.setCookies"):
            # Browser-level cookie calls, made through a tab this client already uses (the
            # cookie store is the profile's, whichever tab asks): attaching another tab
            # just for this would put the debugging bar on a tab nobody asked for.
            tab = self._a_tab_in_use(method)
            if method == "Storage.getCookies":
                found = await tab.send("Network.getAllCookies")
                return {"cookies": found.get("cookies", [])}
            await tab.send("Network.setCookies", {"cookies": params.get("cookies", [])})
            return {}
        if method == "Storage.clearCookies":
            raise CdpError(
                method,
                "clearing cookies is refused through the bridge extension: it would sign the "
                "person out of every site; delete the test's cookies one by one instead",
                -32000,
            )
        if method == "Browser.resetPermissions":
            return {}  # nothing was granted through bridge, so nothing to reset
        if method == "Browser.close":
            await self.ws.close(1000, "Browser.close: disconnected; the browser keeps running")
            return {}
        if method == "Browser.getWindowForTarget":
            return {
                "windowId": 1,
                "bounds": {
                    "left": 0,
                    "top": 0,
                    "width": 1280,
                    "height": 800,
                    "windowState": "normal",
                },
            }
        if method in (
            "Browser.setWindowBounds",
            "Target.setRemoteLocations",
            "Security.setIgnoreCertificateErrors",
        ):
            return {}
        raise CdpError(method, f"'{method}' is not available through the bridge extension", -32601)

    def _a_tab_in_use(self, method: str) -> CdpSession:
        for alias in self.aliases.values():
            if alias.tab is not None and alias.tab.ended is None:
                return alias.tab
        raise CdpError(method, "open a page first: cookies are reached through a tab", -32000)

    async def _tabs(self) -> list[TabInfo]:
        return [t for t in await self.browser.list_tabs() if self.endpoint.usable(t)]

    async def _tab_info(self, target: str) -> TabInfo:
        """The tab of a target id the client named; a page it may not drive (an extension
        page, a file without --allow-file-urls) is refused as Chrome refuses an unknown id."""
        for info in await self.browser.list_tabs():
            if target_id(info) == target:
                if not self.endpoint.usable(info):
                    break
                return info
        raise ValueError(f"No target with given id found: {target}")

    def _navigable(self, url: str) -> str:
        """The URL to open for a client's ``url``, or UrlRefused (a CDP error whose message
        says why): the browser tools' policy, with the person's --allow-file-urls."""
        return check_navigable(
            url, allow_file=self.endpoint.allow_file_urls, own_extension_id=EXTENSION_ID
        )

    def _context_of(self, tab_id: int) -> str:
        return next((c for c, tabs in self.contexts.items() if tab_id in tabs), CONTEXT_ID)

    def _has(self, tab_id: int) -> bool:
        return any(a.tab_id == tab_id for a in self.aliases.values())

    def _alias(self, info: TabInfo) -> _Alias:
        alias = _Alias(
            f"bridge-{info.tab_id}-{next(self._ids)}",
            info.tab_id,
            target=target_id(info),
            url=info.url,
        )
        self.aliases[alias.session_id] = alias
        return alias

    def popup(self, params: Params) -> None:
        """A new tab (a popup of a tab this client uses, or one the person opened):
        announced to a client that auto-attaches, with its opener when there is one.
        bridge's own new tabs are announced by createTarget itself."""
        if not self.auto_attach or self.endpoint.refusal(str(params.get("url", ""))):
            return  # a tab opened at an extension page or a file is never announced
        opener_tab = params.get("openerTabId")
        opener = next((a for a in self.aliases.values() if a.tab_id == opener_tab), None)
        if opener is None and self._creating:
            self._deferred.append(params)  # maybe our own createTarget's tab: decided after
            return
        if self.endpoint.browser.access(int(params["tabId"])) == "not shared":
            return  # a tab the person opened is the person's (bridge.policy.tabs)
        info = TabInfo(
            int(params["tabId"]), str(params.get("url", "")), "", False, False,
            str(params.get("targetId", "")),
        )  # fmt: skip
        if opener is not None:
            context = self._context_of(opener.tab_id)
            if context in self.contexts:
                self.contexts[context].add(info.tab_id)  # a popup stays in its opener's context
        self._spawn(self._announce(info, waiting=False, opener=opener.target if opener else None))

    async def _announce(self, info: TabInfo, *, waiting: bool, opener: str | None = None) -> None:
        if any(a.tab_id == info.tab_id for a in self.aliases.values()):
            return
        alias = self._alias(info)
        described = target_info(info, attached=True, context=self._context_of(info.tab_id))
        if opener:
            described["openerId"] = opener
        await self._event(
            "Target.attachedToTarget",
            {"sessionId": alias.session_id, "targetInfo": described, "waitingForDebugger": waiting},
        )

    def _drop(self, session_id: str) -> None:
        """The client's session ends: it hears ``Target.detachedFromTarget`` (Playwright
        waits for it when a page closes)."""
        alias = self.aliases.pop(session_id, None)
        if alias is None:
            return
        for undo in (alias.untap, alias.unend):
            if undo is not None:
                undo()
        self._spawn(
            self._event(
                "Target.detachedFromTarget", {"sessionId": session_id, "targetId": alias.target}
            )
        )

    def _ended(self, alias: _Alias) -> None:
        """The tab closed or its debugger detached (not through this client)."""
        if alias.session_id in self.aliases:
            self._drop(alias.session_id)
            self._spawn(self._event("Target.targetDestroyed", {"targetId": alias.target}))

    async def _download_event(self, method: str, params: Params) -> None:
        """Page-level download events as the browser-level ones clients listen to (the guid
        is a UUID: ``_forward`` checked it)."""
        guid = str(params["guid"])
        if method == "Page.downloadWillBegin":
            self._downloads[guid] = DownloadStart(
                str(params.get("url", "")), str(params.get("suggestedFilename", "")), time.time()
            )
            while len(self._downloads) > MAX_DOWNLOADS:
                self._downloads.popitem(last=False)
            await self._event("Browser.downloadWillBegin", params)
            return
        if params.get("state") == "completed" and self.download_path and self.download_by_guid:
            try:
                await self._copy_download(guid)
            except (BridgeError, OSError) as exc:
                # The reason names paths and the guid, never a token.
                log.warning("download %r not copied for the DevTools client: %s", guid, exc)
                params = {**params, "state": "canceled"}
        await self._event("Browser.downloadProgress", params)

    async def _copy_download(self, guid: str) -> None:
        """The finished download, copied to ``<downloadPath>/<guid>`` if ``download_target``
        accepts what the extension link reported; DownloadRefused (nothing written) if not."""
        start = self._downloads.get(guid)
        if start is None:
            raise DownloadRefused(f"no Page.downloadWillBegin was seen for download {guid}")
        found = await self.browser.request("downloadInfo", {"url": start.url, "timeoutMs": 5000})
        path = found.get("path")
        if not isinstance(path, str) or not path:
            raise DownloadRefused("the browser did not say where it saved the download")
        assert self.download_path is not None  # checked by the caller
        browser_dir = self.endpoint.downloads_dir
        facts = await asyncio.to_thread(source_facts, path)
        target = download_target(
            guid,
            client_dir=self.download_path,
            start=start,
            source=facts,
            browser_dir=await asyncio.to_thread(browser_dir.resolve) if browser_dir else None,
        )
        await asyncio.to_thread(copy_download, facts, target)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _event(self, method: str, params: Params, session_id: str | None = None) -> None:
        message: Params = {"method": method, "params": params}
        if session_id:
            message["sessionId"] = session_id
        await self._send(message)

    # -- page level (forwarded) ----------------------------------------------------------

    async def _tab_command(self, session: str, method: str, params: Params) -> Params:
        child: str | None = None
        alias = self.aliases.get(session)
        if alias is None:
            owner = self.children.get(session)
            alias = self.aliases.get(owner) if owner else None
            child = session
        if alias is None:
            raise ValueError(f"Session with given id not found: {session}")
        if method in _OPENS_URL:
            default = "about:blank" if method == "Target.createTarget" else ""
            params = {**params, "url": self._navigable(str(params.get("url") or default))}
        self._still_drivable(alias, None, method)  # as listed: never attached if refused
        tab = await self._attached(alias)
        self._still_drivable(alias, tab, method)  # as it is now
        if method == "Runtime.runIfWaitingForDebugger" and child is None:
            return {}  # bridge never holds a tab at start
        if method == "Page.setFontFamilies":
            # Chrome takes it once per debugger session, and clients share the extension's:
            # the second client's identical call must not fail its page.
            try:
                return await tab.send(method, params, session_id=child)
            except CdpError as exc:
                if "only be set once" not in str(exc):
                    raise
                return {}
        if method == "Runtime.enable" and child is None:
            # Already enabled by another user of this tab, Chrome would not report the
            # existing contexts again, and Playwright waits for them: enable afresh.
            with contextlib.suppress(BridgeError):
                await tab.send("Runtime.disable", session_id=child)
        return await tab.send(method, params, session_id=child, timeout=scaled(180.0))

    async def _attached(self, alias: _Alias) -> CdpSession:
        """The tab, attached on the first command (commands arrive concurrently: one
        attachment, one event tap), and still showing a page the client may drive."""
        async with alias.lock:
            if alias.tab is None or alias.tab.ended is not None:
                if alias.untap is not None:
                    alias.untap()
                known = self.browser.sessions.get(alias.tab_id)
                if known is None or known.ended is not None:
                    self.attached_here.add(alias.tab_id)  # ours to let go of (release_tabs)
                try:
                    alias.tab = await self.browser.attach(alias.tab_id)
                except CommandFailed as exc:
                    raise BridgeError(f"cannot attach to tab {alias.tab_id}: {exc}") from exc
                alias.untap = alias.tab.tap(lambda m, p, s: self._forward(alias, m, p, s))
                alias.unend = alias.tab.on_end(lambda _: self._ended(alias))
                await self._look_at(alias, alias.tab)
            return alias.tab

    async def _look_at(self, alias: _Alias, tab: CdpSession) -> None:
        """What a tab just attached shows, and what its history holds: it may have moved on
        since it was listed (from here on its changes reach us: tabUpdated,
        Page.frameNavigated), and a script in it could go back to any page of its history."""
        try:
            history = await tab.send("Page.getNavigationHistory")
        except BridgeError:  # no history to read (a crashed page): what the tab list says
            listed = [t for t in await self.browser.list_tabs() if t.tab_id == alias.tab_id]
            alias.url = listed[0].url if listed else alias.url
            return
        entries = [e for e in history.get("entries", []) if isinstance(e, dict)]
        index = history.get("currentIndex")
        if isinstance(index, int) and 0 <= index < len(entries):
            alias.url = str(entries[index].get("url", ""))
        for entry in entries:
            alias.refused = alias.refused or history_refusal(
                str(entry.get("url", "")), allow_file=self.endpoint.allow_file_urls
            )

    def _still_drivable(self, alias: _Alias, tab: CdpSession | None, method: str) -> None:
        """Refuse a command to a tab now showing a page no client may drive (the person
        opened it there, or history led back to it): the client's sessions on that tab end.

        What the endpoint knows of the tab's page arrives as events, so a page reached by
        the page's own script may take a command or two before its event is in. Which is
        why a tab whose history holds such a page is refused from the start
        (``history_refusal``): ``history.back()`` in ``Runtime.evaluate`` is no command the
        endpoint could recognise.
        """
        for url in (alias.url, tab.url if tab is not None else ""):
            reason = self.endpoint.refusal(url) or alias.refused
            if reason is not None:
                self.leave_tab(alias.tab_id)
                raise CdpError(method, f"refused: {reason}", -32000)

    def leave_tab(self, tab_id: int) -> None:
        """End this client's sessions on a tab (it hears Target.detachedFromTarget)."""
        for alias in [a for a in self.aliases.values() if a.tab_id == tab_id]:
            self._drop(alias.session_id)

    def _forward(self, alias: _Alias, method: str, params: Params, child: str | None) -> None:
        if alias.session_id not in self.aliases:
            return
        if method.startswith("Page.download"):
            if not is_download_guid(params.get("guid")):
                # Clients read and delete <downloadPath>/<guid>: a guid that is no UUID
                # ("../../.bashrc") comes from no Chrome, and no client hears of it.
                log.warning(
                    "%s with a guid that is not a UUID dropped: %r", method, params.get("guid")
                )
                return
            if self.download_events and child is None:
                self._spawn(self._download_event(method, params))
        if method == "Page.frameNavigated" and child is None:
            frame = params.get("frame") or {}
            if not frame.get("parentId"):
                alias.url = str(frame.get("url", ""))
                if self.endpoint.refusal(alias.url) is not None:
                    self.leave_tab(alias.tab_id)  # the tab went to a page no client drives
                    return
        if method == "Target.attachedToTarget" and params.get("sessionId"):
            self.children[str(params["sessionId"])] = alias.session_id
        message: Params = {
            "method": method,
            "params": params,
            "sessionId": child or alias.session_id,
        }
        task = asyncio.ensure_future(self._send(message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
