"""The browser as seen through the relay and the extension: its tabs and their sessions.

Sessions outlive a link: when the extension's service worker restarts, or the link is
replaced, the next command on a session re-attaches through the new link (the
extension reuses its own surviving attachment). What was in flight when the link
dropped fails with ExtensionDisconnected; a tab closed or detached ends its session.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from bridge.cdp import CdpSession
from bridge.errors import (
    BridgeError,
    CommandFailed,
    DebuggerDetached,
    ExtensionDisconnected,
    TabClosed,
)
from bridge.link import ExtensionLink
from bridge.protocol import Event
from bridge.relay import Relay
from bridge.waiting import scaled

__all__ = ["Browser", "TabInfo"]


@dataclass(frozen=True)
class TabInfo:
    tab_id: int
    url: str
    title: str
    active: bool
    attached_here: bool

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> TabInfo:
        return cls(
            tab_id=int(raw["tabId"]),
            url=str(raw.get("url") or raw.get("pendingUrl") or ""),
            title=str(raw.get("title", "")),
            active=bool(raw.get("active", False)),
            attached_here=bool(raw.get("attachedHere", False)),
        )


class Browser:
    def __init__(self, relay: Relay, *, connect_timeout: float | None = None) -> None:
        self.relay = relay
        self.connect_timeout = scaled(10.0) if connect_timeout is None else connect_timeout
        self.sessions: dict[int, CdpSession] = {}
        self._attached_via: dict[int, ExtensionLink] = {}
        relay.event_listeners.append(self._on_event)
        relay.link_lost_listeners.append(self._on_link_lost)

    async def link(self) -> ExtensionLink:
        return await self.relay.wait_for_link(self.connect_timeout)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        link = await self.link()
        return await link.request(method, params, timeout=scaled(30.0))

    # -- tabs -----------------------------------------------------------------------

    async def list_tabs(self) -> list[TabInfo]:
        result = await self.request("listTabs")
        return [TabInfo.from_wire(t) for t in result.get("tabs", [])]

    async def new_tab(self, url: str = "about:blank", *, active: bool = False) -> CdpSession:
        """Open a tab, attach to it, then navigate, so its load is observed by us."""
        created = await self.request("createTab", {"url": "about:blank", "active": active})
        session = await self.attach(int(created["tabId"]))
        if url != "about:blank":
            try:
                await session.navigate(url)
            except BaseException:
                await self.close_tab(session.tab_id)
                raise
        return session

    async def attach(self, tab_id: int) -> CdpSession:
        link = await self.link()
        await link.request("attachTab", {"tabId": tab_id}, timeout=scaled(10.0))
        session = self.sessions.get(tab_id)
        if session is None or session.ended is not None:
            session = CdpSession(self, tab_id)
            self.sessions[tab_id] = session
        self._attached_via[tab_id] = link
        return session

    async def detach(self, tab_id: int) -> None:
        session = self.sessions.pop(tab_id, None)
        self._attached_via.pop(tab_id, None)
        if session is not None:
            session._end(DebuggerDetached(tab_id, "detached by bridge"))
        link = self.relay.link
        if link is not None:
            try:
                await link.request("detachTab", {"tabId": tab_id}, timeout=scaled(10.0))
            except CommandFailed as exc:
                if exc.error_code not in {"not_attached", "no_tab"}:
                    raise

    async def close_tab(self, tab_id: int) -> None:
        session = self.sessions.pop(tab_id, None)
        self._attached_via.pop(tab_id, None)
        if session is not None:
            session._end(TabClosed(tab_id, "closed by bridge"))
        try:
            await self.request("closeTab", {"tabId": tab_id})
        except CommandFailed as exc:
            if exc.error_code != "no_tab":
                raise

    async def activate_tab(self, tab_id: int) -> None:
        await self.request("activateTab", {"tabId": tab_id})

    async def detach_all(self) -> None:
        for tab_id in list(self.sessions):
            with contextlib.suppress(BridgeError):
                await self.detach(tab_id)

    # -- routing --------------------------------------------------------------------

    async def _link_for(self, session: CdpSession) -> ExtensionLink:
        link = self.relay.link
        if link is not None and self._attached_via.get(session.tab_id) is link:
            return link  # hot path: nothing to check
        link = await self.link()
        # A new link (service worker restart, reconnection): attach again; the extension
        # recognises an attachment of its own that survived and reuses it.
        try:
            await link.request("attachTab", {"tabId": session.tab_id}, timeout=scaled(10.0))
        except CommandFailed as exc:
            if exc.error_code == "no_tab":
                error = TabClosed(session.tab_id, "it no longer exists")
                session._end(error)
                raise error from exc
            raise
        self._attached_via[session.tab_id] = link
        return link

    def _on_event(self, link: ExtensionLink, event: Event) -> None:
        p = event.params
        if event.method == "cdpEvent":
            session = self.sessions.get(p["tabId"])
            if session is not None:
                session._dispatch(p["method"], p.get("params") or {}, p.get("sessionId"))
            return
        if event.method in {"tabDetached", "tabRemoved"}:
            tab_id = p["tabId"]
            reason = p.get("reason", "target_closed")
            gone = event.method == "tabRemoved" or (
                reason == "target_closed" and not p.get("tabExists", False)
            )
            if not gone and reason == "target_closed":
                reason = "the tab went to a page extensions may not debug (e.g. chrome://)"
            error: BridgeError = TabClosed(tab_id) if gone else DebuggerDetached(tab_id, reason)
            self._attached_via.pop(tab_id, None)
            session = self.sessions.pop(tab_id, None)
            if session is not None:
                session._end(error)
            link.fail_pending(
                lambda method, params: (
                    error if method == "cdpCommand" and params.get("tabId") == tab_id else None
                )
            )

    def _on_link_lost(self, link: ExtensionLink) -> None:
        error = ExtensionDisconnected(
            "the extension's connection dropped (service worker restart or browser closed); "
            "the next command reconnects"
        )
        for tab_id, via in list(self._attached_via.items()):
            if via is link:
                del self._attached_via[tab_id]
                session = self.sessions.get(tab_id)
                if session is not None:
                    session._fail_waiters(error)
