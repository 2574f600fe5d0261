"""``bridge-mcp --http --launch``, the installed command, starts and stops cleanly: nothing on
stderr but bridge's own lines (no deprecation warning, no traceback), also with Python's
hidden warnings shown and a request served."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bridge.app.runtime import options_from_args
from bridge.fakes import FakeSites
from bridge.mcp.__main__ import parse_args
from tests.commands import installed_command

pytestmark = pytest.mark.e2e


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def unexpected_lines(stderr: str) -> list[str]:
    """Lines on stderr that are not bridge's own: a warning, a traceback, a library's log."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("bridge:")]


def test_unexpected_lines_catches_a_warning_and_a_traceback() -> None:
    stderr = (
        "bridge: relay on ws://127.0.0.1:19222/extension\n"
        "/x/mcp/server/auth/settings.py:61: MCPDeprecationWarning: `AuthSettings.validate_"
        "token_resource` is not set\n  warnings.warn(\n"
        "Traceback (most recent call last):\n"
    )
    assert len(unexpected_lines(stderr)) == 3


async def test_http_launch_start_up_and_shutdown_print_no_warning(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    port = _free_port()
    args = ["--http", "--port", str(port), "--launch", "--headless", "--isolated"]
    args += [
        "--state-dir",
        str(tmp_path),
        *(f"--chrome-arg={a}" for a in fake_sites.chromium_args()),
    ]
    # PYTHONWARNINGS=default shows what Python hides by default (DeprecationWarning outside
    # __main__): a warning that appears only for some users' settings is caught here too.
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    proc = await asyncio.create_subprocess_exec(
        installed_command("bridge-mcp"),
        *args,
        cwd=str(tmp_path),
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None and proc.stdout is not None
    seen: list[str] = []
    try:
        async with asyncio.timeout(60):
            while not any("MCP over HTTP at" in line for line in seen):
                raw = await proc.stderr.readline()
                assert raw, "bridge-mcp exited:\n" + "".join(seen)
                seen.append(raw.decode())
        token = (tmp_path / "mcp-token").read_text().strip()
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, trust_env=False, timeout=60
        )
        url = f"http://127.0.0.1:{port}/mcp"
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool(
                "ask_gemini_web", {"question": "What is a Python decorator?"}
            )
        assert not result.is_error
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        out, rest = await asyncio.wait_for(proc.communicate(), 20)
    stderr = "".join(seen) + rest.decode()
    assert proc.returncode == 0, stderr
    assert out == b""  # HTTP mode: stdout carries nothing
    assert unexpected_lines(stderr) == [], stderr


def test_the_server_takes_a_channel_and_extensions_to_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m bridge.mcp --launch`` chooses its browser as the terminal commands do."""
    ext = tmp_path / "mine"
    ext.mkdir()
    (ext / "manifest.json").write_text('{"manifest_version": 3, "name": "m", "version": "1"}')
    args = parse_args(["--launch", "--channel", "dev", "--load-extension", str(ext)])
    options = options_from_args(args)
    assert options.channel == "dev" and list(options.load_extensions) == [ext.resolve()]
    with pytest.raises(SystemExit) as exited:
        parse_args(["--launch", "--channel", "dev", "--browser-path", "/usr/bin/chromium"])
    assert exited.value.code == 2
    assert "--browser-path: not allowed with argument --channel" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--launch", "--load-extension", str(tmp_path / "absent")])
    assert "no such folder" in capsys.readouterr().err
