"""``python -m bridge.bench [--quick]``: bridge's figures, each against a reference measured
in the same run on the same browser; a table on stdout and JSON in reports/."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bridge.app.runtime import Runtime, RuntimeOptions
from bridge.bench.ask_bench import measure_asks
from bridge.bench.capture_bench import measure_capture
from bridge.bench.cdp_bench import THROUGHPUT_TURNS, measure_cdp
from bridge.bench.handshake_bench import measure_handshake
from bridge.bench.memory_bench import measure_memory, memory_curves
from bridge.bench.page_cost import measure_page_cost
from bridge.bench.peers import measure_peers
from bridge.bench.scaling import Curve, measure_scaling, write_charts
from bridge.bench.startup import measure_mcp_server, measure_relay_connect
from bridge.bench.stats import Figure, compare, render_table
from bridge.cdp.direct import DirectCdp
from bridge.fakes import FakeSites
from bridge.providers.results import PROVIDERS


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bridge.bench", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a < 1 min smoke run (figures are rough)")
    p.add_argument("--calls", type=int, help="CDP calls per round (default 1000, quick 200)")
    p.add_argument("--rounds", type=int, help="interleaved CDP rounds (default 3, quick 1)")
    p.add_argument("--runs", type=int, help="asks per figure (default 10, quick 1)")
    p.add_argument("--out", type=Path, default=Path("reports"), help="where the JSON goes")
    p.add_argument("--browser-path", help="Chromium/Chrome to measure")
    p.add_argument("--skip-mcp", action="store_true", help="skip the MCP server start-up figures")
    p.add_argument(
        "--skip-peers",
        action="store_true",
        help="skip the comparison with playwright-mcp (skipped anyway with --quick)",
    )
    p.add_argument(
        "--compare",
        type=Path,
        metavar="OLD.json",
        help="print each figure's change against an earlier report (a regression reads WORSE)",
    )
    return p.parse_args(argv)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    calls = args.calls or (200 if args.quick else 1000)
    rounds = args.rounds or (1 if args.quick else 3)
    runs = args.runs or (1 if args.quick else 10)  # quick: one sample each, every figure
    figures: list[Figure] = []
    profile: dict[str, Any] = {}
    with FakeSites() as fakes, tempfile.TemporaryDirectory(prefix="bridge-bench-") as tmp:
        runtime = Runtime(
            RuntimeOptions(
                launch=True,
                headless=True,
                isolated=True,
                remote_debugging=True,  # the reference: direct CDP to the same browser
                browser_path=args.browser_path,
                chrome_args=fakes.chromium_args(),
                state_dir=Path(tmp) / "state",
                session_key="bench",
            )
        )
        async with runtime:
            launched = runtime.launched
            assert launched is not None and launched.devtools_url
            browser = runtime.browser
            await runtime.connected(30)
            async with DirectCdp(launched.devtools_url) as direct:
                version = (await direct.call("Browser.getVersion"))["product"]
                tab = await browser.new_tab("about:blank")
                print(f"measuring CDP ({rounds} × {calls} calls)…", file=sys.stderr, flush=True)
                cdp_figures, profile["round_trip"] = await measure_cdp(
                    browser,
                    direct,
                    tab,
                    calls=calls,
                    rounds=rounds,
                    # quick: one throughput sample per path (each is 1000+ calls)
                    throughput_turns=1 if args.quick else THROUGHPUT_TURNS,
                )
                figures += cdp_figures
                await tab.close()
            print(f"measuring asks ({runs} per figure)…", file=sys.stderr, flush=True)
            ask_figures, profile["asks"] = await measure_asks(
                runtime.bridge, fakes, runs=runs, quick=args.quick
            )
            figures += ask_figures
            print("measuring what a capture costs an ask…", file=sys.stderr, flush=True)
            capture_figures, profile["capture"] = await measure_capture(
                runtime.bridge, fakes, runs=runs
            )
            figures += capture_figures
            print("measuring page cost…", file=sys.stderr, flush=True)
            page_figures, profile["page_cost"] = await measure_page_cost(
                runtime,
                fakes,
                launched.devtools_url,
                turns=20 if args.quick else 200,  # quick: still 4× the short page's
                asks=1 if args.quick else 4,
                providers=("chatgpt",) if args.quick else PROVIDERS,
            )
            figures += page_figures
            print("measuring scaling curves…", file=sys.stderr, flush=True)
            curves = await measure_scaling(runtime, fakes, quick=args.quick)
            figures += await measure_relay_connect(launched, max(2, runs // 2))
        if not args.skip_mcp:
            print("measuring the MCP server…", file=sys.stderr, flush=True)
            # --quick: one spawn and one ask (each launched server costs seconds); the
            # figures are then single samples, rough as the rest of a smoke run.
            figures += await measure_mcp_server(
                fakes.chromium_args(),
                Path(tmp),
                runs=1 if args.quick else max(2, runs // 3),
                asks=1 if args.quick else max(2, runs),
            )
        print("measuring memory (tabs, asks)…", file=sys.stderr, flush=True)
        memory_figures, profile["memory"] = await measure_memory(
            fakes.chromium_args(),
            Path(tmp) / "memory",
            # --quick: the shape of the run in ~15 s; its slope is a rough one.
            tabs=(1, 3) if args.quick else (1, 10, 50),
            asks=6 if args.quick else 100,
            sample_every=2 if args.quick else 10,
            warmup=2 if args.quick else 20,
        )
        figures += memory_figures
        curves.update((c.name, c) for c in memory_curves(profile["memory"]))
    if args.quick:
        profile["handshake"] = {"skipped": "--quick"}
    else:
        print("measuring the trust handshake (today vs before it)…", file=sys.stderr, flush=True)
        handshake_figures, profile["handshake"] = await asyncio.to_thread(measure_handshake)
        figures += handshake_figures
    if args.quick or args.skip_peers:
        profile["peers"] = {"skipped": "--quick" if args.quick else "--skip-peers"}
    else:
        print("comparing with playwright-mcp…", file=sys.stderr, flush=True)
        peer_figures, profile["peers"] = await measure_peers(
            rounds=5, quick=False, browser_path=args.browser_path
        )
        figures += peer_figures
        if "skipped" in profile["peers"]:
            print(f"  skipped: {profile['peers']['skipped']}", file=sys.stderr, flush=True)
    return {
        "created_at": datetime.now(UTC).isoformat(),
        "quick": args.quick,
        "settings": {"calls": calls, "rounds": rounds, "runs": runs},
        "machine": {
            "cores": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "browser": version,
        },
        "figures": [f.to_dict() for f in figures],
        "curves": {name: curve.to_dict() for name, curve in curves.items()},
        "profile": profile,
        "_figures": figures,
        "_curves": curves,
    }


def _old_figures(path: Path) -> list[dict[str, Any]]:
    """The figures of an earlier report; ValueError saying what is wrong with the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from exc
    figures = data.get("figures") if isinstance(data, dict) else None
    if not isinstance(figures, list) or not all(
        isinstance(f, dict) and "name" in f for f in figures
    ):
        raise ValueError(f"{path} is no bridge.bench report (no 'figures' list)")
    return figures


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    old: list[dict[str, Any]] | None = None
    if args.compare is not None:
        try:  # before measuring: a bad file should not cost a whole run
            old = _old_figures(args.compare)
        except ValueError as exc:
            print(f"error: --compare: {exc}", file=sys.stderr)
            return 2
    started = time.monotonic()
    report = asyncio.run(run(args))
    figures: list[Figure] = report.pop("_figures")
    curves: dict[str, Curve] = report.pop("_curves")
    report["seconds"] = round(time.monotonic() - started, 1)
    print(render_table(figures))
    rt = report["profile"].get("round_trip", {})
    if rt:
        print(
            "\nwhere one round trip goes: bridge {bridge_rtt_ms:.3f} ms = relay↔extension "
            "(ping, no CDP) {relay_extension_ping_ms:.3f} ms + the extension's own "
            "chrome.debugger.sendCommand {extension_send_command_ms:.3f} ms (the floor, "
            "{floor_ms:.3f} ms) + bridge's own {bridge_over_floor_ms:.3f} ms; direct CDP "
            "{direct_rtt_ms:.3f} ms; bridge's Python CPU "
            "{python_cpu_ms_per_call:.3f} ms/call".format(**rt)
        )
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = args.out / f"bench-{stamp}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=2, default=str) + "\n")
    tmp.replace(path)
    pictures = write_charts(curves.values(), args.out, path.stem)
    for curve in curves.values():
        print(f"\n{curve.title} ({curve.y_unit}):")
        for series in curve.series:
            points = ", ".join(f"{p.x:g}→{p.y:.3g}" for p in series.points)
            print(f"  {series.name}: {points}")
    print(f"\ncurves drawn: {', '.join(str(p) for p in pictures)}")
    print(f"\n{report['machine']['browser']}, {report['machine']['cores']} cores; wrote {path}")
    if old is not None:
        print(f"\nagainst {args.compare}:\n")
        print(compare(old, report["figures"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
