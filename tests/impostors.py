"""Impostors for the trust tests: what a local program without the person's secret can do.

``RogueRelay`` listens in the relay port range and answers discovery exactly as a relay
does, then tries everything a relay could: a made-up challenge, ``welcome`` without any
proof, commands. It records what the extension sent it. ``forged_extension`` connects to a
relay with the extension's Origin (a local program may send any header) and tries to get
anything out of it.
"""

from __future__ import annotations

import asyncio
import errno
import http
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from bridge.wire import protocol, trust
from bridge.wire.extension import PORT_RANGE

T = TypeVar("T")

__all__ = ["RogueRelay"]


async def at_top_of_relay_range(start: Callable[[int], Awaitable[T]]) -> tuple[T, int]:
    """``start(port)`` on the first free port from the top of the relay range (out of real
    relays' way, which take the lowest), and that port; a port in use is skipped."""
    for port in range(PORT_RANGE[1], PORT_RANGE[0] - 1, -1):
        try:
            return await start(port), port
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
    raise RuntimeError("no free port in the relay range")


class RogueRelay:
    """A relay impostor on the first free port of the range, counting from the top."""

    def __init__(self) -> None:
        self.port = 0
        self.server: Server | None = None
        #: Every frame any extension sent, per connection.
        self.received: list[list[Any]] = []
        #: Close codes the extension ended each connection with.
        self.closed_with: list[int | None] = []
        self.connected = asyncio.Event()
        self.info_requests = 0
        self._ended = asyncio.Condition()

    async def __aenter__(self) -> RogueRelay:
        self.server, self.port = await at_top_of_relay_range(
            lambda port: serve(
                self._serve, "127.0.0.1", port, process_request=self._http, compression=None
            )
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    def _http(self, conn: ServerConnection, request: Request) -> Response | None:
        if request.path == "/extension":
            return None
        self.info_requests += 1
        body = json.dumps(
            {
                "service": "bridge-relay",
                "name": "bridge",
                "protocolVersion": protocol.PROTOCOL_VERSION,
                "version": "0.2.0",
                "wsPath": "/extension",
                "instanceId": f"rogue{self.info_requests}",  # a fresh one defeats backoff
                "startedAt": 0,
                "pid": 1,
                "port": self.port,
                "link": "websocket",
            }
        ).encode()
        headers = Headers(
            [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        )
        return Response(http.HTTPStatus.OK.value, "OK", headers, body)

    async def _serve(self, ws: ServerConnection) -> None:
        frames: list[Any] = []
        self.received.append(frames)
        self.connected.set()
        try:
            frames.append(json.loads(await ws.recv()))
            # Whatever a relay without the secret can say: a challenge with a made-up proof,
            # then welcome regardless, then commands.
            challenge = {"nonce": trust.new_nonce(), "proof": trust.new_nonce()}
            await ws.send(protocol.encode({"method": "challenge", "params": challenge}))
            await ws.send(protocol.encode({"method": "welcome", "params": {"protocolVersion": 5}}))
            await ws.send(protocol.encode_command(1, "listTabs"))
            await ws.send(
                protocol.encode_command(
                    2, "cdpCommand", {"tabId": 1, "method": "Network.getAllCookies"}
                )
            )
            async for frame in ws:
                frames.append(json.loads(frame))
        except ConnectionClosed:
            pass
        finally:
            async with self._ended:
                self.closed_with.append(ws.close_code)
                self._ended.notify_all()

    async def wait_closed(self, count: int, timeout: float) -> None:
        """Until ``count`` connections of extensions have ended."""
        async with asyncio.timeout(timeout), self._ended:
            await self._ended.wait_for(lambda: len(self.closed_with) >= count)
