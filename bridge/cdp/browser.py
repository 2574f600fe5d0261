"""The browser as seen through a connector (the relay): its tabs and their CDP sessions.

``Browser`` is the host of every ``CdpSession`` and the listener of the connector: it
routes each ``cdpEvent`` to its tab's session and ends the session whose tab was closed
or whose debugger was detached. Sessions outlive a transport: when the extension's
service worker restarts, or the link is replaced, the next command on a session
re-attaches through the new transport (the extension reuses its own surviving
attachment). What was in flight when a transport dropped fails with
ExtensionDisconnected at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bridge.cdp.interception import TabInterception
from bridge.cdp.session import CdpSession
from bridge.errors import (
    BridgeError,
    CdpError,
    CommandFailed,
    DebuggerDetached,
    ExtensionDisconnected,
    TabClosed,
    TabCrashed,
)
from bridge.link.transport import Connector, Transport
from bridge.policy import tabs as tab_access
from bridge.policy.guard import Guard
from bridge.policy.tabs import Access
from bridge.tasks import TaskSet
from bridge.waiting import scaled
from bridge.wire.protocol import Event

__all__ = ["Browser", "TabInfo", "ending_of", "recoverable"]

log = logging.getLogger(__name__)

# Detach reasons chrome.debugger reports (chrome.debugger.DetachReason).
CANCELED_BY_USER = "canceled_by_user"
TARGET_CLOSED = "target_closed"


@dataclass(frozen=True)
class TabInfo:
    """One tab as the extension lists it."""

    tab_id: int
    url: str
    title: str
    active: bool
    attached_here: bool
    target_id: str = ""  # the DevTools target id (a page's main frame id)
    shared: bool = False  # the person shared it with bridge (the popup)
    loading: bool = False  # the browser is (re)loading it, as a tab restored at start-up

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> TabInfo:
        return cls(
            tab_id=int(raw["tabId"]),
            url=str(raw.get("url") or raw.get("pendingUrl") or ""),
            title=str(raw.get("title", "")),
            active=bool(raw.get("active", False)),
            attached_here=bool(raw.get("attachedHere", False)),
            target_id=str(raw.get("targetId", "")),
            shared=bool(raw.get("shared", False)),
            loading=raw.get("status") == "loading",
        )


def ending_of(event: Event) -> BridgeError | None:
    """What a tab lifecycle event means for its session (pure): the error that ends it."""
    p = event.params
    if event.method == "tabRemoved":
        return TabClosed(int(p["tabId"]))
    if event.method != "tabDetached":
        return None
    tab_id = int(p["tabId"])
    reason = str(p.get("reason", TARGET_CLOSED))
    if reason == TARGET_CLOSED and not p.get("tabExists", False):
        return TabClosed(tab_id)
    if reason == TARGET_CLOSED:
        reason = (
            "the tab went to a page extensions may not debug (chrome://, the Web Store, or a "
            "page holding another extension's frame)"
        )
    return DebuggerDetached(tab_id, reason)


def recoverable(event: Event) -> bool:
    """Does the tab outlive this ending (pure)? Chrome detached the debugger from a tab that
    still exists (``target_closed``: it went to a page extensions may not debug, or Chrome
    forced it off): bridge may attach again. Never after the person pressed Cancel."""
    p = event.params
    return (
        event.method == "tabDetached"
        and str(p.get("reason", TARGET_CLOSED)) == TARGET_CLOSED
        and bool(p.get("tabExists", False))
    )


class Browser:
    """The browser's tabs through whatever transport serves now: opening, attaching, closing, and
    routing each event and each ending to its tab's session. It decides nothing about sites."""

    def __init__(self, connector: Connector, *, connect_timeout: float | None = None) -> None:
        self.connector = connector
        self.connect_timeout = scaled(10.0) if connect_timeout is None else connect_timeout
        self.sessions: dict[int, CdpSession] = {}
        self._attached_via: dict[int, Transport] = {}
        #: The browser instance each tab was attached in (kept across a lost link): a tab of
        #: another browser than the serving one's is explained as such, not as "gone".
        self._browser_of: dict[int, str] = {}
        self._attach_locks: dict[int, asyncio.Lock] = {}
        #: Called with the event's params when an attached tab opens a tab (a popup).
        self.tab_created_listeners: list[Callable[[dict[str, Any]], None]] = []
        #: Tabs whose debugger Chrome took away while they stay open (a chrome:// page): the
        #: session lives on and the next command attaches again (why, for its error).
        self._suspended: dict[int, str] = {}
        #: The session key whose asks use each tab (bridge.providers.tab): an ask of another
        #: key never takes it as "an open tab of the site", also before it is recorded.
        self.claims: dict[int, str] = {}
        #: Which tabs clients may act on (bridge.policy.tabs): "own" (tabs bridge opened, and
        #: tabs the person shared) or "all". The runtime sets it: "all" for a browser bridge
        #: launched, "own" for the person's.
        self.tab_scope = "all"
        #: Tabs bridge opened (and the popups they opened); tabs the person shared.
        self.opened: set[int] = set()
        self.shared: set[int] = set()
        #: The person's guard rails (--allowed-origins, --blocked-origins, --read-only):
        #: every session's commands are checked against it (CdpSession.send), and every tab
        #: attached gets its requests checked while an origin list is set.
        self.guard = Guard()
        #: Each attached tab's one Fetch interception (guard and routes share it).
        self.interceptions: dict[int, TabInterception] = {}
        self._guarding = TaskSet("guarding popups", log)
        self._unsubscribe = connector.subscribe(self)

    def interception(self, session: CdpSession) -> TabInterception:
        """The tab's interception (made on first use; it ends with the session)."""
        found = self.interceptions.get(session.tab_id)
        if found is None or found.session is not session:
            found = TabInterception(session, lambda: self.guard.origins)
            self.interceptions[session.tab_id] = found
        return found

    def intercepting(self, tab_id: int) -> bool:
        """Whether bridge holds the tab's ``Fetch`` domain now (a DevTools client's own
        ``Fetch`` commands would take it away: refused meanwhile)."""
        found = self.interceptions.get(tab_id)
        return found is not None and found.enabled and found.session.ended is None

    async def transport(self) -> Transport:
        return await self.connector.connect(self.connect_timeout)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        transport = await self.transport()
        return await transport.request(method, params, timeout=scaled(30.0))

    # -- tabs -----------------------------------------------------------------------

    async def list_tabs(self) -> list[TabInfo]:
        result = await self.request("listTabs")
        tabs = [TabInfo.from_wire(t) for t in result.get("tabs", [])]
        self.shared = {t.tab_id for t in tabs if t.shared}  # shared before we were told
        return tabs

    def access(self, tab_id: int) -> Access:
        """How clients may use this tab (bridge.policy.tabs), from what is known now."""
        return tab_access.access(
            tab_id, scope=self.tab_scope, opened=self.opened, shared=self.shared
        )

    async def check_access(self, tab_id: int) -> Access:
        """The tab's access for a client, or TabNotShared; a tab not known to be shared is
        looked up once (it may have been shared before bridge connected)."""
        found = self.access(tab_id)
        if found == "not shared":
            await self.list_tabs()
            found = self.access(tab_id)
        if found == "not shared":
            raise tab_access.refusal(tab_id)
        return found

    async def new_tab(
        self, url: str = "about:blank", *, active: bool = False, own_window: bool = False
    ) -> CdpSession:
        """Open a tab, attach to it, then navigate, so its load is observed by us.

        ``own_window``: in an unfocused window of its own, where it is the active tab: it
        renders like a visible tab (fast input, reliable screenshots) and takes nobody's
        focus. A background tab in the person's window only renders with focus emulation,
        and even then a screenshot may wait for a frame that never comes.
        """
        params: dict[str, Any] = {"url": "about:blank", "active": active}
        if own_window:
            params["ownWindow"] = True
        created = await self.request("createTab", params)
        self.opened.add(int(created["tabId"]))
        session = await self.attach(int(created["tabId"]))
        if url != "about:blank":
            try:
                await session.navigate(url)
            except BaseException:
                await self.close_tab(session.tab_id)
                raise
        return session

    async def attach(self, tab_id: int) -> CdpSession:
        """The tab's session, attached through the current transport (once: concurrent
        callers share one attachment)."""
        lock = self._attach_locks.setdefault(tab_id, asyncio.Lock())
        async with lock:
            transport = await self.transport()
            session = self.sessions.get(tab_id)
            if (
                session is not None
                and session.ended is None
                and self._attached_via.get(tab_id) is transport
            ):
                return session
            await transport.request("attachTab", {"tabId": tab_id}, timeout=scaled(10.0))
            session = self.sessions.get(tab_id)
            if session is None or session.ended is not None:
                session = CdpSession(self, tab_id)
                self.sessions[tab_id] = session
            self._attached_via[tab_id] = transport
            self._browser_of[tab_id] = _browser_instance(transport)
            if self.guard.origins.active:
                # Before anyone uses the tab: its requests are checked from now on.
                await self.interception(session).sync()
            return session

    async def _guard_popup(self, tab_id: int, url: str) -> None:
        """A tab a guarded tab opened (window.open, a target=_blank link): attach it and
        check its requests too; one that already went where the guard forbids is closed.
        chrome.debugger cannot attach to a tab before it starts loading, so the popup's very
        first request may have left (docs/mcp.md#guard-rails)."""
        reason = self.guard.origins.refusal(url)
        if reason is None:
            try:
                session = await self.attach(tab_id)
                history = await session.send("Page.getNavigationHistory", guarded=False)
                entries = history.get("entries") or []
                index = history.get("currentIndex")
                if isinstance(index, int) and 0 <= index < len(entries):
                    reason = self.guard.origins.refusal(str(entries[index].get("url", "")))
            except BridgeError as exc:
                # Closed meanwhile, or showing what extensions may not debug (the error page
                # of a request the guard already failed): what the tab list says decides.
                log.info("guarding popup tab %s: %s", tab_id, exc)
            if reason is None:
                try:
                    listed = [t for t in await self.list_tabs() if t.tab_id == tab_id]
                except BridgeError as exc:
                    log.info("guarding popup tab %s: %s", tab_id, exc)
                    return
                reason = self.guard.origins.refusal(listed[0].url) if listed else None
        if reason is not None:
            log.info("closing popup tab %s: %s", tab_id, reason)
            try:
                await self.close_tab(tab_id)
            except BridgeError as exc:  # closed meanwhile
                log.info("closing popup tab %s: %s", tab_id, exc)

    async def detach(self, tab_id: int) -> None:
        self._forget(tab_id, DebuggerDetached(tab_id, "detached by bridge"))
        transport = self.connector.current
        if transport is not None:
            try:
                await transport.request("detachTab", {"tabId": tab_id}, timeout=scaled(10.0))
            except CommandFailed as exc:
                if exc.error_code not in {"not_attached", "no_tab"}:
                    raise

    async def close_tab(self, tab_id: int) -> None:
        self._forget(tab_id, TabClosed(tab_id, "closed by bridge"))
        try:
            await self.request("closeTab", {"tabId": tab_id})
        except CommandFailed as exc:
            if exc.error_code != "no_tab":
                raise

    async def activate_tab(self, tab_id: int) -> None:
        await self.request("activateTab", {"tabId": tab_id})

    async def detach_all(self) -> None:
        for tab_id in list(self.sessions):
            try:
                await self.detach(tab_id)
            except BridgeError as exc:  # shutting down: the browser may be gone already
                log.debug("detaching tab %s at shutdown: %s", tab_id, exc)

    def _crashed(self, transport: Transport, tab_id: int) -> None:
        """A crashed page answers nothing: what is pending fails now, and every command
        fails at once (``transport_for``) until the tab loads a page again."""
        error = TabCrashed(tab_id)
        session = self.sessions.get(tab_id)
        if session is not None:
            session.crashed = error
        transport.fail_pending(
            lambda method, params: (
                error if method == "cdpCommand" and params.get("tabId") == tab_id else None
            )
        )

    def _suspend(self, tab_id: int, error: BridgeError) -> None:
        """Chrome took the debugger away but the tab is still there: what waits fails now
        (typed, with the reason); the session stays, and its next command attaches again."""
        self._attached_via.pop(tab_id, None)
        session = self.sessions.get(tab_id)
        if session is not None:
            self._suspended[tab_id] = getattr(error, "reason", str(error))
            session.interrupt(error)

    def _forget(self, tab_id: int, error: BridgeError) -> None:
        self._suspended.pop(tab_id, None)
        self._attached_via.pop(tab_id, None)
        self._browser_of.pop(tab_id, None)
        self.interceptions.pop(tab_id, None)
        session = self.sessions.pop(tab_id, None)
        if session is not None:
            session.end(error)

    # -- SessionHost ----------------------------------------------------------------

    async def transport_for(self, tab_id: int) -> Transport:
        transport = self.connector.current
        if transport is not None and self._attached_via.get(tab_id) is transport:
            return transport  # hot path: nothing to check
        transport = await self.transport()
        # A new link (service worker restart, reconnection), or a debugger Chrome took away:
        # attach again; the extension recognises an attachment of its own that survived
        # and reuses it.
        try:
            attached = await transport.request("attachTab", {"tabId": tab_id}, timeout=scaled(10.0))
        except CommandFailed as exc:
            if exc.error_code == "no_tab":
                before, now = self._browser_of.get(tab_id, ""), _browser_instance(transport)
                why = (
                    "it is in the browser bridge worked through before; bridge works through "
                    "another of your browsers now (chosen in its popup, or the first one left)"
                    if before and now and before != now
                    else "it no longer exists"
                )
                error = TabClosed(tab_id, why)
                self._forget(tab_id, error)
                raise error from exc
            suspended = self._suspended.get(tab_id)
            if suspended is not None and exc.error_code == "attach_failed":
                raise DebuggerDetached(
                    tab_id,
                    f"{suspended}; bridge attaches again as soon as it shows a page "
                    f"extensions may debug (Chrome says: {exc.message})",
                ) from exc
            raise
        self._suspended.pop(tab_id, None)
        session = self.sessions.get(tab_id)
        if session is not None and not attached.get("reused", False):
            await self._restore_domains(transport, session)
        self._attached_via[tab_id] = transport
        self._browser_of[tab_id] = _browser_instance(transport)
        return transport

    async def _restore_domains(self, transport: Transport, session: CdpSession) -> None:
        """A fresh attachment knows nothing of what the session enabled: enable it again."""
        for domain, params in list(session.enabled.items()):
            body = {"tabId": session.tab_id, "method": f"{domain}.enable", "params": params}
            try:
                await transport.request("cdpCommand", body, timeout=scaled(10.0))
            except CdpError as exc:  # a domain this page no longer has: the rest still apply
                log.debug("re-enabling %s on tab %s: %s", domain, session.tab_id, exc)

    # -- TransportListener ----------------------------------------------------------------

    def transport_event(self, transport: Transport, event: Event) -> None:
        p = event.params
        if event.method == "cdpEvent":
            session = self.sessions.get(p["tabId"])
            if session is not None:
                session.dispatch(p["method"], p.get("params") or {}, p.get("sessionId"))
            if p["method"] == "Inspector.targetCrashed" and not p.get("sessionId"):
                self._crashed(transport, int(p["tabId"]))
            return
        if event.method == "tabShared":
            if p["shared"]:
                self.shared.add(int(p["tabId"]))
            else:
                self.shared.discard(int(p["tabId"]))
            return
        if event.method == "tabCreated":
            opener = p.get("openerTabId")
            if isinstance(opener, int) and opener in self.opened:
                self.opened.add(int(p["tabId"]))  # a popup of a tab of bridge's is bridge's
            if isinstance(opener, int) and self.intercepting(opener) and self.guard.origins.active:
                self._guarding.spawn(self._guard_popup(int(p["tabId"]), str(p.get("url", ""))))
            for callback in list(self.tab_created_listeners):
                try:
                    callback(p)
                except Exception:
                    log.exception("tabCreated listener failed")
            return
        if event.method == "tabUpdated":
            session = self.sessions.get(p["tabId"])
            if session is not None:
                if p.get("status") == "loading":
                    session.crashed = None  # reloaded or navigated: a new page
                session.url = p.get("url", session.url)
                session.title = p.get("title", session.title)
            return
        error = ending_of(event)
        if error is None:
            return
        tab_id = int(p["tabId"])
        if event.method == "tabRemoved":
            self.opened.discard(tab_id)
            self.shared.discard(tab_id)
        if recoverable(event):
            self._suspend(tab_id, error)
        else:
            self._forget(tab_id, error)
        transport.fail_pending(
            lambda method, params: (
                error if method == "cdpCommand" and params.get("tabId") == tab_id else None
            )
        )

    def transport_lost(self, transport: Transport) -> None:
        error = ExtensionDisconnected(
            "the extension's connection dropped (service worker restart or browser closed); "
            "the next command reconnects"
        )
        for tab_id, via in list(self._attached_via.items()):
            if via is transport:
                del self._attached_via[tab_id]
                session = self.sessions.get(tab_id)
                if session is not None:
                    session.interrupt(error)


def _browser_instance(transport: Transport) -> str:
    """The browser instance a transport links to ("" for one that does not say)."""
    return str(getattr(transport, "instance_id", "") or "")
