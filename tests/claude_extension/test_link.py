"""bridge over the Claude extension, end to end: the fake extension (Chrome and the extension's
14 tools, acting in the session's real Chromium) starts bridge's real host
(``python -m bridge.link.claude_host``), which links to bridge: the Python API, the pytest
fixtures, and ``bridge-mcp --link claude`` over stdio and over HTTP with a real MCP client.

The browser-tool operations carried over this link, each tested here (docs/claude-extension.md
lists them): navigate, go back, snapshot, click (left, double, right), hover, type (and
slowly, and submit), fill_form, select_option, drag, press_key, wait (a pause), screenshot,
console, network, tabs (list, new, select), evaluate, resize.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import pytest_asyncio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client

from bridge.app.runtime import Runtime
from bridge.cdp.direct import DirectCdp
from bridge.errors import ClaudeExtensionNotConnected, NotOverClaudeExtension
from bridge.link import native_install
from bridge.link.registry import ENV_RUNTIME_DIR
from bridge.tools.claude import ClaudeToolHub, ClaudeTools, claude_browser
from bridge.waiting import scaled
from tests.claude_extension.fake import FakeClaudeExtension

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the fake's pipes are POSIX")

ROOT = Path(__file__).resolve().parents[2]
HOST = [sys.executable, "-m", "bridge.link.claude_host"]


def _runtime_dir() -> Path:
    """The session's runtime directory (the plugin's, set while the test browser runs)."""
    return Path(os.environ[ENV_RUNTIME_DIR])


@pytest_asyncio.fixture(loop_scope="session")
async def extension(direct_cdp: DirectCdp) -> AsyncIterator[FakeClaudeExtension]:
    """The Claude extension, having started bridge's host as Chrome does."""
    env = {**os.environ, ENV_RUNTIME_DIR: str(_runtime_dir()), "PYTHONPATH": str(ROOT)}
    async with FakeClaudeExtension(direct_cdp, HOST, env=env) as fake:
        yield fake


@pytest_asyncio.fixture(loop_scope="session")
async def hub(direct_cdp: DirectCdp) -> AsyncIterator[ClaudeToolHub]:
    async with claude_browser(directory=_runtime_dir(), connect_timeout=scaled(10.0)) as hub:
        yield hub


@pytest.fixture
def tools(hub: ClaudeToolHub, extension: FakeClaudeExtension) -> ClaudeTools:
    return hub.client("test")


async def _page_text(tools: ClaudeTools, selector: str) -> Any:
    return await tools.evaluate(f"() => document.querySelector({json.dumps(selector)}).textContent")


def _ref(snapshot: str, fragment: str) -> str:
    """The ref of the first line of ``snapshot`` holding ``fragment``."""
    for line in snapshot.splitlines():
        if fragment in line and "[ref=" in line:
            return line.split("[ref=", 1)[1].split("]", 1)[0]
    raise AssertionError(f"no line with {fragment!r} in:\n{snapshot}")


# -- the Python API ---------------------------------------------------------------------------


async def test_navigate_snapshot_and_click_by_the_extensions_refs(
    tools: ClaudeTools, extension: FakeClaudeExtension, site: str
) -> None:
    report = await tools.navigate(f"{site}/form.html")
    assert report.url == f"{site}/form.html" and report.title == "fake claude form"
    # What the extension was asked, in its own names: a tab first, then the navigation.
    asked = [r["params"]["tool"] for r, _ in extension.handled]
    assert asked[:2] == ["tabs_create_mcp", "navigate"]
    snapshot = await tools.snapshot()
    assert snapshot.startswith(f"tab {report.tab_id}: {site}/form.html\n")
    go = _ref(snapshot, 'button "Go"')
    await tools.click(go)
    assert await _page_text(tools, "#out") == "clicked"
    await tools.click(go, double_click=True)
    await tools.click(go, button="right")
    await tools.hover(go)
    kinds = [r["params"]["args"].get("action") for r, _ in extension.handled[-3:]]
    assert kinds == ["double_click", "right_click", "hover"]


async def test_typing_forms_and_keys(tools: ClaudeTools, site: str) -> None:
    await tools.navigate(f"{site}/form.html")
    snapshot = await tools.snapshot()
    name, agree = _ref(snapshot, 'textbox "Name"'), _ref(snapshot, '"Agree to terms"')
    await tools.type(name, "Ada")
    assert await tools.evaluate("() => document.querySelector('#name').value") == "Ada"
    await tools.type(name, "Grace", slowly=True)  # clicks into it, then types key by key
    await tools.press_key("Control+a")
    await tools.press_key("Backspace")
    assert await tools.evaluate("() => document.querySelector('#name').value") == ""
    await tools.fill_form([{"target": name, "value": "Lin"}, {"target": agree, "value": True}])
    state = await tools.evaluate(
        "() => [document.querySelector('#name').value, document.querySelector('#agree').checked]"
    )
    assert state == ["Lin", True]
    await tools.select_option(_ref(snapshot, "combobox"), ["Green"])
    assert await tools.evaluate("() => document.querySelector('#color').value") == "g"


async def test_drag_between_the_points_of_the_snapshot(tools: ClaudeTools, site: str) -> None:
    await tools.navigate(f"{site}/drag.html")
    snapshot = await tools.snapshot()
    await tools.drag(_ref(snapshot, '"Card"'), _ref(snapshot, '"Bin"'))
    assert await _page_text(tools, "#result") == "dropped"


async def test_reading_the_page_console_network_and_a_screenshot(
    tools: ClaudeTools, site: str
) -> None:
    await tools.navigate(f"{site}/form.html")
    errors = await tools.console_logs("error")
    assert any("boom-marker" in m["text"] for m in errors["messages"])
    assert not any("plain log line" in m["text"] for m in errors["messages"])
    requests = await tools.network_requests(filter=r"/api/data\?x=1")
    assert len(requests["requests"]) == 1, requests
    data, kind = await tools.screenshot()
    assert kind == "png" and data.startswith(b"\x89PNG\r\n\x1a\n")
    assert (await tools.wait(time=0.1)) == {"waited": 0.1}


async def test_tabs_are_the_extensions_group_and_history_works(
    tools: ClaudeTools, site: str
) -> None:
    await tools.navigate(f"{site}/form.html")
    first = tools.current
    await tools.navigate(f"{site}/other.html")
    back = await tools.go_back()
    assert back.url == f"{site}/form.html" and back.url_changed
    opened = await tools.tabs("new", url=f"{site}/other.html")
    assert tools.current == opened["tab"] != first
    listed = await tools.tabs("list")
    assert {first, opened["tab"]} <= {t["tab"] for t in listed["tabs"]}
    assert (await tools.tabs("select", tab=first))["tab"] == first
    resized = await tools.resize(900, 700)
    assert resized.did == "Resized the window to 900x700"


async def test_recording_a_gif_with_the_extensions_recorder(
    tools: ClaudeTools, extension: FakeClaudeExtension, site: str
) -> None:
    await tools.navigate(f"{site}/form.html")
    go = _ref(await tools.snapshot(), 'button "Go"')
    await tools.record_gif("start_recording")
    await tools.screenshot()  # the first frame, as the extension's own guidance asks
    await tools.click(go)
    await tools.record_gif("stop_recording")
    said = await tools.record_gif("export", download=True, filename="go-button.gif")
    assert "go-button.gif" in said
    gif = (extension.downloads / "go-button.gif").read_bytes()
    assert gif.startswith(b"GIF89a")
    with pytest.raises(NotOverClaudeExtension, match="drag and drop"):
        await tools.record_gif("export")  # the extension's other export: onto a page


async def test_what_the_link_cannot_carry_fails_clearly_before_reaching_the_extension(
    tools: ClaudeTools, extension: FakeClaudeExtension, site: str
) -> None:
    await tools.navigate(f"{site}/form.html")
    sent = len(extension.handled)
    with pytest.raises(NotOverClaudeExtension, match="uploading files is not available over"):
        await tools.file_upload("ref_1", [str(ROOT / "README.md")])
    with pytest.raises(NotOverClaudeExtension, match="CSS selectors"):
        await tools.click("#go")
    assert len(extension.handled) == sent


@pytest.mark.reliability(48)
async def test_the_extension_going_away_ends_a_waiting_call_at_once(
    tools: ClaudeTools, extension: FakeClaudeExtension, site: str
) -> None:
    await tools.navigate(f"{site}/other.html")
    # A pause of 30 s at the extension; Chrome closing the port ends it now, not at 30 s.
    waiting = asyncio.ensure_future(tools.wait(time=30))
    await extension.next_message("tool_request")
    started = asyncio.get_running_loop().time()
    await extension.stop()
    with pytest.raises(Exception, match="closed its native port"):
        await waiting
    assert asyncio.get_running_loop().time() - started < 20


