"""Helpers for bridge's own tests: local pages to open, direct CDP for pokes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import pytest_asyncio
from hypothesis import settings

from bridge.app.launcher import LaunchedBrowser
from bridge.cdp.browser import Browser
from bridge.cdp.direct import DirectCdp
from bridge.errors import BridgeError
from bridge.link.registry import ENV_RUNTIME_DIR
from bridge.link.trust_root import ENV_TRUST_DIR
from bridge.tools.browsing import BrowserTools, ToolHub
from tests.idle import IDLE_TEST, IdleBrowsers
from tests.local_http import serve_http

# Tests do not assert wall-clock times: Hypothesis's per-example deadline (200 ms) is one, and
# a CI machine under load missed it on examples that take a few milliseconds when idle.
settings.register_profile("bridge", deadline=None)
settings.load_profile("bridge")

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


@pytest.fixture(scope="session", autouse=True)
def private_trust_dir() -> Iterator[None]:
    """Relays a test starts for "the person" prove a secret of this run's own, never the
    developer's ~/.config/bridge/secret (a launched browser has its island secret anyway)."""
    if os.environ.get(ENV_TRUST_DIR):
        yield
        return
    path = tempfile.mkdtemp(prefix="bridge-trust-")
    os.environ[ENV_TRUST_DIR] = path
    try:
        yield
    finally:
        os.environ.pop(ENV_TRUST_DIR, None)
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def private_state_dir() -> Iterator[None]:
    """A command a test starts without --state-dir keeps its state in this run's own
    directory, never in the developer's ~/.local/state/bridge."""
    if os.environ.get("BRIDGE_STATE_DIR"):
        yield
        return
    path = tempfile.mkdtemp(prefix="bridge-state-")
    os.environ["BRIDGE_STATE_DIR"] = path
    try:
        yield
    finally:
        os.environ.pop("BRIDGE_STATE_DIR", None)
        shutil.rmtree(path, ignore_errors=True)


@pytest_asyncio.fixture(loop_scope="session")
async def hub(extension_link: Browser) -> AsyncIterator[ToolHub]:
    """A tool hub whose tabs (and any other tab the test opened) are closed after the test."""
    hub = ToolHub(extension_link)
    before = {t.tab_id for t in await extension_link.list_tabs()}
    yield hub
    for info in await extension_link.list_tabs():
        if info.tab_id not in before:
            with contextlib.suppress(BridgeError):  # closed by the test itself already
                await extension_link.close_tab(info.tab_id)


@pytest.fixture
def tools(hub: ToolHub, request: pytest.FixtureRequest) -> BrowserTools:
    return hub.client(request.node.name)


@pytest.fixture(scope="session")
def pages() -> Iterator[str]:
    """Base URL of a loopback server with the pages in PAGES."""
    for url, _ in serve_http(_Handler):
        yield url


@pytest.fixture(scope="session")
def idle_browsers(pages: str) -> Iterator[IdleBrowsers]:
    """The session's idle browsers (tests/idle.py), started by ``_start_idle_browsers``."""
    browsers = IdleBrowsers(pages)
    browsers.start()
    try:
        yield browsers
    finally:
        browsers.stop()


@pytest.fixture(scope="session", autouse=True)
def _start_idle_browsers(
    request: pytest.FixtureRequest,
    private_runtime_dir: None,
    private_trust_dir: None,
    private_state_dir: None,
) -> None:
    """Start the idle browsers with the session's first test when the session collected a
    test that needs them, so their idle time passes while the other tests run."""
    if any(item.name.startswith(IDLE_TEST) for item in request.session.items):
        request.getfixturevalue("idle_browsers")


@pytest_asyncio.fixture(loop_scope="session")
async def direct_cdp(
    extension_link: object, launched_browser: LaunchedBrowser | None
) -> AsyncIterator[DirectCdp]:
    """The launched browser's own DevTools, over its pipe (for what only the browser can do)."""
    if launched_browser is None or launched_browser.devtools_pipe is None:
        pytest.skip("needs the launched test browser's DevTools pipe (not in --live mode)")
    async with launched_browser.direct_cdp() as cdp:
        yield cdp


# -- the reliability table's results (docs/RELIABILITY.md, tests/reliability/table.py) ------

_RELIABILITY_RESULTS = Path(__file__).resolve().parents[1] / "reports" / "reliability.json"
_reliability_seen: dict[str, dict[str, object]] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each reliability test carries its case numbers in its report (xdist sends them on)."""
    for item in items:
        cases = [int(m.args[0]) for m in item.iter_markers("reliability")]
        if cases:
            item.user_properties.append(("reliability_cases", sorted(cases)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    cases = dict(report.user_properties).get("reliability_cases")
    if not cases:
        return
    failed = report.failed or (report.when == "call" and report.outcome != "passed")
    if report.when == "call" or failed:
        previous = _reliability_seen.get(report.nodeid, {})
        if previous.get("outcome") == "failed":
            return  # a failed setup or call stays failed whatever its teardown did
        _reliability_seen[report.nodeid] = {
            "cases": cases,
            "outcome": "failed" if failed else report.outcome,
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
            "duration_s": round(report.duration, 2),
        }


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Merge this run's results into reports/reliability.json (the controller, under xdist)."""
    if not _reliability_seen or hasattr(session.config, "workerinput"):
        return
    data: dict[str, dict[str, object]] = {"tests": {}}
    if _RELIABILITY_RESULTS.exists():
        with contextlib.suppress(ValueError):
            data = json.loads(_RELIABILITY_RESULTS.read_text(encoding="utf-8"))
    data.setdefault("tests", {}).update(_reliability_seen)
    _RELIABILITY_RESULTS.parent.mkdir(parents=True, exist_ok=True)
    temp = _RELIABILITY_RESULTS.with_suffix(".tmp")
    temp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(temp, _RELIABILITY_RESULTS)
