"""The pages the fake Claude extension's tests act on (``pages/``), served on loopback,
with a JSON ``/api/`` the form page fetches (a network request to record)."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from pathlib import Path

PAGES = Path(__file__).with_name("pages")


class Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path.startswith("/api/"):
            body, kind = b'{"ok": true}', "application/json"
        else:
            file = PAGES / path.lstrip("/")
            if file.parent != PAGES or not file.is_file():
                self.send_error(404)
                return
            body, kind = file.read_bytes(), "text/html; charset=utf-8"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass
