"""The security cases (1-7): what a web page, another extension, another user or a hostile
peer can reach of bridge, and what it cannot.

Servers under test are the real ones: ``python -m bridge.mcp --http`` as a subprocess (with a
relay port outside the extension's scan range and a runtime directory of its own, so no
browser's extension ever links to it), lone relays on free ports, and the session browser
for what a page in it can do.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import json
import os
import re
import shutil
import signal
import socket
import ssl
import stat
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
import pytest_asyncio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from bridge.app.facade import Bridge
from bridge.app.runtime import Runtime
from bridge.cdp.browser import Browser
from bridge.cdp.endpoint import CdpEndpoint
from bridge.cdp.session import CdpSession
from bridge.errors import CommandFailed
from bridge.fakes.certs import make_certificate
from bridge.link.registry import ENV_RUNTIME_DIR
from bridge.link.relay import Relay
from bridge.link.tokens import load_or_create_token
from bridge.link.transport import MockConnector
from bridge.mcp.auth import StaticTokenVerifier, auth_settings
from bridge.mcp.server import build_server
from bridge.tools.browsing import ToolSettings
from bridge.waiting import scaled
from bridge.wire.extension import DEFAULT_ORIGIN, EXTENSION_ID, extension_dir
from tests.commands import installed_command, started_command
from tests.standin import StandIn

ROOT = Path(__file__).resolve().parents[2]
FOREIGN_ORIGIN = "https://evil.example"
METADATA = "/.well-known/oauth-protected-resource/mcp"  # the MCP SDK's OAuth metadata route
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
# The MCP server with every logger at DEBUG (its own --verbose stops at INFO).
DEBUG_LOGGING = (
    "import logging, sys; "
    "logging.basicConfig(level=logging.DEBUG, format='LOG %(name)s %(levelname)s %(message)s'); "
    "from bridge.mcp.__main__ import main; sys.exit(main())"
)
# ...and websockets' request lines and headers too (bridge sets that logger to WARNING: here
# its level is pinned at DEBUG, as a person's or an embedding program's logging might).
WEBSOCKETS_DEBUG = (
    "import logging; ws = logging.getLogger('websockets'); ws.setLevel(logging.DEBUG); "
    "ws.setLevel = lambda level: None; "
)


# -- helpers ---------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cors_headers(headers: httpx2.Headers | dict[str, str]) -> list[str]:
    return [name for name in headers if name.lower().startswith("access-control-")]


async def _request(
    method: str, url: str, headers: dict[str, str] | None = None, body: Any = None
) -> httpx2.Response:
    async with httpx2.AsyncClient(trust_env=False, timeout=scaled(30.0)) as http:
        return await http.request(method, url, headers=headers, json=body)


@dataclass
class McpHttp:
    """A ``python -m bridge.mcp --http`` subprocess and what it wrote to stderr so far."""

    proc: asyncio.subprocess.Process
    port: int
    relay_port: int
    state: Path
    stderr: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def token(self) -> str:
        return (self.state / "mcp-token").read_text().strip()

    @property
    def cdp_token(self) -> str:
        return (self.state / "cdp-token").read_text().strip()


@contextlib.asynccontextmanager
async def mcp_http(
    state: Path, *extra: str, debug: bool = False, websockets_debug: bool = False
) -> AsyncIterator[McpHttp]:
    """The MCP HTTP server, ready (its socket listens) until the block ends; stderr is read
    all along (a DEBUG log must not fill the pipe) and complete once the block is left."""
    port, relay_port = _free_port(), _free_port()
    runtime_dir = tempfile.mkdtemp(prefix="bridge-rt-")
    entry = ["-m", "bridge.mcp"]
    if debug:
        entry = ["-c", (WEBSOCKETS_DEBUG if websockets_debug else "") + DEBUG_LOGGING]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *entry,
        *("--http", "--port", str(port), "--relay-port", str(relay_port)),
        *("--state-dir", str(state), *extra),
        cwd=str(ROOT),
        env={**os.environ, ENV_RUNTIME_DIR: runtime_dir},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    server = McpHttp(proc, port, relay_port, state)
    ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def read_stderr() -> None:
        assert proc.stderr is not None
        while raw := await proc.stderr.readline():
            server.stderr.append(raw.decode())
            if "MCP over HTTP at" in server.stderr[-1] and not ready.done():
                ready.set_result(None)
        if not ready.done():
            ready.set_exception(AssertionError("server exited:\n" + "".join(server.stderr)))

    reader = asyncio.ensure_future(read_stderr())
    try:
        await asyncio.wait_for(asyncio.shield(ready), scaled(60.0))
        yield server
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), scaled(15.0))
        await asyncio.wait_for(reader, scaled(15.0))
        shutil.rmtree(runtime_dir, ignore_errors=True)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def mcp_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpHttp]:
    """One MCP HTTP server with its defaults (127.0.0.1), no browser: nothing to launch."""
    async with mcp_http(tmp_path_factory.mktemp("mcp-security")) as server:
        yield server


@pytest_asyncio.fixture
async def cdp_relay() -> AsyncIterator[Relay]:
    """A relay serving the DevTools endpoint (no extension): outside the extension's range."""
    async with Relay(port=_free_port(), register=False) as relay:
        relay.cdp = CdpEndpoint(Browser(relay, connect_timeout=scaled(2.0)), "the-right-token")
        yield relay


