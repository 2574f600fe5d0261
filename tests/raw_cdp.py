"""A raw DevTools client for the endpoint's tests: what an attacker holding the token would
write (frames by hand, no Playwright smoothing anything over), with every event kept.

``call`` answers the reply message whole (``result`` or ``error``), so a test can assert a
refusal's text; ``next_event`` waits, with a deadline, for an event that matches.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bridge.waiting import scaled

Message = dict[str, Any]


class RawCdp:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.events: list[Message] = []
        self._ids = itertools.count(1)
        self._replies: dict[int, asyncio.Future[Message]] = {}
        self._arrived = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for frame in self.ws:
            message = json.loads(frame)
            waiting = self._replies.pop(message.get("id"), None) if "id" in message else None
            if waiting is not None:
                waiting.set_result(message)
            else:
                self.events.append(message)
                self._arrived.set()

    async def call(
        self, method: str, params: Message | None = None, session: str | None = None
    ) -> Message:
        """Send a command; its reply message (with ``result`` or ``error``)."""
        request_id = next(self._ids)
        message: Message = {"id": request_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        reply: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._replies[request_id] = reply
        await self.ws.send(json.dumps(message))
        async with asyncio.timeout(scaled(30.0)):
            return await reply

    async def result(
        self, method: str, params: Message | None = None, session: str | None = None
    ) -> Message:
        """The command's result; AssertionError with the reply if it failed."""
        reply = await self.call(method, params, session)
        assert "result" in reply, reply
        result: Message = reply["result"]
        return result

    async def next_event(self, match: Callable[[Message], bool], timeout: float = 15.0) -> Message:
        """The first event (kept so far or still to come) that ``match`` accepts."""
        async with asyncio.timeout(scaled(timeout)):
            while True:
                for event in self.events:
                    if match(event):
                        return event
                self._arrived.clear()
                await self._arrived.wait()

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()


@asynccontextmanager
async def raw_cdp(url: str) -> AsyncIterator[RawCdp]:
    """A raw client on ``ws://…/cdp?token=…``."""
    async with connect(url, proxy=None, max_size=None) as ws:
        client = RawCdp(ws)
        try:
            yield client
        finally:
            await client.close()
