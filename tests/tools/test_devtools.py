"""The devtools operations in real Chromium through the extension: emulation read back by
the page itself and put back exactly, and performance traces of a local page whose load has
a known LCP image, a layout shift, a long task and a render-blocking stylesheet."""

from __future__ import annotations

import asyncio
import json
import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bridge.app.facade import Bridge
from bridge.errors import (
    EmulationInvalid,
    TabClosed,
    TraceBusy,
    TraceFileRefused,
    TraceOptionsInvalid,
)
from bridge.tools.browsing import BrowserTools, ToolHub
from bridge.tools.trace_insights import parse_trace, summarize
from bridge.waiting import scaled
from tests.local_http import serve_files

pytestmark = pytest.mark.e2e


def _png(width: int, height: int) -> bytes:
    """A plain PNG (no imaging library needed): one colour, ``width``×``height``."""
    raw = b"".join(b"\x00" + bytes([200, 80, 40]) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


#: A page whose load has each thing the summary reports: a render-blocking stylesheet, a
#: long task (the script keeps the main thread 80 ms), and an image without a size that a
#: script adds after the first paint: it becomes the LCP and pushes the text down (a
#: layout shift). Small enough that no scrollbar appears (a resize would mark the shift as
#: "after input" and Chrome leaves it out of CLS).
PERF_PAGE = b"""<!doctype html><title>Perf</title><link rel=stylesheet href=/perf.css>
<h1>Heading</h1><div id=slot></div><p id=text>Some text that moves down when the picture
arrives.</p><script>
const start = performance.now(); while (performance.now() - start < 80);
requestAnimationFrame(() => requestAnimationFrame(() => {
  const img = document.createElement('img'); img.id = 'hero'; img.src = '/perf.png';
  document.getElementById('slot').append(img);
}));
</script>"""

GEO_PAGE = b"""<!doctype html><title>Where</title><p>Where am I?</p>"""

FILES = {
    "/perf": (PERF_PAGE, "text/html"),
    "/perf.css": (b"h1 { color: #333 }", "text/css"),
    "/perf.png": (_png(400, 200), "image/png"),
    "/geo": (GEO_PAGE, "text/html"),
}


@pytest.fixture(scope="module")
def perf_site() -> Iterator[str]:
    yield from serve_files(FILES.get)


READ_PAGE = """() => ({
  dark: matchMedia('(prefers-color-scheme: dark)').matches,
  width: innerWidth, height: innerHeight, dpr: devicePixelRatio, screen: screen.width,
  ua: navigator.userAgent, touch: navigator.maxTouchPoints,
  mobile: matchMedia('(pointer: coarse)').matches,
})"""


async def _page(tools: BrowserTools, tab: int | None = None) -> dict[str, Any]:
    value = await tools.evaluate(READ_PAGE, tab=tab)
    assert isinstance(value, dict)
    return value


def _own(page: dict[str, Any]) -> dict[str, Any]:
    """What the page reads, but its inner height: headless Chromium's own UI (the debugging
    infobar, the tab-group strip) moves it by itself while a new tab settles, with or
    without emulation. The emulated height is checked apart (it must be gone)."""
    return {k: v for k, v in page.items() if k != "height"}


# -- emulation ------------------------------------------------------------------------


async def test_emulation_is_read_by_the_page_and_reset_puts_back_exactly(
    tools: BrowserTools, site: str
) -> None:
    await tools.navigate(f"{site}/form")
    before = await _page(tools)
    assert before["dark"] is False
    result = await tools.emulate(
        {
            "color_scheme": "dark",
            "viewport": {
                "width": 412,
                "height": 700,
                "device_scale_factor": 2,
                "mobile": True,
                "touch": True,
            },
            "user_agent": "bridge-test-agent/1.0",
            "cpu_throttling_rate": 4,
            "network": "Fast 4G",
        }
    )
    assert result["emulating"] == sorted(
        ["color_scheme", "viewport", "user_agent", "cpu_throttling_rate", "network"]
    )
    assert "CPU 4× slower" in result["set"]  # accepted by Chrome (only behaviour shows it)
    now = await _page(tools)
    assert now["dark"] is True
    # A mobile page without a viewport meta lays out 980 px wide, on a 412 px screen.
    assert (now["screen"], now["dpr"]) == (412, 2)
    assert now["ua"] == "bridge-test-agent/1.0"
    assert now["touch"] > 0
    reset = await tools.emulate_reset()
    assert sorted(next(iter(reset["reset"].values()))) == result["emulating"]
    after = await _page(tools)
    assert _own(after) == _own(before) and after["height"] != 700


async def test_auto_puts_back_one_setting_and_keeps_the_others(
    tools: BrowserTools, site: str
) -> None:
    await tools.navigate(f"{site}/form")
    before = await _page(tools)
    await tools.emulate({"color_scheme": "dark", "user_agent": "agent-x"})
    result = await tools.emulate({"color_scheme": "auto"})
    assert result["emulating"] == ["user_agent"]
    now = await _page(tools)
    assert now["dark"] is False and now["ua"] == "agent-x"
    await tools.emulate_reset()
    assert _own(await _page(tools)) == _own(before)


async def test_a_bad_setting_changes_nothing(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/form")
    before = await _page(tools)
    with pytest.raises(EmulationInvalid, match="latitude"):
        await tools.emulate(
            {"color_scheme": "dark", "geolocation": {"latitude": 200, "longitude": 0}}
        )
    assert _own(await _page(tools)) == _own(before)


async def test_leaving_undoes_emulation(hub: ToolHub, site: str) -> None:
    agent = hub.client("devtools-leaver")
    await agent.navigate(f"{site}/form")
    before = await _page(agent)
    await agent.emulate({"color_scheme": "dark", "viewport": {"width": 333, "height": 444}})
    assert (await _page(agent))["dark"] is True
    tab = agent.current
    await hub.leave("devtools-leaver")
    watcher = hub.client("devtools-watcher")
    # The browser gives the page its own size back with a resize of its own, which may
    # reach the page a moment after the command returned: wait for that event (bounded).
    width = int(before["width"])
    await watcher.evaluate(
        f"() => innerWidth === {width} || new Promise((done) => addEventListener('resize', "
        f"function check() {{ if (innerWidth === {width}) done(true); else "
        "addEventListener('resize', check, {once: true}); }, {once: true}))",
        tab=tab,
    )
    after = await _page(watcher, tab)
    assert _own(after) == _own(before) and after["height"] != 444


async def test_geolocation_reaches_a_page_the_person_allowed(
    tools: BrowserTools, perf_site: str, direct_cdp: Any
) -> None:
    await tools.navigate(f"{perf_site}/geo")
    # A hostile page lies about its permission: the answer comes from an isolated world.
    await tools.evaluate("() => { navigator.permissions.query = async () => ({state: 'granted'}) }")
    result = await tools.emulate({"geolocation": {"latitude": 48.85, "longitude": 2.35}})
    # bridge grants nothing: Chrome would ask the person (headless answers "no").
    assert result["geolocation_permission"] == "prompt"
    # The person allows the site (what their click on "Allow" does).
    await direct_cdp.call(
        "Browser.grantPermissions", {"origin": perf_site, "permissions": ["geolocation"]}
    )
    try:
        result = await tools.emulate(
            {"geolocation": {"latitude": 48.85, "longitude": 2.35, "accuracy": 10}}
        )
        assert result["geolocation_permission"] == "granted"
        where = await tools.evaluate(
            """() => new Promise((ok, no) => navigator.geolocation.getCurrentPosition(
                 (p) => ok([p.coords.latitude, p.coords.longitude, p.coords.accuracy]),
                 (e) => no(new Error(e.message)), {timeout: 5000}))"""
        )
        assert where == [48.85, 2.35, 10]
    finally:
        await tools.emulate_reset()
        await direct_cdp.call("Browser.resetPermissions", {})


# -- traces ---------------------------------------------------------------------------


async def test_a_trace_of_a_load_has_lcp_cls_long_task_and_blocking_css(
    tools: BrowserTools, perf_site: str, tmp_path: Path
) -> None:
    tools.hub.state_root = tmp_path  # as the facade sets it: bridge's --state-dir
    await tools.navigate(f"{perf_site}/perf")
    # Slow requests (the workflow an agent follows: throttle, then trace). The picture then
    # arrives well after the viewport's own early resizes (headless Chromium resizes it while
    # the page loads: Chrome leaves shifts within 500 ms of a resize out of CLS).
    await tools.emulate({"network": {"latency": 1000}})
    try:
        result = await tools.start_trace(reload=True, auto_stop=True)
    finally:
        await tools.emulate_reset()
    assert result is not None
    summary = result.summary
    assert summary.url == f"{perf_site}/perf"
    assert summary.lcp is not None
    assert summary.lcp.kind == "image" and "hero" in summary.lcp.node
    assert summary.lcp.url == f"{perf_site}/perf.png"
    assert set(summary.lcp.phases) == {"ttfb", "load_delay", "load_time", "render_delay"}
    assert summary.lcp.phases["ttfb"] >= 1000  # the emulated latency shows
    assert summary.cls > 0
    assert summary.long_tasks >= 1 and summary.longest_task_ms >= 80
    assert [u for u, _ in summary.render_blocking] == [f"{perf_site}/perf.css"]
    # The raw trace is on disk, whole, in the state folder's outputs (no file was named):
    # summarized again from the file, it says the same.
    assert result.path.is_file() and result.path.parent == tmp_path / "outputs" / "traces"
    again = summarize(parse_trace(result.path.read_bytes()))
    assert again.lcp is not None and again.lcp.time_ms == summary.lcp.time_ms
    assert again.cls == summary.cls
    assert "LCP:" in result.to_text() and str(result.path) in result.to_text()
    assert "hero" in await tools.analyze_insight("LCPBreakdown")
    assert "perf.css" in await tools.analyze_insight("RenderBlocking")
    assert "perf.png" in await tools.analyze_insight("CLSCulprits")


async def test_a_trace_started_and_stopped_by_hand_goes_to_a_named_file(
    tools: BrowserTools, perf_site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    hub = tools.hub
    original = hub.files
    hub.files = original.allowing(tmp_path)
    try:
        await tools.navigate(f"{perf_site}/perf")
        assert await tools.start_trace() is None
        with pytest.raises(TraceBusy):
            await tools.start_trace()
        await tools.evaluate("() => document.getElementById('text').textContent = 'changed'")
        result = await tools.stop_trace(file_path=str(tmp_path / "load.json.gz"))
        assert result.path == tmp_path / "load.json.gz"
        import gzip

        assert parse_trace(gzip.decompress(result.path.read_bytes()))
        # Never over an existing file: the next one is numbered.
        await tools.start_trace()
        second = await tools.stop_trace(file_path=str(tmp_path / "load.json.gz"))
        assert second.path.name == "load.json (1).gz"
    finally:
        hub.files = original


async def test_a_client_that_leaves_frees_the_browser_trace(hub: ToolHub, perf_site: str) -> None:
    first = hub.client("devtools-tracer-1")
    await first.navigate(f"{perf_site}/perf")
    await first.start_trace()
    second = hub.client("devtools-tracer-2")
    with pytest.raises(TraceBusy, match="already recording"):
        await second.start_trace(tab=first.current)
    await hub.leave("devtools-tracer-1")
    await second.start_trace()
    result = await second.stop_trace()
    assert result.events > 0
    await hub.leave("devtools-tracer-2")


@pytest.mark.parametrize(
    "kind",
    [
        "outside",  # outside every allowed folder
        "dotdot",  # out of the allowed folder by ..
        "hidden",  # a hidden folder inside an allowed one
        "protected",  # bridge's own state folder (it exists: the test run's)
        "script",  # a trace never lands as a script, even where writing is allowed
        "symlink",  # an allowed-looking name that is a link to elsewhere
        "nul",  # a NUL byte cuts the name short in C
    ],
)
async def test_the_attacker_cannot_choose_where_a_trace_is_written(
    tools: BrowserTools, perf_site: str, kind: str, tmp_path: Path
) -> None:
    allowed, elsewhere = tmp_path / "allowed", tmp_path / "elsewhere"
    (allowed / ".hidden").mkdir(parents=True)
    elsewhere.mkdir()
    (allowed / "link").symlink_to(elsewhere)
    path = {
        "outside": str(elsewhere / "trace.json"),
        "dotdot": str(allowed / ".." / "elsewhere" / "trace.json"),
        "hidden": str(allowed / ".hidden" / "trace.json"),
        "protected": os.path.join(os.environ["BRIDGE_STATE_DIR"], "trace.json"),
        "script": str(allowed / "notes.py"),
        "symlink": str(allowed / "link" / "trace.json"),
        "nul": str(allowed / "trace.json\x00.py"),
    }[kind]
    hub = tools.hub
    original = hub.files
    hub.files = original.allowing(allowed)
    try:
        await tools.navigate(f"{perf_site}/perf")
        with pytest.raises(TraceFileRefused):
            await tools.start_trace(file_path=path)
        assert tools._devtools.trace is None  # refused before anything started
        await tools.start_trace()
        try:
            with pytest.raises(TraceFileRefused):
                await tools.stop_trace(file_path=path)
            assert tools._devtools.trace is not None  # still recording: try another name
        finally:
            result = await tools.stop_trace(file_path=str(allowed / "ok.json"))
    finally:
        hub.files = original
    assert not os.path.exists(path.replace("\x00", ""))
    assert list(elsewhere.iterdir()) == []
    assert result.path == allowed / "ok.json"


async def test_auto_stop_without_reload_is_refused(tools: BrowserTools, site: str) -> None:
    with pytest.raises(TraceOptionsInvalid, match="reload"):
        await tools.start_trace(auto_stop=True)
    assert json.dumps(tools._devtools.emulated) == "{}"


async def test_a_tab_closed_while_tracing_ends_the_stop_at_once_with_a_typed_error(
    hub: ToolHub, perf_site: str
) -> None:
    agent = hub.client("devtools-closer")
    await agent.navigate(f"{perf_site}/perf")
    tab = agent.current
    assert tab is not None
    await agent.emulate({"color_scheme": "dark"})
    await agent.start_trace()
    await hub.browser.close_tab(tab)
    with pytest.raises(TabClosed):  # the tab's session ended: not a wait for a timeout
        await agent.stop_trace()
    assert agent._devtools.trace is None
    await hub.leave("devtools-closer")  # nothing left to put back on a closed tab: no error
    # The browser's trace went with the tab: another client traces at once.
    other = hub.client("devtools-after-close")
    await other.navigate(f"{perf_site}/perf")
    await other.start_trace()
    assert (await other.stop_trace()).events > 0


AFTER_NEXT_PAINT = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


async def test_a_trace_of_an_interaction_has_its_inp(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/form")
    await tools.start_trace()
    await tools.click("#agree")
    await tools.type("#name", "Ada")
    # An interaction's timing is reported after the next paint: two frames, then stop (the
    # typing returns within a round trip of its input now; CI once stopped before the paint).
    await asyncio.wait_for(tools.evaluate(AFTER_NEXT_PAINT), scaled(10.0))
    result = await tools.stop_trace()
    summary = result.summary
    assert not summary.navigation  # no reload: timed from the trace's start
    assert summary.interactions >= 2 and summary.inp_ms is not None
    assert "INP:" in result.to_text()
    assert "interaction" in await tools.analyze_insight("INPBreakdown")


def test_the_facade_gives_the_tools_its_own_state_folder(bridge: Bridge) -> None:
    """Traces no client named go to the state folder bridge runs with (--state-dir)."""
    assert bridge.tools.state_root == bridge.store.root
