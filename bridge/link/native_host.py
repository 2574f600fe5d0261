"""``python -m bridge.link.native_host``: the native-messaging host Chrome starts for the extension.

It tells the extension which relays exist, the moment they start and stop, so the extension
connects at once and never probes ports while the host runs (and Chrome keeps the
extension's service worker alive while this port is open, so no wake-up alarm is needed).
Relays and hosts meet in the runtime directory (``bridge.link.registry``).

Messages to the extension (framed, at most 1 MB each):
- ``{"type": "trust", "secret": "...", "island": bool, "host": 2}``: first, the secret the
  relays of this user (or, ``island``, of the bridge that launched this browser) prove, so
  the extension can check them and prove itself (``bridge.wire.trust``). Chrome starts this host
  only for bridge's extension id (the manifest's ``allowed_origins``), which is what makes
  handing it over safe. ``island``: link only to the relays announced here, never probe;
- ``{"type": "fatal", "message": "...", "host": 2}``: instead of the above when the host
  cannot work safely (a runtime directory another user made, an unsafe trust directory);
  then it exits. The extension serves no relay, its popup shows the message, and it asks
  the host again a minute later;
- ``{"type": "relays", "relays": [...], "host": 2}``: the whole list, at start and on change;
- ``{"type": "frame" | "part", "channel": n, "data": "..."}``: a tunnelled relay frame
  (``part`` for each piece but the last of one over the 1 MB limit);
- ``{"type": "opened", "channel": n}``: a tunnel reached its relay (the link may start);
- ``{"type": "close", "channel": n, "code": c, "reason": r}``: a tunnel ended;
- ``{"type": "error", "message": "..."}``: a message from the extension that was not read.

From the extension: ``open`` (channel, relay instance id), ``frame``/``part`` (channel,
data) and ``close`` (channel). The host exits when Chrome closes the port (stdin ends).
Nothing but frames is ever written to stdout: fd 1 is pointed at stderr at start-up, so a
stray print cannot corrupt the stream; logs go to stderr, which Chrome passes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from bridge.errors import BridgeError
from bridge.link import local_ipc
from bridge.link.local_ipc import Kind
from bridge.link.registry import FramedStream, connect_or_clean, runtime_dir
from bridge.link.trust_root import ENV_ISLAND, load_secret
from bridge.logs import LogSetupError, setup_logging
from bridge.tasks import TaskSet
from bridge.waiting import scaled
from bridge.wire.native_framing import FROM_BROWSER_LIMIT, FrameDecoder, FrameError, encode

__all__ = [
    "ENV_PIPES",
    "HOST_PROTOCOL",
    "NativeHost",
    "main",
    "open_pipes",
    "pipe_mode",
    "setup_host_logging",
]

#: How the host reads and writes Chrome's pipes: ``loop`` (the event loop's pipe transports,
#: POSIX) or ``threads`` (a reader and a writer thread, Windows). Unset: by the system; a test
#: sets ``threads`` to run the Windows way here.
ENV_PIPES: Final = "BRIDGE_NATIVE_PIPES"
PIPE_MODES: Final = ("loop", "threads")

log = logging.getLogger("bridge.link.native_host")

HOST_PROTOCOL: Final = 2
#: Characters of tunnelled data per message to the extension: even all escaped (6 bytes a
#: character) it stays under Chrome's 1 MB limit.
PART_CHARS: Final = 150_000


class NativeHost:
    """The host's state, with its output as a callable (tests drive it without Chrome)."""

    def __init__(
        self,
        directory: Path,
        send: Callable[[bytes], None],
        *,
        secret: str | None = None,
        kind: Kind | None = None,
    ) -> None:
        """``secret``: the one handed to the extension, which relays of this runtime
        directory hold too; loopback TCP endpoints (Windows) prove it both ways.
        ``kind``: the endpoint this host serves (default ``local_ipc.default_kind()``)."""
        self.directory = directory
        self._send = send
        self._secret = secret
        self._kind = kind
        self.relays: dict[str, dict[str, Any]] = {}  # instance id -> announcement
        self._watchers: dict[str, set[FramedStream]] = {}  # instance id -> connections
        self._channels: dict[int, FramedStream] = {}
        self._incoming: dict[int, list[str]] = {}  # parts of a frame from the extension
        self._server: local_ipc.LocalServer | None = None
        #: This host's endpoint file (a socket, or the file naming a loopback port).
        self.socket = directory / "hosts" / f"{os.getpid()}.sock"
        self._tasks = TaskSet("native host", log)

    # -- relays ---------------------------------------------------------------------------

    async def start(self) -> None:
        # An endpoint of our pid is a dead process's, with our pid reused: ``serve`` replaces it.
        self._server = await local_ipc.serve(
            self.directory / "hosts" / str(os.getpid()),
            self._relay_arrives,
            kind=self._kind,
            secret=self._secret,
        )
        self.socket = self._server.path
        paths = local_ipc.endpoint_files(self.directory / "relays")
        connecting = (connect_or_clean(p, self._secret) for p in paths)
        streams = [s for s in await asyncio.gather(*connecting) if s]
        for stream in streams:
            stream.write({"type": "watch"})
        # The first list is complete: each running relay's answer is awaited (briefly).
        introduced = await asyncio.gather(*(self._introduce(s) for s in streams))
        for stream, instance in zip(streams, introduced, strict=True):
            self._tasks.spawn(self._hold(stream, instance))
        self.announce()

    async def _relay_arrives(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        stream = FramedStream(reader, writer)
        instance = await self._introduce(stream)
        if instance:
            self.announce()
        await self._hold(stream, instance)

    async def _introduce(self, stream: FramedStream) -> str:
        """Read a relay's announcement and record it; "" if it said nothing sensible."""
        try:
            async with asyncio.timeout(scaled(2.0)):
                await stream.drain()
                first = await stream.read()
        except TimeoutError:
            first = None
        if not first or first.get("type") != "relay" or not first.get("instanceId"):
            return ""
        instance = str(first["instanceId"])
        self._watchers.setdefault(instance, set()).add(stream)
        self.relays.setdefault(instance, first)
        return instance

    async def _hold(self, stream: FramedStream, instance: str) -> None:
        """Wait for the relay's end (its connection closing) and announce it."""
        try:
            if instance:
                async for _ in stream.messages():
                    pass
        finally:
            await stream.close()
            watchers = self._watchers.get(instance)
            if watchers is not None:
                watchers.discard(stream)
                if not watchers:
                    del self._watchers[instance]
                    self.relays.pop(instance, None)
                    self.announce()

    def announce(self) -> None:
        relays = [{k: v for k, v in info.items() if k != "type"} for info in self.relays.values()]
        self._out({"type": "relays", "host": HOST_PROTOCOL, "relays": relays})

    # -- messages from the extension ------------------------------------------------------

    def receive(self, item: dict[str, Any] | FrameError) -> None:
        if isinstance(item, FrameError):
            self._out({"type": "error", "message": item.message})
            return
        kind = item.get("type")
        if kind not in ("open", "frame", "part", "close"):
            self._out({"type": "error", "message": f"unknown message type {kind!r}"})
            return
        channel = item.get("channel")
        if not isinstance(channel, int) or isinstance(channel, bool):
            self._out({"type": "error", "message": f"'{kind}' needs an integer 'channel'"})
            return
        if kind == "open":
            self._tasks.spawn(self._open(channel, str(item.get("relay", ""))))
        elif kind == "close":
            self._incoming.pop(channel, None)
            stream = self._channels.pop(channel, None)
            if stream is not None:
                stream.write({"type": "close"})
                self._tasks.spawn(stream.close())
        else:
            data = item.get("data")
            if not isinstance(data, str):
                self._out({"type": "error", "message": f"'{kind}' needs a string 'data'"})
                return
            parts = self._incoming.setdefault(channel, [])
            parts.append(data)
            if kind == "part":
                return
            del self._incoming[channel]
            stream = self._channels.get(channel)
            if stream is None:
                self._closed(channel, 1011, "no such channel")
            else:
                stream.write({"type": "frame", "data": "".join(parts)})

    async def _open(self, channel: int, relay: str) -> None:
        info = self.relays.get(relay)
        if info is None:
            self._closed(channel, 1011, f"no relay {relay!r} is registered")
            return
        try:
            stream = await FramedStream.connect(Path(str(info.get("socket"))), secret=self._secret)
        except (OSError, TimeoutError) as exc:
            self._closed(channel, 1011, f"relay unreachable: {exc}")
            return
        stream.write({"type": "link"})
        self._channels[channel] = stream
        self._out({"type": "opened", "channel": channel})
        code, reason = 1006, "relay connection lost"
        try:
            async for message in stream.messages():
                if message.get("type") == "close":
                    code, reason = int(message.get("code", 1000)), str(message.get("reason", ""))
                    break
                data = message.get("data")
                if message.get("type") == "frame" and isinstance(data, str):
                    self._forward(channel, data)
        finally:
            if self._channels.get(channel) is stream:
                del self._channels[channel]
                self._closed(channel, code, reason)
            await stream.close()

    def _forward(self, channel: int, data: str) -> None:
        for start in range(0, max(len(data) - PART_CHARS, 0), PART_CHARS):
            self._out(
                {"type": "part", "channel": channel, "data": data[start : start + PART_CHARS]}
            )
        last = (max(len(data) - 1, 0) // PART_CHARS) * PART_CHARS
        self._out({"type": "frame", "channel": channel, "data": data[last:]})

    def _closed(self, channel: int, code: int, reason: str) -> None:
        self._out({"type": "close", "channel": channel, "code": code, "reason": reason})

    def _out(self, message: dict[str, Any]) -> None:
        self._send(encode(message))

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.close()  # removes the endpoint file
            self._server = None
        await self._tasks.stop()
        for stream in [*self._channels.values(), *(s for w in self._watchers.values() for s in w)]:
            await stream.close()


def pipe_mode(environ: dict[str, str] | None = None, platform: str = sys.platform) -> str:
    """``loop`` or ``threads`` (see ENV_PIPES); ValueError naming the valid values."""
    given = (os.environ if environ is None else environ).get(ENV_PIPES, "").strip().lower()
    if not given:
        return "threads" if platform == "win32" else "loop"
    if given not in PIPE_MODES:
        raise ValueError(f"${ENV_PIPES}={given!r}: use one of {', '.join(PIPE_MODES)}")
    return given


class _ThreadedPipes:
    """Chrome's stdin read, and its stdout written, on threads of their own. Windows needs
    it: the proactor event loop does only overlapped I/O, and the anonymous pipes Chrome
    gives a native host are not opened for it, so ``connect_read_pipe`` cannot read them.
    Frames go out in order through one writer thread; reading ends the stream at EOF."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fds: tuple[int, int]
    ) -> None:
        self._loop, self._reader = loop, reader
        self._stdin_fd, self._stdout_fd = fds
        self._out: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write_all, name="host-stdout", daemon=True)
        self._writer.start()
        # Daemon: a read blocked on a pipe Chrome keeps open must not keep the host alive.
        threading.Thread(target=self._read_all, name="host-stdin", daemon=True).start()

    def _to_loop(self, callback: Callable[..., object], *args: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is reading
            self._loop.call_soon_threadsafe(callback, *args)

    def _read_all(self) -> None:
        try:
            while data := os.read(self._stdin_fd, 256 * 1024):
                self._to_loop(self._reader.feed_data, data)
        except OSError as exc:  # a broken pipe ends the stream like EOF
            log.debug("stdin ended with %r", exc)
        finally:
            self._to_loop(self._reader.feed_eof)

    def write(self, data: bytes) -> None:
        self._out.put(data)

    def _write_all(self) -> None:
        while (data := self._out.get()) is not None:
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self._stdout_fd, view) :]
            except OSError as exc:  # Chrome closed the port: stdin ends as well
                log.debug("stdout ended with %r", exc)
                return

    def close(self) -> None:
        """Let what was written go out (bounded: a Chrome that stopped reading must not
        hold the host), then stop the writer."""
        self._out.put(None)
        self._writer.join(timeout=scaled(5.0))


async def open_pipes(
    stdin_fd: int, stdout_fd: int, pipes: str = "loop"
) -> tuple[asyncio.StreamReader, Callable[[bytes], None], Callable[[], None]]:
    """Chrome's pipes to a host: a reader of stdin, and ``write``/``close`` of stdout, the
    way ``pipes`` says (``pipe_mode``). Shared by every host bridge serves."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=FROM_BROWSER_LIMIT)
    if pipes == "threads":
        threaded = _ThreadedPipes(loop, reader, (stdin_fd, stdout_fd))
        return reader, threaded.write, threaded.close
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(stdin_fd, "rb", buffering=0)
    )
    transport, _ = await loop.connect_write_pipe(
        asyncio.Protocol, os.fdopen(stdout_fd, "wb", buffering=0)
    )
    return reader, transport.write, transport.close


async def serve(
    stdin_fd: int,
    stdout_fd: int,
    directory: Path,
    secret: str,
    island: bool,
    pipes: str = "loop",
) -> None:
    """Hand over the secret, then run until stdin ends (Chrome closed the port, or quit)."""
    reader, write, close = await open_pipes(stdin_fd, stdout_fd, pipes)
    write(encode({"type": "trust", "secret": secret, "island": island, "host": HOST_PROTOCOL}))
    host = NativeHost(directory, write, secret=secret)
    decoder = FrameDecoder(FROM_BROWSER_LIMIT)
    await host.start()
    try:
        while data := await reader.read(256 * 1024):
            for item in decoder.feed(data):
                host.receive(item)
    finally:
        await host.stop()
        close()


def _preconditions() -> tuple[Path, str, bool] | str:
    """The runtime directory, the secret and whether this is an island; or why the host
    cannot work safely."""
    island = os.environ.get(ENV_ISLAND) == "1"
    try:
        directory = runtime_dir()
    except (OSError, ValueError) as exc:  # ValueError: a $BRIDGE_LOCAL_IPC it does not know
        return f"no safe runtime directory: {exc}"
    try:
        # An island's secret is made by the bridge that launched the browser, never here.
        secret = load_secret(create=not island)
    except (BridgeError, OSError) as exc:
        return f"no secret to hand the extension: {exc}"
    return directory, secret, island


def setup_host_logging() -> None:
    """bridge's one set-up (:mod:`bridge.logs`): to stderr, which the browser keeps in its own
    log, and to ``BRIDGE_LOG_FILE`` when the browser's environment names one (the browser
    starts the host with no arguments of bridge's). A bad setting must not stop the host,
    whose failure would cut the extension off: it is said, and warnings only are logged."""
    try:
        setup_logging()
    except LogSetupError as exc:
        setup_logging(environ={})
        log.warning("%s; logging warnings only to stderr", exc)


def main() -> int:
    # The real stdout is Chrome's pipe: keep it for frames only, point fd 1 at stderr.
    frames_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    setup_host_logging()
    ready = _preconditions()
    try:
        pipes = pipe_mode()
    except ValueError as exc:
        ready = str(exc)
    if isinstance(ready, str):
        # Failing closed: the extension is told, serves no relay, and its popup says why;
        # it asks again a minute later, so a fixed directory is picked up (before, the host
        # exited silently and the extension fell back to probing any port).
        log.error("%s", ready)
        os.write(frames_fd, encode({"type": "fatal", "message": ready, "host": HOST_PROTOCOL}))
        return 1
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(0, frames_fd, *ready, pipes=pipes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