def _listening_addresses(port: int) -> set[str]:
    """The IPv4 addresses a socket listens on at ``port``, from /proc/net/tcp (Linux)."""
    path = Path("/proc/net/tcp")
    if not path.exists():
        pytest.skip("needs /proc/net/tcp to read listening sockets")
    found: set[str] = set()
    for line in path.read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
            found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


def _non_loopback_ipv4() -> str | None:
    """An IPv4 address of this machine that is not loopback, or None."""
    fib = Path("/proc/net/fib_trie")
    if fib.exists():
        lines = fib.read_text().splitlines()
        for above, line in itertools.pairwise(lines):
            if line.strip() == "/32 host LOCAL" and "|--" in above:
                address = above.split("|--")[1].strip()
                if not address.startswith("127."):
                    return address
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # picks the route's source address; sends nothing
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") else address


# -- case 1: foreign Origin -> 403, foreign Host -> 421, never a CORS header -----------------

MCP_REFUSALS = [
    # (method, path, token: "right"/"wrong"/None, headers, status)
    pytest.param("POST", "/mcp", "right", {}, 200, id="token-200"),
    pytest.param("POST", "/mcp", None, {}, 401, id="no-token-401"),
    pytest.param("POST", "/mcp", "wrong", {}, 401, id="wrong-token-401"),
    pytest.param("POST", "/mcp", "right", {"Origin": FOREIGN_ORIGIN}, 403, id="origin-token-403"),
    pytest.param("POST", "/mcp", None, {"Origin": FOREIGN_ORIGIN}, 403, id="origin-no-token-403"),
    pytest.param("POST", "/mcp", None, {"Origin": "null"}, 403, id="null-origin-403"),
    pytest.param(
        "POST", "/mcp", "right", {"Sec-Fetch-Site": "cross-site"}, 403, id="page-no-cors-403"
    ),
    pytest.param(
        "OPTIONS",
        "/mcp",
        None,
        {
            "Origin": FOREIGN_ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
        403,
        id="preflight-403",
    ),
    pytest.param("GET", METADATA, None, {"Origin": FOREIGN_ORIGIN}, 403, id="metadata-origin-403"),
    pytest.param(
        "OPTIONS",
        METADATA,
        None,
        {"Origin": FOREIGN_ORIGIN, "Access-Control-Request-Method": "GET"},
        403,
        id="metadata-preflight-403",
    ),
    pytest.param("GET", METADATA, None, {}, 200, id="metadata-no-origin-200"),
    pytest.param("POST", "/mcp", None, {"Host": "evil.example:{port}"}, 421, id="host-421"),
    pytest.param(
        "POST", "/mcp", "right", {"Host": "evil.example:{port}"}, 421, id="host-token-421"
    ),
    pytest.param("GET", METADATA, None, {"Host": "evil.example:{port}"}, 421, id="metadata-421"),
]


@pytest.mark.reliability(1)
@pytest.mark.parametrize(("method", "path", "token", "headers", "status"), MCP_REFUSALS)
async def test_mcp_http_refuses_pages_and_foreign_hosts_without_any_cors_header(
    mcp_server: McpHttp,
    method: str,
    path: str,
    token: str | None,
    headers: dict[str, str],
    status: int,
) -> None:
    sent = {k: v.format(port=mcp_server.port) for k, v in headers.items()}
    if token is not None:
        sent["Authorization"] = f"Bearer {mcp_server.token if token == 'right' else 'wrong'}"
    body = INITIALIZE if method == "POST" else None
    response = await _request(
        method, f"http://127.0.0.1:{mcp_server.port}{path}", {**JSON_HEADERS, **sent}, body
    )
    assert response.status_code == status, response.text
    assert _cors_headers(response.headers) == [], response.headers
    assert mcp_server.token not in response.text


@pytest.mark.reliability(1)
@pytest.mark.parametrize(
    ("path", "how"),
    [("/json/version", "header"), ("/json/version/", "header"), ("/json/version", "query")],
)
async def test_the_devtools_endpoint_answers_its_client_without_any_cors_header(
    cdp_relay: Relay, path: str, how: str
) -> None:
    assert cdp_relay.cdp is not None
    token = cdp_relay.cdp.token
    url = f"http://127.0.0.1:{cdp_relay.port}{path}"
    if how == "query":  # the header only: ?token= is for the /cdp socket alone
        response = await _request("GET", f"{url}?token={token}")
        assert response.status_code == 401
        assert _cors_headers(response.headers) == [], response.headers
        return
    response = await _request("GET", url, {"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    assert response.json()["webSocketDebuggerUrl"] == f"ws://127.0.0.1:{cdp_relay.port}/cdp"
    assert _cors_headers(response.headers) == [], response.headers
    assert token not in response.text


@pytest.mark.reliability(1)
@pytest.mark.parametrize("path", ["/extension", "/cdp?token=the-right-token"])
async def test_websocket_upgrades_under_a_foreign_host_get_421(cdp_relay: Relay, path: str) -> None:
    port = cdp_relay.port
    origin = DEFAULT_ORIGIN if path == "/extension" else None
    with pytest.raises(InvalidStatus) as refused:
        async with connect(
            f"ws://evil.example:{port}{path}",
            host="127.0.0.1",  # connect here; the request still says Host: evil.example:<port>
            port=port,
            origin=origin,  # type: ignore[arg-type]
            proxy=None,
        ):
            pass
    assert refused.value.response.status_code == 421
    # The same upgrade under the relay's own name goes through: only the Host was wrong.
    async with connect(f"ws://127.0.0.1:{port}{path}", origin=origin, proxy=None) as ws:  # type: ignore[arg-type]
        assert ws.response is not None and ws.response.status_code == 101
    assert cdp_relay.link is None


# -- case 2: /extension only for the pinned extension's origin --------------------------------


@pytest.mark.reliability(2)
@pytest.mark.parametrize(
    "origin",
    [
        "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "null",
        f"chrome-extension://{EXTENSION_ID.upper()}",
        f"{DEFAULT_ORIGIN}/",
        f"http://{EXTENSION_ID}",
    ],
    ids=["other-extension", "null", "upper-case-id", "trailing-slash", "http-scheme"],
)
async def test_the_extension_socket_refuses_every_origin_but_the_pinned_one(origin: str) -> None:
    async with Relay(port=_free_port(), register=False) as relay:
        with pytest.raises(InvalidStatus) as refused:
            async with connect(relay.url, origin=origin, proxy=None):  # type: ignore[arg-type]
                pass
        assert refused.value.response.status_code == 403
        assert relay.link is None
        async with StandIn(relay):  # the pinned origin still links
            assert (await relay.wait_for_link(scaled(5.0))).instance_id == "standin"


# -- case 3: tokens: constant-time, private files, shown once, never logged -------------------


class _CompareSpy:
    """Stands in for hmac.compare_digest: records every comparison; ``verdict`` None gives
    the real answer, True or False overrides it (to show the answer decides)."""

    def __init__(self) -> None:
        self.original = hmac.compare_digest
        self.calls: list[tuple[bytes | str, bytes | str]] = []
        self.verdict: bool | None = None

    def __call__(self, a: bytes | str, b: bytes | str) -> bool:
        self.calls.append((a, b))
        if self.verdict is not None:
            return self.verdict
        return self.original(a, b)  # type: ignore[type-var]


@contextlib.asynccontextmanager
async def _mcp_in_process(token: str) -> AsyncIterator[str]:
    """The MCP HTTP app exactly as ``python -m bridge.mcp --http`` serves it, in this process."""
    import uvicorn

    from bridge.mcp.__main__ import _quiet_server_class, http_app

    def no_bridge() -> Bridge:
        raise AssertionError("no tool is called here")

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    port = int(sock.getsockname()[1])
    server = build_server(
        no_bridge,
        groups=("browser",),
        token_verifier=StaticTokenVerifier(token),
        auth=auth_settings("127.0.0.1", port),
    )
    config = uvicorn.Config(
        http_app(server, "127.0.0.1", port), log_config=None, log_level="warning"
    )
    http = _quiet_server_class()(config)
    serving = asyncio.ensure_future(http.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        http.should_exit = True
        await asyncio.wait_for(serving, scaled(15.0))
        sock.close()


@pytest.mark.reliability(3)
async def test_mcp_http_tokens_are_compared_by_compare_digest_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    token = "the-right-token"
    spy = _CompareSpy()
    async with _mcp_in_process(token) as url:
        monkeypatch.setattr(hmac, "compare_digest", spy)

        async def status(given: str) -> int:
            headers = {**JSON_HEADERS, "Authorization": f"Bearer {given}"}
            return (await _request("POST", url, headers, INITIALIZE)).status_code

        assert await status("wrong-token") == 401
        assert (b"wrong-token", token.encode()) in spy.calls
        assert await status(token) == 200
        assert (token.encode(), token.encode()) in spy.calls
        spy.verdict = False  # the verdict is compare_digest's, not an == elsewhere
        assert await status(token) == 401
        spy.verdict = True
        assert await status("wrong-token") == 200


@pytest.mark.reliability(3)
async def test_devtools_tokens_are_compared_by_compare_digest_alone(
    cdp_relay: Relay, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cdp_relay.cdp is not None
    token = cdp_relay.cdp.token
    base = f"http://127.0.0.1:{cdp_relay.port}"
    spy = _CompareSpy()
    monkeypatch.setattr(hmac, "compare_digest", spy)

    async def status(path: str, given: str | None = None) -> int:
        headers = {"Authorization": f"Bearer {given}"} if given is not None else {}
        return (await _request("GET", base + path, headers)).status_code

    assert await status("/json/version", "wrong-token") == 401
    assert (b"wrong-token", token.encode()) in spy.calls
    assert await status("/json/list?token=wrong-query") == 401
    assert not any(b"wrong-query" in call for call in spy.calls)  # read on /cdp alone
    with pytest.raises(InvalidStatus) as refused:
        async with connect(f"ws://127.0.0.1:{cdp_relay.port}/cdp?token=wrong-ws", proxy=None):
            pass
    assert refused.value.response.status_code == 401
    assert (b"wrong-ws", token.encode()) in spy.calls
    assert await status("/json/version", token) == 200
    assert (token.encode(), token.encode()) in spy.calls
    spy.verdict = False
    assert await status("/json/version", token) == 401
    spy.verdict = True
    assert await status("/json/version", "wrong-token") == 200


@pytest.mark.reliability(3)
def test_a_loosened_token_file_is_replaced_never_used(tmp_path: Path) -> None:
    """Someone could have read it while it was loose: its value is dropped, not tightened."""
    path = tmp_path / "state" / "cdp-token"
    token, created = load_or_create_token(path)
    assert created and stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o644)
    again, made = load_or_create_token(path)
    assert made and again != token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_token(path) == (again, False)


@pytest.mark.reliability(38)
@pytest.mark.reliability(3)
async def test_tokens_are_never_shown_nor_logged_across_starts(tmp_path: Path) -> None:
    async with mcp_http(tmp_path) as first:
        pass
    mcp_token, cdp_token = first.token, first.cdp_token
    first_err = "".join(first.stderr)
    hint = f"`bridge token cdp --state-dir {tmp_path}` prints it"
    endpoint = f"ws://127.0.0.1:{first.relay_port}/cdp (token in {tmp_path / 'cdp-token'}; {hint})"
    assert f"bridge: CDP endpoint: {endpoint}\n" in first_err
    assert f"bridge: made a new HTTP bearer token in {tmp_path / 'mcp-token'}" in first_err
    # Again, every logger at DEBUG, websockets' request lines and headers too, and both tokens
    # used on every path that takes them, the /cdp socket's query included.
    async with mcp_http(tmp_path, "--verbose", debug=True, websockets_debug=True) as second:
        auth = {"Authorization": f"Bearer {mcp_token}"}
        assert (await _request("POST", second.url, {**JSON_HEADERS, **auth}, INITIALIZE)).is_success
        devtools = f"http://127.0.0.1:{second.relay_port}"
        bearer = {"Authorization": f"Bearer {cdp_token}"}
        assert (await _request("GET", f"{devtools}/json/version", bearer)).is_success
        async with connect(
            f"ws://127.0.0.1:{second.relay_port}/cdp?token={cdp_token}", proxy=None
        ) as ws:
            await ws.send(json.dumps({"id": 1, "method": "Browser.getVersion"}))
            assert json.loads(await ws.recv())["id"] == 1
    second_err = "".join(second.stderr)
    assert " DEBUG " in second_err  # the DEBUG logging was on
    assert "LOG websockets.server DEBUG < GET /cdp?token=[redacted] HTTP/1.1" in second_err
    assert "LOG websockets.server DEBUG < Authorization: Bearer [redacted]" in second_err
    assert mcp_token not in first_err + second_err, second_err
    assert cdp_token not in first_err + second_err, second_err
    assert f"bridge: HTTP bearer token in {tmp_path / 'mcp-token'}" in second_err
    for name in ("mcp-token", "cdp-token"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    assert (second.token, second.cdp_token) == (mcp_token, cdp_token)  # kept, not remade


@pytest.mark.reliability(38)
@pytest.mark.e2e
@pytest.mark.reliability(3)
async def test_first_starts_with_a_browser_print_no_token_and_bridge_token_prints_it(
    tmp_path: Path,
) -> None:
    """What an MCP client keeps in its log file (the server's stderr), and what a terminal
    shows, holds no token on the start that makes them; a person who wants one asks."""
    browser = ("--launch", "--headless", "--isolated")
    mcp_state, cdp_state = tmp_path / "mcp-state", tmp_path / "cdp-state"
    port = _free_port()
    http_args = ("--http", "--port", str(port), *browser, "--state-dir", str(mcp_state))
    async with started_command(
        "bridge-mcp", *http_args, ready="MCP over HTTP at", cwd=tmp_path
    ) as mcp:
        mcp_token = (mcp_state / "mcp-token").read_text().strip()
        auth = {"Authorization": f"Bearer {mcp_token}"}
        url = f"http://127.0.0.1:{port}/mcp"
        assert (await _request("POST", url, {**JSON_HEADERS, **auth}, INITIALIZE)).is_success
    cdp_args = ("cdp", *browser, "--state-dir", str(cdp_state))
    async with started_command("bridge", *cdp_args, ready="CDP token:", cwd=tmp_path) as cdp:
        cdp_token = (cdp_state / "cdp-token").read_text().strip()
        endpoint = re.search(r"CDP endpoint: (ws://127\.0\.0\.1:\d+/cdp)\n", cdp.text)
        assert endpoint, cdp.text
        headers = {"Authorization": f"Bearer {cdp_token}"}
        async with connect(endpoint.group(1), additional_headers=headers, proxy=None) as ws:
            await ws.send(json.dumps({"id": 1, "method": "Browser.getVersion"}))
            assert json.loads(await ws.recv())["id"] == 1
    assert "made a new HTTP bearer token" in mcp.text  # a first start, tokens made
    for started, state in ((mcp, mcp_state), (cdp, cdp_state)):
        for name in ("mcp-token", "cdp-token"):
            if (state / name).exists():
                value = (state / name).read_text().strip()
                assert value not in started.text, (name, started.text)
        assert str(state / "cdp-token") in started.text  # where it is, instead
    assert mcp.proc.returncode == 0 and cdp.proc.returncode == 0, mcp.text + cdp.text
    shown = await asyncio.create_subprocess_exec(
        installed_command("bridge"),
        *("token", "mcp", "--state-dir", str(mcp_state)),
        cwd=str(tmp_path),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(shown.communicate(), scaled(30.0))
    assert out.decode() == f"{mcp_token}\n"


# -- case 4: loopback unless told otherwise, and then still the token --------------------------


@pytest.mark.reliability(4)
async def test_mcp_http_and_its_relay_bind_loopback_only_by_default(mcp_server: McpHttp) -> None:
    assert _listening_addresses(mcp_server.port) == {"127.0.0.1"}
    assert _listening_addresses(mcp_server.relay_port) == {"127.0.0.1"}
    address = _non_loopback_ipv4()
    if address is not None:  # and from this machine's own network address: nothing there
        for port in (mcp_server.port, mcp_server.relay_port):
            with pytest.raises(ConnectionRefusedError):
                await asyncio.open_connection(address, port)


@pytest.mark.reliability(4)
async def test_mcp_http_on_all_interfaces_in_clear_only_when_told_and_still_requires_the_token(
    tmp_path: Path,
) -> None:
    address = _non_loopback_ipv4()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address to reach the server by")
    async with mcp_http(tmp_path, "--host", "0.0.0.0", "--insecure-remote") as server:
        assert _listening_addresses(server.port) == {"0.0.0.0"}
        assert _listening_addresses(server.relay_port) == {"127.0.0.1"}  # the relay never
        url = f"http://{address}:{server.port}/mcp"  # as a client on the network reaches it

        async def status(headers: dict[str, str]) -> int:
            return (
                await _request("POST", url, {**JSON_HEADERS, **headers}, INITIALIZE)
            ).status_code

        assert await status({}) == 401
        assert await status({"Authorization": "Bearer wrong"}) == 401
        assert await status({"Authorization": f"Bearer {server.token}"}) == 200
        auth = {"Authorization": f"Bearer {server.token}"}
        assert await status({**auth, "Origin": FOREIGN_ORIGIN}) == 403
    warning = (
        "bridge: binding to 0.0.0.0: reachable from your network, token required, plain HTTP "
        "(--insecure-remote): the token crosses it in clear.\n"
    )
    assert warning in server.stderr


@pytest.mark.reliability(43)
@pytest.mark.reliability(4)
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "bridge.example"])
async def test_mcp_http_on_a_network_address_without_tls_is_refused_before_it_listens(
    tmp_path: Path, host: str
) -> None:
    """An eavesdropper on the network would read the bearer token from plain HTTP: bridge
    refuses to serve it so unless told (--insecure-remote), before binding or making a token."""
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "bridge.mcp", "--http", "--host", host, "--port", str(port)),
        *("--state-dir", str(tmp_path / "state")),
        cwd=str(ROOT),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), scaled(30.0))
    assert proc.returncode == 2, err.decode()
    message = err.decode()
    assert f"--host {host} is reachable from your network" in message
    assert "--tls-cert FILE --tls-key FILE" in message and "--insecure-remote" in message
    assert out == b"" and not (tmp_path / "state").exists()  # no token made, nothing served


@pytest.mark.reliability(43)
@pytest.mark.reliability(4)
async def test_mcp_http_on_all_interfaces_serves_https_to_a_real_mcp_client(
    tmp_path: Path,
) -> None:
    """A self-signed certificate (bridge.fakes.certs) is the client's only trust anchor: the
    token travels inside TLS, and a client that does not trust the certificate gets nowhere."""
    cert = make_certificate(("localhost",))
    (tmp_path / "cert.pem").write_bytes(cert.cert_pem)
    (tmp_path / "key.pem").write_bytes(cert.key_pem)
    (tmp_path / "key.pem").chmod(0o600)
    tls = ("--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem"))
    async with mcp_http(tmp_path / "state", "--host", "0.0.0.0", *tls) as server:
        assert _listening_addresses(server.port) == {"0.0.0.0"}
        url = f"https://127.0.0.1:{server.port}/mcp"
        assert any(
            f"MCP over HTTP at https://0.0.0.0:{server.port}/mcp" in line for line in server.stderr
        )
        trusted = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {server.token}"},
            verify=trusted,
            trust_env=False,
            timeout=scaled(30.0),
        )
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            tools = await client.list_tools()
        assert any(tool.name == "ask_chatgpt_web" for tool in tools.tools)
        async with httpx2.AsyncClient(verify=trusted, trust_env=False) as plain:
            refused = await plain.post(url, json=INITIALIZE, headers=JSON_HEADERS)
        assert refused.status_code == 401  # TLS is no substitute for the token
        with pytest.raises(httpx2.ConnectError):  # a client that does not trust it: no connection
            async with httpx2.AsyncClient(
                verify=ssl.create_default_context(), trust_env=False
            ) as other:
                await other.post(url, json=INITIALIZE, headers=JSON_HEADERS)
    assert any("token required, HTTPS." in line for line in server.stderr)


