"""``python -m bridge.bench.playwright_bench``: Playwright through bridge's DevTools endpoint
against Playwright driving its own launched browser (same Chromium, same page, same run).

Per round: ``page.goto`` of a local page and ``locator.click`` on its button; medians and
the ratio bridge ÷ own browser. Needs the ``playwright`` extra (no browser download).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bridge.app.runtime import Runtime, RuntimeOptions

PAGE = (
    b"<!doctype html><title>t</title><button id=b onclick=\"this.textContent='done'\">Go</button>"
)


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: object) -> None:
        pass


async def _rounds(page: object, url: str, rounds: int) -> tuple[list[float], list[float]]:
    goto: list[float] = []
    click: list[float] = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        await page.goto(url)  # type: ignore[attr-defined]
        goto.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        await page.locator("#b").click()  # type: ignore[attr-defined]
        click.append((time.perf_counter() - t0) * 1000)
    return goto, click


def _chromium() -> str | None:
    """This machine's Chromium: Debian's wrapper script launches the binary behind it."""
    if Path("/usr/lib/chromium/chromium").exists():
        return "/usr/lib/chromium/chromium"
    return shutil.which("chromium") or shutil.which("chromium-browser")


async def measure(rounds: int) -> dict[str, object]:
    from playwright.async_api import async_playwright

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    executable = _chromium()
    out: dict[str, object] = {}
    try:
        with tempfile.TemporaryDirectory() as state:
            runtime = Runtime(
                RuntimeOptions(
                    launch=True, headless=True, isolated=True, cdp=True, state_dir=Path(state)
                )
            )
            async with runtime, async_playwright() as pw:
                await runtime.connected(30)
                via_bridge = await pw.chromium.connect_over_cdp(runtime.cdp_url)
                page = await via_bridge.contexts[0].new_page()
                await _rounds(page, url, 3)  # warm up
                b_goto, b_click = await _rounds(page, url, rounds)
                await via_bridge.close()
                own = await pw.chromium.launch(executable_path=executable, headless=True)
                page = await own.new_page()
                await _rounds(page, url, 3)
                o_goto, o_click = await _rounds(page, url, rounds)
                await own.close()
    finally:
        server.shutdown()
        server.server_close()
    for name, mine, ref in (("goto", b_goto, o_goto), ("click", b_click, o_click)):
        b, o = statistics.median(mine), statistics.median(ref)
        out[name] = {
            "bridge_ms": round(b, 2),
            "own_browser_ms": round(o, 2),
            "ratio": round(b / o, 2),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bridge.bench.playwright_bench", description=__doc__)
    p.add_argument("--rounds", type=int, default=30)
    args = p.parse_args(argv)
    print(json.dumps(asyncio.run(measure(args.rounds)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
