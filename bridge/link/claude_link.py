"""bridge's end of the Claude extension link: a process that wants the extension's tools.

The Claude extension's native host (``bridge.link.claude_host``, started by Chrome) and
this process meet in the per-user runtime directory: ``ClaudeConnector`` serves
``claude-clients/<pid>`` (a host starting later connects to it) and, starting, connects to
every ``claude-hosts/<pid>`` already there. Whichever way a connection came, the host speaks
first (``claude-host``), and from then on it is a ``ClaudeLink``: ``call(tool, args)`` sends
one call and returns the extension's answer (``bridge.wire.claude.ClaudeReply``).

Nothing here polls: a host's arrival is a connection to our endpoint, its end is the
connection closing (the kernel closes it when the host dies), and ``connect`` waits on an
event for the first one, bounded by its timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
from pathlib import Path
from typing import Any, Final

from bridge.errors import BridgeTimeout, ClaudeExtensionNotConnected, ExtensionDisconnected
from bridge.link import local_ipc
from bridge.link.claude_host import CLIENTS_ROOM, HOSTS_ROOM
from bridge.link.local_ipc import Kind
from bridge.link.registry import FramedStream, connect_or_clean
from bridge.tasks import TaskSet
from bridge.waiting import scaled, wait_for
from bridge.wire.claude import ClaudeReply, parse_tool_response

__all__ = ["ClaudeConnector", "ClaudeLink"]

log = logging.getLogger(__name__)

#: How long a host may take to say who it is once connected.
HELLO_TIMEOUT: Final = 5.0


class ClaudeLink:
    """One connection to a Claude extension host."""

    def __init__(self, stream: FramedStream, hello: dict[str, Any]) -> None:
        self.stream = stream
        self.hello = hello
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ended = asyncio.Event()
        self.end_reason = ""

    @property
    def is_closed(self) -> bool:
        return self._ended.is_set()

    async def closed(self) -> None:
        """Return once the link has ended."""
        await self._ended.wait()

    async def run(self) -> None:
        """Read the host's answers until it goes (then every pending call fails at once)."""
        try:
            async for message in self.stream.messages():
                kind = message.get("type")
                if kind == "bye":
                    self.end_reason = str(message.get("reason", ""))
                    break
                future = self._pending.pop(_int_id(message.get("id")), None)
                if future is not None and not future.done():
                    future.set_result(message)
        finally:
            self._end(self.end_reason or "the Claude extension's native host went away")
            await self.stream.close()

    def _end(self, why: str) -> None:
        self.end_reason = why
        self._ended.set()
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(ExtensionDisconnected(why))

    async def call(
        self, tool: str, args: dict[str, Any] | None = None, *, timeout: float = 60.0
    ) -> ClaudeReply:
        """Run one of the extension's tools; its reply (``reply.error`` set when the tool
        itself failed). ExtensionDisconnected, BridgeTimeout when it cannot be had."""
        if self.is_closed:
            raise ExtensionDisconnected(self.end_reason)
        call_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        message = {"type": "call", "id": call_id, "tool": tool, "args": args or {}}
        # The host keeps the deadline too (its queue must know when a caller gave up); ours
        # is a little longer so the host's precise answer arrives first.
        message["timeout"] = timeout
        self.stream.write(message)
        try:
            await self.stream.drain()
            answer = await wait_for(future, timeout + scaled(5.0), f"the Claude extension's {tool}")
        finally:
            self._pending.pop(call_id, None)
        if answer.get("type") == "failed":
            text = str(answer.get("message", "the host could not run the tool"))
            if answer.get("code") == "timeout":
                raise BridgeTimeout(f"the Claude extension's {tool}", timeout)
            raise ExtensionDisconnected(text)
        response = answer.get("response")
        return parse_tool_response(response if isinstance(response, dict) else {})

    async def close(self) -> None:
        self._end("closed by bridge")
        await self.stream.close()


def _int_id(value: object) -> int:
    return value if isinstance(value, int) else -1


class ClaudeConnector:
    """Where ``ClaudeLink``s come from: serves this process's endpoint, reaches hosts."""

    def __init__(
        self, directory: Path, *, secret: str | None = None, kind: Kind | None = None
    ) -> None:
        self.directory = directory
        self._secret = secret
        self._kind = kind
        self._links: list[ClaudeLink] = []
        self._arrived = asyncio.Event()
        self._server: local_ipc.LocalServer | None = None
        self._tasks = TaskSet("claude connector", log)
        self.endpoint: Path | None = None

    @property
    def current(self) -> ClaudeLink | None:
        """The newest live link, if any."""
        live = [link for link in self._links if not link.is_closed]
        return live[-1] if live else None

    async def start(self) -> None:
        for room in (HOSTS_ROOM, CLIENTS_ROOM):
            (self.directory / room).mkdir(mode=0o700, exist_ok=True)
        self._server = await local_ipc.serve(
            self.directory / CLIENTS_ROOM / str(os.getpid()),
            self._accepted,
            kind=self._kind,
            secret=self._secret,
        )
        self.endpoint = self._server.path
        hosts = local_ipc.endpoint_files(self.directory / HOSTS_ROOM)
        for stream in await asyncio.gather(*(connect_or_clean(p, self._secret) for p in hosts)):
            if stream is not None:
                self._tasks.spawn(self._adopt(stream))

    async def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._adopt(FramedStream(reader, writer))

    async def _adopt(self, stream: FramedStream) -> None:
        """A connection to a host: read who it is, then keep it until it ends."""
        try:
            async with asyncio.timeout(scaled(HELLO_TIMEOUT)):
                hello = await stream.read()
        except TimeoutError:
            hello = None
        if not hello or hello.get("type") != "claude-host":
            log.warning("a connection that is not a Claude extension host was closed")
            await stream.close()
            return
        link = ClaudeLink(stream, hello)
        self._links.append(link)
        self._arrived.set()
        log.info("the Claude extension's host (pid endpoint %s) is linked", stream.peer)
        try:
            await link.run()
        finally:
            self._links.remove(link)
            if self.current is None:
                self._arrived.clear()

    async def connect(self, timeout: float | None = 10.0) -> ClaudeLink:
        """The current link, waiting up to ``timeout`` s for a host to arrive."""
        while (link := self.current) is None:
            try:
                await wait_for(self._arrived.wait(), timeout, "the Claude extension's host")
            except BridgeTimeout:
                raise ClaudeExtensionNotConnected(
                    f"no host arrived within {timeout:g} s" if timeout else "no host is running"
                ) from None
        return link

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.close()
            self._server = None
        for link in list(self._links):
            await link.close()
        with contextlib.suppress(Exception):
            await self._tasks.stop()
