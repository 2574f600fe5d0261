"""The MCP tools' public surface, pinned: every tool's name, description, input schema
(parameters, types, required, defaults, descriptions) and output schema, per tool group, as
a client sees them over ``mcp.Client(server)``.

Prompts and client configurations name these tools and their parameters, so a refactoring of
bridge/mcp must serve exactly the same surface. The expected surface is
tests/mcp/tool_surface.json; after a deliberate change to a tool, regenerate it with
``.venv/bin/python -m tests.mcp.test_surface`` and review the diff like code.
Titles and annotations are not pinned here: tests/mcp/test_annotations.py checks them against
their own table.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from mcp import Client

from bridge.app.facade import Bridge
from bridge.mcp.server import TOOL_GROUPS, build_server

SURFACE = Path(__file__).with_name("tool_surface.json")
PINNED = ("name", "description", "inputSchema", "outputSchema")


def _no_bridge() -> Bridge:
    raise AssertionError("listing the tools must not need a running bridge")


async def served(groups: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The tools a client lists for ``groups``: name -> the pinned fields, as JSON."""
    async with Client(build_server(_no_bridge, groups=groups)) as client:
        tools = (await client.list_tools()).tools
    listed = {}
    for tool in tools:
        wire = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        listed[tool.name] = {key: wire[key] for key in PINNED if key in wire}
    return listed


async def current_surface() -> dict[str, dict[str, dict[str, Any]]]:
    return {group: await served((group,)) for group in TOOL_GROUPS}


async def test_every_group_serves_the_pinned_tools_unchanged() -> None:
    expected = json.loads(SURFACE.read_text(encoding="utf-8"))
    actual = await current_surface()
    assert list(actual) == list(expected), "the tool groups changed"
    for group in expected:
        assert sorted(actual[group]) == sorted(expected[group]), f"tools of group {group!r}"
        for name, pinned in expected[group].items():
            assert actual[group][name] == pinned, f"{group}/{name} is not served as pinned"
            # The parameters' order too (dict equality ignores it): clients show it.
            params = list(actual[group][name]["inputSchema"].get("properties", {}))
            assert params == list(pinned["inputSchema"].get("properties", {})), name


async def test_all_groups_serve_the_union_of_the_groups() -> None:
    expected = json.loads(SURFACE.read_text(encoding="utf-8"))
    union = {name: tool for group in expected.values() for name, tool in group.items()}
    assert sum(len(group) for group in expected.values()) == len(union), "a name in two groups"
    assert await served(TOOL_GROUPS) == union


def main() -> None:
    """Write today's surface to tool_surface.json (only after a deliberate change)."""
    surface = asyncio.run(current_surface())
    SURFACE.write_text(json.dumps(surface, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {SURFACE}: {sum(len(g) for g in surface.values())} tools")


if __name__ == "__main__":
    main()
