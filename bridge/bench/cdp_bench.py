"""CDP through relay + extension against direct CDP to the same Chromium, same tab."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Awaitable, Callable

from bridge.bench.stats import Figure, median, p95
from bridge.browser import Browser
from bridge.cdp import CdpSession
from bridge.direct import DirectCdp

__all__ = ["measure_cdp"]

Call = Callable[[], Awaitable[object]]


async def _sequential(call: Call, n: int) -> list[float]:
    for _ in range(min(100, n // 5)):  # warm up both paths the same way
        await call()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        await call()
        out.append((time.perf_counter() - t0) * 1000)
    return out


async def _throughput(call: Call, n: int, in_flight: int) -> float:
    sem = asyncio.Semaphore(in_flight)

    async def one() -> None:
        async with sem:
            await call()

    t0 = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return n / (time.perf_counter() - t0)


async def measure_cdp(
    browser: Browser, direct: DirectCdp, tab: CdpSession, *, calls: int, rounds: int
) -> tuple[list[Figure], dict[str, float]]:
    """Round trips (sequential and 50 in flight) and a full-page screenshot, interleaved."""
    await browser.activate_tab(tab.tab_id)
    url = await tab.evaluate("location.href")
    target = next(t for t in await direct.targets("page") if t["url"] == url)
    sid = await direct.attach(target["targetId"])
    link = await browser.transport()

    async def via_bridge() -> object:
        return await tab.send("Runtime.evaluate", {"expression": "1"})

    async def via_direct() -> object:
        return await direct.call("Runtime.evaluate", {"expression": "1"}, sid)

    async def ping() -> object:
        return await link.request("ping")

    seq_b: list[float] = []
    seq_d: list[float] = []
    seq_p: list[float] = []
    thr_b: list[float] = []
    thr_d: list[float] = []
    # Interleave the two paths round by round, so drift on a shared machine hits both.
    for _ in range(rounds):
        seq_b += await _sequential(via_bridge, calls)
        seq_d += await _sequential(via_direct, calls)
        seq_p += await _sequential(ping, max(100, calls // 4))
        thr_b.append(await _throughput(via_bridge, calls, 50))
        thr_d.append(await _throughput(via_direct, calls, 50))

    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    for _ in range(calls):
        await via_bridge()
    python_cpu_ms = (time.process_time() - cpu0) * 1000 / calls
    wall_ms = (time.perf_counter() - wall0) * 1000 / calls

    # A full-page screenshot of a tall page: the large-payload path (the tab is the active
    # one: a hidden tab makes no frames to capture).
    await tab.evaluate(
        "document.body.style.margin='0';document.body.innerHTML="
        "'<div style=\"height:4000px;background:linear-gradient(red,blue)\"></div>'"
    )
    shot = {"format": "png", "captureBeyondViewport": True}
    big_b: list[float] = []
    big_d: list[float] = []
    size = 0
    for _ in range(max(2, rounds * 2)):
        t0 = time.perf_counter()
        data = (await tab.send("Page.captureScreenshot", shot, timeout=120))["data"]
        big_b.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        await direct.call("Page.captureScreenshot", shot, sid)
        big_d.append((time.perf_counter() - t0) * 1000)
        size = len(base64.b64decode(data))
    await direct.call("Target.detachFromTarget", {"sessionId": sid})

    figures = [
        Figure("CDP round trip, median", "ms", median(seq_b), median(seq_d), "direct CDP", 1.25),
        Figure("CDP round trip, p95", "ms", p95(seq_b), p95(seq_d), "direct CDP", None),
        Figure(
            "CDP throughput, 50 in flight",
            "calls/s",
            median(thr_b),
            median(thr_d),
            "direct CDP",
            0.8,
            higher_is_better=True,
        ),
        Figure(
            f"full-page screenshot ({size / 1e6:.1f} MB)",
            "ms",
            median(big_b),
            median(big_d),
            "direct CDP",
            None,
        ),
    ]
    profile = {
        "bridge_rtt_ms": median(seq_b),
        "direct_rtt_ms": median(seq_d),
        "relay_extension_ping_ms": median(seq_p),
        "python_cpu_ms_per_call": python_cpu_ms,
        "bridge_wall_ms_per_call": wall_ms,
    }
    return figures, profile