# -- case 5: bad frames on /extension: a clear error, the link keeps serving -------------------

BAD_FRAMES = [
    pytest.param("[" * 100_000 + "]" * 100_000, "not JSON", id="nested-arrays"),
    pytest.param('{"a":' * 100_000 + "1" + "}" * 100_000, "not JSON", id="nested-objects"),
    pytest.param(b"\x00\xff\xfe\x80binary", "not UTF-8", id="binary"),
    pytest.param(
        json.dumps({"method": "installSpyware", "params": {}}), "unknown event", id="unknown-event"
    ),
]


@pytest.mark.reliability(5)
@pytest.mark.parametrize(("frame", "message"), BAD_FRAMES)
async def test_a_bad_frame_gets_an_error_and_the_link_keeps_serving(
    frame: str | bytes, message: str
) -> None:
    async with Relay(port=_free_port(), register=False) as relay, StandIn(relay) as ext:
        link = await relay.wait_for_link(scaled(5.0))
        assert ext.ws is not None
        await ext.ws.send(frame)
        notice = json.loads(await ext.ws.recv())
        assert notice["id"] is None and notice["error"]["code"] == "malformed", notice
        assert message in notice["error"]["message"], notice
        pending = asyncio.ensure_future(link.request("ping", timeout=scaled(10.0)))
        await ext.serve_once()
        assert await pending == {}
        assert relay.link is link and not link.is_closed
        assert link.malformed_frames == 1


