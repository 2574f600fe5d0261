"""One loopback HTTP server for the tests' local pages (tests/conftest.py, tests/tools/site.py,
tests/reliability/site.py): started on a free port, stopped when the generator closes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[tuple[str, int]]:
    """Yields (base URL ``http://127.0.0.1:PORT``, port) until closed."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = int(server.server_address[1])
        yield f"http://127.0.0.1:{port}", port
    finally:
        server.shutdown()
        server.server_close()
