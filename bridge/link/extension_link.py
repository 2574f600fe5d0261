"""One extension connection: request/reply matching and event fan-out.

A link owns no policy: the relay decides which link serves which work, and
``bridge.cdp.browser`` turns link events into per-tab sessions. A link is a
``bridge.link.transport.Transport``: the seam sessions are written against. Replies are
matched to their futures directly in the receive loop (no task per frame) because this is
the hot path of every CDP round trip.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from websockets.exceptions import ConnectionClosed

from bridge.errors import (
    BridgeTimeout,
    CdpError,
    CommandFailed,
    DebuggerDetached,
    ExtensionDisconnected,
    TabClosed,
)
from bridge.wire import protocol
from bridge.wire.protocol import Event, Hello, ProtocolError, Reply

__all__ = ["EventHandler", "ExtensionLink", "LinkChannel"]

log = logging.getLogger(__name__)

EventHandler = Callable[["ExtensionLink", Event], None]


class LinkChannel(Protocol):
    """What a link needs of its connection: a WebSocket, or a tunnel through the native
    host (``bridge.link.registry.NativeLinkChannel``). Both raise websockets'
    ``ConnectionClosed`` once the connection is gone."""

    async def recv(self) -> str | bytes: ...
    async def send(self, message: str) -> None: ...
    async def close(self, code: int = 1000, reason: str = "") -> None: ...
    def __aiter__(self) -> AsyncIterator[str | bytes]: ...


class ExtensionLink:
    """One extension connection that proved the secret: requests matched to replies, events handed
    to the relay. A ``Transport`` for the sessions above it."""

    def __init__(self, ws: LinkChannel, hello: Hello, on_event: EventHandler) -> None:
        self.ws = ws
        self.hello = hello
        self._on_event = on_event
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, dict[str, Any], asyncio.Future[dict[str, Any]]]] = {}
        self._loop = asyncio.get_running_loop()
        self.closed: asyncio.Future[str] = self._loop.create_future()
        self.malformed_frames = 0
        self._outbox: list[str] = []
        self._batches_in_flight = 0

    @property
    def is_closed(self) -> bool:
        return self.closed.done()

    @property
    def via(self) -> str:
        """``"websocket"``, or ``"native"`` for a link tunnelled through the native host."""
        return str(getattr(self.ws, "via", "websocket"))

    @property
    def instance_id(self) -> str:
        return self.hello.instance_id

    def __repr__(self) -> str:
        return f"<ExtensionLink {self.hello.instance_id[:8]} ext {self.hello.extension_version}>"

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = 30.0
    ) -> dict[str, Any]:
        """Send a command and await its result. Raises CommandFailed / CdpError / timeouts."""
        loop = self._loop
        if asyncio.get_running_loop() is not loop:
            raise RuntimeError(
                "bridge's relay and sessions live on the event loop that started them; this call "
                "came from another one. In pytest, run async tests that use bridge fixtures on "
                "the session loop: @pytest.mark.asyncio(loop_scope='session'), or "
                "asyncio_default_test_loop_scope = session in the ini file."
            )
        if self.closed.done():
            raise ExtensionDisconnected(f"extension link closed: {self.closed.result()}")
        request_id = next(self._ids)
        params = params or {}
        frame = protocol.encode_command(request_id, method, params)
        fut: asyncio.Future[dict[str, Any]] = loop.create_future()
        pending = self._pending
        pending[request_id] = (method, params, fut)
        # A plain timer on the future: cheaper than asyncio.timeout + shield on the hot path.
        timer = (
            loop.call_at(loop.time() + timeout, self._expire, request_id, method, params, timeout)
            if timeout is not None
            else None
        )
        try:
            if len(pending) == 1 and not self._outbox and not self._batches_in_flight:
                await self.ws.send(frame)  # a lone round trip: no batching, no extra loop turn
            else:
                self._queue(frame)
            return await fut
        except ConnectionClosed as exc:
            raise ExtensionDisconnected(f"extension link closed while sending {method}") from exc
        finally:
            if timer is not None:
                timer.cancel()
            pending.pop(request_id, None)

    def _queue(self, message: str) -> None:
        """While several requests are in flight they share a frame: flushed on the next loop
        turn, after the callbacks already scheduled (a gather, a burst) have added theirs; by
        the loop, not by a request, so cancelling one loses nothing."""
        self._outbox.append(message)
        if len(self._outbox) == 1:
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        batch, self._outbox = self._outbox, []
        if not batch:
            return
        self._batches_in_flight += 1
        task = asyncio.ensure_future(self.ws.send(protocol.encode_batch(batch)))
        task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Future[None]) -> None:
        self._batches_in_flight -= 1
        if not task.cancelled() and task.exception() is not None:
            log.info("batch not sent: %s", task.exception())  # the link's end fails them

    def _expire(self, request_id: int, method: str, params: dict[str, Any], timeout: float) -> None:
        entry = self._pending.get(request_id)
        if entry is not None and not entry[2].done():
            what = params.get("method", method) if method == "cdpCommand" else method
            entry[2].set_exception(BridgeTimeout(f"the extension to answer {what}", timeout))

    def fail_pending(
        self, exc_factory: Callable[[str, dict[str, Any]], BaseException | None]
    ) -> None:
        """Reject pending requests for which ``exc_factory(method, params)`` gives an error."""
        for method, params, fut in list(self._pending.values()):
            if not fut.done():
                exc = exc_factory(method, params)
                if exc is not None:
                    fut.set_exception(exc)

    async def run(self) -> None:
        """Receive until the connection ends; then every pending request fails at once."""
        reason = "connection closed"
        try:
            async for frame in self.ws:
                self._handle(frame)
        except ConnectionClosed as exc:
            reason = f"connection closed ({exc.rcvd.code if exc.rcvd else 'no close frame'})"
        finally:
            if not self.closed.done():
                self.closed.set_result(reason)
            self.fail_pending(lambda m, p: ExtensionDisconnected(f"extension link lost: {reason}"))

    def _handle(self, frame: str | bytes) -> None:
        try:
            messages = protocol.decode_batch(frame)
        except ProtocolError as exc:
            messages = [exc]
        notices: list[str] = []
        for msg in messages:
            if isinstance(msg, ProtocolError):
                log.warning("malformed message from extension: %s", msg)
                notices.append(protocol.encode_malformed(msg.request_id, str(msg)))
                if msg.request_id is not None:
                    self._resolve_error(msg.request_id, "malformed", str(msg))
            elif isinstance(msg, Reply):
                if msg.error is not None:
                    if msg.id not in self._pending:
                        _log_unmatched(msg)
                    self._resolve_error(msg.id, msg.error.code, msg.error.message)
                else:
                    entry = self._pending.get(msg.id)
                    if entry is not None and not entry[2].done():
                        entry[2].set_result(msg.result or {})
                    elif entry is None:
                        _log_unmatched(msg)
            elif isinstance(msg, protocol.ErrorNotice):
                # The extension could not read something we sent. Logged, never answered: an
                # answer is an error to the extension, which must not answer it either (no
                # ping-pong), and this is not a malformed frame from the extension.
                log.warning("the extension reports an error: [%s] %s", msg.code, msg.message)
            else:
                try:
                    self._on_event(self, msg)
                except Exception:  # an event consumer's bug must not take the link down
                    log.exception("event handler failed for %s", msg.method)
        if notices:
            # An error reply per bad message, in one frame, never a crash: the link keeps serving.
            self.malformed_frames += 1
            task = asyncio.ensure_future(self._send_quietly(protocol.encode_batch(notices)))
            task.add_done_callback(lambda t: t.exception())

    def _resolve_error(self, request_id: int, code: str, message: str) -> None:
        entry = self._pending.get(request_id)
        if entry is None or entry[2].done():
            return
        method, params, fut = entry
        tab_id = params.get("tabId")
        if code == "tab_closed" and isinstance(tab_id, int):
            fut.set_exception(TabClosed(tab_id))
        elif code == "debugger_detached" and isinstance(tab_id, int):
            fut.set_exception(DebuggerDetached(tab_id, message))
        elif method == "cdpCommand" and code == "cdp_error":
            cdp_code, text = _split_cdp_message(message)
            fut.set_exception(CdpError(str(params.get("method", "?")), text, cdp_code))
        else:
            fut.set_exception(CommandFailed(method, code, message))

    async def _send_quietly(self, frame: str) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(frame)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        await self.ws.close(code, reason)


def _log_unmatched(reply: Reply) -> None:
    """A reply to no pending request: late (its request timed out) or not ours. Never answered."""
    what = f"error [{reply.error.code}]" if reply.error is not None else "result"
    log.debug("%s for request %d, which is not pending: ignored", what, reply.id)


def _split_cdp_message(message: str) -> tuple[int | None, str]:
    """The extension passes Chrome's error text, often ``{"code":-32000,"message":"..."}``."""
    import json

    try:
        obj = json.loads(message)
    except ValueError:
        return None, message
    if isinstance(obj, dict) and isinstance(obj.get("message"), str):
        code = obj.get("code")
        return (code if isinstance(code, int) else None), obj["message"]
    return None, message
