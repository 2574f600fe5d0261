"""``python -m bridge.bench.discovery_bench``: how the extension finds relays, and the link.

- idle probes per minute (all 29 ports, counted by listeners on every free port of the
  range while no relay runs): the extension before native messaging (``--before-ref``, its
  files taken from git), today's without the native host (after its fast first minute)
  and with it;
- relay start → extension connected, median of ``--relays`` relays started one after
  another: by probing (no host, within the fast minute) against by the host's push;
- CDP round trip (``Runtime.evaluate``, median) over the native link against the
  WebSocket link, the same browser build and page, in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bridge.app.launcher import LaunchedBrowser, LaunchOptions
from bridge.app.runtime import Runtime, RuntimeOptions
from bridge.link.relay import Relay
from bridge.link.trust_root import ENV_TRUST_DIR
from bridge.wire.extension import PORT_RANGE, extension_dir


class _Knocks:
    """Listeners on every free port of the relay range, noting when each probe arrives."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self._servers: list[asyncio.Server] = []
        self._arrived = asyncio.Condition()

    @property
    def ports(self) -> int:
        return len(self._servers)

    async def __aenter__(self) -> _Knocks:
        for port in range(PORT_RANGE[0], PORT_RANGE[1] + 1):
            try:
                self._servers.append(await asyncio.start_server(self._knock, "127.0.0.1", port))
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        for server in self._servers:
            server.close()

    async def _knock(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()
        async with self._arrived:
            self.times.append(time.monotonic())
            self._arrived.notify_all()

    async def wait_for(self, count: int, timeout: float) -> bool:
        """True once ``count`` probes have arrived; False if the deadline came first."""
        try:
            async with asyncio.timeout(timeout), self._arrived:
                await self._arrived.wait_for(lambda: len(self.times) >= count)
        except TimeoutError:
            return False
        return True


async def _pair_by_hand(browser: LaunchedBrowser) -> None:
    """Pair a browser that has no native host, as `bridge pair` and the popup do (the code
    typed through the worker's own hook): it then probes for relays."""
    async with Relay(register=False) as relay, browser.direct_cdp() as cdp:
        offer = relay.start_pairing()
        await cdp.in_extension_worker(f"bridgePair({json.dumps(offer.code)})")
        await asyncio.wait_for(offer.done, 30.0)


def _browser(extension: Path, native_host: bool) -> LaunchedBrowser:
    """The launched browser for a discovery measure: with the host, an island (as bridge
    launches them); without it, the person's own browser paired by hand."""
    return LaunchedBrowser(
        LaunchOptions(
            headless=True,
            isolated=True,
            native_host=native_host,
            island=native_host,
            debug_pipe=not native_host,
            extension=extension,
        )
    )


async def _probes_per_minute(
    extension: Path, native_host: bool, idle: bool, rounds: int, pair: bool = True
) -> float:
    """Probes per minute to the whole range, over ``rounds`` rounds of probing, each wait
    ending on the probes themselves. ``idle``: measured after the extension's fast first
    minute (the first gap of 3 s or more between probes). A browser that sends no probe for
    a whole minute counts as 0. ``pair``: pair a browser without the host first (today's
    extension probes nothing without a secret; the one before the trust handshake did)."""
    browser = _browser(extension, native_host)
    await browser.start()
    try:
        if pair and not native_host:
            await _pair_by_hand(browser)
        async with _Knocks() as knocks:
            if not await knocks.wait_for(1, 60.0):
                return 0.0
            if idle:  # past the fast minute: wait for the first slow gap
                while await knocks.wait_for(len(knocks.times) + 1, 120.0):
                    if knocks.times[-1] - knocks.times[-2] >= 3.0:
                        break
            first = len(knocks.times) - 1
            if not await knocks.wait_for(first + rounds * knocks.ports + 1, 300.0):
                raise RuntimeError("the extension stopped probing during the measurement")
            span = knocks.times[-1] - knocks.times[first]
            return (len(knocks.times) - 1 - first) * 60 / span
    finally:
        await browser.stop()


async def _start_to_connected(native_host: bool, relays: int) -> float:
    browser = _browser(extension_dir(), native_host)
    await browser.start()
    took: list[float] = []
    try:
        if not native_host:
            await _pair_by_hand(browser)
        for _ in range(relays):
            started = time.monotonic()
            relay = await browser.relay(register=native_host).start()
            try:
                await relay.wait_for_link(10)
                took.append(time.monotonic() - started)
            finally:
                await relay.stop()
    finally:
        await browser.stop()
    return statistics.median(took) * 1000


async def _round_trip(link: str, rounds: int) -> float:
    options = RuntimeOptions(launch=True, headless=True, isolated=True, link=link)
    async with Runtime(options) as runtime:
        await runtime.connected(30)
        assert runtime.relay.link is not None and runtime.relay.link.via == link
        tab = await runtime.browser.new_tab("about:blank")
        for _ in range(20):
            await tab.evaluate("1")
        took: list[float] = []
        for _ in range(rounds):
            started = time.perf_counter()
            await tab.evaluate("1")
            took.append(time.perf_counter() - started)
        await runtime.browser.close_tab(tab.tab_id)
    return statistics.median(took) * 1000


def _extension_at(ref: str, into: Path) -> Path:
    root = Path(__file__).resolve().parents[2]
    # The folder moved into the package (bridge/extension); older commits have it at the top.
    inside = subprocess.run(
        ["git", "-C", str(root), "cat-file", "-e", f"{ref}:bridge/extension"], capture_output=True
    )
    folder = "bridge/extension" if inside.returncode == 0 else "extension"
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", ref, folder], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / folder


async def main(args: argparse.Namespace) -> dict[str, object]:
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="bridge-bench-") as tmp:
        # "The person's" secret for the browsers paired by hand: the run's own, never theirs.
        os.environ[ENV_TRUST_DIR] = str(Path(tmp) / "trust")
        before = _extension_at(args.before_ref, Path(tmp))
        out["idle_probes_per_min_before"] = round(
            await _probes_per_minute(
                before, False, idle=False, rounds=args.rounds_probed, pair=False
            )
        )
        out["idle_probes_per_min_no_host"] = round(
            await _probes_per_minute(extension_dir(), False, idle=True, rounds=args.rounds_probed)
        )
        out["idle_probes_per_min_host"] = round(
            await _probes_per_minute(extension_dir(), True, idle=True, rounds=args.rounds_probed)
        )
        out["start_to_connected_ms_probing"] = round(
            await _start_to_connected(False, args.relays), 1
        )
        out["start_to_connected_ms_host"] = round(await _start_to_connected(True, args.relays), 1)
        ws = await _round_trip("websocket", args.rounds)
        native = await _round_trip("native", args.rounds)
        out["round_trip_ms_websocket"] = round(ws, 3)
        out["round_trip_ms_native"] = round(native, 3)
        out["round_trip_native_over_websocket"] = round(native / ws, 2)
    return out


def cli(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bridge.bench.discovery_bench")
    parser.add_argument("--before-ref", default="5aeb725", help="git ref of the old extension")
    parser.add_argument(
        "--rounds-probed", type=int, default=4, help="probe rounds each probing rate spans"
    )
    parser.add_argument("--relays", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        print(json.dumps(asyncio.run(main(args)), indent=2))
        return 0
    return 130


if __name__ == "__main__":
    sys.exit(cli())
