"""Start-up and footprint: the MCP server over stdio, and relay start to extension connected."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

import psutil
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from bridge.app.launcher import LaunchedBrowser
from bridge.bench.stats import Figure, median

__all__ = ["measure_mcp_server", "measure_relay_connect"]


async def measure_relay_connect(launched: LaunchedBrowser, runs: int) -> list[Figure]:
    """A fresh relay while the browser runs: how long until its extension is connected."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        async with launched.relay() as relay:
            await relay.wait_for_link(30)
            times.append((time.perf_counter() - t0) * 1000)
    return [Figure("relay start → extension connected", "ms", median(times), None, "", 1000.0)]


def _rss_kb(pid: int) -> int:
    """The process's resident set now, in KiB (0 if it is gone)."""
    try:
        return int(psutil.Process(pid).memory_info().rss) // 1024
    except psutil.Error:
        return 0


def _peak_rss_kb(pid: int) -> int:
    """The process's peak resident set, in KiB (0 if it is gone): Windows keeps it
    (``peak_wset``), Linux in ``/proc/<pid>/status`` (``VmHWM``, which psutil does not read);
    macOS shows no other process's peak, so there it is the resident set now, a lower bound."""
    try:
        info = psutil.Process(pid).memory_info()
    except psutil.Error:
        return 0
    peak = getattr(info, "peak_wset", None)
    if peak is not None:
        return int(peak) // 1024
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return int(info.rss) // 1024


async def measure_mcp_server(
    chrome_args: list[str], state: Path, runs: int, asks: int
) -> list[Figure]:
    """Spawn to first tool list over stdio (against a bare Python start as the reference),
    and peak RSS of the server during a run of asks (against its RSS after start)."""
    import asyncio

    spawn: list[float] = []
    bare: list[float] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "import mcp, websockets")
        await proc.wait()
        bare.append((time.perf_counter() - t0) * 1000)
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "bridge.mcp", "--state-dir", str(state)]
        )
        t0 = time.perf_counter()
        with open(state / "stderr.log", "a") as errlog:  # noqa: ASYNC230 (tiny, once)  # noqa: ASYNC230 (tiny, once)
            async with Client(stdio_client(params, errlog=errlog)) as client:
                await client.list_tools()
                spawn.append((time.perf_counter() - t0) * 1000)
    figures = [
        Figure(
            "MCP server spawn → first tool list",
            "ms",
            median(spawn),
            median(bare),
            "python importing mcp+websockets",
            None,
        )
    ]
    args = ["-m", "bridge.mcp", "--launch", "--headless", "--isolated", "--state-dir", str(state)]
    args += [f"--chrome-arg={a}" for a in chrome_args]
    params = StdioServerParameters(command=sys.executable, args=args)
    with open(state / "stderr.log", "a") as errlog:  # noqa: ASYNC230 (tiny, once)
        async with Client(stdio_client(params, errlog=errlog)) as client:
            await client.list_tools()
            pid = _server_pid(state)
            idle = _rss_kb(pid) if pid else 0
            for i in range(asks):
                await client.call_tool(
                    "ask_chatgpt_gemini_web", {"question": f"Explain Python generators ({i})?"}
                )
            peak = _peak_rss_kb(pid) if pid else 0
    figures.append(
        Figure(
            "MCP server peak RSS over asks",
            "MB",
            peak / 1024,
            idle / 1024,
            "after start",
            None,
            note=f"{asks} ask_chatgpt_gemini_web calls",
        )
    )
    return figures


def _server_pid(state: Path) -> int | None:
    # The server's relay-info carries its pid; the newest bridge.mcp process is ours.
    import subprocess

    out = subprocess.run(
        ["pgrep", "-n", "-f", f"bridge.mcp --launch --headless --isolated --state-dir {state}"],
        capture_output=True,
        text=True,
    )
    return int(out.stdout.strip()) if out.stdout.strip() else None
