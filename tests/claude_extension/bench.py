"""``python -m tests.claude_extension.bench``: a click and a snapshot over the Claude extension
link against the same over bridge's own extension, in one run, in one browser.

bridge's own path: ``BrowserTools`` → relay → bridge's extension → ``chrome.debugger``.
The Claude path: ``ClaudeTools`` → local IPC → bridge's Claude host (``python -m
bridge.link.claude_host``) → Chrome's native-messaging pipe → the extension's tools. Here the
extension is the fake (tests/claude_extension/fake.py), which acts over the launched
browser's DevTools pipe, so the Claude figures are bridge's link plus the fake's own work,
not the real extension's (unmeasurable here). Rounds interleave the two paths on the same
page (tests/claude_extension/pages/form.html, each in a window of its own); each figure is
a median, and the ratio is Claude / own.

Read the click and snapshot ratios with care: bridge's own click checks that its element
is visible, enabled, stable and uncovered and reports what changed, and its snapshot walks
shadow roots and frames; the fake only sends the mouse events to the ref's point and prints
its tree. ``evaluate`` (one ``Runtime.evaluate`` in the page either way) is the like-for-like
figure: what each link costs per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bridge.app.runtime import Runtime, RuntimeOptions
from bridge.link.registry import ENV_RUNTIME_DIR
from bridge.tools.claude import claude_browser
from tests.claude_extension.fake import FakeClaudeExtension
from tests.claude_extension.site import Pages
from tests.local_http import serve_http

ROOT = Path(__file__).resolve().parents[2]


async def _timed(step: Callable[[], Awaitable[Any]]) -> float:
    t0 = time.perf_counter()
    await step()
    return (time.perf_counter() - t0) * 1000


def _ref(snapshot: str, fragment: str) -> str:
    line = next(x for x in snapshot.splitlines() if fragment in x and "[ref=" in x)
    return line.split("[ref=", 1)[1].split("]", 1)[0]


async def measure(rounds: int) -> dict[str, Any]:
    runtime_dir = Path(tempfile.mkdtemp(prefix="bridge-cb-"))
    os.environ[ENV_RUNTIME_DIR] = str(runtime_dir)
    try:
        for base, _ in serve_http(Pages):
            return await _measure(base, rounds, runtime_dir)
    finally:
        shutil.rmtree(runtime_dir, ignore_errors=True)
    raise AssertionError("the page server did not start")


async def _measure(base: str, rounds: int, runtime_dir: Path) -> dict[str, Any]:
    page = f"{base}/form.html"
    options = RuntimeOptions(launch=True, headless=True, isolated=True, debug_pipe=True)
    async with Runtime(options) as runtime:
        await runtime.connected(30)
        launched = runtime.launched
        assert launched is not None
        own = runtime.bridge.browser_tools("bench")
        await own.navigate(page)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        host = [sys.executable, "-m", "bridge.link.claude_host"]
        async with (
            launched.direct_cdp() as cdp,
            claude_browser(directory=runtime_dir) as hub,
            FakeClaudeExtension(cdp, host, env=env),
        ):
            claude = hub.client("bench")
            await claude.navigate(page)
            heading = _ref(await claude.snapshot(), "heading")
            figures: dict[str, dict[str, list[float]]] = {
                "click": {"own": [], "claude": []},
                "snapshot": {"own": [], "claude": []},
                "evaluate": {"own": [], "claude": []},
            }
            for _ in range(rounds):
                # Clicks on the heading: repeated clicks on one <button> stall in headless
                # Chromium whichever way they are sent (tools_bench says why).
                figures["click"]["own"].append(await _timed(lambda: own.click("h1")))
                figures["click"]["claude"].append(await _timed(lambda: claude.click(heading)))
                figures["snapshot"]["own"].append(await _timed(lambda: own.snapshot()))
                figures["snapshot"]["claude"].append(await _timed(lambda: claude.snapshot()))
                # One Runtime.evaluate in the page either way: the two links' own cost.
                figures["evaluate"]["own"].append(await _timed(lambda: own.evaluate("() => 1")))
                figures["evaluate"]["claude"].append(
                    await _timed(lambda: claude.evaluate("() => 1"))
                )
    out: dict[str, Any] = {"rounds": rounds}
    for name, pair in figures.items():
        own_ms, claude_ms = statistics.median(pair["own"]), statistics.median(pair["claude"])
        out[name] = {
            "own_extension_ms": round(own_ms, 2),
            "claude_link_ms": round(claude_ms, 2),
            "ratio": round(claude_ms / own_ms, 2),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.claude_extension.bench", description=__doc__)
    p.add_argument("--rounds", type=int, default=30)
    args = p.parse_args(argv)
    print(json.dumps(asyncio.run(measure(args.rounds)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
