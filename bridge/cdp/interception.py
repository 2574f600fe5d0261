"""One ``Fetch`` interception per tab, shared by the origin guard and the clients' routes.

Chrome gives a debugger session one set of ``Fetch`` patterns, and the tab has one session
(the extension's), so the guard (``--allowed-origins`` / ``--blocked-origins``) and every
client's routes (``browser_route``) must share it: each paused request is answered once, in
one order, guard first (``bridge.policy.routing.decide``).

A paused request never waits on anything but its answer: the decision is pure and immediate,
a request no route matches goes on at once, and when the tab closes its session ends and
Chrome lets go of whatever was paused (nothing here holds a request). Redirects are paused
again at each hop, so a redirect to a blocked origin is blocked like a direct request; the
document requests of the tab's frames are the tab's too. An out-of-process iframe (or a
worker) is a target of its own: its requests are paused on its child session, once someone
auto-attached it (the tools' recorder does, and Playwright does), so it gets the same
``Fetch`` as soon as it is announced: both attach children waiting for the debugger, and this
listener, registered when the tab is attached, sends ``Fetch.enable`` before they let it run.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError
from bridge.policy.origins import OriginPolicy
from bridge.policy.routing import Route, decide
from bridge.tasks import TaskSet
from bridge.waiting import scaled, wait_for

__all__ = ["TabInterception"]

log = logging.getLogger(__name__)

#: Every request, paused before it is sent (the guard must see them all).
_PATTERNS = [{"urlPattern": "*", "requestStage": "Request"}]
#: Child targets with requests of their own (an out-of-process iframe, a worker).
_CHILD_TYPES = frozenset({"iframe", "worker"})


class TabInterception:
    """The ``Fetch`` interception of one tab: on while the guard or any route needs it."""

    def __init__(self, session: CdpSession, origins: Callable[[], OriginPolicy]) -> None:
        self.session = session
        self._origins = origins  # the browser's guard as it is now
        #: Each client's routes on this tab (by client key), in the order they were added.
        self.routes: dict[str, list[Route]] = {}
        self.enabled = False
        #: The last requests the guard refused (URL, why): what a test or a report shows.
        self.blocked: deque[tuple[str, str]] = deque(maxlen=50)
        #: Set (and replaced) at each refusal: what ``refusal`` waits on.
        self._refused = asyncio.Event()
        self._lock = asyncio.Lock()
        self._tasks = TaskSet(f"interception of tab {session.tab_id}", log)
        #: Child sessions (out-of-process iframes, workers) someone auto-attached: each is its
        #: own DevTools target, whose requests only its own Fetch domain sees.
        self.children: dict[str, Callable[[], None]] = {}
        self._unlisten = [
            session.on("Fetch.requestPaused", self._paused),
            session.on("Target.attachedToTarget", self._child_attached),
            session.on("Target.detachedFromTarget", self._child_detached),
        ]
        session.on_end(lambda _: self._ended())

    @property
    def origins(self) -> OriginPolicy:
        return self._origins()

    @property
    def needed(self) -> bool:
        return self.origins.active or any(self.routes.values())

    def all_routes(self) -> list[Route]:
        return [route for routes in self.routes.values() for route in routes]

    async def refusal(self, prefix: str, timeout: float) -> None:
        """Until the guard has refused a request whose URL starts with ``prefix`` (at once
        when it already has); ``BridgeTimeout`` after ``timeout`` seconds."""

        async def refused() -> None:
            while not any(url.startswith(prefix) for url, _ in self.blocked):
                await self._refused.wait()

        await wait_for(
            refused(), timeout, f"a request to {prefix} refused on tab {self.session.tab_id}"
        )

    async def set_routes(self, owner: str, routes: list[Route]) -> None:
        """Replace ``owner``'s routes on this tab, and turn interception on or off to match."""
        if routes:
            self.routes[owner] = list(routes)
        else:
            self.routes.pop(owner, None)
        await self.sync()

    async def sync(self) -> None:
        """``Fetch.enable`` while something needs it, ``Fetch.disable`` once nothing does
        (Chrome lets every request still paused go on)."""
        async with self._lock:
            if self.session.ended is not None:
                return
            if self.needed and not self.enabled:
                await self.session.send("Fetch.enable", {"patterns": _PATTERNS}, guarded=False)
                self.enabled = True
                for child in list(self.children):
                    await self._child_fetch(child, enable=True)
            elif not self.needed and self.enabled:
                self.enabled = False
                await self.session.send("Fetch.disable", guarded=False)
                for child in list(self.children):
                    await self._child_fetch(child, enable=False)

    def _child_attached(self, params: dict[str, Any]) -> None:
        child = params.get("sessionId")
        kind = (params.get("targetInfo") or {}).get("type")
        if not child or kind not in _CHILD_TYPES or child in self.children:
            return
        child = str(child)
        self.children[child] = self.session.on(
            "Fetch.requestPaused", lambda p: self._paused(p, child), session_id=child
        )
        if self.enabled:
            self._tasks.spawn(self._child_fetch(child, enable=True))

    def _child_detached(self, params: dict[str, Any]) -> None:
        unlisten = self.children.pop(str(params.get("sessionId", "")), None)
        if unlisten is not None:
            unlisten()

    async def _child_fetch(self, child: str, *, enable: bool) -> None:
        method, params = (
            ("Fetch.enable", {"patterns": _PATTERNS}) if enable else ("Fetch.disable", {})
        )
        try:
            await self.session.send(method, params, session_id=child, guarded=False)
        except BridgeError as exc:  # the frame went away meanwhile
            log.debug("tab %s child %s: %s: %s", self.session.tab_id, child, method, exc)

    def _paused(self, params: dict[str, Any], child: str | None = None) -> None:
        if not self.enabled:
            return  # a DevTools client's own Fetch (it answers its own requests)
        request = params.get("request") or {}
        decision = decide(
            str(params.get("requestId", "")),
            str(request.get("url", "")),
            request.get("headers") or {},
            self.origins,
            self.all_routes(),
        )
        if decision.kind == "block":
            self.blocked.append((str(request.get("url", "")), decision.reason))
            refused, self._refused = self._refused, asyncio.Event()
            refused.set()
            log.info("tab %s: blocked a request (%s)", self.session.tab_id, decision.reason)
        self._tasks.spawn(self._answer(decision.method, decision.params, child))

    async def _answer(self, method: str, params: dict[str, Any], child: str | None) -> None:
        try:
            await self.session.send(
                method, params, session_id=child, guarded=False, timeout=scaled(10.0)
            )
        except BridgeError as exc:  # the tab closed, or Chrome already let the request go
            log.debug("tab %s: %s: %s", self.session.tab_id, method, exc)

    def _ended(self) -> None:
        """The tab is gone: Chrome holds no request of it any more; stop answering."""
        self.enabled = False
        for unlisten in [*self._unlisten, *self.children.values()]:
            unlisten()
        self.children.clear()
        self._tasks.cancel()
