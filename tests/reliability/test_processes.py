"""Processes and links that die, clash or misbehave (cases 20, 22, 24, 25, 27, 29, 30).

Relays that must die without cleaning up run in child processes (SIGKILL leaves their
sockets to the kernel and their registration file behind); process ends are awaited with
pidfds, one event per process, never by polling. Relays meant for the session's browser
alone (cases 22 and 27) take a port outside 19222-19250 and register in the session's
runtime directory: its native host tells that browser, and no other browser on the machine
(those probe the range) ever sees them.
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import json
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from bridge.app.launcher import LaunchedBrowser, LaunchOptions
from bridge.app.runtime import Runtime
from bridge.cdp.browser import Browser
from bridge.cdp.direct import DirectCdp
from bridge.cdp.endpoint import MAX_IN_FLIGHT
from bridge.cdp.session import CdpSession
from bridge.link.native_install import install, uninstall
from bridge.link.registry import ENV_RUNTIME_DIR
from bridge.link.relay import Relay
from bridge.link.trust_root import ENV_TRUST_DIR
from bridge.waiting import scaled
from bridge.wire import protocol
from bridge.wire.extension import PORT_RANGE
from tests.exits import all_exit
from tests.extension_worker import extension_status, in_worker

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="/proc, pidfds, the host in the profile: Linux"
)

ROOT = Path(__file__).resolve().parents[2]


# -- helpers ---------------------------------------------------------------------------------


def _launched(browser: LaunchedBrowser | None) -> LaunchedBrowser:
    if browser is None:
        pytest.skip("needs the launched test browser (not in --live mode)")
    return browser


def _record(request: pytest.FixtureRequest, name: str, value: object) -> None:
    """A figure for the record (reports); bounds are asserted, figures never."""
    request.node.user_properties.append((name, value))
    print(f"{name} = {value}")


def _free_port_outside_the_range() -> int:
    """A port no extension probes: only a native host's push can lead a browser to it."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if not PORT_RANGE[0] <= port <= PORT_RANGE[1]:
            return port


def _child_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


async def _line(
    stream: asyncio.StreamReader | None, prefix: str, timeout: float, seen: list[str] | None = None
) -> str:
    """The next line that starts with ``prefix`` (lines before it go to ``seen``)."""
    assert stream is not None
    async with asyncio.timeout(timeout):
        while True:
            raw = await stream.readline()
            if not raw:
                raise AssertionError(f"the process ended before printing {prefix!r}: {seen}")
            line = raw.decode().strip()
            if line.startswith(prefix):
                return line
            if seen is not None:
                seen.append(line)


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, process group) of a live process, None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()
    return fields[0], int(fields[1]), int(fields[2])


def _pids() -> Iterator[int]:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            yield int(entry)


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _group(pgid: int) -> set[int]:
    """The live (not zombie) processes of a process group."""
    return {
        pid for pid in _pids() if (s := _stat(pid)) is not None and s[2] == pgid and s[0] != "Z"
    }


def _relay_entry(status: dict[str, Any], port: int) -> dict[str, Any] | None:
    return next((r for r in status["relays"] if r["port"] == port), None)


async def _tabs(browser: Browser) -> dict[int, tuple[str, bool]]:
    """Every tab: its URL and whether it is attached for this relay."""
    return {t.tab_id: (t.url, t.attached_here) for t in await browser.list_tabs()}


# -- case 20: a relay killed with SIGKILL ------------------------------------------------------

# A relay of the session's browser's island (its secret and directory come in the
# environment), in a process of its own.
CHILD_RELAY = """
import asyncio, sys
from bridge.link.relay import Relay

async def main(browser_instance, timeout):
    relay = await Relay().start()
    print("port", relay.port, flush=True)
    await relay.wait_for_link(timeout)
    print("linked", flush=True)
    await asyncio.Event().wait()

asyncio.run(main(sys.argv[1], float(sys.argv[2])))
"""


