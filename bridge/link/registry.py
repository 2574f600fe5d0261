"""Where relays and native hosts find each other: a per-user runtime directory.

Probing 29 ports forever costs the person's browser wake-ups on days bridge never runs. So
each relay registers itself as a Unix socket ``<runtime dir>/relays/<port>.sock`` and each
native host (``bridge.link.native_host``, started by Chrome for the extension) listens on
``<runtime dir>/hosts/<pid>.sock``. Whichever starts second connects to the other:

- a relay starting connects to every host socket and says who it is;
- a host starting connects to every relay socket and asks (``watch``).

That connection stays open, so each side learns of the other's end the moment it happens,
crash included (the kernel closes the socket): no polling, no stale state. A socket file
nobody answers on is stale and is removed by whoever finds it. The same relay socket also
accepts ``link`` connections: the extension's whole relay protocol tunnelled through the
native host (``--link native``), for machines where the browser may not reach loopback TCP.

Every message is framed as native messaging frames it (``bridge.wire.native_framing``).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import stat
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Final

from websockets.exceptions import ConnectionClosed

from bridge.tasks import TaskSet
from bridge.waiting import scaled
from bridge.wire.native_framing import FrameDecoder, FrameError, encode

__all__ = [
    "ENV_RUNTIME_DIR",
    "FramedStream",
    "NativeLinkChannel",
    "RelayRegistration",
    "runtime_dir",
    "supported",
]

log = logging.getLogger(__name__)

ENV_RUNTIME_DIR: Final = "BRIDGE_RUNTIME_DIR"
#: Frames between host and relay carry whole relay-protocol frames (screenshots included).
STREAM_LIMIT: Final = 256 * 1024 * 1024
_READ_SIZE: Final = 256 * 1024
_SOCKET_PATH_MAX: Final = 103  # sun_path is 108 bytes on Linux, 104 on macOS, NUL included


def supported() -> bool:
    """Unix sockets under asyncio: Linux and macOS (Windows falls back to probing)."""
    return sys.platform != "win32"


def runtime_dir(explicit: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The per-user directory (0700), made ready: ``explicit``, else ``$BRIDGE_RUNTIME_DIR``,
    else ``$XDG_RUNTIME_DIR/bridge``, else ``<tmp>/bridge-<uid>``. A directory another user
    owns is refused, never used."""
    env = os.environ if env is None else env
    if explicit is not None:
        path = explicit
    elif env.get(ENV_RUNTIME_DIR):
        path = Path(env[ENV_RUNTIME_DIR])
    elif env.get("XDG_RUNTIME_DIR"):
        path = Path(env["XDG_RUNTIME_DIR"]) / "bridge"
    else:
        path = Path(tempfile.gettempdir()) / f"bridge-{os.getuid()}"
    longest = path / "relays" / "4294967295.sock"
    if len(os.fsencode(longest)) > _SOCKET_PATH_MAX:
        raise OSError(
            errno.ENAMETOOLONG,
            f"{path} is too long for Unix sockets (about {_SOCKET_PATH_MAX} bytes in all); "
            f"set {ENV_RUNTIME_DIR} to a shorter directory",
        )
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(path)  # a symlink is judged as itself, never followed
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise PermissionError(
            f"{path} is not a plain directory (a link or a file someone put there): remove it, "
            f"or set {ENV_RUNTIME_DIR} to a private directory"
        )
    if st.st_uid != os.getuid():
        raise PermissionError(
            f"{path} belongs to another user (uid {st.st_uid}), who could see and answer "
            f"bridge's sockets: remove it, or set {ENV_RUNTIME_DIR} to a private directory"
        )
    if st.st_mode & 0o077:
        path.chmod(0o700)
    for sub in ("relays", "hosts"):
        (path / sub).mkdir(mode=0o700, exist_ok=True)
    return path


