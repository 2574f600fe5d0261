"""CDP through relay + extension against direct CDP to the same Chromium, same tab; and the
floor under bridge's round trip: the extension's own ``chrome.debugger.sendCommand`` time for
the same command (``timeCdpCommand``, docs/protocol.md#timing) plus the relay↔extension hop
(``ping``)."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bridge.bench import timed_ms
from bridge.bench.stats import Figure, median, p95
from bridge.cdp.browser import Browser
from bridge.cdp.direct import DirectCdp
from bridge.cdp.session import CdpSession
from bridge.link.transport import Transport

__all__ = ["THROUGHPUT_TURNS", "measure_cdp"]

Call = Callable[[], Awaitable[object]]

#: The command every round trip here measures, on every path.
METHOD = "Runtime.evaluate"
PARAMS: dict[str, Any] = {"expression": "1"}
IN_FLIGHT = 50
CHUNKS = 5  # how often a round's sequential paths take turns
THROUGHPUT_TURNS = 3  # how often a round's throughput paths take turns


def _middle_mean(values: list[float]) -> float:
    """The mean of the middle half: the extension's clock is coarse (0.1 ms steps, jittered),
    so one call's time is quantised, and so would be a median of them; the middle half's mean
    cancels the jitter and, like a median, leaves the outliers out."""
    ordered = sorted(values)
    quarter = len(ordered) // 4
    middle = ordered[quarter : len(ordered) - quarter] or ordered
    return sum(middle) / len(middle) if middle else float("nan")


async def _sequential(call: Call, n: int) -> list[float]:
    for _ in range(min(100, n // 5)):  # warm up both paths the same way
        await call()
    return await timed_ms(call, n)


async def _throughput(call: Call, n: int, in_flight: int) -> float:
    sem = asyncio.Semaphore(in_flight)

    async def one() -> None:
        async with sem:
            await call()

    t0 = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return n / (time.perf_counter() - t0)


async def _in_extension(
    link: Transport, tab_id: int, count: int, *, in_flight: int = 1, rounds: int = 1
) -> list[float]:
    """ms per call of ``sendCommand`` run by the extension itself, one value per round
    (``timeCdpCommand``, docs/protocol.md#timing)."""
    result = await link.request(
        "timeCdpCommand",
        {
            "tabId": tab_id,
            "method": METHOD,
            "params": PARAMS,
            "count": count,
            "inFlight": in_flight,
            "rounds": rounds,
        },
        timeout=120,
    )
    return [float(ms) for ms in result["perCallMs"]]


async def measure_cdp(
    browser: Browser,
    direct: DirectCdp,
    tab: CdpSession,
    *,
    calls: int,
    rounds: int,
    throughput_turns: int = THROUGHPUT_TURNS,
) -> tuple[list[Figure], dict[str, float]]:
    """Round trips (sequential and 50 in flight), their floor, and a full-page screenshot,
    interleaved."""
    await browser.activate_tab(tab.tab_id)
    url = await tab.evaluate("location.href")
    sid = await direct.attach_page(url)
    link = await browser.transport()

    async def via_bridge() -> object:
        return await tab.send(METHOD, PARAMS)

    async def via_direct() -> object:
        return await direct.call(METHOD, PARAMS, sid)

    async def ping() -> object:
        return await link.request("ping")

    seq_b: list[float] = []
    seq_d: list[float] = []
    seq_p: list[float] = []
    after_hop: list[float] = []  # the extension's sendCommand, one call per relay round trip
    back_to_back: list[float] = []  # the same, calls back to back (ms per call of each block)
    thr_b: list[float] = []
    thr_d: list[float] = []
    thr_s: list[float] = []
    chunk = max(20, calls // CHUNKS)
    # A throughput sample of a few hundred calls is mostly the ramp of its first window of 50
    # (and a 20 ms blip on a shared machine): at least 1000 calls, a few samples a round.
    burst = max(calls, 1000)
    await _in_extension(link, tab.tab_id, 100)  # warm up, as _sequential does
    # Interleave the paths, so drift on a shared machine hits all of them: the sequential
    # ones take turns CHUNKS times a round.
    for _ in range(rounds):
        for _ in range(max(1, calls // chunk)):
            seq_b += await _sequential(via_bridge, chunk)
            seq_d += await _sequential(via_direct, chunk)
            seq_p += await _sequential(ping, chunk)
            for _ in range(chunk):
                after_hop += await _in_extension(link, tab.tab_id, 1)
            back_to_back += await _in_extension(link, tab.tab_id, chunk, rounds=max(1, chunk // 20))
        for _ in range(throughput_turns):
            thr_b.append(await _throughput(via_bridge, burst, IN_FLIGHT))
            thr_d.append(await _throughput(via_direct, burst, IN_FLIGHT))
            per_call = await _in_extension(link, tab.tab_id, burst, in_flight=IN_FLIGHT)
            thr_s.append(1000 / per_call[0])

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

    send_command_ms = _middle_mean(after_hop)
    ping_ms = median(seq_p)
    figures = [
        Figure("CDP round trip, median", "ms", median(seq_b), median(seq_d), "direct CDP", 1.25),
        Figure("CDP round trip, p95", "ms", p95(seq_b), p95(seq_d), "direct CDP", None),
        Figure(
            "CDP round trip vs floor",
            "ms",
            median(seq_b),
            send_command_ms + ping_ms,
            "extension's sendCommand + ping",
            1.15,
        ),
        Figure(
            f"CDP throughput, {IN_FLIGHT} in flight",
            "calls/s",
            median(thr_b),
            median(thr_d),
            "direct CDP",
            0.8,
            higher_is_better=True,
        ),
        Figure(
            f"CDP throughput, {IN_FLIGHT} in flight, vs the extension alone",
            "calls/s",
            median(thr_b),
            median(thr_s),
            "sendCommand in the extension",
            0.95,
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
        "relay_extension_ping_ms": ping_ms,
        # The floor's parts: the relay hop, and chrome.debugger.sendCommand for the same
        # command timed by the extension, as a cdpCommand meets it (right after a relay hop,
        # Chrome's threads having idled meanwhile) and back to back (warm: faster).
        "extension_send_command_ms": send_command_ms,
        "extension_send_command_back_to_back_ms": median(back_to_back),
        "floor_ms": send_command_ms + ping_ms,
        "bridge_over_floor_ms": median(seq_b) - (send_command_ms + ping_ms),
        "bridge_calls_per_s": median(thr_b),
        "direct_calls_per_s": median(thr_d),
        "extension_calls_per_s": median(thr_s),
        "python_cpu_ms_per_call": python_cpu_ms,
        "bridge_wall_ms_per_call": wall_ms,
    }
    return figures, profile
