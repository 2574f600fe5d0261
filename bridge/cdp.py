"""A CDP session for one tab, reached through the relay and the extension.

Commands go out as ``cdpCommand`` frames; events come back as ``cdpEvent`` frames and
are routed here by ``bridge.browser.Browser``. Waits are registered before the action
that causes them (``expect_event``), and the end of the tab (closed, debugger detached,
extension link lost) rejects every pending command and wait at once with a typed error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bridge.errors import BridgeError, CdpError
from bridge.waiting import scaled, wait_for

if TYPE_CHECKING:
    from bridge.browser import Browser

__all__ = ["CdpSession", "EventWaiter", "JavaScriptError"]

Params = dict[str, Any]
Predicate = Callable[[Params], bool]
Listener = Callable[[Params], None]

_DEFAULT = object()


class JavaScriptError(CdpError):
    """An expression evaluated in the page threw."""

    code = "javascript_error"


@dataclass(eq=False)
class EventWaiter:
    """A wait for one event, registered at creation. ``await waiter.wait(timeout)``."""

    session: CdpSession
    method: str
    predicate: Predicate | None
    session_id: str | None
    future: asyncio.Future[Params] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def _offer(self, params: Params) -> None:
        if self.future.done():
            return
        try:
            if self.predicate is None or self.predicate(params):
                self.future.set_result(params)
        except Exception as exc:  # a broken predicate ends the wait with its error
            self.future.set_exception(exc)

    async def wait(self, timeout: float | None = None) -> Params:
        timeout = scaled(30.0) if timeout is None else timeout
        try:
            return await wait_for(
                asyncio.shield(self.future), timeout, f"{self.method} on tab {self.session.tab_id}"
            )
        finally:
            self.cancel()

    def cancel(self) -> None:
        self.session._waiters.discard(self)
        if not self.future.done():
            self.future.cancel()


class CdpSession:
    def __init__(self, browser: Browser, tab_id: int) -> None:
        self.browser = browser
        self.tab_id = tab_id
        self._listeners: dict[tuple[str, str | None], list[Listener]] = {}
        self._waiters: set[EventWaiter] = set()
        self.ended: BridgeError | None = None
        self.default_timeout = scaled(30.0)

    def __repr__(self) -> str:
        state = f" ended: {self.ended}" if self.ended else ""
        return f"<CdpSession tab {self.tab_id}{state}>"

    # -- commands -------------------------------------------------------------------

    async def send(
        self,
        method: str,
        params: Params | None = None,
        *,
        timeout: float | object | None = _DEFAULT,
        session_id: str | None = None,
    ) -> Params:
        if self.ended is not None:
            raise self.ended
        link = await self.browser._link_for(self)
        body: Params = {"tabId": self.tab_id, "method": method, "params": params or {}}
        if session_id is not None:
            body["sessionId"] = session_id
        limit = self.default_timeout if timeout is _DEFAULT else timeout
        assert limit is None or isinstance(limit, (int, float))
        return await link.request("cdpCommand", body, timeout=limit)

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
            loaded.cancel()

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

    def expect_event(
        self, method: str, predicate: Predicate | None = None, *, session_id: str | None = None
    ) -> EventWaiter:
        waiter = EventWaiter(self, method, predicate, session_id)
        if self.ended is not None:
            waiter.future.set_exception(self.ended)
        else:
            self._waiters.add(waiter)
        return waiter

    def _dispatch(self, method: str, params: Params, session_id: str | None) -> None:
        for callback in list(self._listeners.get((method, session_id), ())):
            callback(params)
        for waiter in list(self._waiters):
            if waiter.method == method and waiter.session_id == session_id:
                waiter._offer(params)

    def _fail_waiters(self, error: BridgeError) -> None:
        for waiter in list(self._waiters):
            if not waiter.future.done():
                waiter.future.set_exception(error)
        self._waiters.clear()

    def _end(self, error: BridgeError) -> None:
        """The tab is gone or no longer ours: everything pending fails now."""
        if self.ended is None:
            self.ended = error
        self._fail_waiters(error)

    # -- lifecycle ------------------------------------------------------------------

    async def close(self) -> None:
        await self.browser.close_tab(self.tab_id)

    async def detach(self) -> None:
        await self.browser.detach(self.tab_id)
