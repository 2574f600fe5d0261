"""A stand-in extension in Python: speaks the wire protocol to a relay, for relay-only tests.

It is deliberately tiny (httpx's MockTransport spirit): it answers ``ping`` and lets a
test script everything else. The real extension is tested in real Chromium elsewhere.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bridge import protocol
from bridge.relay import DEFAULT_ORIGIN, Relay


class StandIn:
    def __init__(self, relay: Relay, *, version: int = protocol.PROTOCOL_VERSION) -> None:
        self.relay = relay
        self.version = version
        self.ws: ClientConnection | None = None
        self.notices: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def __aenter__(self) -> StandIn:
        self.ws = await connect(self.relay.url, origin=DEFAULT_ORIGIN, proxy=None)  # type: ignore[arg-type]
        await self.ws.send(
            json.dumps(
                {
                    "method": "hello",
                    "params": {"protocolVersion": self.version, "instanceId": "standin"},
                }
            )
        )
        self.welcome = json.loads(await self.ws.recv())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.ws is not None
        await self.ws.close()

    async def serve_once(self, reply: dict[str, Any] | None = None) -> dict[str, Any]:
        """Read frames until a command arrives; answer it (``reply`` or {}); return it."""
        assert self.ws is not None
        while True:
            msg = json.loads(await self.ws.recv())
            if "method" in msg and "id" in msg and isinstance(msg["id"], int):
                await self.ws.send(json.dumps({"id": msg["id"], **(reply or {"result": {}})}))
                return msg
            await self.notices.put(msg)
