"""``python -m bridge.bench``: every figure a ratio against a reference measured in the same run."""

from __future__ import annotations

import contextlib
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from bridge.app.runtime import Runtime, RuntimeOptions
from bridge.fakes import FakeSites

__all__ = ["fake_site_runtime", "serve_pages", "timed_ms"]

#: A page by its path and query (``/nodes``, ``{"n": ["100"]}``): HTML, or None for a 404.
PageSource = Callable[[str, Mapping[str, list[str]]], str | None]


@contextlib.contextmanager
def serve_pages(page: PageSource) -> Iterator[str]:
    """The benchmarks' local pages on a loopback HTTP server (a free port): its base URL
    (``http://127.0.0.1:PORT``) until the block ends."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            body = page(parts.path, parse_qs(parts.query))
            if body is None:
                self.send_error(404)
                return
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass  # a benchmark's output is its figures

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def fake_site_runtime(session_key: str, **options: object) -> Iterator[tuple[FakeSites, Runtime]]:
    """The fake sites and a runtime (not started) that launches its own headless, isolated
    Chromium with them mapped in and a throwaway state directory: what every benchmark
    asks through. ``options`` are further ``RuntimeOptions`` fields."""
    with FakeSites() as fakes, tempfile.TemporaryDirectory(prefix=f"bridge-{session_key}-") as tmp:
        runtime = Runtime(
            RuntimeOptions(
                launch=True,
                headless=True,
                isolated=True,
                chrome_args=fakes.chromium_args(),
                state_dir=Path(tmp) / "state",
                session_key=session_key,
                **options,  # type: ignore[arg-type]
            )
        )
        yield fakes, runtime


async def timed_ms(call: Callable[[], Awaitable[object]], n: int) -> list[float]:
    """``call`` awaited ``n`` times one after another: each round trip in milliseconds."""
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        await call()
        out.append((time.perf_counter() - t0) * 1000)
    return out