async def test_without_a_host_a_call_says_how_to_set_it_up(direct_cdp: DirectCdp) -> None:
    async with claude_browser(directory=_runtime_dir(), connect_timeout=0.3) as hub:
        with pytest.raises(ClaudeExtensionNotConnected, match="install-native-host --claude"):
            await hub.client().navigate("https://example.com/")


async def test_the_plugin_fixture_drives_the_extension(
    bridge_runtime: Runtime,
    claude_tools: ClaudeTools,
    extension: FakeClaudeExtension,
    site: str,
) -> None:
    """``claude_tools``: what a project's own tests use to drive a person's browser through
    the Claude extension."""
    report = await claude_tools.navigate(f"{site}/other.html")
    assert report.url == f"{site}/other.html"


# -- the installed host, as Chrome finds it -----------------------------------------------------


async def test_the_installed_manifest_starts_bridges_host_for_the_claude_extension(
    direct_cdp: DirectCdp, hub: ClaudeToolHub, tmp_path: Path, site: str
) -> None:
    profile = tmp_path / "profile"
    installed = native_install.install(
        "chromium", profile, kind=native_install.CLAUDE_HOST, env={"PYTHONPATH": str(ROOT)}
    )
    env = {**os.environ, ENV_RUNTIME_DIR: str(_runtime_dir()), "PYTHONPATH": str(ROOT)}
    async with FakeClaudeExtension.from_manifest(installed.manifest, direct_cdp, env=env):
        report = await hub.client("installed").navigate(f"{site}/other.html")
        assert report.url == f"{site}/other.html"


# -- bridge-mcp --link claude ---------------------------------------------------------------


def _mcp_env() -> dict[str, str]:
    return {
        **get_default_environment(),
        "PYTHONPATH": str(ROOT),
        ENV_RUNTIME_DIR: str(_runtime_dir()),
    }


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def _exercise(client: Client, site: str) -> None:
    """What a client does over either transport: the same tools, carried or refused."""
    names = {t.name for t in (await client.list_tools()).tools}
    assert {
        "browser_navigate",
        "browser_snapshot",
        "browser_record_gif",
        "ask_chatgpt_web",
    } <= names
    navigated = await client.call_tool("browser_navigate", {"url": f"{site}/form.html"})
    assert not navigated.is_error, _text(navigated)
    snapshot = _text(await client.call_tool("browser_snapshot", {}))
    clicked = await client.call_tool("browser_click", {"target": _ref(snapshot, 'button "Go"')})
    assert not clicked.is_error, _text(clicked)
    value = await client.call_tool(
        "browser_evaluate", {"function": "() => document.querySelector('#out').textContent"}
    )
    assert _text(value) == '"clicked"'
    refused = await client.call_tool("browser_file_upload", {"target": "ref_1", "paths": ["x"]})
    assert refused.is_error
    assert "[not_over_claude_extension]" in _text(refused)
    ask = await client.call_tool("ask_chatgpt_web", {"question": "hi"})
    assert ask.is_error and "asking ChatGPT and Gemini is not available" in _text(ask)
    recording = await client.call_tool("browser_record_gif", {"action": "start_recording"})
    assert not recording.is_error, _text(recording)


async def test_bridge_mcp_over_stdio(
    extension: FakeClaudeExtension, tmp_path: Path, site: str
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bridge.mcp", "--link", "claude", "--state-dir", str(tmp_path / "state")],
        cwd=str(ROOT),
        env=_mcp_env(),
    )
    with open(tmp_path / "stderr.log", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            await _exercise(client, site)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_bridge_mcp_over_http_with_its_token(
    extension: FakeClaudeExtension, tmp_path: Path, site: str
) -> None:
    state, port = tmp_path / "state", _free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *["-m", "bridge.mcp", "--link", "claude", "--http", "--port", str(port)],
        *["--state-dir", str(state)],
        cwd=str(ROOT),
        env=_mcp_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        async with asyncio.timeout(scaled(60.0)):
            while b"MCP over HTTP at" not in (line := await process.stderr.readline()):
                assert line, "the server exited"
        token = (state / "mcp-token").read_text().strip()
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx2.AsyncClient(trust_env=False) as bare:
            refused = await bare.post(url, json={}, headers={"Accept": "application/json"})
            assert refused.status_code == 401  # no token, no browser
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, trust_env=False, timeout=60
        )
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            await _exercise(client, site)
    finally:
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(scaled(10.0)):
            assert await process.wait() == 0
