"""The seam under CDP sessions: what a session needs from whatever carries it to the browser.

A *transport* is one connection to the extension (today an ``ExtensionLink`` over the
relay's WebSocket; tomorrow a native-messaging port). It sends relay commands and matches
their replies; that is all. A *connector* hands out the current transport (waiting for
one to connect) and tells its listeners about every event a transport delivers and about
a transport that was lost. ``bridge.cdp.browser.Browser`` is such a listener: it routes CDP
events to sessions and ends sessions whose tab went away.

``MockTransport`` and ``MockConnector`` stand in for the extension in unit tests (in the
spirit of httpx's ``MockTransport``): a handler function answers commands, and the test
emits events or drops the connection when it likes. No browser, no sockets.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from bridge.errors import ExtensionDisconnected, ExtensionNotConnected
from bridge.waiting import wait_for
from bridge.wire.protocol import Event

__all__ = [
    "Connector",
    "MockConnector",
    "MockTransport",
    "Params",
    "Transport",
    "TransportListener",
]

log = logging.getLogger(__name__)

Params = dict[str, Any]
#: Given a pending request's (method, params), the error to fail it with, or None to keep it.
PendingFilter = Callable[[str, Params], BaseException | None]


class Transport(Protocol):
    """One connection to the extension."""

    @property
    def is_closed(self) -> bool:
        """True once the connection ended; every later request fails at once."""
        ...

    async def request(
        self, method: str, params: Params | None = None, *, timeout: float | None = 30.0
    ) -> Params:
        """Send a relay command (``cdpCommand``, ``attachTab``, …) and await its result.

        Raises the typed errors of ``bridge.errors``: CdpError, CommandFailed, TabClosed,
        DebuggerDetached, ExtensionDisconnected, BridgeTimeout.
        """
        ...

    def fail_pending(self, exc_factory: PendingFilter) -> None:
        """Reject now the pending requests for which ``exc_factory`` gives an error."""
        ...


class TransportListener(Protocol):
    """What listens to a connector: the events of the serving transport, and its end."""

    def transport_event(self, transport: Transport, event: Event) -> None:
        """An event from the extension (``cdpEvent``, ``tabDetached``, ``tabRemoved``…)."""
        ...

    def transport_lost(self, transport: Transport) -> None:
        """The transport ended; its pending requests have already failed."""
        ...


class Connector(Protocol):
    """Where transports come from (the relay, or a mock)."""

    @property
    def current(self) -> Transport | None:
        """The transport that serves now, if one is connected."""
        ...

    async def connect(self, timeout: float | None = None) -> Transport:
        """The current transport, waiting up to ``timeout`` s for one (ExtensionNotConnected)."""
        ...

    def subscribe(self, listener: TransportListener) -> Callable[[], None]:
        """Deliver events and losses to ``listener``; returns the unsubscribe function."""
        ...


# -- test doubles -----------------------------------------------------------------------

Handler = Callable[[str, Params], Params | Awaitable[Params]]


class MockTransport:
    """A transport whose replies come from ``handler(method, params)``.

    The handler returns the result dict (or an awaitable of it) or raises the error the
    extension would send. ``requests`` records every (method, params) in order. A request
    whose handler never returns stays pending, as a slow browser would leave it.
    """

    def __init__(self, handler: Handler, connector: MockConnector | None = None) -> None:
        self.handler = handler
        self.connector = connector
        self.requests: list[tuple[str, Params]] = []
        self._pending: dict[int, tuple[str, Params, asyncio.Future[Params]]] = {}
        self._ids = itertools.count(1)
        self._closed = False

    @property
    def is_closed(self) -> bool:
        return self._closed

    async def request(
        self, method: str, params: Params | None = None, *, timeout: float | None = 30.0
    ) -> Params:
        if self._closed:
            raise ExtensionDisconnected("mock transport closed")
        params = params or {}
        self.requests.append((method, params))
        rid = next(self._ids)
        fut: asyncio.Future[Params] = asyncio.get_running_loop().create_future()
        self._pending[rid] = (method, params, fut)
        task = asyncio.ensure_future(self._answer(method, params, fut))
        what = params.get("method", method) if method == "cdpCommand" else method
        try:
            return await wait_for(asyncio.shield(fut), timeout, f"the extension to answer {what}")
        finally:
            self._pending.pop(rid, None)
            task.cancel()

    async def _answer(self, method: str, params: Params, fut: asyncio.Future[Params]) -> None:
        try:
            result = self.handler(method, params)
            if not isinstance(result, dict):
                result = await result
        except Exception as exc:
            if not fut.done():
                fut.set_exception(exc)
            return
        if not fut.done():
            fut.set_result(result)

    def fail_pending(self, exc_factory: PendingFilter) -> None:
        for method, params, fut in list(self._pending.values()):
            if not fut.done():
                exc = exc_factory(method, params)
                if exc is not None:
                    fut.set_exception(exc)

    @property
    def pending(self) -> list[tuple[str, Params]]:
        return [(m, p) for m, p, f in self._pending.values() if not f.done()]

    # -- what the extension would do on its own --------------------------------------------

    def emit(self, method: str, params: Params) -> None:
        """Deliver an extension event (``cdpEvent``, ``tabDetached``, …) to the listeners."""
        if self.connector is not None:
            self.connector.deliver(self, Event(method, params))

    def cdp_event(self, tab_id: int, method: str, params: Params | None = None) -> None:
        self.emit("cdpEvent", {"tabId": tab_id, "method": method, "params": params or {}})

    def drop(self, reason: str = "dropped by the test") -> None:
        """The connection ends: pending requests fail, listeners hear of the loss."""
        if self._closed:
            return
        self._closed = True
        self.fail_pending(lambda m, p: ExtensionDisconnected(f"extension link lost: {reason}"))
        if self.connector is not None:
            self.connector.lost(self)


class MockConnector:
    """Hands out ``MockTransport``s: ``connect_new(handler)`` plays a (re)connecting extension."""

    def __init__(self) -> None:
        self._current: MockTransport | None = None
        self._listeners: list[TransportListener] = []
        self._changed = asyncio.Event()

    @property
    def current(self) -> MockTransport | None:
        return self._current

    def connect_new(self, handler: Handler) -> MockTransport:
        transport = MockTransport(handler, self)
        self._current = transport
        self._changed.set()
        return transport

    async def connect(self, timeout: float | None = None) -> MockTransport:
        while self._current is None or self._current.is_closed:
            self._changed.clear()
            try:
                async with asyncio.timeout(timeout):
                    await self._changed.wait()
            except TimeoutError:
                raise ExtensionNotConnected("no mock transport connected") from None
        return self._current

    def subscribe(self, listener: TransportListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def deliver(self, transport: MockTransport, event: Event) -> None:
        if transport is not self._current:
            return  # as the relay does: only the serving link's events count
        for listener in list(self._listeners):
            try:
                listener.transport_event(transport, event)
            except Exception:
                log.exception("transport listener failed on %s", event.method)

    def lost(self, transport: MockTransport) -> None:
        if transport is self._current:
            self._current = None
        for listener in list(self._listeners):
            listener.transport_lost(transport)
