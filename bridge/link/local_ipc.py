"""Local IPC: serve at, and connect to, an endpoint that only this user's processes can use.

Relays and native hosts meet through endpoints in the per-user runtime directory
(``bridge.link.registry``). An endpoint is a file there, named by its owner
(``relays/<port>``, ``hosts/<pid>``) plus a suffix that says how to reach it, so the connecting
side never has to guess the serving side's kind:

- ``.sock`` (``"unix"``, the default on Linux and macOS): a Unix socket, mode 0600, in the
  0700 directory. The file system is the access check: no other user can reach it, and no
  other user can have put it there (``runtime_dir`` refuses a directory it does not own).
- ``.port`` (``"tcp"``, the default on Windows): a listening socket on 127.0.0.1, port 0
  (the system picks a free one), whose port number is written in the file (0600). Any local
  process can connect to a loopback port, so the port is only an address; what admits a
  peer is proof of the secret both ends already hold (the person's, or a launched browser's
  island secret: ``bridge.link.trust_root``), before a single frame flows:

  1. server -> client: a fresh 32-byte nonce ``ns``;
  2. client -> server: its own nonce ``nc`` and ``HMAC(secret, "client", ns, nc, port)``;
  3. the server checks it (constant time). Wrong, late or cut short: the connection is
     closed, the refusal logged, and the peer had nothing but a random nonce;
  4. server -> client: ``HMAC(secret, "server", ns, nc, port)``, which the client checks
     the same way, so a process squatting the port of an endpoint that died (its file is
     still there) is refused too, and learns nothing it could replay: each proof names its
     role, both nonces and the port the client really connected to.

Why loopback TCP rather than Windows named pipes: asyncio's public API serves pipes only
through the proactor's undocumented ``start_serving_pipe``, and a pipe's default security
descriptor lets Everyone read and connect unless a DACL is set (ctypes or pywin32, neither
testable off Windows). The TCP path uses public asyncio on every platform, so it runs and is
tested end to end on Linux (``BRIDGE_LOCAL_IPC=tcp``), attackers included, exactly as
Windows will run it. Unix sockets stay the default where they exist: no port, no proof, and
the behaviour Linux and macOS have always had.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import os
import secrets
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Final, Literal

from bridge.errors import BridgeError
from bridge.store.state import write_atomically
from bridge.waiting import scaled

__all__ = [
    "ENV_LOCAL_IPC",
    "KINDS",
    "Kind",
    "LocalIpcUnavailable",
    "LocalServer",
    "PeerNotTrusted",
    "Probe",
    "connect",
    "default_kind",
    "endpoint_files",
    "probe",
    "serve",
]

log = logging.getLogger(__name__)

Kind = Literal["unix", "tcp"]
KINDS: Final[tuple[Kind, ...]] = ("unix", "tcp")
#: ``unix`` or ``tcp``: which kind this process serves (tests pick ``tcp`` on Linux to run
#: the Windows path). Connecting needs no choice: the endpoint file's suffix says.
ENV_LOCAL_IPC: Final = "BRIDGE_LOCAL_IPC"
SUFFIXES: Final[dict[Kind, str]] = {"unix": ".sock", "tcp": ".port"}
LOOPBACK: Final = "127.0.0.1"
NONCE_BYTES: Final = 32
_MAC_BYTES: Final = hashlib.sha256().digest_size
_CONTEXT: Final = b"bridge local ipc 1|"
#: The StreamReader limit (only readline-style calls use it; frames are read in chunks).
READ_LIMIT: Final = 256 * 1024

#: What ``probe`` learnt of an endpoint: its owner answers (``live``); its owner is dead and
#: the file may go (``stale``); or it could not tell (``unknown``: keep the file).
Probe = Literal["live", "stale", "unknown"]

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class LocalIpcUnavailable(BridgeError):
    """This kind of endpoint cannot be served or reached here (Unix sockets on Windows; a TCP
    endpoint without the secret)."""

    code = "local_ipc_unavailable"


class PeerNotTrusted(ConnectionError):
    """A TCP endpoint's listener did not prove the secret: not ours (a squatter on a dead
    endpoint's port, or a relay of another secret). Nothing was sent to it but a proof."""