@pytest.mark.reliability(5)
async def test_a_frame_over_the_limit_closes_only_that_link_with_1009() -> None:
    async with Relay(port=_free_port(), register=False, max_frame=4096) as relay:
        async with StandIn(relay) as ext:
            link = await relay.wait_for_link(scaled(5.0))
            assert ext.ws is not None

            def update(title: str) -> str:
                return json.dumps({"method": "tabUpdated", "params": {"tabId": 1, "title": title}})

            await ext.ws.send(update("x" * 3000))  # under the limit: taken
            pending = asyncio.ensure_future(link.request("ping", timeout=scaled(10.0)))
            await ext.serve_once()
            assert await pending == {}
            await ext.ws.send(update("x" * 5000))  # over it: that link closes
            with pytest.raises(ConnectionClosed) as closed:
                await ext.serve_once()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
            await asyncio.wait_for(link.closed, scaled(5.0))
        assert link not in relay.links
        # The relay serves on: the extension's reconnection links again and works.
        async with StandIn(relay) as again:
            second = await relay.wait_for_link(scaled(5.0))
            assert second is not link
            pending = asyncio.ensure_future(second.request("ping", timeout=scaled(10.0)))
            await again.serve_once()
            assert await pending == {}


# -- case 6: a web page can reach no endpoint, nor learn that bridge is there ------------------


