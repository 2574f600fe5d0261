"""``python -m bridge.link.claude_host``: bridge as the Claude browser extension's native host.

Chrome starts this program for the official Claude extension once
``bridge install-native-host --claude-extension`` has registered it under the extension's
host name (``bridge.wire.claude``, docs/claude-extension.md). It joins two ends:

- the extension, on stdin/stdout in Chrome's framing: the host answers ``ping`` and
  ``get_status``, and sends ``tool_request``s whose ``tool_response``s come back in order,
  without ids;
- bridge's processes (the MCP server, the Python API, pytest) that want the extension's
  tools: they meet the host in the per-user runtime directory as relays and bridge's own
  host do (``bridge.link.registry``): the host serves ``claude-hosts/<pid>`` and, starting,
  connects to every ``claude-clients/<pid>`` already there; a client starting connects to
  every host. Unix sockets in a 0700 directory, or loopback TCP where both ends prove the
  person's secret before a byte flows (``bridge.link.local_ipc``).

On each client connection the host first says who it is
(``{"type": "claude-host", "host": 1, "extension": <id>}``), tells the extension
``mcp_connected`` (``mcp_disconnected`` when the client leaves, as Claude Code's host does),
then runs the client's ``{"type": "call", "id", "tool", "args", "timeout"}`` messages and
answers ``{"type": "reply", "id", "response"}`` (the extension's ``tool_response``) or
``{"type": "failed", "id", "code", "message"}``.

Why one request in flight (``ToolQueue``): the extension's answers carry no id, so the only
way to know whose answer arrived is to have asked one question at a time. The reference
host lets a timed-out request's late answer resolve the *next* request; this one remembers
how many answers it is owed and drops them, so a slow tool never hands its result to
another caller.

Refusals: a caller origin other than the Claude extension's (Chrome passes it as the first
argument) makes the host exit at once; so does an unsafe runtime directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from bridge.errors import BridgeError
from bridge.link import local_ipc
from bridge.link.local_ipc import Kind
from bridge.link.native_host import open_pipes, pipe_mode, setup_host_logging
from bridge.link.registry import FramedStream, connect_or_clean, runtime_dir
from bridge.link.trust_root import load_secret
from bridge.tasks import TaskSet
from bridge.wire.claude import CLAUDE_ALLOWED_ORIGIN, CLAUDE_EXTENSION_ID, host_reply, tool_request
from bridge.wire.native_framing import (
    FROM_BROWSER_LIMIT,
    TO_BROWSER_LIMIT,
    FrameDecoder,
    FrameError,
    FrameTooLarge,
    encode,
)

__all__ = [
    "CLIENTS_ROOM",
    "HOSTS_ROOM",
    "MAX_TOOL_TIMEOUT",
    "ClaudeHost",
    "ToolFailed",
    "ToolQueue",
    "check_origin",
    "main",
]

log = logging.getLogger("bridge.link.claude_host")

#: Rooms of the runtime directory where hosts and their clients meet.
HOSTS_ROOM: Final = "claude-hosts"
CLIENTS_ROOM: Final = "claude-clients"
HOST_PROTOCOL: Final = 1
#: The longest a client may ask a tool to take (the reference allows 60 s per tool).
MAX_TOOL_TIMEOUT: Final = 600.0


class ToolFailed(BridgeError):
    """A call the host could not carry to the extension (it never reached it, or no answer
    came in time)."""

    code = "claude_host"


class ToolQueue:
    """One tool request in flight to the extension; answers matched by order.

    ``owed`` counts answers still due for requests whose caller stopped waiting: the next
    ``tool_response``s pay those debts first and are dropped, so a late answer never lands
    on the wrong request. While something is owed, new requests wait (within their own
    deadline) for the debt to clear.
    """

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        self._send = send
        self._lock = asyncio.Lock()
        self._answer: asyncio.Future[dict[str, Any]] | None = None
        self.owed = 0
        self._settled = asyncio.Event()
        self._settled.set()
        self._closed: str | None = None

    async def run(self, tool: str, args: dict[str, Any], timeout: float) -> dict[str, Any]:
        """The extension's ``tool_response`` to ``tool(args)``; TimeoutError after ``timeout``
        s (waiting for the requests before it included), ToolFailed when it cannot be sent."""
        async with asyncio.timeout(timeout), self._lock:
            await self._settled.wait()
            if self._closed:
                raise ToolFailed(self._closed)
            answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            try:
                self._send(tool_request(tool, args))
            except FrameTooLarge as exc:
                raise ToolFailed(
                    f"{tool}'s arguments are over the 1 MB a native host may send to the "
                    "extension: send less at once"
                ) from exc
            self._answer = answer
            try:
                return await answer
            except asyncio.CancelledError:
                if self._answer is answer:
                    # The caller gave up (its deadline); the extension will still answer.
                    self.owed += 1
                    self._settled.clear()
                    self._answer = None
                raise

    def answered(self, message: dict[str, Any]) -> None:
        """A ``tool_response`` from the extension."""
        if self.owed:
            self.owed -= 1
            log.info("dropped a late answer (%d more owed)", self.owed)
            if not self.owed:
                self._settled.set()
            return
        answer, self._answer = self._answer, None
        if answer is None or answer.done():
            log.warning("the extension answered a tool request nobody made")
            return
        answer.set_result(message)

    def close(self, why: str) -> None:
        """The extension went away: every waiting request fails now, with ``why``."""
        self._closed = why
        answer, self._answer = self._answer, None
        if answer is not None and not answer.done():
            answer.set_exception(ToolFailed(why))
        self.owed = 0
        self._settled.set()


class ClaudeHost:
    """The host's state, with its output to the extension as a callable (tests drive it
    without Chrome)."""

    def __init__(
        self,
        directory: Path,
        send_bytes: Callable[[bytes], None],
        *,
        secret: str | None = None,
        kind: Kind | None = None,
    ) -> None:
        self.directory = directory
        self._send_bytes = send_bytes
        self._secret = secret
        self._kind = kind
        self.queue = ToolQueue(self.send)
        self.clients: set[FramedStream] = set()
        self.endpoint: Path | None = None
        self._server: local_ipc.LocalServer | None = None
        self._tasks = TaskSet("claude host", log)

    def send(self, message: dict[str, Any]) -> None:
        """One message to the extension (FrameTooLarge over Chrome's 1 MB limit)."""
        self._send_bytes(encode(message, TO_BROWSER_LIMIT))

    async def start(self) -> None:
        (self.directory / HOSTS_ROOM).mkdir(mode=0o700, exist_ok=True)
        (self.directory / CLIENTS_ROOM).mkdir(mode=0o700, exist_ok=True)
        self._server = await local_ipc.serve(
            self.directory / HOSTS_ROOM / str(os.getpid()),
            self._accepted,
            kind=self._kind,
            secret=self._secret,
        )
        self.endpoint = self._server.path
        waiting = local_ipc.endpoint_files(self.directory / CLIENTS_ROOM)
        streams = await asyncio.gather(*(connect_or_clean(p, self._secret) for p in waiting))
        for stream in streams:
            if stream is not None:
                self._tasks.spawn(self.serve_client(stream))

    async def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self.serve_client(FramedStream(reader, writer))

    async def serve_client(self, stream: FramedStream) -> None:
        """Run one client's calls until it leaves."""
        stream.write(
            {"type": "claude-host", "host": HOST_PROTOCOL, "extension": CLAUDE_EXTENSION_ID}
        )
        self.clients.add(stream)
        self._notify({"type": "mcp_connected"})
        calls = TaskSet("claude host client", log)
        try:
            async for message in stream.messages():
                if message.get("type") == "call":
                    calls.spawn(self._call(stream, message))
        finally:
            self.clients.discard(stream)
            await calls.stop()
            await stream.close()
            self._notify({"type": "mcp_disconnected"})

    def _notify(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.send(message)

    async def _call(self, stream: FramedStream, message: dict[str, Any]) -> None:
        call_id = message.get("id")
        tool, args = message.get("tool"), message.get("args", {})
        try:
            timeout = min(float(message.get("timeout", 60.0)), MAX_TOOL_TIMEOUT)
            if not isinstance(tool, str) or not isinstance(args, dict) or timeout <= 0:
                raise ValueError("a call needs a tool name, an args object and a timeout > 0")
            response = await self.queue.run(tool, args, timeout)
        except TimeoutError:
            stream.write(
                {
                    "type": "failed",
                    "id": call_id,
                    "code": "timeout",
                    "message": f"the Claude extension did not answer {tool} within {timeout:g} s",
                }
            )
        except (ToolFailed, ValueError) as exc:
            code = exc.code if isinstance(exc, BridgeError) else "bad_call"
            stream.write({"type": "failed", "id": call_id, "code": code, "message": str(exc)})
        else:
            reply = {k: v for k, v in response.items() if k != "type"}
            stream.write({"type": "reply", "id": call_id, "response": reply})
        await stream.drain()

    def receive(self, item: dict[str, Any] | FrameError) -> None:
        """One message from the extension."""
        if isinstance(item, FrameError):
            log.warning("unreadable message from the extension: %s", item.message)
            return
        if item.get("type") == "tool_response":
            self.queue.answered(item)
            return
        if item.get("type") == "notification":
            log.info("notification from the extension: %s", str(item)[:200])
        reply = host_reply(item, int(time.time() * 1000))
        if reply is not None:
            self._notify(reply)

    async def stop(self, why: str = "the Claude extension closed its native port") -> None:
        self.queue.close(why)
        if self._server is not None:
            await self._server.close()
            self._server = None
        for stream in list(self.clients):
            stream.write({"type": "bye", "reason": why})
            await stream.drain()
            await stream.close()
        await self._tasks.stop()


def check_origin(argv: list[str]) -> str | None:
    """Why the caller may not use this host, or None. Chrome passes the calling extension's
    origin as the first argument on every system (Windows adds ``--parent-window=N``)."""
    origin = next((a for a in argv if a.startswith("chrome-extension://")), None)
    if origin is None:
        return "started without a caller origin: Chrome starts this host for the Claude extension"
    if origin.rstrip("/") != CLAUDE_ALLOWED_ORIGIN.rstrip("/"):
        return f"refused caller {origin}: this host serves only {CLAUDE_ALLOWED_ORIGIN}"
    return None


async def serve(stdin_fd: int, stdout_fd: int, directory: Path, secret: str, pipes: str) -> None:
    """Run until Chrome closes the port (stdin ends)."""
    reader, write, close = await open_pipes(stdin_fd, stdout_fd, pipes)
    host = ClaudeHost(directory, write, secret=secret)
    decoder = FrameDecoder(FROM_BROWSER_LIMIT)
    await host.start()
    log.info("serving the Claude extension at %s", host.endpoint)
    try:
        while data := await reader.read(256 * 1024):
            for item in decoder.feed(data):
                host.receive(item)
    finally:
        await host.stop()
        close()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # The real stdout is Chrome's pipe: keep it for frames only, point fd 1 at stderr.
    frames_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    setup_host_logging()
    refused = check_origin(argv)
    if refused:
        log.error("%s", refused)
        return 1
    try:
        directory = runtime_dir()
        secret = load_secret(create=True)
        pipes = pipe_mode()
    except (BridgeError, OSError, ValueError) as exc:
        log.error("cannot serve the Claude extension safely: %s", exc)
        return 1
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(0, frames_fd, directory, secret, pipes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