def default_kind(env: Mapping[str, str] | None = None, platform: str = sys.platform) -> Kind:
    """``$BRIDGE_LOCAL_IPC`` if set, else ``tcp`` on Windows (no Unix sockets assumed there)
    and ``unix`` everywhere else."""
    env = os.environ if env is None else env
    wanted = env.get(ENV_LOCAL_IPC, "")
    if wanted:
        if wanted not in KINDS:
            raise ValueError(f"{ENV_LOCAL_IPC} must be one of {', '.join(KINDS)}, not {wanted!r}")
        return "tcp" if wanted == "tcp" else "unix"
    return "tcp" if platform == "win32" else "unix"


def endpoint_files(directory: Path) -> list[Path]:
    """Every endpoint registered in ``directory``, of either kind, in name order."""
    found = [p for suffix in SUFFIXES.values() for p in directory.glob(f"*{suffix}")]
    return sorted(found, key=lambda p: p.name)


def _mac(secret: str, role: bytes, server_nonce: bytes, client_nonce: bytes, port: int) -> bytes:
    # Every part has a fixed length (both roles are six letters), so no two differ only in
    # where one part ends: a proof made for one role, nonce pair or port fits no other.
    message = _CONTEXT + role + server_nonce + client_nonce + port.to_bytes(2, "big")
    return hmac.new(secret.encode(), message, hashlib.sha256).digest()


class LocalServer:
    """A served endpoint: its file, and ``close`` (stops accepting, removes the file)."""

    def __init__(self, path: Path, server: asyncio.Server, kind: Kind) -> None:
        self.path = path
        self.kind = kind
        self._server = server

    @property
    def port(self) -> int | None:
        """The loopback port of a ``tcp`` endpoint; None for a Unix socket."""
        if self.kind != "tcp":
            return None
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        self._server.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


