"""Where relays and native hosts find each other: a per-user runtime directory.

Probing 29 ports forever costs the person's browser wake-ups on days bridge never runs. So
each relay registers itself as an endpoint ``<runtime dir>/relays/<port>.sock`` and each
native host (``bridge.link.native_host``, started by Chrome for the extension) serves
``<runtime dir>/hosts/<pid>.sock``. Whichever starts second connects to the other:

- a relay starting connects to every host endpoint and says who it is;
- a host starting connects to every relay endpoint and asks (``watch``).

That connection stays open, so each side learns of the other's end the moment it happens,
crash included (the kernel closes the socket): no polling, no stale state. An endpoint file
nobody answers on is stale and is removed by whoever finds it. The same relay endpoint also
accepts ``link`` connections: the extension's whole relay protocol tunnelled through the
native host (``--link native``), for machines where the browser may not reach loopback TCP.

Endpoints are local IPC (``bridge.link.local_ipc``): Unix sockets on Linux and macOS; on
Windows loopback TCP with the port in ``<name>.port`` and the secret proved before anything
flows. A connecting side reads the kind from the file's suffix.

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

from bridge.link import local_ipc
from bridge.link.local_ipc import Kind
from bridge.tasks import TaskSet
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
_READ_SIZE: Final = local_ipc.READ_LIMIT
_SOCKET_PATH_MAX: Final = 103  # sun_path is 108 bytes on Linux, 104 on macOS, NUL included


def supported() -> bool:
    """Relays and hosts can meet on this platform: always, since local IPC has a Windows
    path (``bridge.link.local_ipc``); kept for callers that asked before."""
    return True


def runtime_dir(
    explicit: Path | None = None,
    env: Mapping[str, str] | None = None,
    *,
    platform: str = sys.platform,
    kind: Kind | None = None,
) -> Path:
    """The per-user directory, made ready: ``explicit``, else ``$BRIDGE_RUNTIME_DIR``, else
    the platform's own:

    - Linux and other POSIX: ``$XDG_RUNTIME_DIR/bridge``, else ``<tmp>/bridge-<uid>``;
    - macOS: the same, and ``<tmp>`` is ``$TMPDIR`` (Python's tempfile reads it first),
      which macOS makes per user (``/var/folders/…``, 0700);
    - Windows (``platform`` ``win32``): ``%LOCALAPPDATA%\\bridge\\run``. There is no uid to
      compare and no mode bits to set: the directory is inside the person's profile, whose
      ACL admits only them, SYSTEM and Administrators (who could read anything anyway).

    On POSIX the directory is 0700 and must be this user's: one another user owns is
    refused, never used (they could see and answer bridge's sockets). Everywhere a link (or
    a Windows junction) in its place is refused: it could lead anywhere. ``kind`` (default
    ``local_ipc.default_kind``) decides whether Unix socket path lengths apply."""
    env = os.environ if env is None else env
    kind = local_ipc.default_kind(env, platform) if kind is None else kind
    windows = platform == "win32"
    if explicit is not None:
        path = explicit
    elif env.get(ENV_RUNTIME_DIR):
        path = Path(env[ENV_RUNTIME_DIR])
    elif windows:
        base = env.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        path = Path(base) / "bridge" / "run"
    elif env.get("XDG_RUNTIME_DIR"):
        path = Path(env["XDG_RUNTIME_DIR"]) / "bridge"
    else:
        path = Path(tempfile.gettempdir()) / f"bridge-{_uid()}"
    longest = path / "relays" / "4294967295.sock"
    if kind == "unix" and len(os.fsencode(longest)) > _SOCKET_PATH_MAX:
        raise OSError(
            errno.ENAMETOOLONG,
            f"{path} is too long for Unix sockets (about {_SOCKET_PATH_MAX} bytes in all); "
            f"set {ENV_RUNTIME_DIR} to a shorter directory",
        )
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(path)  # a symlink is judged as itself, never followed
    # A junction is a Windows link that is not a symlink: lstat shows it by its reparse tag.
    reparse_tag = int(getattr(st, "st_reparse_tag", 0))
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or reparse_tag:
        raise PermissionError(
            f"{path} is not a plain directory (a link or a file someone put there): remove it, "
            f"or set {ENV_RUNTIME_DIR} to a private directory"
        )
    if not windows:
        if st.st_uid != _uid():
            raise PermissionError(
                f"{path} belongs to another user (uid {st.st_uid}), who could see and answer "
                f"bridge's sockets: remove it, or set {ENV_RUNTIME_DIR} to a private directory"
            )
        if st.st_mode & 0o077:
            path.chmod(0o700)
    for sub in ("relays", "hosts"):
        (path / sub).mkdir(mode=0o700, exist_ok=True)
    return path


def _uid() -> int:
    """This user's id (POSIX); ``platform`` may say Windows in tests on Linux, where only
    the real platform decides whether there is one."""
    if sys.platform == "win32":
        raise OSError("Windows has no uid: bridge's runtime directory there is per profile")
    return os.getuid()


class FramedStream:
    """One local IPC connection (``bridge.link.local_ipc``) speaking framed JSON messages."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._decoder = FrameDecoder(STREAM_LIMIT)
        self._ready: list[dict[str, Any]] = []

    @classmethod
    async def connect(
        cls, path: Path, timeout: float | None = None, *, secret: str | None = None
    ) -> FramedStream:
        """Connect to an endpoint file; a ``.port`` one (loopback TCP) needs ``secret``."""
        reader, writer = await local_ipc.connect(path, secret=secret, timeout=timeout)
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
        return str(self.writer.get_extra_info("peername") or "local endpoint")

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()

    async def messages(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await self.read()) is not None:
            yield message


async def connect_or_clean(path: Path, secret: str | None = None) -> FramedStream | None:
    """Connect to a registered endpoint; a stale one (nobody listening, or someone else
    on a dead endpoint's port) is removed."""
    try:
        return await FramedStream.connect(path, secret=secret)
    except (ConnectionRefusedError, FileNotFoundError):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # its owner died without cleaning up
        return None
    except local_ipc.PeerNotTrusted as exc:
        # Our own endpoint holds its port while it lives: whoever answers now is not it.
        log.warning("%s: removing %s", exc, path.name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
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
        self,
        directory: Path,
        info: Callable[[], dict[str, Any]],
        on_link: LinkHandler,
        *,
        secret: str | None = None,
        kind: Kind | None = None,
    ) -> None:
        """``secret``: what TCP endpoints prove (the relay's own, shared with its hosts);
        ``kind``: the endpoint this relay serves (default ``local_ipc.default_kind()``)."""
        self.directory = directory
        self._info = info
        self._on_link = on_link
        self._secret = secret
        self._kind = kind
        self.path: Path | None = None
        self._server: local_ipc.LocalServer | None = None
        self._streams: set[FramedStream] = set()
        self._tasks = TaskSet("relay registration", log)

    def announcement(self) -> dict[str, Any]:
        return {"type": "relay", **self._info(), "socket": str(self.path)}

    async def start(self, port: int) -> None:
        # This process holds TCP port ``port``, so an endpoint of that name is a dead relay's
        # (``serve`` replaces it).
        self._server = await local_ipc.serve(
            self.directory / "relays" / str(port),
            self._accept,
            kind=self._kind,
            secret=self._secret,
        )
        self.path = self._server.path
        hosts = local_ipc.endpoint_files(self.directory / "hosts")
        connecting = (connect_or_clean(p, self._secret) for p in hosts)
        for stream in await asyncio.gather(*connecting):
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
            await self._server.close()  # removes the endpoint file
            self._server = None
        for stream in list(self._streams):
            await stream.close()
        await self._tasks.stop()
