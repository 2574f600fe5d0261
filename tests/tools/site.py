"""Local pages for the browser tools' tests: the shapes real sites have (forms, frames from
another site, shadow DOM, menus, drag and drop, dialogs, uploads, popups, downloads)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

from tests.local_http import serve_http

PAGES: dict[str, str] = {
    "/form": """<!doctype html><title>Sign up</title>
<h1>Sign up</h1>
<form id=f onsubmit="event.preventDefault(); document.getElementById('out').textContent =
  JSON.stringify(Object.fromEntries(new FormData(this)))">
<label>Name <input name=name id=name></label>
<label>Email <input type=email name=email id=email></label>
<label>Password <input type=password name=password></label>
<label><input type=checkbox name=agree id=agree value=yes> I agree</label>
<label><input type=radio name=plan value=free checked> Free</label>
<label><input type=radio name=plan value=pro id=pro> Pro</label>
<label>Country <select name=country id=country><option value=de>Germany</option>
<option value=jp>Japan</option><option value=us>United States</option></select></label>
<label>Notes <textarea name=notes id=notes></textarea></label>
<button id=submit>Create account</button>
</form><pre id=out></pre>""",
    "/frames": """<!doctype html><title>Frames</title><h1>Outer</h1>
<iframe id=cross src="http://localhost:{port}/inner" width=400 height=200></iframe>
<iframe id=same src="/inner?same" width=400 height=200></iframe>""",
    "/inner": """<!doctype html><title>Inner</title>
<button id=b onclick="this.textContent = 'Clicked inside ' + location.host">Press me</button>""",
    "/shadow": """<!doctype html><title>Shadow</title><div id=host></div><p id=result>none</p>
<script>const root = document.getElementById('host').attachShadow({mode: 'open'});
root.innerHTML = '<button id=inner>Shadow button</button>';
root.getElementById('inner').onclick = () => document.getElementById('result').textContent = 'shadow clicked';
</script>""",
    "/hover": """<!doctype html><title>Menu</title><style>
#menu { display: none } nav:hover #menu { display: block }</style>
<nav><span id=top>Products</span><div id=menu><a id=item href="#pricing"
onclick="document.getElementById('chosen').textContent='pricing'">Pricing</a></div></nav>
<p id=chosen>nothing</p>""",
    "/dnd": """<!doctype html><title>Drag</title>
<div id=card draggable=true style="width:80px;height:40px;background:#ccf">Card</div>
<div id=bin style="width:200px;height:100px;margin-top:100px;background:#fcc">Bin</div>
<p id=log></p><script>
const log = (s) => document.getElementById('log').textContent += s + ';';
card.addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', 'card-1'));
bin.addEventListener('dragover', (e) => e.preventDefault());
bin.addEventListener('drop', (e) => { e.preventDefault(); log('drop:' + e.dataTransfer.getData('text/plain')); });
</script>""",
    "/dialogs": """<!doctype html><title>Dialogs</title>
<button id=alert onclick="alert('Saved!'); document.getElementById('r').textContent='after alert'">Alert</button>
<button id=confirm onclick="document.getElementById('r').textContent = confirm('Delete?') ? 'yes' : 'no'">Confirm</button>
<button id=prompt onclick="document.getElementById('r').textContent = 'name=' + prompt('Your name?', 'anon')">Prompt</button>
<p id=r>none</p>""",
    "/leave": """<!doctype html><title>Unsaved</title><input id=t>
<script>addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = ''; });</script>""",
    "/upload": """<!doctype html><title>Upload</title><input type=file id=files multiple>
<pre id=got></pre><script>files.onchange = async () => {
  const out = [];
  for (const f of files.files) out.push(f.name + ':' + f.size + ':' + (await f.text()).slice(0, 20));
  got.textContent = out.join('|');
};</script>""",
    "/popup": """<!doctype html><title>Links</title>
<a id=blank href="/form" target=_blank>Open the form in a new tab</a>""",
    "/console": """<!doctype html><title>Console</title>
<button id=err onclick="console.error('bad thing', 7); null.boom()">Break</button>""",
    "/fetch": """<!doctype html><title>Fetch</title>
<button id=go onclick="fetch('/api/data?x=1', {method: 'POST', body: 'q=1'}).then(r => r.json())
  .then(d => document.getElementById('r').textContent = d.answer)">Load</button><p id=r></p>""",
    "/download": """<!doctype html><title>Download</title>
<a id=dl href="/report.csv" download="report.csv">Get the report</a>""",
    "/covered": """<!doctype html><title>Covered</title>
<button id=under onclick="document.getElementById('r').textContent='clicked'">Buy</button>
<div class=modal id=overlay style="position:fixed;inset:0;background:rgba(0,0,0,.3)"></div>
<p id=r>no</p>""",
    "/lean": """<!doctype html><title>Lean</title>
<nav aria-label=Menu><ul><li><a href="#a">Alpha</a></li><li><a href="#b">Beta</a></li></ul></nav>
<main id=content><section aria-label=Shop id=shop><ul id=items>
<li>Apple <button id=apple onclick="this.textContent='Bought apple'">Buy apple</button></li>
<li>Pear <button id=pear onclick="this.textContent='Bought pear'">Buy pear</button></li>
<li>Plum <button id=plum onclick="this.textContent='Bought plum'">Buy plum</button></li>
</ul></section>
<button id=replace onclick="document.getElementById('content').innerHTML =
  Array.from({length: 30}, (_, i) => '<p>New paragraph ' + i + '</p>').join('')">Replace</button>
<p>Footer note</p></main>""",
}

FILES: dict[str, tuple[str, bytes]] = {
    "/report.csv": ("text/csv", b"a,b\n1,2\n"),
    "/api/data": ("application/json", json.dumps({"answer": 42}).encode()),
}


class _Handler(BaseHTTPRequestHandler):
    port = 0

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path in FILES:
            kind, data = FILES[path]
            self._send(200, data, kind)
        elif path in PAGES:
            self._send(
                200,
                PAGES[path].replace("{port}", str(self.port)).encode(),
                "text/html; charset=utf-8",
            )
        else:
            self._send(404, b"not found", "text/plain")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        self.rfile.read(length)
        self.do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve() -> Iterator[str]:
    """Base URL http://127.0.0.1:PORT; the same pages answer as http://localhost:PORT (another
    site, so an iframe from there is cross-origin and out of process)."""
    # Each server its own handler class: its pages name its own port (a port on the shared
    # class would be overwritten by another module's server, and left pointing at it when
    # that one stops).
    handler = type("_SiteHandler", (_Handler,), {})
    for url, port in serve_http(handler):
        handler.port = port
        yield url
