"""``python -m bridge.bench.handshake_bench``: what the trust handshake costs on connecting.

Relay start → extension connected (the native host announces the relay; the extension dials
it, and with the handshake both prove the secret before ``welcome``), median of ``--relays``
relays started one after another while one launched browser runs. Measured for today's
bridge and for bridge at ``--before-ref`` (before the handshake: hello, then welcome), each
in a process of its own with its own extension, in alternating rounds on the same machine,
so both see the same load; then, over the last link of each process, the CDP round trip
(``--calls`` of ``Runtime.evaluate``): the handshake happens once per link and should cost
nothing per command. Prints JSON: the medians and after ÷ before; ``python -m bridge.bench``
puts the same figures in its report.
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

from bridge.bench.stats import Figure

ROOT = Path(__file__).resolve().parents[2]
BEFORE_REF = "7387db7"  # bridge before the trust handshake

# Runs inside a process whose ``bridge`` is the one measured (today's, or the old tree on
# PYTHONPATH): the same steps, in each version's own words.
MEASURE = """
import asyncio, json, sys, time
try:  # today's rooms
    from bridge.app.launcher import LaunchedBrowser, LaunchOptions
    from bridge.cdp.browser import Browser
    from bridge.link.relay import Relay
except ImportError:  # before the house in layers: one flat package
    from bridge.launcher import LaunchedBrowser, LaunchOptions
    from bridge.browser import Browser
    from bridge.relay import Relay

async def main(relays, calls):
    browser = LaunchedBrowser(LaunchOptions(headless=True, isolated=True))
    await browser.start()
    took = []
    rtt = []
    try:
        for n in range(relays + 1):
            started = time.perf_counter()
            if hasattr(browser, "is_mine"):  # before the handshake: the start page's nonce
                relay = Relay(matcher=browser.is_mine)
            else:
                relay = browser.relay()
            await relay.start()
            try:
                await relay.wait_for_link(30)
                took.append((time.perf_counter() - started) * 1000)
                if n == relays:  # the last link: what each command costs over it
                    tab = await Browser(relay).new_tab("about:blank")
                    for i in range(calls + calls // 5):  # a fifth to warm up
                        t0 = time.perf_counter()
                        await tab.evaluate("1")
                        if i >= calls // 5:
                            rtt.append((time.perf_counter() - t0) * 1000)
            finally:
                await relay.stop()
    finally:
        await browser.stop()
    where = sys.modules[Relay.__module__].__file__  # which bridge was measured
    print(json.dumps({"connect": took[1:], "rtt": rtt, "relay": where}))  # first link: warm-up

asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
"""


def _tree_at(ref: str, into: Path) -> Path:
    """bridge's package (its extension inside) as it was at ``ref``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "bridge"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _measure(
    relays: int, calls: int, pythonpath: Path | None, env: dict[str, str]
) -> dict[str, list[float]]:
    run_env = {**os.environ, **env}
    if pythonpath is not None:
        run_env["PYTHONPATH"] = str(pythonpath)
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(relays), str(calls)],
        capture_output=True,
        text=True,
        env=run_env,
        cwd=str(pythonpath or ROOT),
        timeout=600,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    took = json.loads(out.stdout.strip().splitlines()[-1])
    # The old tree's relay, not today's through the editable install's finder.
    expected = (pythonpath or ROOT).resolve()
    if not Path(took["relay"]).resolve().is_relative_to(expected):
        raise RuntimeError(f"measured the relay at {took['relay']}, not the one in {expected}")
    return {"connect": took["connect"], "rtt": took["rtt"]}


def measure_handshake(
    *, before_ref: str = BEFORE_REF, relays: int = 10, rounds: int = 3, calls: int = 200
) -> tuple[list[Figure], dict[str, object]]:
    """Today's bridge against bridge at ``before_ref`` (before the trust handshake), each in
    processes of its own, alternating: relay start → extension connected, and the CDP round
    trip over the link once connected. Needs the git history (a source checkout): without
    it, no figures and ``{"skipped": why}``."""
    try:
        subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{before_ref}^{{commit}}"],
            check=True,
            capture_output=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return [], {"skipped": f"no git history with {before_ref} at {ROOT} (not a checkout)"}
    before: dict[str, list[float]] = {"connect": [], "rtt": []}
    after: dict[str, list[float]] = {"connect": [], "rtt": []}
    with tempfile.TemporaryDirectory(prefix="bridge-handshake-") as tmp:
        (Path(tmp) / "old").mkdir()
        old = _tree_at(before_ref, Path(tmp) / "old")
        # Neither version may meet the person's own relays, secret or native host.
        env = {
            "BRIDGE_RUNTIME_DIR": str(Path(tmp) / "rt"),
            "BRIDGE_TRUST_DIR": str(Path(tmp) / "trust"),
        }
        for _ in range(rounds):  # alternating: both see the same machine
            for into, tree in ((before, old), (after, None)):
                got = _measure(relays, calls, tree, env)
                for key in into:
                    into[key] += got[key]
    cb, ca = statistics.median(before["connect"]), statistics.median(after["connect"])
    rb, ra = statistics.median(before["rtt"]), statistics.median(after["rtt"])
    raw: dict[str, object] = {
        "before_ref": before_ref,
        "relays_each": len(before["connect"]),
        "calls_each": len(before["rtt"]),
        "start_to_connected_ms_before": round(cb, 1),
        "start_to_connected_ms_after": round(ca, 1),
        "after_over_before": round(ca / cb, 2),
        "rtt_ms_before": round(rb, 3),
        "rtt_ms_after": round(ra, 3),
    }
    figures = [
        Figure(
            "trust handshake: relay start → connected, added",
            "ms",
            ca - cb,
            None,
            "",
            10.0,
            note=f"median {ca:.0f} ms with the handshake, {cb:.0f} ms before it ({before_ref})",
        ),
        Figure(
            "trust handshake: CDP round trip after ÷ before",
            "ms",
            ra,
            rb,
            f"bridge at {before_ref}",
            1.1,
            note="nothing per command: the handshake happens once per link",
        ),
    ]
    return figures, raw


def main(args: argparse.Namespace) -> dict[str, object]:
    _, raw = measure_handshake(
        before_ref=args.before_ref, relays=args.relays, rounds=args.rounds, calls=args.calls
    )
    return raw


def cli(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bridge.bench.handshake_bench")
    parser.add_argument(
        "--before-ref", default=BEFORE_REF, help="git ref of bridge before the trust handshake"
    )
    parser.add_argument("--calls", type=int, default=200, help="CDP round trips per process")
    parser.add_argument("--relays", type=int, default=10, help="relays per round and version")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        print(json.dumps(main(args), indent=2))
        return 0
    return 130


if __name__ == "__main__":
    sys.exit(cli())
