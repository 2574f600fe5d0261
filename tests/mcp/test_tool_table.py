"""The README's tool table is the server's own tool list (bridge/mcp/tool_table.py).

After a deliberate change to the tools, rewrite it with
``.venv/bin/python -m tests.mcp.test_tool_table`` and review the diff.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp import Client

from bridge.mcp.server import DEFAULT_GROUPS, TOOL_GROUPS, build_server
from bridge.mcp.tool_table import BEGIN, END, render_tool_table, replace_table, summary
from tests.mcp.test_surface import _no_bridge

README = Path(__file__).resolve().parents[2] / "README.md"


async def served_table() -> str:
    """The table of what a client is served, group by group."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for group in TOOL_GROUPS:
        async with Client(build_server(_no_bridge, groups=(group,))) as client:
            tools = (await client.list_tools()).tools
        groups[group] = [(t.name, t.description or "") for t in tools]
    return render_tool_table(groups, DEFAULT_GROUPS)


async def test_the_readme_table_is_what_the_server_serves() -> None:
    table = await served_table()
    readme = README.read_text(encoding="utf-8")
    assert replace_table(readme, table) == readme, (
        "README.md's tool table differs from the served tools: "
        "run .venv/bin/python -m tests.mcp.test_tool_table and review the diff"
    )
    # Every tool of every group is a row, once.
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    async with Client(build_server(_no_bridge, groups=TOOL_GROUPS)) as client:
        every = {t.name for t in (await client.list_tools()).tools}
    assert sorted(row.split("`")[3] for row in rows) == sorted(every)


def test_a_row_says_the_first_sentence_and_whether_the_tool_only_reads() -> None:
    table = render_tool_table(
        {
            "browser": [
                ("browser_snapshot", "The page's tree.\nPrefer it to screenshots."),
                ("browser_click", "Click an element | or not. More."),
            ]
        },
        ("browser",),
    )
    assert table.splitlines()[2:] == [
        "| `browser` (default) | `browser_click` | Click an element \\| or not. | no |",
        "| `browser` (default) | `browser_snapshot` | The page's tree. | yes |",
    ]
    assert summary("No full stop at all") == "No full stop at all"
    assert summary("Version 2.5 of it. Then") == "Version 2.5 of it."
    assert summary("By role (e.g. button). More") == "By role (e.g. button)."
    assert summary("Put files into an <input>.") == "Put files into an &lt;input>."


def test_a_readme_without_the_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="markers"):
        replace_table("# readme\n", "| t |")
    with pytest.raises(ValueError, match="markers"):
        replace_table(f"{END}\n{BEGIN}\n", "| t |")


def main() -> None:
    """Rewrite README.md's table (only after a deliberate change to the tools)."""
    table = asyncio.run(served_table())
    README.write_text(replace_table(README.read_text(encoding="utf-8"), table), encoding="utf-8")
    print(f"wrote the tool table of {README}")


if __name__ == "__main__":
    main()
