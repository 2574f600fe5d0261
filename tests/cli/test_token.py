"""``bridge token mcp|cdp [--url]`` (bridge.cli.token): the one way a token reaches a
terminal, on stdout, when a person asks; never a value bridge would not adopt."""

from __future__ import annotations

import asyncio
import socket
import stat
from pathlib import Path

import pytest

from bridge.cdp.browser import Browser
from bridge.cdp.endpoint import CdpEndpoint
from bridge.cli.token import show_command
from bridge.link.local_ipc import ENV_LOCAL_IPC
from bridge.link.registry import runtime_dir
from bridge.link.relay import Relay
from bridge.link.tokens import load_or_create_token
from bridge.waiting import scaled
from tests.commands import installed_command

KNOWN = "K" * 43


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _bridge(*args: str) -> tuple[int, str, str]:
    """``bridge`` as a person runs it: exit status, stdout, stderr (run in the state's parent
    directory: a checkout's own .local/bridge would add its note to stderr)."""
    proc = await asyncio.create_subprocess_exec(
        installed_command("bridge"),
        *args,
        cwd=str(Path(args[args.index("--state-dir") + 1]).parent),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), scaled(60.0))
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_token_mcp_prints_exactly_the_servers_token(tmp_path: Path) -> None:
    token, _ = load_or_create_token(tmp_path / "mcp-token")  # as a server made it
    assert await _bridge("token", "mcp", "--state-dir", str(tmp_path)) == (0, token + "\n", "")


async def test_token_cdp_makes_one_when_there_is_none_yet(tmp_path: Path) -> None:
    status, out, _ = await _bridge("token", "cdp", "--state-dir", str(tmp_path / "state"))
    path = tmp_path / "state" / "cdp-token"
    assert status == 0 and out == path.read_text()  # the server will adopt this one
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_a_planted_token_is_never_printed(tmp_path: Path) -> None:
    path = tmp_path / "mcp-token"
    path.write_text(KNOWN + "\n")
    path.chmod(0o644)
    status, out, err = await _bridge("token", "mcp", "--state-dir", str(tmp_path))
    assert status == 0 and KNOWN not in out + err
    assert out == path.read_text() and "replaced by a new token" in err


@pytest.mark.parametrize("kind", ["unix", "tcp"])
async def test_url_finds_the_running_devtools_endpoint_that_takes_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """``tcp``: relays registered the Windows way (``.port``, found by proving the secret)."""
    monkeypatch.setenv(ENV_LOCAL_IPC, kind)
    token, _ = load_or_create_token(tmp_path / "cdp-token")
    # Relays register in this test run's runtime directory (tests/conftest.py); one without
    # the DevTools endpoint and one with another token are passed over.
    async with (
        Relay(port=_free_port()) as plain,
        Relay(port=_free_port()) as other,
        Relay(port=_free_port()) as ours,
    ):
        other.cdp = CdpEndpoint(Browser(other, connect_timeout=scaled(2.0)), "K" * 43)
        ours.cdp = CdpEndpoint(Browser(ours, connect_timeout=scaled(2.0)), token)
        assert plain.cdp is None
        found = await _bridge("token", "cdp", "--url", "--state-dir", str(tmp_path))
        assert found == (0, f"ws://127.0.0.1:{ours.port}/cdp?token={token}\n", "")
        named = await _bridge(
            "token", "cdp", "--url", "--relay-port", "1234", "--state-dir", str(tmp_path)
        )
        assert named == (0, f"ws://127.0.0.1:1234/cdp?token={token}\n", "")
    status, out, err = await _bridge("token", "cdp", "--url", "--state-dir", str(tmp_path))
    assert (status, out) == (1, "") and "--relay-port N" in err and token not in err


async def test_the_token_never_goes_to_the_port_of_a_relay_that_ended(tmp_path: Path) -> None:
    """A dead relay's endpoint file names its old port; whoever listens there now must not
    be sent the token, whichever kind of endpoint the file is."""
    token, _ = load_or_create_token(tmp_path / "cdp-token")
    heard: list[bytes] = []

    async def listener(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heard.append(await reader.read(4096))
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
        await writer.drain()
        writer.close()

    squatter = await asyncio.start_server(listener, "127.0.0.1", 0)
    port = squatter.sockets[0].getsockname()[1]
    relays = runtime_dir() / "relays"
    stale = [relays / f"{port}.port", relays / f"{port}.sock"]
    stale[0].write_text(f"{port}\n")  # the squatter answers the proof with an HTTP reply
    stale[1].touch()  # a Unix socket's file nobody listens on
    try:
        status, out, _ = await _bridge("token", "cdp", "--url", "--state-dir", str(tmp_path))
    finally:
        squatter.close()
        for path in stale:
            path.unlink(missing_ok=True)
    assert (status, out) == (1, "")
    assert not any(token.encode() in data for data in heard)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("mcp", "--url"), "--url is for the DevTools token"),
        (("cdp", "--relay-port", "19222"), "--relay-port goes with --url"),
    ],
)
async def test_misused_options_exit_2(tmp_path: Path, args: tuple[str, ...], says: str) -> None:
    status, out, err = await _bridge("token", *args, "--state-dir", str(tmp_path))
    assert (status, out) == (2, "") and says in err


def test_show_command_names_the_state_directory_only_when_it_is_not_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRIDGE_STATE_DIR", str(tmp_path / "default"))
    assert show_command("mcp") == "bridge token mcp"
    assert show_command("mcp", tmp_path / "default") == "bridge token mcp"
    odd = tmp_path / "with space"
    assert show_command("cdp", odd) == f"bridge token cdp --state-dir '{odd}'"
    assert show_command("cdp", None, 19222) == "bridge token cdp --url --relay-port 19222"
