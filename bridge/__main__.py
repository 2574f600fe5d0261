"""``python -m bridge``: terminal commands over the same core the MCP server uses.

- ``python -m bridge relay [--launch] [--headless]``: run a relay, optionally with a
  launched Chromium, and report when the extension connects (until Ctrl-C).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import time

from bridge.browser import Browser
from bridge.errors import BridgeError
from bridge.launcher import LaunchedBrowser, LaunchOptions
from bridge.relay import Relay


def _browser_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--launch", action="store_true", help="start Chromium with the extension")
    parser.add_argument("--headless", action="store_true", help="with --launch: no window")
    parser.add_argument("--isolated", action="store_true", help="with --launch: temporary profile")
    parser.add_argument("--browser-path", help="with --launch: Chromium/Chrome executable")
    parser.add_argument(
        "--chrome-arg", action="append", default=[], metavar="ARG", help="extra browser argument"
    )


def _no_display() -> bool:
    return sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


async def _relay_main(args: argparse.Namespace) -> int:
    if args.launch and not args.headless and _no_display():
        print("no display found: launching the browser headless", flush=True)
        args.headless = True
    launched = (
        LaunchedBrowser(
            LaunchOptions(
                browser_path=args.browser_path,
                headless=args.headless,
                isolated=args.isolated,
                extra_args=args.chrome_arg,
            )
        )
        if args.launch
        else None
    )
    relay = Relay(matcher=launched.is_mine) if launched else Relay()
    started = time.monotonic()
    await relay.start()
    print(f"relay listening on {relay.url}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        if launched:
            await launched.start()
            print(f"launched {launched.executable} (pid {launched.pid})", flush=True)
        else:
            print("waiting for Chrome with the bridge extension to connect…", flush=True)
        link = await relay.wait_for_link(60.0 if launched else 3600.0)
        tabs = await Browser(relay).list_tabs()
        print(
            f"extension connected after {time.monotonic() - started:.2f}s: "
            f"extension {link.hello.extension_version}, {len(tabs)} tab(s) open",
            flush=True,
        )
        print("ready; Ctrl-C to stop", flush=True)
        waiter: asyncio.Future[object] = asyncio.ensure_future(stop.wait())
        lost: asyncio.Future[object] = link.closed  # type: ignore[assignment]
        await asyncio.wait({waiter, lost}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if link.closed.done():
            print(f"extension disconnected: {link.closed.result()}", flush=True)
        return 0
    except BridgeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if launched:
            print(launched.stderr_tail(), file=sys.stderr)
        return 1
    finally:
        await relay.stop()
        if launched:
            await launched.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bridge", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    relay = sub.add_parser("relay", help="run a relay and report the extension's connection")
    _browser_args(relay)
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_relay_main(args))
    return 130


if __name__ == "__main__":
    sys.exit(main())
