"""The browser and dom tool groups over MCP: in process for the schema and the groups, and a
real stdio server driving a multi-step task with nothing but these tools."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import Implementation

from bridge.app.facade import Bridge
from bridge.mcp.server import build_server, parse_groups, selected_groups
from tests.tools.site import serve

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]

BROWSER = {
    "browser_navigate", "browser_go_back", "browser_go_forward", "browser_snapshot",
    "browser_click", "browser_hover", "browser_type", "browser_fill_form",
    "browser_select_option", "browser_drag", "browser_press_key", "browser_wait",
    "browser_screenshot", "browser_get_console_logs", "browser_network_requests",
    "browser_network_request", "browser_tabs", "browser_evaluate", "browser_file_upload",
    "browser_handle_dialog", "browser_resize",
    "browser_find",
}  # fmt: skip
DOM = {
    "browser_query_dom", "browser_get_visible_text", "browser_get_computed_styles",
    "browser_check_visibility", "browser_get_attributes", "browser_count_elements",
    "browser_get_page_metadata", "browser_get_filtered_aria_tree", "browser_find_by_text",
    "browser_get_form_values", "browser_check_element_state",
}  # fmt: skip
TESTING = {
    "browser_verify_element_visible", "browser_verify_text_visible",
    "browser_verify_list_visible", "browser_verify_value", "browser_generate_locator",
    "browser_generate_test",
}  # fmt: skip
ASK = {"ask_chatgpt_web", "ask_gemini_web", "ask_chatgpt_gemini_web", "take_cdp_snapshot",
       "get_page_dom", "get_answer", "list_jobs", "get_conversation",
       "list_conversations"}  # fmt: skip
STORAGE = {f"browser_cookie_{op}" for op in ("list", "get", "set", "delete", "clear")} | {
    f"browser_{area}storage_{op}" for area in ("local", "session")
    for op in ("list", "get", "set", "delete", "clear")
} | {"browser_storage_state", "browser_set_storage_state"}  # fmt: skip
DEVTOOLS = {"performance_start_trace", "performance_stop_trace", "performance_analyze_insight",
            "browser_emulate", "browser_emulate_reset"}  # fmt: skip
#: Every group of --tools and the tools it brings (a new group adds its line).
NETWORK = {"browser_route", "browser_route_list", "browser_unroute", "browser_network_state_set"}
GROUP_TOOLS: dict[str, set[str]] = {
    "ask": ASK,
    "browser": BROWSER,
    "dom": DOM,
    "storage": STORAGE,
    "pdf": {"browser_pdf_save"},
    "testing": TESTING,
    "devtools": DEVTOOLS,
    "vision": {
        "browser_mouse_click_xy",
        "browser_mouse_move_xy",
        "browser_mouse_drag_xy",
        "browser_scroll",
        "browser_zoom",
    },
    "record": {"browser_record_gif"},
    "network": NETWORK,
}


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    yield from serve()


def _text(result: Any) -> str:
    assert not result.is_error, result.content[0].text
    return str(result.content[0].text)


def _ref(snapshot: str, pattern: str) -> str:
    line = next(line for line in snapshot.splitlines() if re.search(pattern, line))
    match = re.search(r"\[ref=(\w+)\]", line)
    assert match, line
    return match.group(1)


async def test_groups_select_the_tools(bridge: Bridge) -> None:
    async def names(groups: tuple[str, ...]) -> set[str]:
        async with Client(build_server(lambda: bridge, groups=groups)) as client:
            return {t.name for t in (await client.list_tools()).tools}

    assert await names(parse_groups("ask,browser")) == ASK | BROWSER  # the default
    assert await names(parse_groups("all")) == set().union(*GROUP_TOOLS.values())
    for group, expected in GROUP_TOOLS.items():
        assert await names((group,)) == expected, group
    assert await names(parse_groups("browser")) == BROWSER
    with pytest.raises(ValueError, match="unknown tool group"):
        parse_groups("ask,web")
    # --caps adds to --tools (playwright-mcp's option); a bad name is refused the same way.
    assert selected_groups("ask,browser", "dom") == ("ask", "browser", "dom")
    assert selected_groups("browser", "") == ("browser",)
    with pytest.raises(ValueError, match="unknown tool group"):
        selected_groups("ask,browser", "web")
    async with Client(build_server(lambda: bridge, groups=("browser",))) as client:
        for tool in (await client.list_tools()).tools:
            assert tool.description and len(tool.description) < 200, tool.name
            props = tool.input_schema.get("properties", {})
            assert all(re.fullmatch(r"[a-z_]+", p) for p in props), props


async def test_different_client_apps_keep_their_own_tabs(bridge: Bridge, site: str) -> None:
    """Without any header, two apps (by their clientInfo) still get their own current tab."""
    server = build_server(lambda: bridge, groups=("browser",))
    one_info = Implementation(name="agent-one", version="1")
    two_info = Implementation(name="agent-two", version="1")
    async with (
        Client(server, client_info=one_info) as one,
        Client(server, client_info=two_info) as two,
    ):
        await one.call_tool("browser_navigate", {"url": f"{site}/form"})
        await two.call_tool("browser_navigate", {"url": f"{site}/dialogs"})
        assert "Sign up" in _text(await one.call_tool("browser_snapshot", {}))
        assert "Confirm" in _text(await two.call_tool("browser_snapshot", {}))
    for info in await bridge.browser.list_tabs():
        if info.url.startswith(site):
            await bridge.browser.close_tab(info.tab_id)


async def test_a_stdio_client_completes_a_task_with_browser_tools_only(
    site: str, tmp_path: Path
) -> None:
    """Sign up on a form, check the result, look at the request it made: as an agent would."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bridge.mcp", "--launch", "--headless", "--isolated", "--tools", "all",
              "--state-dir", str(tmp_path)],
        cwd=str(ROOT),
    )  # fmt: skip
    with open(tmp_path / "stderr.log", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            async with asyncio.timeout(120):
                call = client.call_tool
                navigated = _text(await call("browser_navigate", {"url": f"{site}/form"}))
                assert "Navigated to" in navigated and "Title: Sign up" in navigated
                snap = _text(await call("browser_snapshot", {}))
                fields = [
                    {"target": _ref(snap, r'textbox "Name'), "value": "Ada"},
                    {"target": _ref(snap, r'textbox "Email'), "value": "ada@example.test"},
                    {"target": _ref(snap, r'checkbox "I agree'), "value": True},
                    {"target": _ref(snap, r'combobox "Country'), "value": "Japan"},
                ]
                _text(await call("browser_fill_form", {"fields": fields}))
                clicked = await call(
                    "browser_click",
                    {"target": _ref(snap, r'button "Create account"'), "element": "submit"},
                )
                assert "Clicked submit" in _text(clicked)
                _text(await call("browser_wait", {"text": '"country":"jp"', "time": 10}))
                shown = await call("browser_get_visible_text", {"selector": "#out"})
                assert '"name":"Ada"' in (shown.structured_content or {})["text"]
                values = (await call("browser_get_form_values", {})).structured_content
                assert "ada@example.test" in str(values)
                shot = await call("browser_screenshot", {})
                assert shot.content[0].type == "image", shot.content[0]
                await call("browser_navigate", {"url": f"{site}/fetch"})
                await call("browser_click", {"target": "#go"})
                await call("browser_wait", {"text": "42"})
                listed = _text(await call("browser_network_requests", {"filter": "api/data"}))
                assert "POST" in listed and "→ 200" in listed
                refused = await call("browser_navigate", {"url": "javascript:alert(1)"})
                assert refused.is_error and "url_refused" in refused.content[0].text