async def serve(
    stem: Path,
    handler: Handler,
    *,
    kind: Kind | None = None,
    secret: str | None = None,
) -> LocalServer:
    """Serve ``handler`` at ``stem`` plus the kind's suffix (``kind``: ``default_kind()``).

    A file already there is a dead owner's (the caller holds what the name stands for: a
    relay's TCP port, a host's pid) and is replaced. ``tcp`` needs ``secret``: the handler
    sees only peers that proved it."""
    kind = default_kind() if kind is None else kind
    path = Path(f"{stem}{SUFFIXES[kind]}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    if kind == "tcp":
        return await _serve_tcp(path, handler, _need_secret(secret, path))
    if sys.platform == "win32":
        raise LocalIpcUnavailable(
            f"Unix sockets are not used on Windows; unset {ENV_LOCAL_IPC} (or set it to tcp)"
        )
    server = await asyncio.start_unix_server(handler, str(path), limit=READ_LIMIT)
    os.chmod(path, 0o600)  # the directory is 0700 already; the socket says so as well
    return LocalServer(path, server, kind)


def _need_secret(secret: str | None, path: Path) -> str:
    if not secret:
        raise LocalIpcUnavailable(
            f"{path} is a loopback TCP endpoint, which admits only peers that prove the "
            "secret, and none was given: pass the relay's or native host's secret"
        )
    return secret


async def _serve_tcp(path: Path, handler: Handler, secret: str) -> LocalServer:
    async def admit(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        port = int(writer.get_extra_info("sockname")[1])
        server_nonce = secrets.token_bytes(NONCE_BYTES)
        try:
            async with asyncio.timeout(scaled(5.0)):
                writer.write(server_nonce)
                await writer.drain()
                answer = await reader.readexactly(NONCE_BYTES + _MAC_BYTES)
        except (asyncio.IncompleteReadError, TimeoutError, ConnectionError, OSError) as exc:
            reason = "no proof in time" if isinstance(exc, TimeoutError) else "closed before proof"
            await _refuse(writer, path, peer, reason)
            return
        client_nonce, proof = answer[:NONCE_BYTES], answer[NONCE_BYTES:]
        expected = _mac(secret, b"client", server_nonce, client_nonce, port)
        if not hmac.compare_digest(proof, expected):
            await _refuse(writer, path, peer, "wrong proof of the secret")
            return
        writer.write(_mac(secret, b"server", server_nonce, client_nonce, port))
        await handler(reader, writer)

    server = await asyncio.start_server(admit, LOOPBACK, 0, limit=READ_LIMIT)
    port = int(server.sockets[0].getsockname()[1])
    try:
        write_atomically(path, f"{port}\n")  # 0600: the address is ours to know
    except BaseException:
        server.close()
        raise
    return LocalServer(path, server, "tcp")


async def _refuse(writer: asyncio.StreamWriter, path: Path, peer: object, reason: str) -> None:
    # Logged (a hostile local process knocking is worth knowing), never with the secret.
    log.warning("refused a connection to %s from %s: %s", path.name, peer, reason)
    writer.close()
    with contextlib.suppress(ConnectionError, OSError):
        await writer.wait_closed()


async def connect(
    path: Path, *, secret: str | None = None, timeout: float | None = None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect to the endpoint ``path`` (its suffix says its kind), proving ``secret`` to a
    ``tcp`` one and checking its proof in turn.

    Raises ``FileNotFoundError`` (no such endpoint), ``ConnectionRefusedError`` (nobody
    listens: a stale file), ``PeerNotTrusted`` (a listener without the secret),
    ``TimeoutError`` and other ``OSError``s."""
    async with asyncio.timeout(scaled(5.0) if timeout is None else timeout):
        if path.suffix == SUFFIXES["tcp"]:
            return await _connect_tcp(path, _need_secret(secret, path))
        if sys.platform == "win32":
            raise LocalIpcUnavailable(f"{path} is a Unix socket, which bridge does not use here")
        return await asyncio.open_unix_connection(str(path), limit=READ_LIMIT)


def _read_port(path: Path) -> int:
    """The port a ``.port`` file names (a few bytes on a local disk: read in place)."""
    text = path.read_text(encoding="ascii", errors="replace").strip()
    if not text.isdigit() or not 0 < int(text) < 65536:
        # Only this user writes here; a torn or foreign file is as good as a dead endpoint.
        raise ConnectionRefusedError(f"{path} holds no port number")
    return int(text)


async def _connect_tcp(
    path: Path, secret: str
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    port = _read_port(path)
    reader, writer = await asyncio.open_connection(LOOPBACK, port, limit=READ_LIMIT)
    try:
        server_nonce = await reader.readexactly(NONCE_BYTES)
        client_nonce = secrets.token_bytes(NONCE_BYTES)
        writer.write(client_nonce + _mac(secret, b"client", server_nonce, client_nonce, port))
        await writer.drain()
        proof = await reader.readexactly(_MAC_BYTES)
        if not hmac.compare_digest(
            proof, _mac(secret, b"server", server_nonce, client_nonce, port)
        ):
            raise PeerNotTrusted(
                f"whatever listens on {LOOPBACK}:{port} ({path.name}) did not prove the secret"
            )
    except asyncio.IncompleteReadError:
        writer.close()
        raise PeerNotTrusted(
            f"{LOOPBACK}:{port} ({path.name}) closed the connection during the proof: it does "
            "not hold this secret (a relay or host of another bridge, or not bridge at all)"
        ) from None
    except BaseException:
        writer.close()
        raise
    return reader, writer


async def probe(
    path: Path, *, secret: str | None = None, timeout: float | None = None
) -> tuple[Probe, str]:
    """Is the endpoint ``path`` served by its owner? Connects as ``connect`` does (proving
    ``secret`` to a ``tcp`` one, and checking its proof), then hangs up; sends nothing else.

    For callers that only look (``bridge doctor``, ``bridge token``): a file says an endpoint
    was served, not that it still is (a crashed owner leaves it), and for a ``.port`` file
    only the proof tells our own listener from a process that took the dead one's port.
    Returns the verdict and why:

    - ``live``: the owner accepted (and, over TCP, proved the secret);
    - ``stale``: the file is gone, names no port, nobody listens, or the listener did not
      prove the secret: the owner is dead, and the file may be removed, which is what the
      registry does with such a file (``bridge.link.registry.connect_or_clean``);
    - ``unknown``: no secret to prove to a ``.port`` endpoint, a timeout, another error
      (a Unix socket on Windows): keep the file, it may be live."""
    if path.suffix == SUFFIXES["tcp"] and not secret:
        return "unknown", "a loopback TCP endpoint, and no secret to prove to it"
    try:
        _, writer = await connect(path, secret=secret, timeout=timeout)
    except (FileNotFoundError, ConnectionRefusedError):
        return "stale", "nobody serves it (its owner ended without removing it)"
    except PeerNotTrusted as exc:
        return "stale", str(exc)
    except LocalIpcUnavailable as exc:
        return "unknown", str(exc)
    except TimeoutError:
        return "unknown", "no answer in time"
    except OSError as exc:
        return "unknown", str(exc.strerror or exc)
    writer.close()
    with contextlib.suppress(ConnectionError, OSError):
        await writer.wait_closed()
    return "live", "its owner answered" + (" and proved the secret" if secret else "")
