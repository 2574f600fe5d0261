"""Every tool's title and annotations (bridge.mcp.annotations), as a client lists them: the
same as the table, the table the same as docs/mcp.md#annotations, and the judgments the
table encodes about what the tools do to the person's browser."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import Tool

from bridge.app.facade import Bridge
from bridge.mcp.annotations import TOOL_HINTS, ToolHints, UnannotatedTool
from bridge.mcp.registration import tool
from bridge.mcp.server import TOOL_GROUPS, build_claude_server, build_server
from bridge.tools.claude import ClaudeToolHub

DOCS = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def _no_bridge() -> Bridge:
    raise AssertionError("listing the tools must not need a running bridge")


def _no_claude() -> ClaudeToolHub:
    raise AssertionError("listing the tools must not need the Claude extension")


async def _listed(server: MCPServer) -> list[Tool]:
    async with Client(server) as client:
        return list((await client.list_tools()).tools)


def annotation_problems(tools: list[Tool], table: dict[str, ToolHints]) -> list[str]:
    """What differs between the served tools' titles and hints and the table's rows."""
    problems = []
    for served in tools:
        row = table.get(served.name)
        if row is None:
            problems.append(f"{served.name}: served without a row in the table")
            continue
        if served.title != row.title:
            problems.append(f"{served.name}: title {served.title!r}, the table says {row.title!r}")
        if served.annotations != row.annotations():
            problems.append(
                f"{served.name}: annotations {served.annotations!r}, the table says "
                f"{row.annotations()!r}"
            )
    names = {served.name for served in tools}
    problems += [f"{name}: a row for a tool not served" for name in table if name not in names]
    return problems


async def test_every_tool_is_served_with_its_rows_title_and_annotations() -> None:
    tools = await _listed(build_server(_no_bridge, groups=TOOL_GROUPS))
    # Every row, the GIF recorder included: the record group serves it over bridge's link.
    assert len(tools) == len(TOOL_HINTS)
    # Over the Claude extension (--link claude) the same tools, the recorder its own, once.
    over_claude = await _listed(build_claude_server(_no_claude, groups=TOOL_GROUPS))
    assert sorted(t.name for t in over_claude) == sorted(t.name for t in tools)
    assert annotation_problems(over_claude, TOOL_HINTS) == []
    assert annotation_problems(tools, TOOL_HINTS) == []
    alone = await _listed(build_claude_server(_no_claude, groups=("record",)))
    assert [t.name for t in alone] == ["browser_record_gif"]
    # Each link serves its own recorder: the extension's gif_creator there, bridge's here.
    for served in (over_claude, alone):
        recorder = next(t for t in served if t.name == "browser_record_gif")
        assert "gif_creator" in (recorder.description or "")
    ours = next(t for t in tools if t.name == "browser_record_gif")
    assert "gif_creator" not in (ours.description or "")


async def test_a_tool_without_a_row_fails_the_check() -> None:
    server = build_claude_server(_no_claude, groups=TOOL_GROUPS)  # serves every row

    async def browser_close_everything() -> str:
        return "closed"

    server.add_tool(browser_close_everything)  # around the registration helper
    problems = annotation_problems(await _listed(server), TOOL_HINTS)
    assert problems == ["browser_close_everything: served without a row in the table"]
    # A row that goes missing is caught the same way, and so is a stale row.
    table = {k: v for k, v in TOOL_HINTS.items() if k != "browser_click"}
    table["browser_close_everything"] = TOOL_HINTS["browser_tabs"]
    tools = await _listed(build_claude_server(_no_claude, groups=TOOL_GROUPS))
    assert annotation_problems(tools, table) == [
        "browser_click: served without a row in the table",
        "browser_close_everything: a row for a tool not served",
    ]


def test_registering_a_tool_without_a_row_is_refused() -> None:
    server = MCPServer("test")

    async def browser_close_everything() -> str:
        return "closed"

    with pytest.raises(UnannotatedTool, match=r"browser_close_everything.*TOOL_HINTS"):
        tool(server)(browser_close_everything)


def _docs_rows() -> dict[str, dict[str, Any]]:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## Annotations", 1)[1].split("\n## ", 1)[0]
    rows = {}
    flags = {"yes": True, "no": False}
    for line in section.splitlines():
        match = re.fullmatch(r"\| `(\w+)` \| ([^|]+) \| (\w+) \| (\w+) \| (\w+) \| (\w+) \|", line)
        if match:
            name, title, *hints = match.groups()
            rows[name] = {"title": title.strip(), "hints": [flags[h] for h in hints]}
    return rows


def test_the_docs_table_is_the_table() -> None:
    documented = _docs_rows()
    assert list(documented) == list(TOOL_HINTS)
    for name, row in TOOL_HINTS.items():
        hints = [row.read_only, row.destructive, row.idempotent, row.open_world]
        assert documented[name] == {"title": row.title, "hints": hints}, name


READERS = {
    "browser_snapshot", "browser_get_console_logs", "browser_screenshot", "browser_wait",
    "browser_network_requests", "browser_network_request", "get_conversation",
    "list_conversations", "take_cdp_snapshot", "get_page_dom", "get_answer", "list_jobs",
}  # fmt: skip
#: What acts on a page and can submit, delete, confirm or discard something.
DESTRUCTIVE = {
    "browser_navigate", "browser_go_back", "browser_go_forward", "browser_click",
    "browser_type", "browser_fill_form", "browser_select_option", "browser_drag",
    "browser_press_key", "browser_tabs", "browser_evaluate", "browser_file_upload",
    "browser_handle_dialog",
}  # fmt: skip
ASKS = {"ask_chatgpt_web", "ask_gemini_web", "ask_chatgpt_gemini_web"}


async def test_the_table_says_what_the_tools_do() -> None:
    """The judgments docs/mcp.md#annotations explains, held apart from the table so an
    edit of one row cannot quietly change them."""
    dom_group = {t.name for t in await _listed(build_server(_no_bridge, groups=("dom",)))}
    for name, row in TOOL_HINTS.items():
        assert row.title and len(row.title) <= 30, name
        if row.read_only:  # stated outright: absent hints would say the opposite
            assert (row.destructive, row.idempotent) == (False, True), name
        assert row.open_world == (name != "list_jobs"), name
    assert len(dom_group) == 11  # every one of them only reads
    for name in READERS | dom_group:
        assert TOOL_HINTS[name].read_only, name
    for name in DESTRUCTIVE:
        assert not TOOL_HINTS[name].read_only and TOOL_HINTS[name].destructive, name
        assert not TOOL_HINTS[name].idempotent, name
    for name in ("browser_hover", "browser_resize"):
        row = TOOL_HINTS[name]
        assert (row.read_only, row.destructive, row.idempotent) == (False, False, True), name
    for name in ASKS:  # they send to a third party and add to the person's account
        row = TOOL_HINTS[name]
        assert (row.read_only, row.destructive, row.idempotent) == (False, False, False), name