@pytest.mark.reliability(6)
def test_the_extension_exposes_nothing_to_web_pages_or_other_extensions() -> None:
    manifest = json.loads((extension_dir() / "manifest.json").read_text())
    assert "web_accessible_resources" not in manifest
    assert "externally_connectable" not in manifest
    assert manifest["host_permissions"] == ["http://127.0.0.1/*"]


PAGE_PROBE = """(async () => {
    const requests = %s, sockets = %s;
    const out = {cors: {}, noCors: {}, ws: {}};
    for (const [url, method, body] of requests) {
        const key = method + ' ' + url;
        const init = {method, body: body || undefined};
        try {
            const r = await fetch(url, {...init, headers: body ? {'Content-Type': 'application/json'} : {}});
            out.cors[key] = 'read ' + r.status + ' ' + (await r.text()).slice(0, 80);
        } catch (e) { out.cors[key] = 'blocked'; }
        try {
            const r = await fetch(url, {...init, mode: 'no-cors'});
            out.noCors[key] = r.type + ' ' + r.status + ' ' + (await r.text()).length;
        } catch (e) { out.noCors[key] = 'blocked'; }
    }
    for (const url of sockets) {
        out.ws[url] = await new Promise((resolve) => {
            const ws = new WebSocket(url);
            const deadline = setTimeout(() => resolve('no answer'), 10000);
            ws.onopen = () => { clearTimeout(deadline); ws.close(); resolve('open'); };
            ws.onerror = () => { clearTimeout(deadline); resolve('refused'); };
        });
    }
    return out;
})()"""