class FramedStream:
    """One Unix-socket connection speaking framed JSON messages."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._decoder = FrameDecoder(STREAM_LIMIT)
        self._ready: list[dict[str, Any]] = []

    @classmethod
    async def connect(cls, path: Path, timeout: float | None = None) -> FramedStream:
        async with asyncio.timeout(scaled(5.0) if timeout is None else timeout):
            reader, writer = await asyncio.open_unix_connection(str(path), limit=_READ_SIZE)
        return cls(reader, writer)

    async def read(self) -> dict[str, Any] | None:
        """The next message, or None at the end of the stream (bad frames are logged, skipped)."""
        while not self._ready:
            try:
                data = await self.reader.read(_READ_SIZE)
            except (ConnectionError, OSError):
                data = b""
            if not data:
                return None
            for item in self._decoder.feed(data):
                if isinstance(item, FrameError):
                    log.warning("unreadable frame from %s: %s", self.peer, item.message)
                else:
                    self._ready.append(item)
        return self._ready.pop(0)

    def write(self, message: dict[str, Any]) -> None:
        if not self.writer.is_closing():
            self.writer.write(encode(message, STREAM_LIMIT))

    async def drain(self) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.drain()

    @property
    def peer(self) -> str:
        return str(self.writer.get_extra_info("peername") or "unix socket")

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()

    async def messages(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await self.read()) is not None:
            yield message


async def connect_or_clean(path: Path) -> FramedStream | None:
    """Connect to a registered socket; a stale one (nobody listening) is removed."""
    try:
        return await FramedStream.connect(path)
    except (ConnectionRefusedError, FileNotFoundError):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # its owner died without cleaning up
        return None
    except (OSError, TimeoutError) as exc:
        log.debug("cannot reach %s: %s", path, exc)
        return None


class NativeLinkChannel:
    """The relay's side of a link tunnelled through a native host: what ``ExtensionLink``
    needs of a WebSocket (``recv``, ``send``, iteration, ``close``), over a FramedStream.

    Ends raise websockets' ``ConnectionClosed`` so the link handles both kinds alike.
    """

    via: Final = "native"

    def __init__(self, stream: FramedStream) -> None:
        self.stream = stream
        self.request = None  # a WebSocket's HTTP request: none here
        self._closed = False

    async def recv(self) -> str:
        while True:
            message = await self.stream.read()
            if message is None:
                self._closed = True
                raise ConnectionClosed(None, None)
            if message.get("type") == "close":
                self._closed = True
                raise ConnectionClosed(None, None)
            data = message.get("data")
            if message.get("type") == "frame" and isinstance(data, str):
                return data

    def __aiter__(self) -> NativeLinkChannel:
        return self

    async def __anext__(self) -> str:
        try:
            return await self.recv()
        except ConnectionClosed:
            raise StopAsyncIteration from None

    async def send(self, data: str) -> None:
        if self._closed or self.stream.writer.is_closing():
            raise ConnectionClosed(None, None)
        self.stream.write({"type": "frame", "data": data})
        await self.stream.drain()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        if not self._closed:
            self._closed = True
            self.stream.write({"type": "close", "code": code, "reason": reason})
            await self.stream.drain()
        await self.stream.close()


LinkHandler = Callable[[NativeLinkChannel], Awaitable[None]]


class RelayRegistration:
    """A relay's presence in the runtime directory (see the module docstring)."""

    def __init__(
        self, directory: Path, info: Callable[[], dict[str, Any]], on_link: LinkHandler
    ) -> None:
        self.directory = directory
        self._info = info
        self._on_link = on_link
        self.path: Path | None = None
        self._server: asyncio.Server | None = None
        self._streams: set[FramedStream] = set()
        self._tasks = TaskSet("relay registration", log)

    def announcement(self) -> dict[str, Any]:
        return {"type": "relay", **self._info(), "socket": str(self.path)}

    async def start(self, port: int) -> None:
        self.path = self.directory / "relays" / f"{port}.sock"
        # This process holds TCP port ``port``, so a file of that name is a dead relay's.
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._server = await asyncio.start_unix_server(
            self._accept, str(self.path), limit=_READ_SIZE
        )
        self.path.chmod(0o600)
        hosts = sorted((self.directory / "hosts").glob("*.sock"))
        for stream in await asyncio.gather(*(connect_or_clean(p) for p in hosts)):
            if stream is not None:
                stream.write(self.announcement())
                self._hold(stream)

    def _hold(self, stream: FramedStream) -> None:
        """Keep a host's connection until it ends (its end is the host's news to us)."""
        self._streams.add(stream)

        async def hold() -> None:
            try:
                await stream.drain()
                async for _ in stream.messages():
                    pass  # hosts send nothing more on a watch connection
            finally:
                self._streams.discard(stream)
                await stream.close()

        self._tasks.spawn(hold())

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        stream = FramedStream(reader, writer)
        first = await stream.read()
        kind = first.get("type") if first else None
        if kind == "watch":
            stream.write(self.announcement())
            self._hold(stream)
        elif kind == "link":
            self._streams.add(stream)
            try:
                await self._on_link(NativeLinkChannel(stream))
            finally:
                self._streams.discard(stream)
                await stream.close()
        else:
            await stream.close()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        for stream in list(self._streams):
            await stream.close()
        await self._tasks.stop()
