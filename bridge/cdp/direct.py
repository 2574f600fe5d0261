"""A minimal direct CDP client, the reference we measure against.

bridge never needs it to work: the benchmarks compare bridge's round trips with it (over
``--remote-debugging-port``), and tests use it to do what only the browser itself can (stop
the extension's service worker, close a tab behind bridge's back). Test browsers speak it
over ``--remote-debugging-pipe`` (``CdpPipe``): no port that any local process could use to
take the browser, as an unauthenticated DevTools port allows.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bridge.errors import CdpError
from bridge.tasks import cancel_and_wait
from bridge.waiting import wait_for
from bridge.wire.extension import EXTENSION_ID, MAX_FRAME

__all__ = ["CdpPipe", "DirectCdp"]

log = logging.getLogger(__name__)


class CdpPipe:
    """The browser's DevTools protocol over its pipe (fd 3 in, fd 4 out, in the browser):
    JSON messages ending in NUL. One pipe per browser; every ``DirectCdp`` on it shares it
    (ids from one counter, events to every one of them)."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.views: set[DirectCdp] = set()
        self._writer: asyncio.WriteTransport | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_FRAME)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(self._read_fd, "rb", 0)
        )
        self._writer, _ = await loop.connect_write_pipe(
            asyncio.Protocol, os.fdopen(self._write_fd, "wb", 0)
        )
        self._reader = asyncio.ensure_future(self._read(reader))

    def request(
        self, method: str, params: dict[str, Any], session_id: str | None
    ) -> asyncio.Future[dict[str, Any]]:
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if self._writer is None or self._writer.is_closing():
            fut.set_exception(ConnectionError("the browser's DevTools pipe is closed"))
            return fut
        request_id = next(self._ids)
        msg: dict[str, Any] = {"id": request_id, "method": method, "params": params}
        if session_id:
            msg["sessionId"] = session_id
        self._pending[request_id] = fut
        fut.add_done_callback(lambda _: self._pending.pop(request_id, None))
        self._writer.write(json.dumps(msg, separators=(",", ":")).encode() + b"\0")
        return fut

    async def _read(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                try:
                    raw = await reader.readuntil(b"\0")
                except asyncio.IncompleteReadError:
                    return  # the browser is gone
                msg = json.loads(raw[:-1])
                if "id" not in msg:
                    for view in list(self.views):
                        view._event(
                            msg.get("method", ""), msg.get("params", {}), msg.get("sessionId")
                        )
                    continue
                fut = self._pending.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    _settle(fut, msg)
        finally:
            for fut in list(self._pending.values()):
                if not fut.done():
                    fut.set_exception(ConnectionError("the browser's DevTools pipe closed"))

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


def _settle(fut: asyncio.Future[dict[str, Any]], msg: dict[str, Any]) -> None:
    if "error" in msg:
        fut.set_exception(CdpError("direct", str(msg["error"].get("message"))))
    else:
        fut.set_result(msg.get("result", {}))


class DirectCdp:
    """A bare CDP client of the browser itself, over its WebSocket URL or its pipe."""

    def __init__(self, target: str | CdpPipe) -> None:
        """``target``: a browser's DevTools WebSocket URL, or its pipe."""
        self.ws_url = target if isinstance(target, str) else ""
        self._pipe = target if isinstance(target, CdpPipe) else None
        self._ws: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None
        #: Waiters for events: (method, predicate on params, future of the params).
        self._waiters: list[
            tuple[str, Callable[[dict[str, Any]], bool], asyncio.Future[dict[str, Any]]]
        ] = []
        #: Listeners of every event: (method, params, session id or None).
        self._listeners: list[Callable[[str, dict[str, Any], str | None], None]] = []

    async def __aenter__(self) -> DirectCdp:
        if self._pipe is not None:
            self._pipe.views.add(self)
            return self
        self._ws = await connect(
            self.ws_url, max_size=MAX_FRAME, compression=None, proxy=None, open_timeout=10
        )
        self._reader = asyncio.ensure_future(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._pipe is not None:
            self._pipe.views.discard(self)
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            await cancel_and_wait(self._reader, log, "reader")

    async def _read(self) -> None:
        assert self._ws is not None
        try:
            async for frame in self._ws:
                msg = json.loads(frame)
                if "id" not in msg:
                    self._event(msg.get("method", ""), msg.get("params", {}), msg.get("sessionId"))
                    continue
                fut = self._pending.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    _settle(fut, msg)
        finally:
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("direct CDP connection closed"))

    async def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session_id: str | None = None,
        *,
        timeout: float = 60.0,
    ) -> dict[str, Any]:
        if self._pipe is not None:
            piped = self._pipe.request(method, params or {}, session_id)
            return await wait_for(piped, timeout, f"direct CDP {method}")
        assert self._ws is not None, "use 'async with DirectCdp(url)'"
        request_id = next(self._ids)
        msg: dict[str, Any] = {"id": request_id, "method": method, "params": params or {}}
        if session_id:
            msg["sessionId"] = session_id
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = fut
        await self._ws.send(json.dumps(msg, separators=(",", ":")))
        try:
            return await wait_for(fut, timeout, f"direct CDP {method}")
        finally:
            self._pending.pop(request_id, None)

    def _event(self, method: str, params: dict[str, Any], session_id: str | None = None) -> None:
        for listener in list(self._listeners):
            listener(method, params, session_id)
        for waiter in list(self._waiters):
            wanted, predicate, fut = waiter
            if fut.done():  # cancelled by its waiter
                self._waiters.remove(waiter)
            elif wanted == method and predicate(params):
                fut.set_result(params)
                self._waiters.remove(waiter)

    def expect_event(
        self, method: str, predicate: Callable[[dict[str, Any]], bool] = lambda p: True
    ) -> asyncio.Future[dict[str, Any]]:
        """The params of the next ``method`` event that ``predicate`` accepts (register
        before the action that causes it)."""
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters.append((method, predicate, fut))
        return fut

    def listen(
        self, listener: Callable[[str, dict[str, Any], str | None], None]
    ) -> Callable[[], None]:
        """Call ``listener(method, params, session_id)`` for every event (a flat session's
        events carry its id; the browser's own carry None) until the returned function is
        called."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def targets(self, kind: str | None = None) -> list[dict[str, Any]]:
        infos: list[dict[str, Any]] = (await self.call("Target.getTargets"))["targetInfos"]
        return [t for t in infos if kind is None or t["type"] == kind]

    async def attach(self, target_id: str) -> str:
        result = await self.call("Target.attachToTarget", {"targetId": target_id, "flatten": True})
        return str(result["sessionId"])

    async def extension_worker(self, timeout: float = 30.0) -> str:
        """The DevTools target id of bridge's extension's service worker (waited for: a
        browser just started registers it a moment later)."""
        found = next((t for t in await self.targets("service_worker") if _is_worker(t)), None)
        if found is not None:
            return str(found["targetId"])
        created = self.expect_event("Target.targetCreated", lambda p: _is_worker(p["targetInfo"]))
        # Discovery reports every existing target at once, then each new one.
        await self.call("Target.setDiscoverTargets", {"discover": True})
        try:
            info = await wait_for(created, timeout, "the extension's service worker")
        finally:
            await self.call("Target.setDiscoverTargets", {"discover": False})
        return str(info["targetInfo"]["targetId"])

    async def in_extension_worker(self, expression: str, timeout: float = 60.0) -> Any:
        """Evaluate ``expression`` (a promise is awaited) in the extension's worker; its value.

        A worker just started has a target before its script has run (no ``setTimeout``, no
        ``chrome``): then this waits for Chrome's ``Inspector.workerScriptLoaded`` first."""
        loaded = self.expect_event("Inspector.workerScriptLoaded")
        session = await self.attach(await self.extension_worker())
        try:
            ready = {"expression": "typeof setTimeout === 'function'", "returnByValue": True}
            if not (await self.call("Runtime.evaluate", ready, session))["result"].get("value"):
                await wait_for(loaded, timeout, "the extension's service worker script")
            params = {"expression": expression, "awaitPromise": True, "returnByValue": True}
            result = await self.call("Runtime.evaluate", params, session, timeout=timeout)
            return result["result"]["value"]
        finally:
            loaded.cancel()
            await self.call("Target.detachFromTarget", {"sessionId": session})

    async def attach_page(self, url: str) -> str:
        """A session on the page showing ``url`` (a URL unique to it, e.g. a tab bridge has
        open too: the benchmarks measure the same tab both ways)."""
        target = next((t for t in await self.targets("page") if t["url"] == url), None)
        if target is None:
            raise LookupError(f"no page shows {url}")
        return await self.attach(target["targetId"])


def _is_worker(info: dict[str, Any]) -> bool:
    return info.get("type") == "service_worker" and str(info.get("url", "")).startswith(
        f"chrome-extension://{EXTENSION_ID}/"
    )
