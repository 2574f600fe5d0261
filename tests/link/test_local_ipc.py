"""Local IPC (``bridge.link.local_ipc``): Unix sockets, and the Windows path (loopback TCP and a
proof of the secret) run here on Linux, attackers included; the runtime directory per OS.

End to end, a real relay and a real native host (a subprocess, as Chrome starts it) meet over
loopback TCP exactly as they would on Windows, and a process without the secret gets nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import shutil
import socket
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bridge.link import local_ipc
from bridge.link.local_ipc import ENV_LOCAL_IPC, NONCE_BYTES, PeerNotTrusted
from bridge.link.registry import ENV_RUNTIME_DIR, FramedStream, connect_or_clean, runtime_dir
from bridge.link.relay import Relay
from bridge.link.trust_root import load_secret
from bridge.waiting import scaled
from bridge.wire import protocol, trust
from tests.link.test_native_host import start_host, stop_host

SECRET = "s3cret-for-this-test-only"
MAC_BYTES = 32


@pytest.fixture
def runtime() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="bridge-ipc-"))
    (path / "relays").mkdir()
    (path / "hosts").mkdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Echo:
    """A handler that records who got through and echoes one line."""

    def __init__(self) -> None:
        self.admitted = 0

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.admitted += 1
        writer.write(await reader.readline())
        await writer.drain()
        writer.close()


@pytest.fixture
async def tcp_endpoint(runtime: Path) -> AsyncIterator[tuple[local_ipc.LocalServer, Echo]]:
    echo = Echo()
    server = await local_ipc.serve(runtime / "relays" / "1", echo, kind="tcp", secret=SECRET)
    yield server, echo
    await server.close()


async def _raw(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port)


async def _hung_up(reader: asyncio.StreamReader) -> bytes:
    """What the peer sent before hanging up. A socket closed with our bytes still unread
    sends a reset instead of an end of stream (seen under load): the same "nothing, then
    gone", so it reads as b""."""
    try:
        return await reader.read()
    except ConnectionResetError:
        return b""


# -- choosing the kind, and the runtime directory per OS ------------------------------------


def test_the_kind_is_unix_except_on_windows_and_tests_may_choose() -> None:
    assert local_ipc.default_kind({}, "linux") == "unix"
    assert local_ipc.default_kind({}, "darwin") == "unix"
    assert local_ipc.default_kind({}, "win32") == "tcp"
    assert local_ipc.default_kind({ENV_LOCAL_IPC: "tcp"}, "linux") == "tcp"
    with pytest.raises(ValueError, match="BRIDGE_LOCAL_IPC must be one of unix, tcp"):
        local_ipc.default_kind({ENV_LOCAL_IPC: "pipe"}, "linux")


def test_windows_keeps_its_runtime_directory_in_the_profile(tmp_path: Path) -> None:
    env = {"LOCALAPPDATA": str(tmp_path / "AppData" / "Local"), "XDG_RUNTIME_DIR": "/nowhere"}
    made = runtime_dir(env=env, platform="win32")
    assert made == tmp_path / "AppData" / "Local" / "bridge" / "run"  # XDG means nothing there
    assert (made / "relays").is_dir() and (made / "hosts").is_dir()
    # $BRIDGE_RUNTIME_DIR (a launched browser's island) still wins.
    island = tmp_path / "island"
    assert runtime_dir(env={**env, ENV_RUNTIME_DIR: str(island)}, platform="win32") == island
    # No Unix socket path limit for loopback TCP endpoints.
    deep = tmp_path / ("x" * 120)
    assert runtime_dir(env={ENV_RUNTIME_DIR: str(deep)}, platform="win32") == deep


def test_a_link_in_place_of_the_windows_runtime_directory_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    local = tmp_path / "Local"
    (local / "bridge").mkdir(parents=True)
    (local / "bridge" / "run").symlink_to(target)
    with pytest.raises(PermissionError, match="not a plain directory"):
        runtime_dir(env={"LOCALAPPDATA": str(local)}, platform="win32")
    assert not list(target.iterdir())


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX uid")
def test_macos_keeps_the_per_user_tmpdir() -> None:
    # Python's tempfile reads $TMPDIR first: on macOS that is /var/folders/…, one per user.
    made = runtime_dir(env={}, platform="darwin")
    assert made == Path(tempfile.gettempdir()) / f"bridge-{os.getuid()}"
    assert made.stat().st_mode & 0o777 == 0o700