@pytest.mark.reliability(20)
@pytest.mark.e2e
@pytest.mark.parametrize("where", ["same-port", "another-port"])
async def test_after_a_relay_is_killed_the_next_one_is_connected_within_1s(
    extension_link: Browser,
    relay: Relay,
    launched_browser: LaunchedBrowser | None,
    request: pytest.FixtureRequest,
    where: str,
) -> None:
    browser = _launched(launched_browser)
    session_link = await relay.wait_for_link(scaled(10.0))
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CHILD_RELAY,
        session_link.instance_id,
        str(scaled(15.0)),
        stdout=asyncio.subprocess.PIPE,
        cwd=str(ROOT),
        env=_child_env(**browser.island.browser_env()),
    )
    try:
        port = int((await _line(child.stdout, "port ", scaled(30.0))).split()[1])
        await _line(child.stdout, "linked", scaled(20.0))  # the extension serves it
        child.send_signal(signal.SIGKILL)  # no clean-up: sockets closed by the kernel
        assert await child.wait() == -signal.SIGKILL
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
    # The next relay: a restart on the same port (its stale registration file still there),
    # or a relay elsewhere in the range.
    if where == "same-port":
        nxt = browser.relay(port=port)
    elif port < PORT_RANGE[1]:
        nxt = browser.relay(port_range=(port + 1, PORT_RANGE[1]))
    else:
        nxt = browser.relay(port_range=(PORT_RANGE[0], port - 1))
    loop = asyncio.get_running_loop()
    started = loop.time()
    await nxt.start()
    try:
        link = await nxt.wait_for_link(scaled(1.0))  # ExtensionNotConnected past the bound
        took = loop.time() - started
        assert took < scaled(1.0)
        assert link.instance_id == session_link.instance_id
        assert (where == "same-port") == (nxt.port == port)
        assert await Browser(nxt).list_tabs()  # and it serves
    finally:
        await nxt.stop()
    assert relay.link is session_link and not session_link.is_closed  # never disturbed
    _record(request, f"killed_relay_to_next_connected_ms_{where}", round(took * 1000))


# -- case 22: two bridge servers, two MCP clients ----------------------------------------------


def _text(result: Any) -> str:
    return str(result.content[0].text)


def _ok(result: Any) -> Any:
    assert not result.is_error, _text(result)
    return result


@pytest.mark.reliability(22)
@pytest.mark.e2e
async def test_two_mcp_servers_with_their_own_clients_share_one_browser_without_crosstalk(
    bridge_runtime: Runtime,
    extension_link: Browser,
    relay: Relay,
    direct_cdp: DirectCdp,
    pages: str,
    tmp_path: Path,
) -> None:
    """Two ``python -m bridge.mcp`` processes (stdio, no --launch), each driven by its own MCP
    client, attach to the same browser: the session's, whose native host tells it of both."""
    runtime_dir = bridge_runtime.options.runtime_dir
    if runtime_dir is None:
        pytest.skip("needs the session's own runtime directory (not in --live mode)")
    session_link = await relay.wait_for_link(scaled(10.0))
    ports = [_free_port_outside_the_range(), _free_port_outside_the_range()]
    # The MCP SDK passes only a safe default env. Both servers are the person's everyday
    # bridges of that browser: the island's secret is theirs (its directory is the trust one).
    env = {ENV_RUNTIME_DIR: str(runtime_dir), ENV_TRUST_DIR: str(runtime_dir)}
    if os.environ.get("BRIDGE_TIMEOUT_FACTOR"):
        env["BRIDGE_TIMEOUT_FACTOR"] = os.environ["BRIDGE_TIMEOUT_FACTOR"]

    def server(name: str, port: int, *extra: str) -> StdioServerParameters:
        state = tmp_path / name
        args = ["-m", "bridge.mcp", "--tools", "browser", "--relay-port", str(port), *extra]
        return StdioServerParameters(
            command=sys.executable,
            args=[*args, "--state-dir", str(state), "--verbose"],
            cwd=str(ROOT),
            env=env,
        )

    logs = [tmp_path / "one.log", tmp_path / "two.log"]
    opened: list[int] = []
    try:
        with open(logs[0], "w") as log_one, open(logs[1], "w") as log_two:
            async with (
                Client(stdio_client(server("one", ports[0]), errlog=log_one)) as one,
                # Two acts on every tab (--tabs all): only the extension's ownership stops it.
                Client(
                    stdio_client(server("two", ports[1], "--tabs", "all"), errlog=log_two)
                ) as two,
                asyncio.timeout(scaled(120.0)),
            ):
                # Both at once, each to a tab of its own.
                await asyncio.gather(
                    one.call_tool("browser_navigate", {"url": f"{pages}/?client=one"}),
                    two.call_tool("browser_navigate", {"url": f"{pages}/console?client=two"}),
                )
                listed_one = _ok(await one.call_tool("browser_tabs", {"action": "list"}))
                listed_two = _ok(await two.call_tool("browser_tabs", {"action": "list"}))
                tabs_one = {t["tab"]: t for t in listed_one.structured_content["tabs"]}
                tabs_two = {t["tab"]: t for t in listed_two.structured_content["tabs"]}
                mine_one = listed_one.structured_content["current"]
                mine_two = listed_two.structured_content["current"]
                opened += [mine_one, mine_two]
                assert mine_one != mine_two
                # Each sees its own tab as current and attached to itself; the other's tab
                # is listed (same browser) but neither current nor attached here.
                assert tabs_one[mine_one]["url"].endswith("?client=one")
                assert tabs_one[mine_one]["current"] and tabs_one[mine_one]["attached"]
                assert not tabs_one[mine_two]["current"] and not tabs_one[mine_two]["attached"]
                assert tabs_two[mine_two]["url"].endswith("?client=two")
                assert tabs_two[mine_two]["current"] and tabs_two[mine_two]["attached"]
                assert not tabs_two[mine_one]["current"] and not tabs_two[mine_one]["attached"]
                # Commands without a tab land on each client's own tab.
                title = {"function": "() => document.title"}
                assert _ok(await one.call_tool("browser_evaluate", title)).structured_content[
                    "result"
                ] == ("home")
                assert _ok(await two.call_tool("browser_evaluate", title)).structured_content[
                    "result"
                ] == ("console")
                # Naming the other's tab is refused, and nothing happens there: by one's tab
                # policy (not a tab it opened or the person shared), and for two, which acts
                # on every tab, by the extension (the tab is attached by another relay).
                hijack = {"function": "() => { document.title = 'taken'; return 1; }"}
                refused = await one.call_tool("browser_evaluate", {**hijack, "tab": mine_two})
                assert refused.is_error and "tab_not_shared" in _text(refused), _text(refused)
                refused = await two.call_tool("browser_evaluate", {**hijack, "tab": mine_one})
                assert refused.is_error and "attached_elsewhere" in _text(refused), _text(refused)
                assert _ok(await one.call_tool("browser_evaluate", title)).structured_content[
                    "result"
                ] == ("home")
                assert _ok(await two.call_tool("browser_evaluate", title)).structured_content[
                    "result"
                ] == ("console")
                # Events go to the server whose tab raised them, only. (The console event
                # precedes the evaluation's answer on the link.)
                shout = {"function": "() => { console.log('heard by two only'); return 1; }"}
                _ok(await two.call_tool("browser_evaluate", shout))
                heard_two = _text(_ok(await two.call_tool("browser_get_console_logs", {})))
                heard_one = _text(_ok(await one.call_tool("browser_get_console_logs", {})))
                assert "heard by two only" in heard_two, heard_two
                assert "heard by two only" not in heard_one, heard_one
                # The refused call did not move one's current tab.
                again = _ok(await one.call_tool("browser_tabs", {"action": "list"}))
                assert again.structured_content["current"] == mine_one
                # Both links up, side by side, at the end.
                status = await extension_status(direct_cdp)
                for port in ports:
                    entry = _relay_entry(status, port)
                    assert entry is not None and entry["state"] == "connected", status
        for log in logs:  # each server's link came once and never went (nobody kicked out)
            text = log.read_text()
            assert text.count("extension connected") == 1, text
        assert relay.link is session_link and not session_link.is_closed
    finally:
        for tab_id in opened:  # the servers detached from their tabs when they stopped
            await extension_link.close_tab(tab_id)


