"""``python -m bridge.bench.handshake_bench``: what the trust handshake costs on connecting.

Relay start → extension connected (the native host announces the relay; the extension dials
it, and with the handshake both prove the secret before ``welcome``), median of ``--relays``
relays started one after another while one launched browser runs. Measured for today's
bridge and for bridge at ``--before-ref`` (before the handshake: hello, then welcome), each
in a process of its own with its own extension, in alternating rounds on the same machine,
so both see the same load. Prints JSON: both medians and after ÷ before.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Runs inside a process whose ``bridge`` is the one measured (today's, or the old tree on
# PYTHONPATH): the same steps, in each version's own words.
MEASURE = """
import asyncio, json, sys, time
from bridge.app.launcher import LaunchedBrowser, LaunchOptions
from bridge.link.relay import Relay

async def main(relays):
    browser = LaunchedBrowser(LaunchOptions(headless=True, isolated=True))
    await browser.start()
    took = []
    try:
        for _ in range(relays + 1):
            started = time.perf_counter()
            if hasattr(browser, "is_mine"):  # before the handshake: the start page's nonce
                relay = Relay(matcher=browser.is_mine)
            else:
                relay = browser.relay()
            await relay.start()
            try:
                await relay.wait_for_link(30)
                took.append((time.perf_counter() - started) * 1000)
            finally:
                await relay.stop()
    finally:
        await browser.stop()
    print(json.dumps(took[1:]))  # the first warms the worker up

asyncio.run(main(int(sys.argv[1])))
"""


def _tree_at(ref: str, into: Path) -> Path:
    """bridge's package (its extension inside) as it was at ``ref``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "bridge"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _measure(relays: int, pythonpath: Path | None, env: dict[str, str]) -> list[float]:
    run_env = {**os.environ, **env}
    if pythonpath is not None:
        run_env["PYTHONPATH"] = str(pythonpath)
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(relays)],
        capture_output=True,
        text=True,
        env=run_env,
        cwd=str(pythonpath or ROOT),
        timeout=600,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    took: list[float] = json.loads(out.stdout.strip().splitlines()[-1])
    return took


def main(args: argparse.Namespace) -> dict[str, object]:
    before: list[float] = []
    after: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bridge-handshake-") as tmp:
        (Path(tmp) / "old").mkdir()
        old = _tree_at(args.before_ref, Path(tmp) / "old")
        # Neither version may meet the person's own relays, secret or native host.
        env = {
            "BRIDGE_RUNTIME_DIR": str(Path(tmp) / "rt"),
            "BRIDGE_TRUST_DIR": str(Path(tmp) / "trust"),
        }
        for _ in range(args.rounds):  # alternating: both see the same machine
            before += _measure(args.relays, old, env)
            after += _measure(args.relays, None, env)
    b, a = statistics.median(before), statistics.median(after)
    return {
        "before_ref": args.before_ref,
        "relays_each": len(before),
        "start_to_connected_ms_before": round(b, 1),
        "start_to_connected_ms_after": round(a, 1),
        "after_over_before": round(a / b, 2),
    }


def cli(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bridge.bench.handshake_bench")
    parser.add_argument(
        "--before-ref", default="7387db7", help="git ref of bridge before the trust handshake"
    )
    parser.add_argument("--relays", type=int, default=10, help="relays per round and version")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        print(json.dumps(main(args), indent=2))
        return 0
    return 130


if __name__ == "__main__":
    sys.exit(cli())
