"""One client's sessions on tabs: the aliases it attached (several may share a tab), the
popups and new tabs announced to it, and the page-level commands and events forwarded
through them to the tab's one ``chrome.debugger`` session.

A tab is attached on the first command a client sends it, and only while it shows a page
clients may drive: what the endpoint knows of the page comes from the tab's history when it
is attached, then from its events (``Page.frameNavigated``, the extension's ``tabUpdated``).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bridge.cdp.browser import Browser, TabInfo
from bridge.cdp.endpoint.downloads import ClientDownloads
from bridge.cdp.endpoint.targets import Params, target_id, target_info
from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError, CdpError, CommandFailed
from bridge.policy.pages import history_refusal
from bridge.waiting import scaled

if TYPE_CHECKING:
    from bridge.cdp.endpoint.client import CdpClient

__all__ = ["Alias", "ClientSessions"]

#: Commands that open a URL in the page they are sent to (or a new one): the URL policy.
_OPENS_URL = ("Page.navigate", "Target.createTarget")


@dataclass
class Alias:
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


class ClientSessions:
    """The sessions of one client (``client``), by session id."""

    def __init__(self, client: CdpClient) -> None:
        self.client = client
        self.aliases: dict[str, Alias] = {}
        self.children: dict[str, str] = {}  # child session -> alias
        #: Tabs this client's commands attached (not attached by anyone before it).
        self.attached_here: set[int] = set()
        self.creating = 0  # createTarget calls under way
        self.deferred: list[Params] = []  # new tabs seen meanwhile

    @property
    def browser(self) -> Browser:
        return self.client.browser

    def has(self, tab_id: int) -> bool:
        return any(a.tab_id == tab_id for a in self.aliases.values())

    def new(self, info: TabInfo) -> Alias:
        """A new session of this client on the tab (attached on its first command)."""
        alias = Alias(
            f"bridge-{info.tab_id}-{next(self.client.ids)}",
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
        client = self.client
        if not client.auto_attach or client.endpoint.refusal(str(params.get("url", ""))):
            return  # a tab opened at an extension page or a file is never announced
        opener_tab = params.get("openerTabId")
        opener = next((a for a in self.aliases.values() if a.tab_id == opener_tab), None)
        if opener is None and self.creating:
            self.deferred.append(params)  # maybe our own createTarget's tab: decided after
            return
        if client.endpoint.browser.access(int(params["tabId"])) == "not shared":
            return  # a tab the person opened is the person's (bridge.policy.tabs)
        info = TabInfo(
            int(params["tabId"]), str(params.get("url", "")), "", False, False,
            str(params.get("targetId", "")),
        )  # fmt: skip
        if opener is not None:
            context = client.context_of(opener.tab_id)
            if context in client.contexts:
                client.contexts[context].add(info.tab_id)  # a popup stays in its opener's context
        client.tasks.spawn(
            self.announce(info, waiting=False, opener=opener.target if opener else None)
        )

    async def announce(self, info: TabInfo, *, waiting: bool, opener: str | None = None) -> None:
        if any(a.tab_id == info.tab_id for a in self.aliases.values()):
            return
        alias = self.new(info)
        described = target_info(info, attached=True, context=self.client.context_of(info.tab_id))
        if opener:
            described["openerId"] = opener
        await self.client.event(
            "Target.attachedToTarget",
            {"sessionId": alias.session_id, "targetInfo": described, "waitingForDebugger": waiting},
        )

    def drop(self, session_id: str) -> None:
        """The client's session ends: it hears ``Target.detachedFromTarget`` (Playwright
        waits for it when a page closes)."""
        alias = self.aliases.pop(session_id, None)
        if alias is None:
            return
        for undo in (alias.untap, alias.unend):
            if undo is not None:
                undo()
        self.client.tasks.spawn(
            self.client.event(
                "Target.detachedFromTarget", {"sessionId": session_id, "targetId": alias.target}
            )
        )

    def _ended(self, alias: Alias) -> None:
        """The tab closed or its debugger detached (not through this client)."""
        if alias.session_id in self.aliases:
            self.drop(alias.session_id)
            self.client.tasks.spawn(
                self.client.event("Target.targetDestroyed", {"targetId": alias.target})
            )

    def leave_tab(self, tab_id: int) -> None:
        """End this client's sessions on a tab (it hears Target.detachedFromTarget)."""
        for alias in [a for a in self.aliases.values() if a.tab_id == tab_id]:
            self.drop(alias.session_id)

    def close(self) -> None:
        """The client is gone: its sessions stop hearing their tabs, silently."""
        for alias in self.aliases.values():
            for undo in (alias.untap, alias.unend):
                if undo is not None:
                    undo()
        self.aliases.clear()

    async def release_tabs(self, others: set[CdpClient]) -> None:
        """A client gone: the tabs it attached (and nobody else uses) are detached, so the
        debugging bar and its cost go with it; tabs attached before it came stay as they were."""
        in_use = {a.tab_id for other in others for a in other.sessions.aliases.values()}
        for tab_id in self.attached_here - in_use:
            with contextlib.suppress(BridgeError):
                await self.browser.detach(tab_id)
        self.attached_here.clear()

    # -- page level (forwarded) ----------------------------------------------------------

    async def command(self, session: str, method: str, params: Params) -> Params:
        """A command to a page (or a child session of one), forwarded to its tab."""
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
            params = {**params, "url": self.client.navigable(str(params.get("url") or default))}
        self._still_drivable(alias, None, method)  # as listed: never attached if refused
        tab = await self._attached(alias)
        self._still_drivable(alias, tab, method)  # as it is now
        if method.startswith("Fetch.") and self.browser.intercepting(alias.tab_id):
            # One Fetch per tab, and bridge's guard or routes hold it: a client's own
            # Fetch.enable would replace their patterns, its Fetch.disable end them.
            raise CdpError(
                method,
                "refused: bridge intercepts this tab's requests (--allowed-origins, "
                "--blocked-origins or a browser_route), and a tab has one Fetch domain",
                -32000,
            )
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

    async def _attached(self, alias: Alias) -> CdpSession:
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

    async def _look_at(self, alias: Alias, tab: CdpSession) -> None:
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
                str(entry.get("url", "")), allow_file=self.client.endpoint.allow_file_urls
            )

    def _still_drivable(self, alias: Alias, tab: CdpSession | None, method: str) -> None:
        """Refuse a command to a tab now showing a page no client may drive (the person
        opened it there, or history led back to it): the client's sessions on that tab end.

        What the endpoint knows of the tab's page arrives as events, so a page reached by
        the page's own script may take a command or two before its event is in. Which is
        why a tab whose history holds such a page is refused from the start
        (``history_refusal``): ``history.back()`` in ``Runtime.evaluate`` is no command the
        endpoint could recognise.
        """
        for url in (alias.url, tab.url if tab is not None else ""):
            reason = self.client.endpoint.refusal(url) or alias.refused
            if reason is not None:
                self.leave_tab(alias.tab_id)
                raise CdpError(method, f"refused: {reason}", -32000)

    def _forward(self, alias: Alias, method: str, params: Params, child: str | None) -> None:
        if alias.session_id not in self.aliases:
            return
        client = self.client
        if method.startswith("Fetch.") and client.browser.intercepting(alias.tab_id):
            return  # bridge's own interception: answering it is bridge's, never a client's
        if method.startswith("Page.download"):
            if not ClientDownloads.reportable(method, params):
                return
            if client.downloads.events and child is None:
                client.tasks.spawn(client.downloads.event(method, params))
        if method == "Page.frameNavigated" and child is None:
            frame = params.get("frame") or {}
            if not frame.get("parentId"):
                alias.url = str(frame.get("url", ""))
                if client.endpoint.refusal(alias.url) is not None:
                    self.leave_tab(alias.tab_id)  # the tab went to a page no client drives
                    return
        if method == "Target.attachedToTarget" and params.get("sessionId"):
            self.children[str(params["sessionId"])] = alias.session_id
        message: Params = {
            "method": method,
            "params": params,
            "sessionId": child or alias.session_id,
        }
        client.tasks.spawn(client.send(message))
