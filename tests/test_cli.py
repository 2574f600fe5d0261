"""``python -m bridge`` in a subprocess, as a person runs it from a terminal."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path

import pytest

from bridge.fakes import FakeSites
from bridge.relay_registry import ENV_RUNTIME_DIR

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _run(
    *args: str, timeout: float = 90, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        *args,
        cwd=str(ROOT),
        env={**os.environ, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_ask_once_from_the_terminal(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    chrome = [f"--chrome-arg={a}" for a in fake_sites.chromium_args()]
    code, out, err = await _run(
        "ask",
        "How do I read files asynchronously in Python?",
        "--provider",
        "gemini",
        "--json",
        "--launch",
        "--headless",
        "--isolated",
        "--state-dir",
        str(tmp_path),
        *chrome,
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["provider"] == "gemini"
    assert result["answer"].startswith(fakes.gemini.records[-1].answer.splitlines()[0])
    assert (tmp_path / "history.jsonl").exists()


async def test_ask_without_a_browser_says_how_to_connect_one(tmp_path: Path) -> None:
    code, _, err = await _run(
        "ask",
        "What is a Python decorator?",
        "--provider",
        "chatgpt",
        "--state-dir",
        str(tmp_path),
        "--connect-timeout",
        "0.5",
        # A port outside 19222-19250, and a runtime directory no native host watches: no
        # extension (not even this session's browser) finds it.
        "--relay-port",
        str(_free_port()),
        env={ENV_RUNTIME_DIR: str(tmp_path / "rt")},
    )
    assert code == 1
    assert "[extension_not_connected]" in err and "Load unpacked" in err and "--launch" in err


async def test_relay_command_honours_its_options(tmp_path: Path) -> None:
    """Every option ``relay`` accepts takes effect: port, profile, browser flags, headless."""
    port = _free_port_in_relay_range()
    profile = tmp_path / "profile"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        "relay",
        "--launch",
        "--headless",
        "--relay-port",
        str(port),
        "--profile-dir",
        str(profile),
        "--chrome-arg=--lang=ja",
        cwd=str(ROOT),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        async with asyncio.timeout(60):
            while not lines or lines[-1] != "ready; Ctrl-C to stop":
                line = (await proc.stdout.readline()).decode()
                assert line, f"relay exited early: {lines} {(await proc.stderr.read()).decode()}"  # type: ignore[union-attr]
                lines.append(line.strip())
        text = "\n".join(lines)
        assert f"relay listening on ws://127.0.0.1:{port}/extension" in text
        assert f"profile {profile})" in text and (profile / "Default").is_dir()
        assert "extension connected" in text
        cmdline = Path(f"/proc/{_browser_pid(text)}/cmdline").read_bytes().split(b"\0")
        assert b"--lang=ja" in cmdline and b"--headless=new" in cmdline
    finally:
        proc.terminate()
        code = await asyncio.wait_for(proc.wait(), 30)
    assert code == 0


def _free_port_in_relay_range() -> int:
    """The extension discovers relays only in PORT_RANGE: pick a free port there, from the top
    (the relays of this test session take the lowest free ones)."""
    from bridge.relay import PORT_RANGE

    for port in range(PORT_RANGE[1], PORT_RANGE[0] - 1, -1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port in the relay range")


def _browser_pid(text: str) -> int:
    import re

    match = re.search(r"\(pid (\d+),", text)
    assert match, text
    return int(match.group(1))


async def test_cdp_command_prints_one_line_and_stops_when_stdin_closes(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        "cdp",
        "--launch",
        "--headless",
        "--isolated",
        "--state-dir",
        str(tmp_path),
        cwd=str(ROOT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdin is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    token = (tmp_path / "cdp-token").read_text().strip()
    assert (
        line
        == f"CDP endpoint: ws://127.0.0.1:{line.split(':')[3].split('/')[0]}/cdp?token={token}\n"
    )
    assert (tmp_path / "cdp-token").stat().st_mode & 0o777 == 0o600
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 30) == 0
    assert await proc.stdout.read() == b""  # exactly one line
