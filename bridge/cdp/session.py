"""A CDP session for one tab, over whatever transport reaches the browser.

Commands go out as ``cdpCommand`` requests on the transport the session's host hands it
(``SessionHost.transport_for``: the host re-attaches on a new link when the old one was
replaced). Events come back through ``dispatch``; the end of the tab comes through
``end`` (closed, detached: final) or ``interrupt`` (link lost, page crashed: what was
waiting fails, the session stays usable). Waits are registered before the action that
causes them (``expect_event``, ``stream``) and are rejected at once when their subject
ends, never left to run into their deadline.

This module imports nothing of ``bridge.cdp.browser``: the host is a protocol.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol, cast

from bridge.errors import BridgeError, CdpError, TabCrashed
from bridge.link.transport import Params, Transport
from bridge.waiting import EventStream, Waiter, scaled

__all__ = ["CdpSession", "JavaScriptError", "SessionHost"]

log = logging.getLogger(__name__)

Predicate = Callable[[Params], bool]
Listener = Callable[[Params], None]

_DEFAULT: Any = object()


class JavaScriptError(CdpError):
    """An expression evaluated in the page threw."""

    code = "javascript_error"


class SessionHost(Protocol):
    """What a session needs from the browser that made it (``bridge.cdp.browser.Browser``)."""

    async def transport_for(self, tab_id: int) -> Transport:
        """The transport this tab is attached through now (attaching again if needed)."""
        ...

    async def close_tab(self, tab_id: int) -> None: ...

    async def detach(self, tab_id: int) -> None: ...


class _EventWait:
    """An event filter feeding a Waiter or an EventStream (one registration, one idiom)."""

    __slots__ = ("method", "predicate", "session_id", "sink", "transform")

    def __init__(
        self,
        method: str,
        predicate: Predicate | None,
        session_id: str | None,
        sink: Waiter[Params] | EventStream[Any],
        transform: Callable[[Params], Any] | None = None,
    ) -> None:
        self.method = method
        self.predicate = predicate
        self.session_id = session_id
        self.sink = sink
        self.transform = transform

    def offer(self, params: Params) -> None:
        try:
            if self.predicate is not None and not self.predicate(params):
                return
            item = params if self.transform is None else self.transform(params)
        except Exception as exc:  # a broken predicate or transform ends the wait with its error
            self.sink.reject(exc)
            return
        if isinstance(self.sink, Waiter):
            self.sink.resolve(item)
        else:
            self.sink.push(item)


#: What may still be sent to a crashed page: loading a page again is the way out.
_RELOADS = frozenset({"Page.reload", "Page.navigate"})


class CdpSession:
    """One tab's CDP session: commands, events, waits that end at once when the tab closes or the
    debugger detaches. It imports nothing of the browser: its host is a protocol."""

    def __init__(self, host: SessionHost, tab_id: int) -> None:
        self.host = host
        self.tab_id = tab_id
        self._listeners: dict[tuple[str, str | None], list[Listener]] = {}
        self._taps: list[Callable[[str, Params, str | None], None]] = []
        self._enders: list[Callable[[BridgeError], None]] = []
        self._waits: dict[object, _EventWait] = {}
        self.ended: BridgeError | None = None
        self.default_timeout = scaled(30.0)
        # The tab's URL and title as the extension last reported them (tabUpdated events,
        # from attachment on): free to read, no round trip; "" until a change is reported.
        self.url = ""
        self.title = ""
        #: Domains enabled on the tab's own session (``X.enable`` → its params): a fresh
        #: attachment (after Chrome took the debugger away) gets them again, so listeners
        #: keep hearing their events (``SessionHost.transport_for`` replays them).
        self.enabled: dict[str, Params] = {}
        #: Set while the page is crashed (Chrome answers nothing then): commands fail at
        #: once, except the ones that load a page again. Cleared when the tab loads.
        self.crashed: BridgeError | None = None

    def __repr__(self) -> str:
        state = f" ended: {self.ended}" if self.ended else ""
        return f"<CdpSession tab {self.tab_id}{state}>"

    # -- commands -------------------------------------------------------------------

    async def send(
        self,
        method: str,
        params: Params | None = None,
        *,
        timeout: float | None = _DEFAULT,
        session_id: str | None = None,
        guarded: bool = True,
    ) -> Params:
        """Send ``method`` to the tab (or one of its child sessions). The person's guard rails
        (the host's ``guard``: bridge.policy.guard) are checked here, where every command of
        the tools and of the DevTools endpoint passes; ``guarded=False`` only for bridge's
        own network interception (bridge.cdp.interception), which enforces them."""
        if self.ended is not None:
            raise self.ended
        if guarded:
            guard = getattr(self.host, "guard", None)
            if guard is not None and guard.active:
                refusal = guard.check(method, params)
                if refusal is not None:
                    raise refusal.error()
        if self.crashed is not None and method not in _RELOADS:
            raise self.crashed
        transport = await self.host.transport_for(self.tab_id)
        body: Params = {"tabId": self.tab_id, "method": method, "params": params or {}}
        if session_id is not None:
            body["sessionId"] = session_id
        limit = self.default_timeout if timeout is _DEFAULT else timeout
        result = await transport.request("cdpCommand", body, timeout=limit)
        if session_id is None and method.endswith((".enable", ".disable")):
            domain, _, verb = method.rpartition(".")
            if verb == "enable":
                self.enabled[domain] = params or {}
            else:
                self.enabled.pop(domain, None)
        return result

    async def send_all(self, commands: Sequence[tuple[str, Params]]) -> list[Params]:
        """Several commands in one go, in order, without waiting for each answer before
        sending the next: the link writes them in this order (sharing a frame while others
        are in flight), the extension hands them to ``chrome.debugger`` in that order and the
        browser runs one session's commands in order. For input that belongs together (a
        click's move, press and release): one round trip instead of one each. All are sent
        even when an earlier one fails; the first failure is raised."""
        sent = [asyncio.ensure_future(self.send(method, params)) for method, params in commands]
        results = await asyncio.gather(*sent, return_exceptions=True)
        failed = next((r for r in results if isinstance(r, BaseException)), None)
        if failed is not None:
            raise failed
        return cast(list[Params], results)

    async def evaluate(
        self,
        expression: str,
        *,
        await_promise: bool = False,
        timeout: float | None = None,
        user_gesture: bool = False,
    ) -> Any:
        """Evaluate in the page and return the value (by value); JavaScriptError if it threw."""
        result = await self.send(
            "Runtime.evaluate",
            {
                "expression": expression,
                "returnByValue": True,
                "awaitPromise": await_promise,
                "userGesture": user_gesture,
            },
            timeout=self.default_timeout if timeout is None else timeout,
        )
        details = result.get("exceptionDetails")
        if details:
            exc = details.get("exception", {})
            text = exc.get("description") or details.get("text") or "exception"
            raise JavaScriptError("Runtime.evaluate", str(text))
        return result.get("result", {}).get("value")

    async def navigate(self, url: str, *, timeout: float | None = None) -> None:
        """Navigate and wait for the load event (Page domain enabled on the way)."""
        await self.send("Page.enable")
        loaded = self.expect_event("Page.loadEventFired")
        try:
            result = await self.send("Page.navigate", {"url": url})
            if result.get("errorText"):
                raise CdpError("Page.navigate", f"{url}: {result['errorText']}")
            await loaded.wait(scaled(30.0) if timeout is None else timeout)
        finally:
            loaded.close()

    # -- events ---------------------------------------------------------------------

    def on(
        self, method: str, callback: Listener, *, session_id: str | None = None
    ) -> Callable[[], None]:
        """Call ``callback(params)`` for each ``method`` event; returns the unsubscribe."""
        key = (method, session_id)
        self._listeners.setdefault(key, []).append(callback)

        def unsubscribe() -> None:
            listeners = self._listeners.get(key, [])
            if callback in listeners:
                listeners.remove(callback)

        return unsubscribe

    def tap(self, callback: Callable[[str, Params, str | None], None]) -> Callable[[], None]:
        """Every event of this tab, child sessions' included: ``callback(method, params,
        session_id)`` (the DevTools endpoint forwards them all). Returns the unsubscribe."""
        self._taps.append(callback)
        return lambda: self._taps.remove(callback) if callback in self._taps else None

    def on_end(self, callback: Callable[[BridgeError], None]) -> Callable[[], None]:
        """``callback(error)`` once, when the session ends (tab closed, debugger detached)."""
        self._enders.append(callback)
        return lambda: self._enders.remove(callback) if callback in self._enders else None

    def expect_event(
        self, method: str, predicate: Predicate | None = None, *, session_id: str | None = None
    ) -> Waiter[Params]:
        """A wait for the next ``method`` event (matching ``predicate``); register it first."""
        waiter: Waiter[Params] = Waiter(f"{method} on tab {self.tab_id}", self._forget)
        self._register(_EventWait(method, predicate, session_id, waiter))
        return waiter

    def stream(
        self,
        method: str,
        predicate: Predicate | None = None,
        *,
        session_id: str | None = None,
        transform: Callable[[Params], Any] | None = None,
    ) -> EventStream[Any]:
        """Every ``method`` event (matching ``predicate``) from now on, until closed; each
        passed through ``transform`` when given (e.g. decoding a binding's payload)."""
        events: EventStream[Any] = EventStream(f"{method} on tab {self.tab_id}", self._forget)
        self._register(_EventWait(method, predicate, session_id, events, transform))
        return events

    def _register(self, wait: _EventWait) -> None:
        if self.ended is not None:
            wait.sink.reject(self.ended)
        self._waits[wait.sink] = wait

    def _forget(self, sink: object) -> None:
        self._waits.pop(sink, None)

    # -- delivery (called by the host) ----------------------------------------------------

    def dispatch(self, method: str, params: Params, session_id: str | None = None) -> None:
        """An event for this tab. A listener that raises is logged; the others still run."""
        for tap in list(self._taps):
            try:
                tap(method, params, session_id)
            except Exception:
                log.exception("event tap for %s on tab %s failed", method, self.tab_id)
        for callback in list(self._listeners.get((method, session_id), ())):
            try:
                callback(params)
            except Exception:
                log.exception("listener for %s on tab %s failed", method, self.tab_id)
        for wait in list(self._waits.values()):
            if wait.method == method and wait.session_id == session_id:
                wait.offer(params)
        if method == "Inspector.targetCrashed" and session_id is None:
            self.interrupt(TabCrashed(self.tab_id))

    def interrupt(self, error: BridgeError) -> None:
        """Everything waiting fails now; the session itself stays usable (link lost, crash)."""
        waits, self._waits = list(self._waits.values()), {}
        for wait in waits:
            wait.sink.reject(error)

    def end(self, error: BridgeError) -> None:
        """The tab is gone or no longer ours: everything pending fails now, and from now on."""
        first = self.ended is None
        if first:
            self.ended = error
        self.interrupt(error)
        if first:
            for callback in list(self._enders):
                try:
                    callback(error)
                except Exception:
                    log.exception("end callback of tab %s failed", self.tab_id)

    # -- lifecycle ------------------------------------------------------------------

    async def close(self) -> None:
        await self.host.close_tab(self.tab_id)

    async def detach(self) -> None:
        await self.host.detach(self.tab_id)
