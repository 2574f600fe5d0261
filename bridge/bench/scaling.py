"""``python -m bridge.bench.scaling [--quick] [--out reports]``: how bridge's costs grow.

Curves measured in one run on one browser (the fake sites, a headless Chromium):

- ``tabs_attached``: the round trip of ``Runtime.evaluate`` on one tab (p50, p95) while N
  tabs are attached through bridge, and direct CDP to the same tab at the same moment (the
  browser's own cost of N tabs, the reference);
- ``concurrent_asks``: N asks at once, each with its own session key and tab, new chat, a
  fixed-length answer: the batch's wall time ÷ a single ask's (1 = fully parallel; the
  dashed line is N, one after another);
- ``answer_size``: the extraction step (the ``extracting`` progress mark to ``done``) for
  answers of 1 k to 1 M characters, with the source the answer came from at each point;
- ``snapshot_time`` and ``snapshot_size``: the browser tools' snapshot (MCP
  ``browser_snapshot``) of a local page of N elements, against direct CDP's
  ``Accessibility.getFullAXTree`` (time) and the page's ``innerText`` (size).

JSON (``scaling-<timestamp>.json``) and one SVG per curve beside it
(``scaling-<timestamp>-<curve>.svg``). ``measure_scaling`` is the entry point for a
caller with its own runtime (``python -m bridge.bench``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bridge.app.runtime import Runtime
from bridge.bench import fake_site_runtime, serve_pages, timed_ms
from bridge.bench.charts import Curve, Point, Series, write_charts
from bridge.bench.stats import median, p95
from bridge.cdp.direct import DirectCdp
from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError
from bridge.fakes import CHATGPT_URL, Behaviour, FakeSites, QuestionRecord
from bridge.providers.results import AskResult, Progress

__all__ = ["Curve", "Point", "Series", "Settings", "main", "measure_scaling", "write_charts"]

#: The MCP ``browser_snapshot`` tool's cap (bridge/mcp/browser_tools.py).
MCP_SNAPSHOT_CHARS = 200_000


@dataclass(frozen=True)
class Settings:
    """What each curve varies, and how much is measured at each point."""

    tabs: tuple[int, ...] = (1, 5, 10, 25, 50)
    concurrent: tuple[int, ...] = (1, 2, 5, 10)
    sizes: tuple[int, ...] = (1_000, 10_000, 100_000, 1_000_000)
    nodes: tuple[int, ...] = (100, 1_000, 10_000)
    calls: int = 300  # round trips per tab count (each path)
    batches: int = 2  # batches of asks per concurrency level
    answer_ms: int = 1_500  # how long each concurrent answer streams
    snapshots: int = 3  # snapshots per page

    @classmethod
    def of(cls, quick: bool) -> Settings:
        if not quick:
            return cls()
        return cls(
            tabs=(1, 5, 10),
            concurrent=(1, 2),
            sizes=(1_000, 100_000),
            nodes=(100, 1_000),
            calls=60,
            batches=1,
            answer_ms=500,
            snapshots=1,
        )


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- local pages ----------------------------------------------------------------------------


def nodes_page(n: int) -> str:
    """An HTML page of about ``n`` elements in ``<main>``: sections of ten (a heading, a
    paragraph with a link and bold text, a two-item list, a button and a text field), the
    mix of an ordinary page."""
    sections = max(1, round(n / 10))
    parts = [
        f'<section><h3>Item {i}</h3><p>Text of item {i}, <a href="#i{i}">its link</a> and '
        f"<b>a bold word</b>.</p><ul><li>first {i}</li><li>second {i}</li></ul>"
        f'<button>Act {i}</button><input aria-label="Note {i}"></section>'
        for i in range(sections)
    ]
    return f"<!doctype html><title>{n} nodes</title><main>{''.join(parts)}</main>"


def _page(path: str, query: Mapping[str, list[str]]) -> str | None:
    if path == "/nodes":
        return nodes_page(int(query.get("n", ["100"])[0]))
    if path == "/idle":
        tab = query.get("tab", [""])[0]
        return f"<!doctype html><title>idle {tab}</title><h1>Idle tab {tab}</h1><p>Nothing.</p>"
    return None


async def _close_quietly(runtime: Runtime, tab_id: int) -> None:
    with contextlib.suppress(BridgeError):
        await runtime.browser.close_tab(tab_id)


# -- 1. tabs attached ---------------------------------------------------------------------------


async def _open_tabs(runtime: Runtime, base: str, first: int, count: int) -> list[CdpSession]:
    """``count`` more tabs at idle pages, attached through bridge, a few at a time."""
    limit = asyncio.Semaphore(4)

    async def one(i: int) -> CdpSession:
        async with limit:
            return await runtime.browser.new_tab(f"{base}/idle?tab={i}")

    return list(await asyncio.gather(*(one(first + i) for i in range(count))))


async def tabs_curve(
    runtime: Runtime, base: str, direct: DirectCdp | None, settings: Settings
) -> Curve:
    curve = Curve(
        "tabs_attached",
        "CDP round trip while N tabs are attached",
        "tabs attached through bridge",
        "",
        "Runtime.evaluate round trip",
        "ms",
        note="sequential calls on one tab; the other tabs are idle pages, attached (Page "
        "domain on). Direct CDP: the same tab over the browser's DevTools port, same moment.",
    )
    b50, b95 = curve.line("bridge p50"), curve.line("bridge p95")
    d50 = curve.line("direct CDP p50", reference=True) if direct else None
    d95 = curve.line("direct CDP p95", reference=True) if direct else None
    probe_url = f"{base}/idle?tab=probe"
    probe = await runtime.browser.new_tab(probe_url)
    extra: list[CdpSession] = []
    sid: str | None = None
    try:
        await runtime.browser.activate_tab(probe.tab_id)
        if direct is not None:
            sid = await direct.attach_page(probe_url)

        async def via_bridge() -> object:
            return await probe.send("Runtime.evaluate", {"expression": "1"})

        async def via_direct() -> object:
            assert direct is not None
            return await direct.call("Runtime.evaluate", {"expression": "1"}, sid)

        await timed_ms(via_bridge, max(20, settings.calls // 5))  # warm both paths up
        if direct is not None:
            await timed_ms(via_direct, max(20, settings.calls // 5))
        for n in settings.tabs:
            more = n - 1 - len(extra)
            t0 = time.perf_counter()
            if more > 0:
                extra += await _open_tabs(runtime, base, len(extra), more)
            open_ms = (time.perf_counter() - t0) * 1000 / more if more > 0 else None
            bridge_ms: list[float] = []
            direct_ms: list[float] = []
            for _ in range(2):  # interleaved halves: drift on a shared machine hits both
                bridge_ms += await timed_ms(via_bridge, settings.calls // 2)
                if direct is not None:
                    direct_ms += await timed_ms(via_direct, settings.calls // 2)
            b50.add(n, median(bridge_ms), calls=len(bridge_ms), open_ms_per_tab=open_ms)
            b95.add(n, p95(bridge_ms))
            if d50 is not None and d95 is not None:
                d50.add(n, median(direct_ms), calls=len(direct_ms))
                d95.add(n, p95(direct_ms))
            _say(
                f"  {n} tabs: bridge p50 {median(bridge_ms):.3f} ms p95 {p95(bridge_ms):.3f} ms"
                + (f"; direct p50 {median(direct_ms):.3f} ms" if direct_ms else "")
            )
    finally:
        if direct is not None and sid is not None:
            with contextlib.suppress(Exception):
                await direct.call("Target.detachFromTarget", {"sessionId": sid})
        for tab in [*extra, probe]:
            await _close_quietly(runtime, tab.tab_id)
    return curve


# -- 2. concurrent asks -------------------------------------------------------------------------


async def _ask_batch(runtime: Runtime, keys: list[str], tag: str) -> tuple[float, list[AskResult]]:
    t0 = time.perf_counter()
    results = await asyncio.gather(
        *(
            runtime.bridge.ask(
                "chatgpt", f"Scaling question {tag}.{i}", session_key=key, new_chat=True
            )
            for i, key in enumerate(keys)
        )
    )
    return (time.perf_counter() - t0) * 1000, list(results)


def _steps(results: list[AskResult]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for r in results:
        for step, ms in r.timings.to_dict().items():
            out.setdefault(step, []).append(ms)
    return out


def _page_answer_ms(
    results: list[AskResult], records: dict[str, QuestionRecord]
) -> dict[str, float] | None:
    spans = [
        (rec.completed_at - rec.received_at) * 1000
        for r in results
        if (rec := records.get(r.question)) is not None and rec.completed_at is not None
    ]
    if not spans:
        return None
    return {"median": round(median(spans), 1), "max": round(max(spans), 1)}


def _arrival_spread_ms(results: list[AskResult], records: list[QuestionRecord]) -> float:
    asked = {r.question for r in results}
    arrived = [rec.received_at for rec in records if rec.text in asked]
    return (max(arrived) - min(arrived)) * 1000 if arrived else float("nan")


async def concurrency_curve(runtime: Runtime, fakes: FakeSites, settings: Settings) -> Curve:
    curve = Curve(
        "concurrent_asks",
        "N asks at once (ChatGPT fake)",
        "asks at once",
        "",
        "batch wall time ÷ one ask's",
        "×",
        note=f"each ask its own session key and tab, new chat, a {settings.answer_ms} ms "
        "answer; 1× is fully parallel, the dashed line (N×) one after another. Over 6 at "
        "once the fake (HTTP/1.1) meets Chromium's 6 connections per host: the 7th question "
        "waits for a stream to end (arrival_spread_ms)",
    )
    measured = curve.line("wall time ratio")
    serial = curve.line("one after another (N×)", reference=True)
    site = fakes.chatgpt
    previous = site.behaviour
    site.set_behaviour(Behaviour(duration_ms=settings.answer_ms))
    store = runtime.bridge.store
    # One tab per key, opened and recorded beforehand: every ask then finds its own tab
    # (an ask without a recorded tab would take any open ChatGPT tab, another key's too).
    levels = sorted({1, *settings.concurrent})  # one ask alone: the reference
    width = max(levels)
    keys = [f"scaling-k{i}" for i in range(width)]
    tabs: list[CdpSession] = []
    try:
        for key in keys:
            tab = await runtime.browser.new_tab(CHATGPT_URL)
            tabs.append(tab)
            await store.put_session_async(key, "chatgpt", CHATGPT_URL, tab.tab_id)
        await _ask_batch(runtime, keys[:1], "warm-up")
        walls: dict[int, list[float]] = {}
        samples: dict[int, list[AskResult]] = {}
        spreads: dict[int, list[float]] = {}
        for batch in range(settings.batches):
            # Levels in turn within a round, so drift hits all of them alike.
            for n in levels:
                wall, results = await _ask_batch(runtime, keys[:n], f"{n}.{batch}")
                walls.setdefault(n, []).append(wall)
                samples.setdefault(n, []).extend(results)
                spreads.setdefault(n, []).append(_arrival_spread_ms(results, site.records))
        single = median(walls[1])
        records = {r.text: r for r in site.records}
        for n in levels:
            wall = median(walls[n])
            results = samples[n]
            measured.add(
                n,
                wall / single,
                wall_ms=[round(w, 1) for w in walls[n]],
                single_ask_ms=round(single, 1),
                # Which step grows: each step's median and slowest over the level's asks,
                # and the fake page's own time from question to its finished state.
                steps_ms={
                    step: {"median": round(median(v), 1), "max": round(max(v), 1)}
                    for step, v in _steps(results).items()
                },
                page_answer_ms=_page_answer_ms(results, records),
                # First to last question reaching the site, per batch: more than the asks'
                # own spread when the browser holds requests back (connections per host).
                arrival_spread_ms=[round(v, 1) for v in spreads[n]],
                tabs=sorted({r.used.tab for r in results}),
            )
            serial.add(n, float(n))
            _say(f"  {n} at once: {wall:.0f} ms, {wall / single:.2f}× one ask ({single:.0f} ms)")
    finally:
        site.set_behaviour(previous)
        for tab in tabs:
            await _close_quietly(runtime, tab.tab_id)
        for key in keys:
            with contextlib.suppress(OSError):
                await asyncio.to_thread(store.forget_session, key, "chatgpt")
    return curve


# -- 3. answer size -----------------------------------------------------------------------------

_BLOCK = (
    "## Part {k}\n\n"
    "Generators produce values lazily: each call to `next()` resumes the function where it "
    "yielded, so a **pipeline** of generators handles one item at a time ({k}).\n\n"
    "- first point of part {k}\n- second point, with `code` in it\n\n"
    "```python\ndef part_{k}():\n    yield {k}\n```\n\n"
)


def sized_answer(chars: int) -> str:
    """Markdown of exactly ``chars`` characters: headings, paragraphs with inline markup,
    lists and code blocks, repeated; a plain paragraph fills up the end."""
    out: list[str] = []
    total = 0
    k = 0
    while True:
        block = _BLOCK.format(k=k)
        if total + len(block) > chars - 40:
            break
        out.append(block)
        total += len(block)
        k += 1
    rest = chars - total
    filler = ("End of the answer. " * (rest // 19 + 2))[: max(0, rest - 1)].rstrip() + "."
    text = "".join(out) + filler
    return text[:chars] if len(text) >= chars else text + "." * (chars - len(text))


async def size_curve(runtime: Runtime, fakes: FakeSites, settings: Settings) -> Curve:
    curve = Curve(
        "answer_size",
        "Extracting the answer, by its size (ChatGPT fake)",
        "answer",
        "characters",
        "extraction",
        "ms",
        note="the 'extracting' progress mark to 'done' (every source is read, then one "
        "chosen); the winning source is noted at each point",
    )
    extract = curve.line("extraction")
    wait = curve.line("whole ask (total_ms)", reference=True)
    key = "scaling-size"
    store = runtime.bridge.store
    tab = await runtime.browser.new_tab(CHATGPT_URL)
    try:
        await store.put_session_async(key, "chatgpt", CHATGPT_URL, tab.tab_id)
        for size in settings.sizes:
            text = sized_answer(size)
            # Big chunks: about 16 of them, so the streaming itself stays short.
            fakes.chatgpt.queue(Behaviour(answer=text, chunk_chars=max(64, size // 16)))
            marks: dict[str, float] = {}

            def mark(progress: Progress, marks: dict[str, float] = marks) -> None:
                # The last of each phase: the completion loop says "done" before extracting.
                marks[progress.phase] = time.perf_counter()

            result = await runtime.bridge.ask(
                "chatgpt",
                f"Scaling answer of {size} characters",
                session_key=key,
                new_chat=True,
                on_progress=mark,
            )
            extract_ms = (marks["done"] - marks["extracting"]) * 1000
            used = result.used
            extract.add(
                size,
                extract_ms,
                source=used.extraction,
                dom_step=used.extraction_step,
                fallbacks=list(used.fallbacks),
                answer_chars=len(result.answer),
                exact=result.answer == text.strip(),
                wait_response_ms=round(result.timings.wait_response_ms, 1),
            )
            wait.add(size, result.timings.total_ms)
            _say(
                f"  {size} chars: extraction {extract_ms:.0f} ms from {used.extraction!r}"
                f" (ask {result.timings.total_ms:.0f} ms, {len(result.answer)} chars back)"
            )
    finally:
        await _close_quietly(runtime, tab.tab_id)
        with contextlib.suppress(OSError):
            await asyncio.to_thread(store.forget_session, key, "chatgpt")
    return curve


# -- 4. snapshots -------------------------------------------------------------------------------


async def snapshot_curves(
    runtime: Runtime, base: str, direct: DirectCdp | None, settings: Settings
) -> tuple[Curve, Curve]:
    timing = Curve(
        "snapshot_time",
        "browser_snapshot time, by page size",
        "elements on the page",
        "",
        "snapshot",
        "ms",
        note="BrowserTools.snapshot (MCP browser_snapshot, uncapped); the reference is "
        "direct CDP's Accessibility.getFullAXTree of the same tab (the browser's share)",
    )
    sizing = Curve(
        "snapshot_size",
        "browser_snapshot size, by page size",
        "elements on the page",
        "",
        "snapshot",
        "characters",
        note=f"the MCP tool caps it at {MCP_SNAPSHOT_CHARS // 1000}k characters; the "
        "reference is the page's visible text (innerText)",
    )
    t50 = timing.line("snapshot p50")
    tref = timing.line("direct CDP getFullAXTree p50", reference=True) if direct else None
    chars = sizing.line("snapshot")
    text = sizing.line("page innerText", reference=True)
    tools = runtime.bridge.browser_tools("scaling")
    try:
        for n in settings.nodes:
            url = f"{base}/nodes?n={n}"
            await tools.navigate(url)
            elements = int(await tools.evaluate("() => document.querySelectorAll('*').length"))
            inner = int(await tools.evaluate("() => document.body.innerText.length"))
            times: list[float] = []
            size = 0
            for _ in range(settings.snapshots):
                t0 = time.perf_counter()
                snapshot = await tools.snapshot()
                times.append((time.perf_counter() - t0) * 1000)
                size = len(snapshot)
            t50.add(n, median(times), samples_ms=[round(t, 1) for t in times], elements=elements)
            chars.add(n, size, elements=elements, mcp_truncates=size > MCP_SNAPSHOT_CHARS)
            text.add(n, inner)
            line = f"  {n} nodes ({elements} elements): {median(times):.0f} ms, {size} chars"
            if direct is not None and tref is not None:
                ref = await _direct_ax_tree(direct, url, settings.snapshots)
                tref.add(n, median(ref))
                line += f"; getFullAXTree direct {median(ref):.0f} ms"
            _say(line)
    finally:
        if tools.current is not None:
            await _close_quietly(runtime, tools.current)
        await runtime.bridge.tools.leave("scaling")
    return timing, sizing


async def _direct_ax_tree(direct: DirectCdp, url: str, times: int) -> list[float]:
    sid = await direct.attach_page(url)
    try:
        return await timed_ms(
            lambda: direct.call("Accessibility.getFullAXTree", {}, sid, timeout=120), times
        )
    finally:
        await direct.call("Target.detachFromTarget", {"sessionId": sid})


# -- all of them --------------------------------------------------------------------------------


async def measure_scaling(
    runtime: Runtime, fakes: FakeSites, *, quick: bool, settings: Settings | None = None
) -> dict[str, Curve]:
    """Every curve, by name. ``runtime``: started, its browser launched with the fakes'
    ``chromium_args()``; with ``remote_debugging=True`` the direct CDP references are
    measured too (else left out). Tabs it opens are closed again, and the ChatGPT fake's
    default behaviour is put back as it was (its queue should be empty: this queues the
    answer-size answers)."""
    settings = settings or Settings.of(quick)
    await runtime.connected(30)
    launched = runtime.launched
    devtools = launched.devtools_url if launched is not None else None
    curves: dict[str, Curve] = {}
    async with contextlib.AsyncExitStack() as stack:
        base = stack.enter_context(serve_pages(_page))
        direct = await stack.enter_async_context(DirectCdp(devtools)) if devtools else None
        _say(f"scaling: round trips with {', '.join(map(str, settings.tabs))} tabs attached…")
        curves["tabs_attached"] = await tabs_curve(runtime, base, direct, settings)
        _say(f"scaling: {', '.join(map(str, settings.concurrent))} asks at once…")
        curves["concurrent_asks"] = await concurrency_curve(runtime, fakes, settings)
        _say(f"scaling: answers of {', '.join(map(str, settings.sizes))} characters…")
        curves["answer_size"] = await size_curve(runtime, fakes, settings)
        _say(f"scaling: snapshots of {', '.join(map(str, settings.nodes))}-node pages…")
        timing, sizing = await snapshot_curves(runtime, base, direct, settings)
        curves[timing.name] = timing
        curves[sizing.name] = sizing
    return curves


def _ints(text: str) -> tuple[int, ...]:
    values = tuple(int(float(v)) for v in text.split(",") if v.strip())
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"a comma-separated list of positive numbers: {text!r}")
    return values


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bridge.bench.scaling", description=__doc__.splitlines()[0]
    )
    p.add_argument("--quick", action="store_true", help="fewer, smaller points (< 20 s)")
    p.add_argument("--out", type=Path, default=Path("reports"), help="where JSON and SVGs go")
    p.add_argument("--tabs", type=_ints, help="tab counts, e.g. 1,5,10")
    p.add_argument("--concurrent", type=_ints, help="asks at once, e.g. 1,2,5")
    p.add_argument("--sizes", type=_ints, help="answer sizes in characters, e.g. 1000,100000")
    p.add_argument("--nodes", type=_ints, help="page sizes in elements, e.g. 100,1000")
    p.add_argument("--calls", type=int, help="round trips per tab count")
    p.add_argument("--answer-ms", type=int, help="how long each concurrent answer streams")
    p.add_argument("--browser-path", help="Chromium/Chrome to measure")
    return p.parse_args(argv)


def settings_from_args(args: argparse.Namespace) -> Settings:
    settings = Settings.of(args.quick)
    changes: dict[str, Any] = {
        name: getattr(args, name)
        for name in ("tabs", "concurrent", "sizes", "nodes", "calls", "answer_ms")
        if getattr(args, name) is not None
    }
    return replace(settings, **changes)


async def _run(args: argparse.Namespace, settings: Settings) -> tuple[dict[str, Curve], str]:
    options: dict[str, object] = {"remote_debugging": True}
    if args.browser_path:
        options["browser_path"] = args.browser_path
    with fake_site_runtime("scaling", **options) as (fakes, runtime):
        async with runtime:
            await runtime.connected(30)
            assert runtime.launched is not None and runtime.launched.devtools_url
            async with DirectCdp(runtime.launched.devtools_url) as direct:
                version = str((await direct.call("Browser.getVersion"))["product"])
            curves = await measure_scaling(runtime, fakes, quick=args.quick, settings=settings)
    return curves, version


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return None if not math.isfinite(value) else round(value, 4)
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_round(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    settings = settings_from_args(args)
    started = time.monotonic()
    curves, version = asyncio.run(_run(args, settings))
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    stem = f"scaling-{stamp}"
    report = {
        "created_at": datetime.now(UTC).isoformat(),
        "quick": args.quick,
        "settings": asdict(settings),
        "machine": {
            "cores": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "browser": version,
        },
        "seconds": round(time.monotonic() - started, 1),
        "curves": {name: _round(curve.to_dict()) for name, curve in curves.items()},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{stem}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    tmp.replace(path)
    charts = write_charts(curves, args.out, stem)
    for curve in curves.values():
        print(f"{curve.title} ({curve.y_unit}):")
        for series in curve.series:
            points = ", ".join(f"{p.x:g}: {p.y:.4g}" for p in series.points)
            print(f"  {series.name}: {points}")
    print(f"\n{version}, {os.cpu_count()} cores, {report['seconds']} s; wrote {path}")
    for chart in charts:
        print(f"  {chart}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
