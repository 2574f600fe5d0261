"""The native host as Chrome runs it: a subprocess speaking framed JSON on stdin/stdout.

Relays are real ``Relay`` objects registering in a runtime directory of the test's own; the
"extension" is this test, writing and reading frames exactly as Chrome would.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import struct
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bridge.link.native_host import ENV_PIPES, pipe_mode
from bridge.link.registry import ENV_RUNTIME_DIR, runtime_dir
from bridge.link.relay import Relay
from bridge.link.trust_root import Island, load_secret
from bridge.waiting import scaled
from bridge.wire import protocol, trust
from bridge.wire.native_framing import FrameDecoder, FrameError, encode

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets")


class Host:
    """``python -m bridge.link.native_host`` with Chrome's side of the pipe."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.decoder = FrameDecoder()
        self.ready: list[dict[str, Any]] = []
        self.raw = bytearray()  # everything the host wrote to stdout

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(message if isinstance(message, bytes) else encode(message))

    async def next(self, kind: str | None = None) -> dict[str, Any]:
        """The next message (of ``kind``), waiting for it; earlier others are dropped."""
        async with asyncio.timeout(scaled(10.0)):
            while True:
                while self.ready:
                    message = self.ready.pop(0)
                    if kind is None or message.get("type") == kind:
                        return message
                assert self.process.stdout is not None
                data = await self.process.stdout.read(65536)
                assert data, "the host closed stdout"
                self.raw += data
                for item in self.decoder.feed(data):
                    assert not isinstance(item, FrameError), item  # only frames on stdout
                    self.ready.append(item)


@pytest.fixture
def runtime() -> Iterator[Path]:
    # Directly under /tmp: Unix socket paths are limited to about 100 bytes.
    path = Path(tempfile.mkdtemp(prefix="bridge-rt-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_runtime_dir_too_long_for_sockets_is_refused_with_advice(tmp_path: Path) -> None:
    with pytest.raises(OSError, match=r"too long for Unix sockets.*BRIDGE_RUNTIME_DIR"):
        runtime_dir(tmp_path / ("x" * 120))
    made = runtime_dir(tmp_path / "ok")
    assert (made / "relays").is_dir() and (made / "hosts").is_dir()
    assert made.stat().st_mode & 0o777 == 0o700


@pytest_asyncio.fixture(loop_scope="session", params=["loop", "threads"])
async def host(runtime: Path, request: pytest.FixtureRequest) -> AsyncIterator[Host]:
    """The host reading Chrome's pipes the POSIX way (the event loop's pipe transports) and
    the Windows way (a reader and a writer thread: the proactor loop cannot read them)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge.link.native_host",
        "chrome-extension://iomhiibonjdeegefpemgdjbgoabaphda/",  # as Chrome passes it
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, ENV_RUNTIME_DIR: str(runtime), ENV_PIPES: request.param},
    )
    host = Host(process)
    yield host
    if process.returncode is None:
        process.kill()
        await process.wait()


def _relay(runtime: Path, **kwargs: Any) -> Relay:
    return Relay(runtime_dir=runtime, **kwargs)


def _msg(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"method": method, "params": params}


async def start_host(
    runtime: Path, env: Mapping[str, str] | None = None, *, stderr: bool = False
) -> Host:
    """The host as Chrome starts it (no arguments), in ``runtime``, with ``env`` added;
    its stderr captured when asked (what it logs), else shared with the test's."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge.link.native_host",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE if stderr else None,
        env={**os.environ, ENV_RUNTIME_DIR: str(runtime), **(env or {})},
    )
    return Host(process)


async def stop_host(host: Host) -> None:
    if host.process.returncode is None:
        host.process.kill()
        await host.process.wait()


async def test_the_host_hands_over_the_persons_secret_before_anything_else(
    host: Host, runtime: Path
) -> None:
    first = await host.next()
    assert first == {"type": "trust", "secret": load_secret(), "island": False, "host": 2}
    assert (await host.next())["type"] == "relays"


async def test_an_island_host_hands_over_the_island_secret_and_never_makes_one(
    runtime: Path,
) -> None:
    island = Island.create(runtime)
    host = await start_host(runtime, island.browser_env())
    try:
        assert await host.next() == {
            "type": "trust",
            "secret": island.secret,
            "island": True,
            "host": 2,
        }
    finally:
        await stop_host(host)
    # Its launcher gone (secret removed), a host of that browser fails closed.
    (runtime / "secret").unlink()
    host = await start_host(runtime, island.browser_env())
    try:
        fatal = await host.next()
        assert fatal["type"] == "fatal" and "has stopped" in fatal["message"], fatal
        assert not (runtime / "secret").exists()
    finally:
        await stop_host(host)


@pytest.mark.reliability(33)
async def test_a_squatted_runtime_directory_makes_the_host_fail_closed_and_say_why(
    tmp_path: Path,
) -> None:
    # Another user made the directory first: played by chown to nobody (root in CI), or by
    # a symlink, which a person cannot tell from their own directory at a glance.
    squatted = Path(tempfile.mkdtemp(prefix="bridge-sq-"))
    try:
        target = tmp_path / "elsewhere"
        target.mkdir()
        link = squatted / "rt"
        link.symlink_to(target)
        host = await start_host(link)
        try:
            fatal = await host.next()
            assert fatal["type"] == "fatal" and "not a plain directory" in fatal["message"]
            assert "secret" not in fatal  # nothing handed over
            assert not list(target.iterdir())  # nothing made where the link leads
        finally:
            await stop_host(host)
        if os.geteuid() == 0:
            owned = squatted / "owned"
            owned.mkdir(mode=0o700)
            os.chown(owned, 65534, 65534)  # nobody
            host = await start_host(owned)
            try:
                fatal = await host.next()
                assert fatal["type"] == "fatal" and "belongs to another user" in fatal["message"]
            finally:
                await stop_host(host)
    finally:
        shutil.rmtree(squatted, ignore_errors=True)


async def test_relays_are_announced_as_they_start_and_stop(host: Host, runtime: Path) -> None:
    assert (await host.next("relays"))["relays"] == []
    relay = await _relay(runtime).start()
    try:
        (announced,) = (await host.next("relays"))["relays"]
        assert announced["port"] == relay.port and announced["instanceId"] == relay.instance_id
        assert announced["link"] == "websocket"
    finally:
        await relay.stop()
    assert (await host.next("relays"))["relays"] == []


async def test_a_host_started_later_finds_running_relays(runtime: Path) -> None:
    relay = await _relay(runtime).start()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge.link.native_host",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, ENV_RUNTIME_DIR: str(runtime)},
    )
    try:
        first = (await Host(process).next("relays"))["relays"]
        assert [r["instanceId"] for r in first] == [relay.instance_id]  # in its first list
    finally:
        process.kill()
        await process.wait()
        await relay.stop()


