"""``bridge snapshot``: what a tab shows, from a terminal, through take_cdp_snapshot's code."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from bridge.fakes import FakeSites

ROOT = Path(__file__).resolve().parents[2]
PNG = b"\x89PNG\r\n\x1a\n"


async def _run(*args: str, timeout: float = 90) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        *args,
        cwd=str(ROOT),
        env=dict(os.environ),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.e2e
async def test_snapshot_of_a_provider_tab_prints_its_outline_and_writes_a_png(
    fake_sites: FakeSites, tmp_path: Path
) -> None:
    shot = tmp_path / "shots" / "chatgpt.png"
    code, out, err = await _run(
        "snapshot",
        "chatgpt",
        "--screenshot",
        str(shot),
        "--launch",
        "--headless",
        "--isolated",
        "--state-dir",
        str(tmp_path / "state"),
        *[f"--chrome-arg={a}" for a in fake_sites.chromium_args()],
    )
    assert code == 0, err
    assert out.startswith("url: https://chatgpt.com/")
    # What the fake ChatGPT shows: its composer's buttons and the history's link.
    assert 'button "Add files"' in out and 'link "New chat"' in out
    assert out.rstrip().endswith(f"screenshot: {shot}")
    assert shot.read_bytes().startswith(PNG)


async def test_snapshot_of_nothing_says_what_to_pass() -> None:
    code, out, err = await _run("snapshot", "nosuchthing", timeout=30)
    assert code == 2 and out == ""
    assert "'nosuchthing'" in err and "'chatgpt', 'gemini', or a tab id" in err