@pytest.mark.e2e
@pytest.mark.reliability(6)
async def test_a_web_page_can_read_no_devtools_or_mcp_endpoint_nor_open_their_sockets(
    tab: CdpSession, pages: str, bridge_runtime: Runtime, mcp_server: McpHttp
) -> None:
    await tab.navigate(f"{pages}/")
    assert bridge_runtime.relay.cdp is not None
    token = bridge_runtime.relay.cdp.token  # even a page that somehow had it gets nowhere
    relay = f"127.0.0.1:{bridge_runtime.relay.port}"
    mcp = f"http://127.0.0.1:{mcp_server.port}"
    requests = [
        *[
            [f"http://{relay}{path}", "GET", None]
            for path in ("/json/version", f"/json/version?token={token}", "/json/list", "/json")
        ],
        [f"http://{relay}/cdp?token={token}", "GET", None],
        [f"{mcp}/mcp", "POST", json.dumps(INITIALIZE)],
        [f"{mcp}/mcp", "GET", None],
        [f"{mcp}{METADATA}", "GET", None],
    ]
    sockets = [
        f"ws://{relay}/cdp?token=wrong",
        f"ws://{relay}/cdp?token={token}",
        f"ws://{relay}/extension",
        f"ws://127.0.0.1:{mcp_server.port}/mcp",
    ]
    seen = await tab.evaluate(
        PAGE_PROBE % (json.dumps(requests), json.dumps(sockets)), await_promise=True
    )
    assert set(seen["cors"].values()) == {"blocked"}, seen["cors"]
    # no-cors: an opaque response (no status, no body), or none at all.
    assert set(seen["noCors"].values()) <= {"opaque 0 0", "blocked"}, seen["noCors"]
    assert set(seen["ws"].values()) == {"refused"}, seen["ws"]
    assert not bridge_runtime.relay.cdp.clients