async def test_a_crashed_relay_is_dropped_at_once_and_its_stale_socket_ignored(
    host: Host, runtime: Path
) -> None:
    await host.next("relays")
    code = (
        "import asyncio, sys\n"
        "from bridge.link.relay import Relay\n"
        "async def main():\n"
        f"    r = await Relay(runtime_dir=__import__('pathlib').Path({str(runtime)!r})).start()\n"
        "    print(r.port, flush=True)\n"
        "    await asyncio.Event().wait()\n"
        "asyncio.run(main())\n"
    )
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE
    )
    assert child.stdout is not None
    port = int((await child.stdout.readline()).decode())
    assert [r["port"] for r in (await host.next("relays"))["relays"]] == [port]
    child.kill()  # no clean-up: the kernel closes its sockets, the file stays
    await child.wait()
    assert (await host.next("relays"))["relays"] == []
    assert (runtime / "relays" / f"{port}.sock").exists()  # stale, left by the crash
    # A second host treats that stale file as nothing (and removes it).
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge.link.native_host",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, ENV_RUNTIME_DIR: str(runtime)},
    )
    second = Host(process)
    try:
        assert (await second.next("relays"))["relays"] == []
        assert not (runtime / "relays" / f"{port}.sock").exists()
    finally:
        process.kill()
        await process.wait()


@pytest.mark.reliability(5)
async def test_bad_messages_get_errors_and_the_stream_stays_in_step(host: Host) -> None:
    await host.next("relays")
    host.send(struct.pack("<I", 0))  # 0-length
    assert "empty" in (await host.next("error"))["message"]
    host.send(struct.pack("<I", 9) + b"not json!")
    assert "JSON" in (await host.next("error"))["message"]
    host.send({"type": "teleport"})
    assert "unknown message type" in (await host.next("error"))["message"]
    host.send({"type": "frame", "channel": "x", "data": ""})
    assert "integer 'channel'" in (await host.next("error"))["message"]
    over = 64 * 1024 * 1024 + 1
    host.send(struct.pack("<I", over) + b"\0" * over)  # over Chrome's own limit: skipped
    assert "limit" in (await host.next("error"))["message"]
    host.send({"type": "open", "channel": 1, "relay": "no-such-relay"})
    closed = await host.next("close")
    assert closed["channel"] == 1 and "no relay" in closed["reason"]


