"""Lean snapshots over MCP (in process): browser_snapshot's target/depth/diff, browser_find,
and include_snapshot on the acting tools (bridge/mcp/browser_tools.py ``acted``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, cast

import pytest
from mcp import Client

from bridge.app.facade import Bridge
from bridge.link.claude_link import ClaudeConnector
from bridge.mcp.server import build_claude_server, build_server
from bridge.tools.claude import ClaudeToolHub
from tests.tools import site as site_pages
from tests.tools.site import serve
from tests.tools.test_claude import ScriptedConnector, ScriptedLink, ok

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    # serve() points the pages' cross-origin links at its own port; put back the session
    # site's (tests/tools) when this one stops, or its /frames page would name a dead port.
    saved = site_pages._Handler.port
    try:
        yield from serve()
    finally:
        site_pages._Handler.port = saved


def _text(result: Any) -> str:
    assert not result.is_error, result.content[0].text
    return str(result.content[0].text)


def _ref(text: str, pattern: str) -> str:
    line = next(line for line in text.splitlines() if re.search(pattern, line))
    match = re.search(r"\[ref=(\w+)\]", line)
    assert match, line
    return match.group(1)


async def test_include_snapshot_appends_the_snapshot_then_its_diff(
    bridge: Bridge, site: str
) -> None:
    async with Client(build_server(lambda: bridge, groups=("browser",))) as client:
        call = client.call_tool
        opened = await call("browser_navigate", {"url": f"{site}/lean", "include_snapshot": True})
        text = _text(opened)
        assert "Navigated to" in text and "### Snapshot" in text
        assert 'button "Buy pear"' in text  # no earlier snapshot: the whole one
        assert (opened.structured_content or {})["snapshot"]["diff"] == "first"
        pear = _ref(text, "Buy pear")
        clicked = await call("browser_click", {"target": pear, "include_snapshot": True})
        after = _text(clicked)
        assert after.startswith(f"Clicked {pear}")
        assert (clicked.structured_content or {})["snapshot"]["diff"] == "diff", after
        assert re.search(rf'^\+\s*- button "Bought pear" \[ref={pear}\]$', after, re.M), after
        assert "Menu" not in after and "Buy apple" not in after
        plain = _text(await call("browser_click", {"target": "#plum"}))
        assert "### Snapshot" not in plain and "Buy" not in plain
        # The diff is against the client's last snapshot: the plum click shows up now.
        typed = _text(await call("browser_press_key", {"key": "Tab", "include_snapshot": True}))
        assert re.search(r'^\+\s*- button "Bought plum"', typed, re.M), typed
    for info in await bridge.browser.list_tabs():
        if info.url.startswith(site):
            await bridge.browser.close_tab(info.tab_id)


async def test_snapshot_parameters_and_find_over_mcp(bridge: Bridge, site: str) -> None:
    async with Client(build_server(lambda: bridge, groups=("browser",))) as client:
        call = client.call_tool
        await call("browser_navigate", {"url": f"{site}/lean"})
        whole = _text(await call("browser_snapshot", {}))
        part = _text(await call("browser_snapshot", {"target": "#items", "depth": 0}))
        items = _ref(part, "^- list")
        shown = part.splitlines()
        assert len(shown) == 3 and shown[1].startswith("- list"), part
        assert re.fullmatch(rf"  - … \(\d+ more: browser_snapshot target={items}\)", shown[2])
        assert len(part) < len(whole) / 3
        found = await call("browser_find", {"regex": "Buy (apple|plum)", "max_results": 5})
        assert (found.structured_content or {})["total"] == 2
        assert _ref(_text(found), "Buy apple") == _ref(whole, "Buy apple")
        bad = await call("browser_find", {"text": "a", "regex": "b"})
        assert bad.is_error and "either text or regex" in bad.content[0].text
        negative = await call("browser_snapshot", {"depth": -1})
        assert negative.is_error
    for info in await bridge.browser.list_tabs():
        if info.url.startswith(site):
            await bridge.browser.close_tab(info.tab_id)


async def test_find_and_depth_over_the_claude_extension() -> None:
    """Over --link claude, browser_find and depth work on the extension's own snapshot text;
    target, diff and filename say why they cannot."""
    tree = (
        '- main [ref=ref_1]\n  - list "Cards" [ref=ref_2]\n'
        '    - listitem "Alpha" [ref=ref_3]\n    - listitem "Beta" [ref=ref_4]'
    )
    link = ScriptedLink(lambda tool, args: ok(tree))
    hub = ClaudeToolHub(cast(ClaudeConnector, ScriptedConnector(link)))
    async with Client(build_claude_server(lambda: hub, groups=("browser",))) as client:
        found = _text(await client.call_tool("browser_find", {"text": "beta", "tab": 5}))
        assert found.splitlines()[1:] == [
            'Found 1 match(es) for "beta":',
            "- main [ref=ref_1]",
            '  - list "Cards" [ref=ref_2]',
            '    - listitem "Beta" [ref=ref_4]',
        ]
        shallow = _text(await client.call_tool("browser_snapshot", {"depth": 1, "tab": 5}))
        assert shallow.splitlines()[1:] == [
            "- main [ref=ref_1]",
            "  - … (3 more: browser_snapshot depth=2 or more)",
        ]
        refused = await client.call_tool("browser_snapshot", {"diff": True, "tab": 5})
        assert refused.is_error and "not_over_claude_extension" in refused.content[0].text