# -- Unix sockets, as always --------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets")
async def test_a_unix_endpoint_is_a_private_socket(runtime: Path) -> None:
    echo = Echo()
    server = await local_ipc.serve(runtime / "hosts" / "7", echo, kind="unix")
    try:
        assert server.path == runtime / "hosts" / "7.sock" and server.port is None
        assert server.path.stat().st_mode & 0o777 == 0o600
        reader, writer = await local_ipc.connect(server.path)
        writer.write(b"hi\n")
        assert await reader.readline() == b"hi\n"
        writer.close()
    finally:
        await server.close()
    assert not server.path.exists()


# -- loopback TCP: the Windows path ---------------------------------------------------------


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _logged(logger: logging.Logger, text: str) -> asyncio.Future[None]:
    """Done when ``logger`` logs a message holding ``text``: the log line is the event."""
    loop = asyncio.get_running_loop()
    seen: asyncio.Future[None] = loop.create_future()

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if text in record.getMessage():
                logger.removeHandler(self)
                loop.call_soon_threadsafe(_settle, seen)

    logger.addHandler(Watch())
    return seen


async def test_a_tcp_endpoint_admits_a_peer_that_proves_the_secret(
    tcp_endpoint: tuple[local_ipc.LocalServer, Echo],
) -> None:
    server, echo = tcp_endpoint
    assert server.path.name == "1.port"
    assert server.path.read_text().strip() == str(server.port)
    assert server.path.stat().st_mode & 0o777 == 0o600
    reader, writer = await local_ipc.connect(server.path, secret=SECRET)
    writer.write(b"through\n")
    assert await reader.readline() == b"through\n"
    writer.close()
    assert echo.admitted == 1
    assert local_ipc.endpoint_files(server.path.parent) == [server.path]


@pytest.mark.reliability(33)
async def test_a_process_without_the_secret_gets_a_nonce_and_nothing_else_and_is_logged(
    tcp_endpoint: tuple[local_ipc.LocalServer, Echo], caplog: pytest.LogCaptureFixture
) -> None:
    server, echo = tcp_endpoint
    assert server.port is not None
    caplog.set_level(logging.WARNING, logger="bridge.link.local_ipc")
    # The attacker knows the port (any local process can find listening ports) and guesses.
    reader, writer = await _raw(server.port)
    nonce = await reader.readexactly(NONCE_BYTES)
    writer.write(secrets.token_bytes(NONCE_BYTES) + secrets.token_bytes(MAC_BYTES))
    writer.write(b'{"type": "watch"}\n')  # and asks anyway
    async with asyncio.timeout(scaled(5.0)):
        rest = await reader.read()  # the server closes: a closed connection ends this at once
    assert rest == b"" and len(nonce) == NONCE_BYTES
    writer.close()
    # One that proves with another secret fares no better, and is told so.
    with pytest.raises(PeerNotTrusted, match="does not hold this secret"):
        await local_ipc.connect(server.path, secret="not-" + SECRET)
    # One that says nothing and hangs up.
    hung_up = _logged(logging.getLogger(local_ipc.__name__), "closed before proof")
    reader, writer = await _raw(server.port)
    await reader.readexactly(NONCE_BYTES)
    writer.close()
    assert echo.admitted == 0
    refusals = [r.getMessage() for r in caplog.records if "refused a connection" in r.getMessage()]
    assert len(refusals) >= 2 and any("wrong proof" in m for m in refusals), refusals
    async with asyncio.timeout(scaled(5.0)):
        await hung_up  # the third refusal is logged as the server reads the EOF
    assert SECRET not in caplog.text