async def test_the_whole_link_through_the_host(host: Host, runtime: Path) -> None:
    handed = await host.next("trust")  # first of all: the secret the relays prove
    await host.next("relays")
    relay = await _relay(runtime, link="native").start()
    try:
        (announced,) = (await host.next("relays"))["relays"]
        assert announced["link"] == "native"
        host.send({"type": "open", "channel": 7, "relay": relay.instance_id})
        assert (await host.next("opened"))["channel"] == 7
        nonce = trust.new_nonce()
        hello = {"protocolVersion": protocol.PROTOCOL_VERSION, "nonce": nonce}
        host.send({"type": "frame", "channel": 7, "data": protocol.encode(_msg("hello", hello))})
        challenge = json.loads((await host.next("frame"))["data"])["params"]
        port = announced["port"]
        proof = trust.relay_proof(handed["secret"], nonce, challenge["nonce"], port)
        assert trust.verify(proof, challenge["proof"])  # the relay proved the handed secret
        prove = {
            "proof": trust.extension_proof(handed["secret"], nonce, challenge["nonce"], port),
            "extensionVersion": "test",
            "instanceId": "browser-1",
        }
        host.send({"type": "frame", "channel": 7, "data": protocol.encode(_msg("prove", prove))})
        welcome = await host.next("frame")
        assert '"welcome"' in welcome["data"]
        assert '"serving":true' in (await host.next("frame"))["data"]
        link = await relay.wait_for_link(scaled(5.0))
        assert link.hello.extension_version == "test"
        # A relay frame over Chrome's 1 MB message limit arrives in parts, whole.
        big = "x" * 2_500_000
        params = {"tabId": 1, "method": "Runtime.evaluate", "params": {"expression": big}}
        request = asyncio.ensure_future(link.request("cdpCommand", params, timeout=scaled(10)))
        parts: list[str] = []
        while (message := await host.next())["type"] == "part":
            parts.append(message["data"])
        assert message["type"] == "frame" and len(parts) >= 2
        command = json.loads("".join(parts) + message["data"])
        assert command["method"] == "cdpCommand" and command["params"] == params
        # ... and the extension's reply, also in parts, reaches the waiting request.
        reply = json.dumps({"id": command["id"], "result": {"n": len(big)}})
        host.send({"type": "part", "channel": 7, "data": reply[:10]})
        host.send({"type": "frame", "channel": 7, "data": reply[10:]})
        assert await request == {"n": len(big)}
        host.send({"type": "close", "channel": 7})
        async with asyncio.timeout(scaled(5.0)):
            await link.closed
    finally:
        await relay.stop()


async def test_the_host_exits_when_chrome_closes_the_port(host: Host, runtime: Path) -> None:
    await host.next("relays")
    sockets = list((runtime / "hosts").glob("*.sock"))
    assert len(sockets) == 1
    assert host.process.stdin is not None
    host.process.stdin.close()
    async with asyncio.timeout(scaled(10.0)):
        assert await host.process.wait() == 0
    assert not sockets[0].exists()
    assert FrameDecoder().feed(bytes(host.raw)) != []  # what it wrote was frames only


def test_the_pipe_mode_is_the_system_s_unless_set_and_a_bad_value_names_the_good_ones() -> None:
    assert pipe_mode({}, "linux") == "loop" and pipe_mode({}, "darwin") == "loop"
    assert pipe_mode({}, "win32") == "threads"
    assert pipe_mode({ENV_PIPES: "Threads"}, "linux") == "threads"
    with pytest.raises(ValueError, match="use one of loop, threads"):
        pipe_mode({ENV_PIPES: "overlapped"}, "win32")


async def test_an_unknown_pipe_mode_makes_the_host_fail_closed_and_say_why(runtime: Path) -> None:
    host = await start_host(runtime, {ENV_PIPES: "overlapped"})
    try:
        fatal = await host.next()
        assert fatal["type"] == "fatal" and ENV_PIPES in fatal["message"]
        async with asyncio.timeout(scaled(10.0)):
            assert await host.process.wait() == 1
    finally:
        await stop_host(host)
