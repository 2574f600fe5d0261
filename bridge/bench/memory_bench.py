"""Memory: the MCP server's resident set with 1, 10 and 50 attached tabs and over a run of
asks, and the extension's service-worker JS heap at the same points.

The server measured is a real ``python -m bridge.mcp --launch --headless --isolated``
subprocess driven over stdio, so the RSS is that server's own (not the bench's, which holds
its own runtime, fake sites and numbers). Its browser is launched with the bench's fake
sites mapped in and a DevTools port of our choosing, through which the bench reads the
service worker's heap directly (``Runtime.getHeapUsage`` after
``HeapProfiler.collectGarbage``, so the figure is live memory, not garbage awaiting a GC).

Growth per ask is the slope of a least-squares line through the RSS sampled every
``sample_every`` asks after a warm-up (:func:`growth_per_ask`): a leak shows as a steady
slope; allocator noise as scatter around a flat line.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import psutil
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

from bridge.bench import serve_pages
from bridge.bench.charts import Curve
from bridge.bench.stats import Figure
from bridge.cdp.direct import DirectCdp
from bridge.wire.extension import EXTENSION_ID

__all__ = [
    "GROWTH_BOUND_MB_PER_ASK",
    "SW_GROWTH_BOUND_MB_PER_ASK",
    "TREND_BOUND",
    "growth_per_ask",
    "measure_memory",
    "memory_curves",
    "scatter",
    "slope",
    "trend_over_noise",
]

#: The most the server's RSS may grow per ask: a budget for what an ask may keep.
#: Why 0.05 MB: one ask keeps, by design, a job file's worth and a few log lines (well under
#: 10 KB); a real leak of a page's worth per ask (a snapshot, an answer's DOM text, a CDP
#: event backlog: 50 KB and up) reads 0.05 MB/ask or more; 100 asks at the bound is 5 MB,
#: under 10% of the server's idle RSS (~86 MB). It is a budget, not the noise: the noise is
#: judged by :data:`TREND_BOUND` (measured, the RSS scatters only ~0.04 MB around its line).
GROWTH_BOUND_MB_PER_ASK = 0.05

#: "No growth beyond noise": the RSS growth over the measured asks (slope × asks) at most
#: this many times the samples' scatter around the fitted line. Three standard deviations:
#: a smaller rise is not told from the allocator's moves; a larger one is a steady trend,
#: however small per ask.
TREND_BOUND = 3.0

#: The RSS is counted in 4 KiB pages: a scatter below one page is no better measured.
_PAGE_MB = 4 / 1024

#: The same for the service worker's live heap, which is measured after a full GC and so
#: has almost no noise (tens of bytes per ask between samples) but is small (about 0.5 MB):
#: 2 KiB per ask is less than one retained answer or CDP message, so anything the worker
#: keeps per ask shows, and 100 asks at the bound would still be under half its heap.
SW_GROWTH_BOUND_MB_PER_ASK = 2 / 1024

#: The page each browsing tab shows: small but real (text, a form, a list), so a tab's
#: attached state (snapshot refs, console/network recorders) is what one page costs.
_PAGE = (
    "<!doctype html><title>memory {n}</title><h1>Tab {n}</h1>"
    "<form><label>Name <input name=q></label><button>Go</button></form>"
    "<ul>" + "".join(f"<li>item {i}</li>" for i in range(50)) + "</ul>"
)


def slope(points: Sequence[tuple[float, float]]) -> float:
    """The least-squares slope of ``y`` over ``x``; ValueError with fewer than two
    distinct ``x`` (no line to fit)."""
    if len({x for x, _ in points}) < 2:
        raise ValueError("a slope needs samples at two or more different x")
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    return sxy / sxx


def scatter(points: Sequence[tuple[float, float]]) -> float:
    """The standard deviation of ``y`` around the least-squares line: the noise a slope
    is judged against (a growth over the run smaller than this is not told from noise)."""
    k = slope(points)
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    residuals = [y - (my + k * (x - mx)) for x, y in points]
    return math.sqrt(sum(r * r for r in residuals) / n)


def trend_over_noise(samples: Sequence[tuple[int, float]], warmup: int) -> float:
    """The growth over the samples after ``warmup`` (slope × asks spanned) in units of
    their scatter around the fitted line (at least one RSS page): ≤ :data:`TREND_BOUND`
    reads as noise."""
    after = [(float(a), mb) for a, mb in samples if a >= warmup]
    if len(after) < 3:  # two points fit any line exactly: no noise to judge against
        after = [(float(a), mb) for a, mb in samples[-3:]]
    rise = slope(after) * (after[-1][0] - after[0][0])
    return rise / max(scatter(after), _PAGE_MB)


def growth_per_ask(samples: Sequence[tuple[int, float]], warmup: int) -> float:
    """MB per ask: the slope of ``(asks done, RSS MB)`` samples taken after ``warmup``
    asks (the first asks fill caches, import lazily and grow pools once: not a leak).
    With fewer than two samples past the warm-up, the last two samples are used."""
    after = [(float(a), mb) for a, mb in samples if a >= warmup]
    if len(after) < 2:
        after = [(float(a), mb) for a, mb in samples[-2:]]
    return slope(after)


def memory_curves(raw: dict[str, Any]) -> list[Curve]:
    """The report's two memory charts from :func:`measure_memory`'s raw samples: the
    server's RSS by attached tabs (against its RSS after start), and over the asks (against
    the fitted line whose slope is the growth figure). The worker's heap rides along in
    each point's extras: at ~0.5 MB it would be a flat line on the RSS scale."""
    tabs = Curve(
        "memory_tabs",
        "MCP server RSS by attached tabs",
        "tabs attached through browser_tabs",
        "",
        "resident set",
        "MB",
        note="a real python -m bridge.mcp over stdio; the extension service worker's live "
        "JS heap (after a GC) is noted at each point",
        x_log=False,
        y_log=False,
    )
    rss, idle = tabs.line("server RSS"), tabs.line("server after start", reference=True)
    for row in raw["tabs"]:
        rss.add(row["tabs"], row["rss_mb"], sw_heap_used_mb=row["sw_heap"]["used_mb"])
        idle.add(row["tabs"], raw["idle_rss_mb"])
    asks = Curve(
        "memory_asks",
        "MCP server RSS over asks (ChatGPT fake)",
        "asks done",
        "",
        "resident set",
        "MB",
        note=f"the dashed line is the least-squares fit after {raw['warmup_asks']} asks; its "
        "slope is the 'RSS growth per ask' figure",
        x_log=False,
        y_log=False,
    )
    samples, fit = asks.line("server RSS"), asks.line("fitted line", reference=True)
    for row in raw["asks"]:
        samples.add(row["asks"], row["rss_mb"], sw_heap_used_mb=row["sw_heap"]["used_mb"])
    measured = [(float(r["asks"]), float(r["rss_mb"])) for r in raw["asks"]]
    after = [(x, y) for x, y in measured if x >= raw["warmup_asks"]] or measured[-2:]
    if len({x for x, _ in after}) >= 2:
        k = slope(after)
        mx = sum(x for x, _ in after) / len(after)
        my = sum(y for _, y in after) / len(after)
        for x, _ in after:
            fit.add(x, my + k * (x - mx))
    return [tabs, asks]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _rss_mb(pid: int) -> float:
    """The process's resident set now (VmRSS on Linux), in MB."""
    return float(psutil.Process(pid).memory_info().rss) / (1024 * 1024)