async def test_a_silent_peer_is_dropped_at_the_deadline(
    tcp_endpoint: tuple[local_ipc.LocalServer, Echo],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, echo = tcp_endpoint
    assert server.port is not None
    monkeypatch.setenv("BRIDGE_TIMEOUT_FACTOR", "0.1")  # the 5 s handshake deadline: 0.5 s
    reader, writer = await _raw(server.port)
    await reader.readexactly(NONCE_BYTES)
    async with asyncio.timeout(scaled(5.0) * 10):
        assert await _hung_up(reader) == b""  # closed by the server, nothing sent
    writer.close()
    assert echo.admitted == 0 and "no proof in time" in caplog.text


async def test_a_squatter_on_a_dead_endpoints_port_is_refused_and_its_proof_useless(
    tcp_endpoint: tuple[local_ipc.LocalServer, Echo], runtime: Path
) -> None:
    """The endpoint's file outlives it; someone else now listens on the port it names, and
    relays what our client says to the real endpoint (a man in the middle)."""
    real, echo = tcp_endpoint
    assert real.port is not None
    forwarded: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    async def squat(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        to_real_r, to_real_w = await _raw(real.port or 0)
        try:
            writer.write(await to_real_r.readexactly(NONCE_BYTES))  # the real server's nonce
            proof = await reader.readexactly(NONCE_BYTES + MAC_BYTES)  # our client's proof
            to_real_w.write(proof)
            answer = await to_real_r.read()  # what the real server answers it
            if not forwarded.done():
                forwarded.set_result(answer)
            writer.write(secrets.token_bytes(MAC_BYTES))  # it cannot prove the secret itself
        finally:
            writer.close()
            to_real_w.close()

    squatter = await asyncio.start_server(squat, "127.0.0.1", 0)
    stale = runtime / "relays" / "2.port"
    stale.write_text(f"{squatter.sockets[0].getsockname()[1]}\n")
    try:
        with pytest.raises(PeerNotTrusted):
            await local_ipc.connect(stale, secret=SECRET)
        # The proof names the port our client dialled: the real endpoint refuses it.
        assert await forwarded == b"" and echo.admitted == 0
        # The registry's view: a squatted endpoint is as good as dead, and its file removed.
        assert await connect_or_clean(stale, SECRET) is None
        assert not stale.exists()
    finally:
        squatter.close()


async def test_a_stale_port_file_is_cleaned_and_a_tcp_endpoint_needs_the_secret(
    runtime: Path,
) -> None:
    with socket.socket() as s:  # a port nobody listens on any more
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    stale = runtime / "hosts" / "3.port"
    stale.write_text(f"{port}\n")
    assert await connect_or_clean(stale, SECRET) is None and not stale.exists()
    garbage = runtime / "hosts" / "4.port"
    garbage.write_text("not a port")
    assert await connect_or_clean(garbage, SECRET) is None and not garbage.exists()
    with pytest.raises(local_ipc.LocalIpcUnavailable, match="pass the relay's or native host's"):
        await local_ipc.serve(runtime / "hosts" / "5", Echo(), kind="tcp", secret=None)


async def test_a_probe_tells_live_stale_and_unknown_endpoints_apart(
    tcp_endpoint: tuple[local_ipc.LocalServer, Echo], runtime: Path
) -> None:
    """What ``bridge doctor`` and ``bridge token`` see: a proving connect, nothing sent after."""
    real, echo = tcp_endpoint
    assert (await local_ipc.probe(real.path, secret=SECRET))[0] == "live"
    assert echo.admitted == 1  # admitted, then hung up on: the handler read an empty line
    wrong, why = await local_ipc.probe(real.path, secret="another secret")
    assert wrong == "stale" and "closed the connection during the proof" in why
    assert (await local_ipc.probe(real.path))[0] == "unknown"  # no secret: cannot tell
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = runtime / "relays" / "2.port"
    dead.write_text(f"{port}\n")
    assert (await local_ipc.probe(dead, secret=SECRET))[0] == "stale"
    assert (await local_ipc.probe(runtime / "relays" / "3.sock"))[0] == "stale"  # no file
    unix = await local_ipc.serve(runtime / "relays" / "4", Echo(), kind="unix")
    try:
        assert await local_ipc.probe(unix.path) == ("live", "its owner answered")
    finally:
        await unix.close()
    assert dead.exists()  # probing removes nothing: the caller decides


# -- a real relay and a real native host, meeting the Windows way -----------------------------


async def test_a_relay_and_a_native_host_meet_and_link_over_loopback_tcp(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_LOCAL_IPC, "tcp")  # this process's relays, as on Windows
    host = await start_host(runtime, {ENV_LOCAL_IPC: "tcp"}, stderr=True)
    try:
        handed = await host.next("trust")
        assert (await host.next("relays"))["relays"] == []
        (host_file,) = (runtime / "hosts").iterdir()
        assert host_file.suffix == ".port"  # no Unix socket anywhere
        relay = await Relay(runtime_dir=runtime, link="native").start()
        try:
            (announced,) = (await host.next("relays"))["relays"]
            assert announced["instanceId"] == relay.instance_id
            assert announced["socket"] == str(runtime / "relays" / f"{relay.port}.port")
            # The whole relay protocol through the host, over the proved TCP connection.
            host.send({"type": "open", "channel": 1, "relay": relay.instance_id})
            assert (await host.next("opened"))["channel"] == 1
            nonce = trust.new_nonce()
            hello = {"protocolVersion": protocol.PROTOCOL_VERSION, "nonce": nonce}
            frame = protocol.encode({"method": "hello", "params": hello})
            host.send({"type": "frame", "channel": 1, "data": frame})
            challenge = json.loads((await host.next("frame"))["data"])["params"]
            port = relay.port
            assert trust.verify(
                trust.relay_proof(handed["secret"], nonce, challenge["nonce"], port),
                challenge["proof"],
            )
            prove = {
                "proof": trust.extension_proof(handed["secret"], nonce, challenge["nonce"], port),
                "extensionVersion": "test",
                "instanceId": "browser-1",
            }
            frame = protocol.encode({"method": "prove", "params": prove})
            host.send({"type": "frame", "channel": 1, "data": frame})
            assert '"welcome"' in (await host.next("frame"))["data"]
            link = await relay.wait_for_link(scaled(5.0))
            assert link.hello.extension_version == "test"
        finally:
            await relay.stop()
        assert (await host.next("relays"))["relays"] == []  # its end heard at once
        assert not list((runtime / "relays").iterdir())
    finally:
        await stop_host(host)


@pytest.mark.reliability(33)
async def test_a_process_without_the_secret_cannot_pose_as_a_relay_to_the_host(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attacker reaches the host's loopback port and announces a relay of its own: the host
    lists nothing, sends it nothing, and says so on stderr (which Chrome keeps)."""
    monkeypatch.setenv(ENV_LOCAL_IPC, "tcp")
    host = await start_host(runtime, {ENV_LOCAL_IPC: "tcp"}, stderr=True)
    try:
        await host.next("trust")
        assert (await host.next("relays"))["relays"] == []
        (host_file,) = (runtime / "hosts").iterdir()
        reader, writer = await _raw(int(host_file.read_text()))
        await reader.readexactly(NONCE_BYTES)
        writer.write(secrets.token_bytes(NONCE_BYTES + MAC_BYTES))
        fake = {"type": "relay", "instanceId": "evil", "port": 19222, "socket": "x"}
        writer.write(json.dumps(fake).encode())
        async with asyncio.timeout(scaled(5.0)):
            assert await _hung_up(reader) == b""
        writer.close()
        assert host.process.stderr is not None
        async with asyncio.timeout(scaled(10.0)):
            line = await host.process.stderr.readline()
        assert b"refused a connection" in line and b"wrong proof" in line, line
        assert load_secret().encode() not in line
        # A real relay still gets through, and is the only one listed.
        relay = await Relay(runtime_dir=runtime).start()
        try:
            listed = (await host.next("relays"))["relays"]
            assert [r["instanceId"] for r in listed] == [relay.instance_id]
        finally:
            await relay.stop()
    finally:
        await stop_host(host)


async def test_a_relay_refuses_a_process_without_the_secret(
    runtime: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The attacker reaches a relay's loopback endpoint and asks to watch or to link."""
    monkeypatch.setenv(ENV_LOCAL_IPC, "tcp")
    caplog.set_level(logging.WARNING, logger="bridge.link.local_ipc")
    relay = await Relay(runtime_dir=runtime, link="native").start()
    try:
        endpoint = runtime / "relays" / f"{relay.port}.port"
        reader, writer = await _raw(int(endpoint.read_text()))
        await reader.readexactly(NONCE_BYTES)
        writer.write(secrets.token_bytes(NONCE_BYTES + MAC_BYTES))
        writer.write(json.dumps({"type": "link"}).encode())
        async with asyncio.timeout(scaled(5.0)):
            assert await _hung_up(reader) == b""  # no announcement, no link
        writer.close()
        assert relay.link is None and "wrong proof" in caplog.text
        # Its own secret's holder is admitted (the host's side of the registry).
        stream = await FramedStream.connect(endpoint, secret=relay.secret)
        stream.write({"type": "watch"})
        announcement = await stream.read()
        assert announcement is not None and announcement["instanceId"] == relay.instance_id
        await stream.close()
    finally:
        await relay.stop()