# -- case 7: tools refuse javascript:, file:, chrome:, chrome-extension: ----------------------

REFUSED = [
    "javascript:alert(1)",
    "file:///etc/passwd",
    "chrome://settings",
    f"chrome-extension://{EXTENSION_ID}/popup.html",
    "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/page.html",
]


@pytest.fixture
def no_browser() -> Iterator[tuple[MockConnector, list[str]]]:
    """A connected stand-in extension that records commands and fails every one of them."""
    connector = MockConnector()
    methods: list[str] = []

    def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        methods.append(method)
        raise CommandFailed(method, "no_browser", "no browser in this test")

    connector.connect_new(handler)
    yield connector, methods


@pytest.mark.reliability(7)
@pytest.mark.parametrize("allow_file_urls", [False, True], ids=["default", "allow-file-urls"])
async def test_browser_tabs_new_refuses_unsafe_urls_before_the_browser_hears_of_them(
    no_browser: tuple[MockConnector, list[str]], tmp_path: Path, allow_file_urls: bool
) -> None:
    connector, methods = no_browser
    bridge = Bridge(
        Browser(connector, connect_timeout=scaled(2.0)),
        state_dir=tmp_path,
        tool_settings=ToolSettings(allow_file_urls=allow_file_urls),
    )
    async with Client(build_server(lambda: bridge, groups=("browser",))) as client:
        for url in REFUSED:
            result = await client.call_tool("browser_tabs", {"action": "new", "url": url})
            text = str(result.content[0].text)  # type: ignore[union-attr]
            if allow_file_urls and url.startswith("file:"):
                # Allowed: it reaches the browser (which this test does not have).
                assert result.is_error and "[url_refused]" not in text, text
                assert methods == ["createTab"]
                methods.clear()
                continue
            assert result.is_error and "[url_refused] refused to open" in text, text
            assert methods == [], (url, methods)