def _server_pid(state: Path) -> int:
    """Our MCP server: the child of this process whose command line names its state dir
    (the stdio client does not expose the pid it spawned)."""
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            cmd = child.cmdline()
            if "bridge.mcp" in cmd and str(state) in cmd:
                return child.pid
    raise RuntimeError(f"no bridge.mcp child with --state-dir {state}")


async def _sw_heap_mb(devtools_port: int) -> dict[str, float]:
    """The extension service worker's JS heap after a full GC: used and total, in MB."""
    with urlopen(f"http://127.0.0.1:{devtools_port}/json/version", timeout=10) as resp:  # noqa: ASYNC210 (loopback, once per sample)
        ws_url = json.loads(resp.read())["webSocketDebuggerUrl"]
    async with DirectCdp(ws_url) as cdp:
        targets = (await cdp.call("Target.getTargets"))["targetInfos"]
        workers = [
            t
            for t in targets
            if t["type"] == "service_worker"
            and t["url"].startswith(f"chrome-extension://{EXTENSION_ID}/")
        ]
        if not workers:
            raise RuntimeError(f"no service worker of extension {EXTENSION_ID} is running")
        attached = await cdp.call(
            "Target.attachToTarget", {"targetId": workers[0]["targetId"], "flatten": True}
        )
        sid = attached["sessionId"]
        try:
            await cdp.call("HeapProfiler.collectGarbage", session_id=sid)
            usage = await cdp.call("Runtime.getHeapUsage", session_id=sid)
        finally:
            await cdp.call("Target.detachFromTarget", {"sessionId": sid})
    mb = 1024 * 1024
    return {"used_mb": usage["usedSize"] / mb, "total_mb": usage["totalSize"] / mb}


