"""Local pages for the reliability suite's page cases: a page with a service worker of its
own, a page embedding another extension's frame, pages whose timers open dialogs.

Served on http://127.0.0.1:PORT (a secure context, so service workers register).
"""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

from tests.local_http import serve_http

HTML = "text/html; charset=utf-8"
JS = "text/javascript; charset=utf-8"

# Registers /sw.js; the worker claims the page as soon as it activates (no reload), and from
# then on answers /sw-hello (no such file on the server). #state says who controls the page.
SW_PAGE = """<!doctype html><title>Service worker</title>
<h1>Service worker page</h1>
<p id=state>not controlled</p>
<button id=ask onclick="fetch('/sw-hello').then(r => r.text())
  .then(t => document.getElementById('out').textContent = t)">Ask the worker</button>
<p id=out>nothing yet</p>
<script>
const controlled = () => {
  if (navigator.serviceWorker.controller)
    document.getElementById('state').textContent = 'controlled by the service worker';
};
navigator.serviceWorker.addEventListener('controllerchange', controlled);
controlled();
navigator.serviceWorker.register('/sw.js')
  .catch((e) => { document.getElementById('state').textContent = 'registration failed: ' + e; });
</script>"""

SW_JS = """self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (e) => {
  if (new URL(e.request.url).pathname === '/sw-hello') {
    e.respondWith(new Response('hello from the service worker',
      {headers: {'Content-Type': 'text/plain'}}));
  }
});"""

# Another extension's content script (tests/reliability/test_pages.py writes it) marks this
# page with the extension's id: how a test reads the id from the browser itself.
WHOAMI_PAGE = """<!doctype html><title>whoami</title><p>the other extension marks this page</p>"""

# ?id=<extension id>: that extension's web-accessible frame.html in an iframe.
EXT_FRAME_PAGE = """<!doctype html><title>Extension frame</title>
<h1>A page with another extension's frame</h1><p id=from>no message yet</p>
<script>
const id = new URLSearchParams(location.search).get('id');
addEventListener('message', (e) => {
  if (e.origin !== 'chrome-extension://' + id) return;
  document.getElementById('from').textContent = e.data;
  new BroadcastChannel('ext-frame').postMessage(e.data);  // to /ext-listen, same origin
});
const frame = document.createElement('iframe');
frame.id = 'ext';
frame.src = 'chrome-extension://' + id + '/frame.html';
document.body.append(frame);
</script>"""

# Hears what /ext-frame pages of the same origin heard from their extension frame.
EXT_LISTEN_PAGE = """<!doctype html><title>Listener</title><ul id=heard></ul><script>
new BroadcastChannel('ext-frame').onmessage = (e) => {
  const li = document.createElement('li'); li.textContent = e.data; heard.append(li);
};
</script>"""

PAGES: dict[str, tuple[str, str]] = {
    "/sw": (HTML, SW_PAGE),
    "/sw.js": (JS, SW_JS),
    "/ext-whoami": (HTML, WHOAMI_PAGE),
    "/ext-frame": (HTML, EXT_FRAME_PAGE),
    "/ext-listen": (HTML, EXT_LISTEN_PAGE),
    "/plain": (HTML, "<!doctype html><title>plain</title><h1>Plain page</h1><p id=p>ready</p>"),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        found = PAGES.get(self.path.split("?")[0])
        if found is None:
            self.send_error(404)
            return
        kind, body = found
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve() -> Iterator[str]:
    """Base URL http://127.0.0.1:PORT of the pages above, until the generator is closed."""
    for url, _ in serve_http(_Handler):
        yield url