@pytest.mark.e2e
@pytest.mark.reliability(7)
async def test_allow_file_urls_opens_a_file_through_an_mcp_client_and_javascript_stays_refused(
    tmp_path: Path,
) -> None:
    page = tmp_path / "local.html"
    page.write_text("<!doctype html><title>Local file</title><h1>read from disk</h1>")
    runtime_dir = tempfile.mkdtemp(prefix="bridge-rt-")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bridge.mcp", "--launch", "--headless", "--isolated", "--tools", "browser",
              "--allow-file-urls", "--state-dir", str(tmp_path / "state")],
        cwd=str(ROOT),
        env={**os.environ, ENV_RUNTIME_DIR: runtime_dir},
    )  # fmt: skip
    try:
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                async with asyncio.timeout(scaled(120.0)):
                    call = client.call_tool
                    opened = await call("browser_navigate", {"url": page.as_uri()})
                    text = str(opened.content[0].text)  # type: ignore[union-attr]
                    assert not opened.is_error and "Title: Local file" in text, text
                    snapshot = await call("browser_snapshot", {})
                    assert "read from disk" in str(snapshot.content[0].text)  # type: ignore[union-attr]
                    tab = await call("browser_tabs", {"action": "new", "url": page.as_uri()})
                    assert not tab.is_error, tab.content
                    for url in ("javascript:alert(1)", "chrome://settings"):
                        refused = await call("browser_navigate", {"url": url})
                        shown = str(refused.content[0].text)  # type: ignore[union-attr]
                        assert refused.is_error and "[url_refused]" in shown, shown
    finally:
        shutil.rmtree(runtime_dir, ignore_errors=True)
