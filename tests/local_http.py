"""One loopback HTTP server for the tests' local pages (tests/conftest.py, tests/tools/site.py,
tests/reliability/site.py): started on a free port, stopped when the generator closes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HTML = "text/html; charset=utf-8"
#: What a test server answers for a path (query cut off): (body, content type), or None (404).
Files = Callable[[str], tuple[bytes, str] | None]


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


def serve_files(files: Files) -> Iterator[str]:
    """A server answering every GET with ``files(path)`` (read at each request, so a test
    can change a page between loads): yields its base URL until closed."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = files(self.path.split("?")[0])
            body, kind = found if found is not None else (b"not found", "text/plain")
            self.send_response(200 if found is not None else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    for url, _ in serve_http(Handler):
        yield url
