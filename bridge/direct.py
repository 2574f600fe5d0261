"""A minimal direct CDP client (``--remote-debugging-port``), the reference we measure against.

bridge never needs it to work: the benchmarks compare bridge's round trips with it, and
tests use it to do what only the browser itself can (stop the extension's service
worker, close a tab behind bridge's back).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bridge.errors import CdpError
from bridge.relay import MAX_FRAME
from bridge.waiting import wait_for

__all__ = ["DirectCdp"]

log = logging.getLogger(__name__)


class DirectCdp:
    def __init__(self, ws_url: str) -> None:
        self.ws_url = ws_url
        self._ws: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None
        #: Waiters for events: (method, predicate on params, future of the params).
        self._waiters: list[
            tuple[str, Callable[[dict[str, Any]], bool], asyncio.Future[dict[str, Any]]]
        ] = []

    async def __aenter__(self) -> DirectCdp:
        self._ws = await connect(
            self.ws_url, max_size=MAX_FRAME, compression=None, proxy=None, open_timeout=10
        )
        self._reader = asyncio.ensure_future(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            try:
                await self._reader
            except asyncio.CancelledError:
                pass  # what we asked for
            except Exception as exc:  # its output is only diagnostics; say why it ended
                log.debug("reader ended with %r", exc)

    async def _read(self) -> None:
        assert self._ws is not None
        try:
            async for frame in self._ws:
                msg = json.loads(frame)
                if "id" not in msg:
                    self._event(msg.get("method", ""), msg.get("params", {}))
                    continue
                fut = self._pending.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    if "error" in msg:
                        fut.set_exception(CdpError("direct", str(msg["error"].get("message"))))
                    else:
                        fut.set_result(msg.get("result", {}))
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

    def _event(self, method: str, params: dict[str, Any]) -> None:
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

    async def targets(self, kind: str | None = None) -> list[dict[str, Any]]:
        infos: list[dict[str, Any]] = (await self.call("Target.getTargets"))["targetInfos"]
        return [t for t in infos if kind is None or t["type"] == kind]

    async def attach(self, target_id: str) -> str:
        result = await self.call("Target.attachToTarget", {"targetId": target_id, "flatten": True})
        return str(result["sessionId"])

    async def attach_page(self, url: str) -> str:
        """A session on the page showing ``url`` (a URL unique to it, e.g. a tab bridge has
        open too: the benchmarks measure the same tab both ways)."""
        target = next((t for t in await self.targets("page") if t["url"] == url), None)
        if target is None:
            raise LookupError(f"no page shows {url}")
        return await self.attach(target["targetId"])
