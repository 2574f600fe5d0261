"""``python -m bridge`` in a subprocess, as a person runs it from a terminal."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path

import pytest

from bridge.fakes import FakeSites

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _run(*args: str, timeout: float = 90) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        *args,
        cwd=str(ROOT),
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
        # A port outside 19222-19250: no extension (not even this session's browser) finds it.
        "--relay-port",
        str(_free_port()),
    )
    assert code == 1
    assert "[extension_not_connected]" in err and "Load unpacked" in err and "--launch" in err
