"""Helpers for bridge's own tests: local pages to open, direct CDP for pokes."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import pytest_asyncio

from bridge.direct import DirectCdp
from bridge.launcher import LaunchedBrowser
from bridge.relay_registry import ENV_RUNTIME_DIR

PAGES: dict[str, str] = {
    "/": "<!doctype html><title>home</title><h1>bridge test page</h1>",
    "/console": (
        "<!doctype html><title>console</title><button id=b "
        "onclick=\"console.log('clicked', 42)\">log</button>"
    ),
    # Noise that PNG cannot compress, so a screenshot is several MB.
    "/noise": (
        "<!doctype html><title>noise</title><body style=margin:0>"
        "<canvas id=c width=1920 height=1080></canvas><script>"
        "const c=document.getElementById('c').getContext('2d');"
        "const img=c.createImageData(1920,1080);let x=12345;"
        "for(let i=0;i<img.data.length;i++){x=(x*1103515245+12345)&0x7fffffff;"
        "img.data[i]=(i%4===3)?255:(x>>16)&255;}c.putImageData(img,0,0);"
        "document.title='noise ready';</script>"
    ),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = PAGES.get(self.path.split("?")[0])
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
        pass


@pytest.fixture(scope="session", autouse=True)
def private_runtime_dir() -> Iterator[None]:
    """Relays started by tests register in a directory of this run's own, never where the
    developer's own Chrome (with bridge's native host) would hear of them."""
    if os.environ.get(ENV_RUNTIME_DIR):
        yield
        return
    path = tempfile.mkdtemp(prefix="bridge-rt-")
    os.environ[ENV_RUNTIME_DIR] = path
    try:
        yield
    finally:
        os.environ.pop(ENV_RUNTIME_DIR, None)
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def pages() -> Iterator[str]:
    """Base URL of a loopback server with the pages in PAGES."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest_asyncio.fixture(loop_scope="session")
async def direct_cdp(
    extension_link: object, launched_browser: LaunchedBrowser | None
) -> AsyncIterator[DirectCdp]:
    """The launched browser's own DevTools endpoint (for what only the browser can do)."""
    if launched_browser is None or launched_browser.devtools_url is None:
        pytest.skip("needs the launched test browser's DevTools port (not in --live mode)")
    async with DirectCdp(launched_browser.devtools_url) as cdp:
        yield cdp