def _checked(result: CallToolResult, what: str) -> CallToolResult:
    if result.is_error:
        text = " ".join(getattr(c, "text", "") for c in result.content)
        raise RuntimeError(f"{what} failed: {text[:500]}")
    return result


@contextlib.asynccontextmanager
async def _server(chrome_args: list[str], state: Path, devtools_port: int) -> AsyncIterator[Client]:
    args = ["-m", "bridge.mcp", "--launch", "--headless", "--isolated"]
    args += ["--tools", "ask,browser", "--state-dir", str(state)]
    args += [f"--chrome-arg={a}" for a in chrome_args]
    args.append(f"--chrome-arg=--remote-debugging-port={devtools_port}")
    params = StdioServerParameters(command=sys.executable, args=args)
    state.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 (once, before the server)
    with open(state / "stderr.log", "a") as errlog:  # noqa: ASYNC230 (tiny, once)
        async with Client(stdio_client(params, errlog=errlog)) as client:
            yield client


async def measure_memory(
    chrome_args: list[str],
    state: Path,
    *,
    tabs: Sequence[int] = (1, 10, 50),
    asks: int = 100,
    sample_every: int = 10,
    warmup: int = 20,
) -> tuple[list[Figure], dict[str, Any]]:
    """RSS and service-worker heap with each count of ``tabs`` attached, then every
    ``sample_every`` of ``asks`` asks (ask_chatgpt_web against the fake sites). Returns
    the figures and the raw samples; ValueError for settings that give no slope."""
    if not tabs or min(tabs) < 1 or sample_every < 1:
        raise ValueError("tab counts and sample_every must be ≥ 1")
    if -(-asks // sample_every) < 2:  # samples at every sample_every-th ask and the last
        raise ValueError(f"{asks} asks sampled every {sample_every} give no slope: need 2 samples")
    port = _free_port()
    raw: dict[str, Any] = {"tabs": [], "asks": [], "warmup_asks": warmup}
    started = time.perf_counter()
    with serve_pages(lambda path, q: _PAGE.format(n=q.get("n", ["0"])[0])) as base:
        async with _server(chrome_args, state, port) as client:
            await client.list_tools()
            pid = _server_pid(state)
            raw["idle_rss_mb"] = _rss_mb(pid)
            opened = 0
            for want in sorted(tabs):
                while opened < want:
                    opened += 1
                    # browser_tabs "new" opens the tab and attaches it (chrome.debugger).
                    _checked(
                        await client.call_tool(
                            "browser_tabs", {"action": "new", "url": f"{base}/?n={opened}"}
                        ),
                        "browser_tabs new",
                    )
                # A snapshot of the newest tab: its refs and recorders are live.
                _checked(await client.call_tool("browser_snapshot", {}), "browser_snapshot")
                raw["tabs"].append(
                    {"tabs": want, "rss_mb": _rss_mb(pid), "sw_heap": await _sw_heap_mb(port)}
                )
            samples: list[tuple[int, float]] = []
            for i in range(1, asks + 1):
                _checked(
                    await client.call_tool(
                        "ask_chatgpt_web", {"question": f"Explain Python generators ({i})?"}
                    ),
                    "ask_chatgpt_web",
                )
                if i % sample_every == 0 or i == asks:
                    rss = _rss_mb(pid)
                    samples.append((i, rss))
                    raw["asks"].append(
                        {"asks": i, "rss_mb": rss, "sw_heap": await _sw_heap_mb(port)}
                    )
    raw["seconds"] = time.perf_counter() - started
    growth = growth_per_ask(samples, warmup)
    sw_first = raw["asks"][0]["sw_heap"]["used_mb"]
    sw_last = raw["asks"][-1]["sw_heap"]["used_mb"]
    sw_growth = growth_per_ask([(s["asks"], s["sw_heap"]["used_mb"]) for s in raw["asks"]], warmup)
    raw["rss_growth_mb_per_ask"] = growth
    # Growth over the measured asks against the samples' own noise: a ratio well above 1
    # is a steady trend however small the slope (the bound above is the figure's target).
    measured = [(float(a), mb) for a, mb in samples if a >= warmup] or samples[-2:]
    raw["rss_scatter_mb"] = scatter(measured) if len(measured) > 2 else None
    raw["rss_growth_over_run_mb"] = growth * (measured[-1][0] - measured[0][0])
    trend = trend_over_noise(samples, warmup)
    raw["rss_trend_over_noise"] = trend
    raw["sw_heap_growth_mb_per_ask"] = sw_growth
    figures = [
        Figure(
            f"MCP server RSS, {row['tabs']} attached tab{'s' if row['tabs'] != 1 else ''}",
            "MB",
            row["rss_mb"],
            raw["idle_rss_mb"],
            "server after start",
            None,
        )
        for row in raw["tabs"]
    ]
    figures += [
        Figure(
            f"extension SW heap, {row['tabs']} attached tab{'s' if row['tabs'] != 1 else ''}",
            "MB",
            row["sw_heap"]["used_mb"],
            None,
            "",
            None,
            note="live JS heap after a full GC",
        )
        for row in raw["tabs"]
    ]
    figures += [
        Figure(
            f"MCP server RSS after {asks} asks",
            "MB",
            samples[-1][1],
            raw["idle_rss_mb"],
            "server after start",
            None,
        ),
        Figure(
            "MCP server RSS growth per ask",
            "MB/ask",
            growth,
            None,
            "",
            GROWTH_BOUND_MB_PER_ASK,
            note=f"least-squares slope of RSS every {sample_every} asks after {warmup}",
        ),
        Figure(
            "MCP server RSS trend over asks ÷ its noise",
            "σ",
            trend,
            None,
            "",
            TREND_BOUND,
            note="growth after the warm-up in standard deviations of the samples around "
            "their line: over 3 is a steady rise, not the allocator",
        ),
        Figure(
            f"extension SW heap after {asks} asks",
            "MB",
            sw_last,
            sw_first,
            f"after {raw['asks'][0]['asks']} asks",
            None,
            note="live JS heap after a full GC",
        ),
        Figure(
            "extension SW heap growth per ask",
            "MB/ask",
            sw_growth,
            None,
            "",
            SW_GROWTH_BOUND_MB_PER_ASK,
            note="least-squares slope of the live heap, same samples",
        ),
    ]
    return figures, raw


def cli(argv: list[str] | None = None) -> int:
    """``python -m bridge.bench.memory_bench``: the memory figures alone, JSON on stdout."""
    import argparse
    import asyncio
    import tempfile

    from bridge.bench.stats import render_table
    from bridge.fakes import FakeSites

    parser = argparse.ArgumentParser(prog="python -m bridge.bench.memory_bench")
    parser.add_argument("--tabs", default="1,10,50", help="attached-tab counts, comma-separated")
    parser.add_argument("--asks", type=int, default=100)
    parser.add_argument("--sample-every", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=20, help="asks before the slope's samples")
    args = parser.parse_args(argv)
    try:
        tabs = tuple(int(n) for n in args.tabs.split(","))
    except ValueError:
        parser.error(f"--tabs: counts separated by commas, not {args.tabs!r}")
    with FakeSites() as fakes, tempfile.TemporaryDirectory(prefix="bridge-memory-") as tmp:
        try:
            figures, raw = asyncio.run(
                measure_memory(
                    fakes.chromium_args(),
                    Path(tmp) / "state",
                    tabs=tabs,
                    asks=args.asks,
                    sample_every=args.sample_every,
                    warmup=args.warmup,
                )
            )
        except ValueError as exc:
            parser.error(str(exc))
    print(render_table(figures), file=sys.stderr)
    print(json.dumps({"figures": [f.to_dict() for f in figures], "raw": raw}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(cli())