# -- case 24: the relay port range exhausted, a port in use ------------------------------------


def _hold_free_ports(held: dict[int, socket.socket], ports: Iterable[int]) -> None:
    """Listen on every port of ``ports`` that is free now (a listening socket, so even a
    relay's SO_REUSEADDR bind fails)."""
    for port in ports:
        if port in held:
            continue
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen()
        except OSError as exc:
            sock.close()
            if exc.errno != errno.EADDRINUSE:
                raise
            continue
        held[port] = sock


def _release(held: dict[int, socket.socket]) -> None:
    for sock in held.values():
        sock.close()
    held.clear()


# The command line, imported and ready before the range is taken: then the range is held for
# the few milliseconds the command needs (other tests on this machine start relays too).
READY_THEN_MAIN = """
import sys
from bridge.cli.commands import main
print("ready", flush=True)
sys.stdin.readline()
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.reliability(24)
async def test_relay_port_range_exhausted_is_a_clear_error_naming_the_range(
    tmp_path: Path,
) -> None:
    everything = range(PORT_RANGE[0], PORT_RANGE[1] + 1)
    held: dict[int, socket.socket] = {}
    # Every port of the range taken: by relays running already, by this test the rest. Other
    # relays on this machine come and go: a port one frees after the scan is taken too, and
    # the relay tried again (a handful of times at most).
    error: OSError | None = None
    try:
        for _ in range(5):
            _hold_free_ports(held, everything)
            try:
                started = await Relay(register=False).start()
            except OSError as exc:
                error = exc
                break
            assert started.port not in held  # never a port somebody listens on
            await started.stop()
    finally:
        _release(held)
    assert error is not None, "a relay started although every port of the range was taken"
    assert error.errno == errno.EADDRINUSE
    assert "19222-19250" in str(error) and "stop another bridge or pass a port" in str(error)
    # The command line says the same, without a traceback, and names the option.
    err = ""
    for _ in range(5):
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-c", READY_THEN_MAIN, "relay"),
            cwd=str(ROOT),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_child_env(**{ENV_RUNTIME_DIR: str(tmp_path / "rt")}),
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        try:
            await _line(proc.stdout, "ready", scaled(60.0))
            try:
                _hold_free_ports(held, everything)
                proc.stdin.write(b"go\n")
                await proc.stdin.drain()
                first = (await asyncio.wait_for(proc.stdout.readline(), scaled(30.0))).decode()
                if first.startswith("relay listening"):  # a port freed meanwhile: again
                    continue
                err = (await asyncio.wait_for(proc.stderr.read(), scaled(30.0))).decode()
                assert await proc.wait() == 1, err
            finally:
                _release(held)
            break
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    else:
        pytest.fail("the relay command kept finding a free port in the range")
    assert "no free relay port in 19222-19250" in err and "--relay-port" in err, err
    assert "Traceback" not in err and "Errno" not in err, err


@pytest.mark.reliability(24)
@pytest.mark.parametrize("command", ["relay", "cdp", "ask"])
async def test_a_relay_port_in_use_is_a_clear_error_on_the_command_line(
    tmp_path: Path, command: str
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = {
            "relay": ["relay"],
            "cdp": ["cdp", "--state-dir", str(tmp_path)],
            "ask": ["ask", "a question", "--state-dir", str(tmp_path)],
        }[command]
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "bridge", *args, "--relay-port", str(port)),
            cwd=str(ROOT),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_child_env(**{ENV_RUNTIME_DIR: str(tmp_path / "rt")}),
        )
        _, raw = await asyncio.wait_for(proc.communicate(), scaled(60.0))
    err = raw.decode()
    assert proc.returncode == 1, err
    assert f"relay port {port} is already in use" in err and "--relay-port N" in err, err
    assert "Traceback" not in err and "Errno" not in err, err


# -- case 25: the MCP client dies ---------------------------------------------------------------

# An MCP client that starts the server as its child over stdio, then waits to be killed.
DYING_CLIENT = """
import asyncio, os, sys
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main(errlog_path, args):
    env = {k: os.environ[k] for k in ("BRIDGE_RUNTIME_DIR", "BRIDGE_TIMEOUT_FACTOR") if k in os.environ}
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    with open(errlog_path, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            await client.list_tools()
            print("ready", flush=True)
            await asyncio.Event().wait()

asyncio.run(main(sys.argv[1], sys.argv[2:]))
"""


@pytest.fixture
def own_runtime_dir() -> Iterator[Path]:
    """A runtime directory nobody else watches (short: Unix socket paths are limited)."""
    path = Path(tempfile.mkdtemp(prefix="bridge-rt-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.reliability(25)
@pytest.mark.e2e
async def test_a_killed_mcp_client_takes_server_browser_and_profile_along_within_5s(
    tmp_path: Path, own_runtime_dir: Path, request: pytest.FixtureRequest
) -> None:
    errlog = tmp_path / "server.log"
    server_args = ["-m", "bridge.mcp", "--launch", "--headless", "--isolated"]
    client = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-c", DYING_CLIENT, str(errlog), *server_args, "--state-dir", str(tmp_path / "state")),
        cwd=str(ROOT),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        env=_child_env(**{ENV_RUNTIME_DIR: str(own_runtime_dir)}),
    )
    server_pid = browser_pid = 0
    try:
        await _line(client.stdout, "ready", scaled(90.0))
        (server_pid,) = [
            pid
            for pid in _pids()
            if (s := _stat(pid)) and s[1] == client.pid and "bridge.mcp" in _cmdline(pid)
        ]
        launched = re.search(r"launched .* \(pid (\d+)\)", errlog.read_text())
        assert launched, errlog.read_text()
        browser_pid = int(launched.group(1))
        profile_arg = next(a for a in _cmdline(browser_pid) if a.startswith("--user-data-dir="))
        profile = Path(profile_arg.partition("=")[2])
        assert profile.parent == Path(tempfile.gettempdir()) and profile.is_dir()
        assert profile.name.startswith("bridge-profile-")
        group = _group(browser_pid)  # the browser and its helpers (a process group of its own)
        assert browser_pid in group
        loop = asyncio.get_running_loop()
        client.send_signal(signal.SIGKILL)  # the client dies: no goodbye, its pipes just close
        await client.wait()
        killed = loop.time()
        await all_exit([server_pid, *group], scaled(5.0))
        took = loop.time() - killed
        assert took < scaled(5.0)
        assert not _group(browser_pid)  # helpers started after the scan are gone too
        assert not profile.exists()  # the temporary profile went with the browser
        _record(request, "client_killed_to_all_gone_ms", round(took * 1000))
    finally:
        if client.returncode is None:
            client.kill()
            await client.wait()
        for pid in (server_pid, browser_pid):  # a failed test leaves nothing running
            if pid and _stat(pid) is not None:
                os.kill(pid, signal.SIGKILL)
        if browser_pid:
            for pid in _group(browser_pid):
                os.kill(pid, signal.SIGKILL)


# -- case 27: extension and relay of different protocol versions --------------------------------

# A relay of another bridge release: its protocol version is one more than the extension's.
# It says on stdout whom it refused and when (after the close handshake is done).
OTHER_VERSION_RELAY = """
import asyncio, sys, time
from bridge.wire import protocol
from bridge.link import relay as relay_module
from bridge.link.relay import Relay

protocol.PROTOCOL_VERSION = protocol.PROTOCOL_VERSION + 1
parse_hello, refuse = protocol.parse_hello, relay_module._refuse
hellos = []

def parse(event):
    hellos.append(str(event.params.get("instanceId")))
    return parse_hello(event)

async def refused(ws, message):
    await refuse(ws, message)
    print("refused", time.monotonic(), hellos[-1] if hellos else "-", message, flush=True)

protocol.parse_hello, relay_module._refuse = parse, refused

async def main(port):
    relay = await Relay(port=port).start()
    print("port", relay.port, flush=True)
    await asyncio.Event().wait()

asyncio.run(main(int(sys.argv[1])))
"""


@pytest.mark.reliability(27)
@pytest.mark.e2e
async def test_the_real_extension_shows_another_protocol_version_refused_and_backs_off(
    extension_link: Browser, relay: Relay, direct_cdp: DirectCdp, request: pytest.FixtureRequest
) -> None:
    session_link = await relay.wait_for_link(scaled(10.0))
    ours = protocol.PROTOCOL_VERSION
    port = _free_port_outside_the_range()
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-c", OTHER_VERSION_RELAY, str(port)),
        stdout=asyncio.subprocess.PIPE,
        cwd=str(ROOT),
        env=_child_env(),
    )
    try:
        await _line(child.stdout, "port ", scaled(30.0))
        attempts: list[float] = []
        for wait in (15.0, 30.0, 45.0):  # the first at once; then 5 s, 10 s (±25 %) apart
            _, at, instance, message = (await _line(child.stdout, "refused", scaled(wait))).split(
                " ", 3
            )
            # A hello names no browser (nothing flows before the proof): "None" is its
            # instanceId. It is the session's browser: only its native host announced this.
            assert instance == "None"
            assert f"relay speaks {ours + 1}" in message and f"extension speaks {ours}" in message
            attempts.append(float(at))
            if len(attempts) == 1:
                # The extension shows that relay as refused, both versions named. Its
                # WebSocket closes in the instant after the relay's close: a few reads, each
                # a round trip to the worker, see it land.
                entry: dict[str, Any] | None = None
                for _ in range(20):
                    entry = _relay_entry(await extension_status(direct_cdp), port)
                    if entry is not None and entry["state"] == "refused":
                        break
                assert entry is not None and entry["state"] == "refused", entry
                assert f"relay speaks {ours + 1}" in entry["message"]
                assert f"extension speaks {ours}" in entry["message"]
        gaps = [b - a for a, b in itertools.pairwise(attempts)]
        # Backing off, not storming: seconds between attempts, each wait longer than the last.
        assert gaps[0] >= 3.0 and gaps[1] >= 6.0 and gaps[1] > gaps[0], gaps
        _record(request, "refused_relay_retry_gaps_s", [round(g, 1) for g in gaps])
    finally:
        child.kill()
        await child.wait()
    assert relay.link is session_link and not session_link.is_closed  # the others never noticed


# -- case 29: DevTools-endpoint clients that misbehave ------------------------------------------


class RawCdp:
    """A bare DevTools client: frames exactly as given, replies by id, null-id errors kept."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.replies: dict[int, dict[str, Any]] = {}
        self.unmatched: list[dict[str, Any]] = []  # errors with a null id
        self._ids = itertools.count(1_000_000)
        self._changed = asyncio.Condition()
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def open(cls, url: str) -> RawCdp:
        return cls(await connect(url, proxy=None, max_size=None))

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                message = json.loads(frame)
                async with self._changed:
                    if message.get("id") is not None:
                        self.replies[message["id"]] = message
                    elif "id" in message:
                        self.unmatched.append(message)
                    self._changed.notify_all()
        except ConnectionClosed:
            pass

    async def send(self, message: dict[str, Any] | str | bytes) -> None:
        await self.ws.send(json.dumps(message) if isinstance(message, dict) else message)

    async def reply(self, request_id: int, timeout: float) -> dict[str, Any]:
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: request_id in self.replies)
            return self.replies.pop(request_id)

    async def replies_for(self, ids: range, timeout: float) -> None:
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: all(i in self.replies for i in ids))

    async def unmatched_count(self, count: int, timeout: float) -> None:
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: len(self.unmatched) >= count)

    async def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        request_id = next(self._ids)
        message: dict[str, Any] = {"id": request_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        await self.send(message)
        reply = await self.reply(request_id, scaled(30.0))
        assert "error" not in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    async def evaluate(self, expression: str, session: str) -> Any:
        params = {"expression": expression, "awaitPromise": True, "returnByValue": True}
        return (await self.call("Runtime.evaluate", params, session))["result"].get("value")

    async def attach(self, url_part: str) -> str:
        """A session of this client's own on the tab whose URL contains ``url_part``."""
        targets = (await self.call("Target.getTargets"))["targetInfos"]
        target = next(t for t in targets if url_part in t["url"])
        attached = await self.call(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
        )
        return str(attached["sessionId"])

    @property
    def gone(self) -> bool:
        return self._reader.done()

    async def close(self) -> None:
        await self.ws.close()
        await self._reader

    async def abort(self) -> None:
        """Gone without a goodbye, as a crashed client: the socket just closes."""
        self.ws.transport.abort()
        await self._reader


@pytest.mark.reliability(29)
@pytest.mark.e2e
@pytest.mark.parametrize("how", ["close", "abort"])
async def test_a_client_gone_mid_command_leaves_the_tab_and_everyone_else_working(
    bridge_cdp_url: str,
    extension_link: Browser,
    relay: Relay,
    new_tab: Any,
    pages: str,
    how: str,
) -> None:
    session_link = await relay.wait_for_link(scaled(10.0))
    tab: CdpSession = await new_tab(f"{pages}/?mid-command")  # the MCP server's own tab
    before = await _tabs(extension_link)
    gone = await RawCdp.open(bridge_cdp_url)
    session = await gone.attach("?mid-command")
    assert await gone.evaluate("document.title", session) == "home"
    never = {"expression": "new Promise(() => {})", "awaitPromise": True}
    await gone.send({"id": 7, "sessionId": session, "method": "Runtime.evaluate", "params": never})
    await (gone.close() if how == "close" else gone.abort())  # at once, the command pending
    other = await RawCdp.open(bridge_cdp_url)
    try:  # another client on the very same tab
        on_same_tab = await other.attach("?mid-command")
        later = "new Promise((r) => setTimeout(() => r(document.title), 10))"
        assert await other.evaluate(later, on_same_tab) == "home"
    finally:
        await other.close()
    assert await tab.evaluate("1 + 1") == 2 and tab.ended is None  # the server's session
    assert await _tabs(extension_link) == before  # nothing closed, attached or detached
    assert relay.link is session_link and not session_link.is_closed


@pytest.mark.reliability(29)
@pytest.mark.e2e
async def test_garbage_gets_errors_and_other_clients_keep_working(
    bridge_cdp_url: str,
    extension_link: Browser,
    relay: Relay,
    new_tab: Any,
    pages: str,
) -> None:
    session_link = await relay.wait_for_link(scaled(10.0))
    tab: CdpSession = await new_tab(f"{pages}/?garbage")
    before = await _tabs(extension_link)
    junk = await RawCdp.open(bridge_cdp_url)
    other = await RawCdp.open(bridge_cdp_url)
    try:
        session = await other.attach("?garbage")

        async def other_still_works() -> None:
            assert await other.evaluate("6 * 7", session) == 42

        no_command: list[str | bytes] = [
            "not json",
            "[1, 2, 3]",
            "null",
            '"a string"',
            '{"method": "Browser.getVersion"}',  # no id
            '{"id": "7", "method": "Browser.getVersion"}',
            '{"id": true, "method": "Browser.getVersion"}',
            '{"id": 1.5, "method": "Browser.getVersion"}',
            '{"id": ' + "9" * 5000 + ', "method": "Browser.getVersion"}',  # past int parsing
            "[" * 100_000,  # nested past the parser's recursion limit
            b"\xff\xfe\x00\x01 binary",
        ]
        for frame in no_command:
            await junk.send(frame)
            await other_still_works()  # between every two pieces of garbage
        await junk.unmatched_count(len(no_command), scaled(15.0))
        assert len(junk.unmatched) == len(no_command)  # one answer each, no more
        assert all(m["error"]["code"] == -32700 for m in junk.unmatched), junk.unmatched
        wrong_shape: dict[int, dict[str, Any]] = {
            101: {"id": 101, "method": "Target.attachToTarget", "params": [1]},
            102: {"id": 102, "method": 42},
            103: {"id": 103, "method": "Runtime.evaluate", "sessionId": ["x"]},
            104: {"id": 104, "method": "Runtime.evaluate", "sessionId": "no-such-session"},
            105: {"id": 105, "method": "Target.attachToTarget", "params": {"targetId": {}}},
            106: {"id": 106, "method": "Target.attachToTarget", "params": {}},
            107: {"id": 107, "method": "No.suchMethod"},
            108: {"id": 108, "method": "Target.createTarget", "params": {"browserContextId": 5}},
        }
        for message in wrong_shape.values():
            await junk.send(message)
        for request_id in wrong_shape:
            answer = await junk.reply(request_id, scaled(15.0))
            assert "error" in answer and isinstance(answer["error"]["message"], str), answer
        huge = 2**64  # not garbage: an id is any integer, answered as given
        await junk.send({"id": huge, "method": "Browser.getVersion"})
        assert "product" in (await junk.reply(huge, scaled(15.0)))["result"]
        assert (await junk.call("Browser.getVersion"))["product"]  # the junk client is served on
        await other_still_works()
    finally:
        await junk.close()
        await other.close()
    assert await tab.evaluate("1 + 1") == 2 and tab.ended is None
    assert await _tabs(extension_link) == before
    assert relay.link is session_link and not session_link.is_closed


FLOOD = 2000


@pytest.mark.reliability(29)
@pytest.mark.e2e
async def test_a_flood_is_slowed_down_not_dropped_and_leaves_the_persons_tabs_alone(
    bridge_runtime: Runtime,
    bridge_cdp_url: str,
    extension_link: Browser,
    relay: Relay,
    direct_cdp: DirectCdp,
    new_tab: Any,
    pages: str,
) -> None:
    endpoint = bridge_runtime.relay.cdp
    assert endpoint is not None
    session_link = await relay.wait_for_link(scaled(10.0))
    persons = await direct_cdp.call("Target.createTarget", {"url": f"{pages}/?person"})
    second = flooder = None
    try:
        await new_tab(f"{pages}/?second-client")
        second = await RawCdp.open(bridge_cdp_url)
        second_session = await second.attach("?second-client")
        before = await _tabs(extension_link)  # the person's tabs, and the second client's
        already = set(endpoint.clients)
        flooder = await RawCdp.open(bridge_cdp_url)
        # The flooder's tab lives in a context of its own, so it goes with the flooder.
        context = (await flooder.call("Target.createBrowserContext"))["browserContextId"]
        created = await flooder.call(
            "Target.createTarget", {"url": f"{pages}/?flood", "browserContextId": context}
        )
        flood_session = (
            await flooder.call(
                "Target.attachToTarget", {"targetId": created["targetId"], "flatten": True}
            )
        )["sessionId"]
        assert await flooder.evaluate("document.title", flood_session) == "home"
        (server_side,) = set(endpoint.clients) - already
        flood_tab = next(
            t for t, (url, _) in (await _tabs(extension_link)).items() if "?flood" in url
        )

        # A gate in the page holds each flood command until the test opens it: how many the
        # endpoint lets through at once is how many wait at the gate. (The test reaches the
        # tab through the server's own session, which no flood slows down.)
        page = extension_link.sessions[flood_tab]
        await page.evaluate(
            "window.gate = []; window.gateOpen = false;"
            " window.full = new Promise((r) => { window.onFull = r; }); 0"
        )

        async def flood(first: int) -> None:
            for i in range(first, first + FLOOD):  # without waiting for any answer
                expression = (
                    f"new Promise((r) => {{ if (gateOpen) return r({i}); gate.push(() => r({i}));"
                    f" if (gate.length === {MAX_IN_FLIGHT}) onFull(); }})"
                )
                params = {"expression": expression, "awaitPromise": True, "returnByValue": True}
                message = {"id": i, "sessionId": flood_session, "method": "Runtime.evaluate"}
                await flooder.send({**message, "params": params})

        flooding = asyncio.ensure_future(flood(1))  # its sends stall once nothing is read
        try:
            await page.evaluate("full", await_promise=True, timeout=scaled(60.0))
            # The bound reached: the rest waits unread (not dropped, not run).
            assert server_side.in_flight == MAX_IN_FLIGHT and not flooder.replies
            for n in range(20):  # meanwhile another client is served as ever
                assert await second.evaluate(f"{n} * 2", second_session) == n * 2
            assert server_side.in_flight == MAX_IN_FLIGHT and not flooder.replies
            await page.evaluate("gateOpen = true; gate.splice(0).forEach((open) => open()); 0")
            await asyncio.wait_for(flooding, scaled(60.0))
        finally:
            flooding.cancel()
        await flooder.replies_for(range(1, FLOOD + 1), scaled(120.0))
        values = [flooder.replies[i]["result"]["result"]["value"] for i in range(1, FLOOD + 1)]
        assert values == list(range(1, FLOOD + 1))  # every command answered, none dropped
        assert server_side.stats.peak_in_flight == MAX_IN_FLIGHT  # never past the bound
        # Another flood, and the flooder dies without reading a single answer.
        gone: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        extension_link.sessions[flood_tab].on_end(lambda e: gone.done() or gone.set_result(e))
        await flood(FLOOD + 1)
        await flooder.abort()
        await asyncio.wait_for(gone, scaled(60.0))  # its context's tab closed with it
        assert server_side not in endpoint.clients
        assert await second.evaluate("'still here'", second_session) == "still here"
        after = await _tabs(extension_link)
        assert flood_tab not in after
        assert after == before  # no tab closed, nothing attached or detached
        assert relay.link is session_link and not session_link.is_closed
    finally:
        if flooder is not None and not flooder.gone:
            await flooder.close()
        if second is not None:
            await second.close()
        await direct_cdp.call("Target.closeTarget", {"targetId": persons["targetId"]})


# -- case 30: the native host killed, removed, reinstalled ---------------------------------------


@pytest_asyncio.fixture(loop_scope="session")
async def browser_with_host(
    own_runtime_dir: Path,
) -> AsyncIterator[tuple[LaunchedBrowser, Path]]:
    """A browser of its own whose native host watches a runtime directory of its own: as the
    person's own Chrome is (not an island), its host hands over the person's secret."""
    browser = LaunchedBrowser(
        LaunchOptions(
            headless=True,
            isolated=True,
            native_host=True,
            debug_pipe=True,
            island=False,
            env={ENV_RUNTIME_DIR: str(own_runtime_dir)},
        )
    )
    await browser.start()
    try:
        yield browser, own_runtime_dir
    finally:
        await browser.stop()


# Resolves when the extension's next attempt to reach its native host ends (with Chrome's
# reason): connectNative is wrapped for that one call, then put back.
NEXT_HOST_ATTEMPT = """new Promise((resolve) => {
  const runtime = chrome.runtime;
  const connect = runtime.connectNative;
  runtime.connectNative = (name) => {
    runtime.connectNative = connect;
    const port = connect.call(runtime, name);
    port.onDisconnect.addListener(() =>
      resolve(String((runtime.lastError && runtime.lastError.message) || 'closed')));
    return port;
  };
})"""


async def _next_host_attempt(cdp: DirectCdp, timeout: float) -> str:
    return str(await in_worker(cdp, NEXT_HOST_ATTEMPT, timeout=timeout))


# The test's clock: the extension tries a missing host again after NATIVE_RETRY_MS (60 s,
# bridge/extension/discovery.js); here that wait is cut to a blink, so the test proves what
# each attempt does without idling two minutes. Only timers of exactly that length change.
FAST_HOST_RETRY = """(() => {
  const real = globalThis.setTimeout;
  globalThis.setTimeout = (fn, ms, ...args) => real(fn, ms === 60000 ? 200 : ms, ...args);
  return true;
})()"""


def _host_pids(runtime_dir: Path) -> set[int]:
    """Native hosts serving this runtime directory: ``hosts/<pid>.sock`` of live hosts."""
    pids = {int(p.stem) for p in (runtime_dir / "hosts").glob("*.sock")}
    return {pid for pid in pids if any("bridge.link.native_host" in a for a in _cmdline(pid))}


@pytest.mark.reliability(30)
@pytest.mark.e2e
async def test_a_killed_and_removed_host_falls_back_to_probing_and_a_reinstall_restores_push(
    browser_with_host: tuple[LaunchedBrowser, Path], request: pytest.FixtureRequest
) -> None:
    browser, runtime_dir = browser_with_host
    assert browser.profile is not None
    relays: list[Relay] = []

    async def relay(**kwargs: Any) -> Relay:
        started = await Relay(runtime_dir=runtime_dir, **kwargs).start()
        relays.append(started)
        return started

    try:
        async with browser.direct_cdp() as cdp:
            pushed = await relay()
            pushed_link = await pushed.wait_for_link(scaled(30.0))
            assert pushed.stats.info_requests == 0  # told by the host, no probe
            assert (await extension_status(cdp))["mode"] == "native"
            (host,) = _host_pids(runtime_dir)
            environ = Path(f"/proc/{host}/environ").read_bytes().split(b"\0")
            assert f"{ENV_RUNTIME_DIR}={runtime_dir}".encode() in environ
            assert await in_worker(cdp, FAST_HOST_RETRY)
            # Removed, then killed: Chrome cannot start it again.
            uninstall("chromium", user_data_dir=browser.profile)
            os.kill(host, signal.SIGKILL)
            await all_exit([host], scaled(5.0))
            # Probing takes over: a relay started now is found by asking the ports.
            probed = await relay()
            await probed.wait_for_link(scaled(15.0))
            assert probed.stats.info_requests >= 1
            status = await extension_status(cdp)
            assert status["mode"] == "probe" and status["nativeDownReason"], status
            assert not pushed_link.is_closed  # the relay it served meanwhile kept its link
            # A relay no probe can find (outside the range) waits for push to come back.
            unprobed = await relay(port=_free_port_outside_the_range())
            # The extension tries the host again (every 60 s; a blink on the test's clock).
            # While it is removed, that attempt fails and probing goes on: the attempt's
            # end, seen in the worker.
            reason = await _next_host_attempt(cdp, scaled(90.0))
            assert "not found" in reason, reason
            status = await extension_status(cdp)
            assert status["mode"] == "probe", status
            assert unprobed.link is None and not pushed_link.is_closed
            # Registered again: the next attempt starts the host, push is back (no restart).
            install("chromium", user_data_dir=browser.profile)
            loop = asyncio.get_running_loop()
            reinstalled = loop.time()
            await unprobed.wait_for_link(scaled(90.0))
            _record(request, "reinstall_to_push_s", round(loop.time() - reinstalled, 1))
            assert unprobed.stats.info_requests == 0
            status = await extension_status(cdp)
            assert status["mode"] == "native", status
            assert _host_pids(runtime_dir) - {host}  # a new host, started by Chrome
            assert not pushed_link.is_closed
    finally:
        for started in relays:
            await started.stop()
