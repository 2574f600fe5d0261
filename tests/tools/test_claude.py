"""The browser tools over the Claude extension, through their seam: a scripted link.

What each operation asks of the extension's tools (names, arguments), how the answers become
bridge's results, and the clear refusals for what the extension cannot carry. The same
operations end to end, with the fake extension acting in real Chromium, are in
tests/claude_extension/test_link.py.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any, cast

import pytest

from bridge.errors import ClaudeToolError, NotOverClaudeExtension, TabClosed
from bridge.link.claude_link import ClaudeConnector
from bridge.policy.urls import UrlRefused
from bridge.tools.claude import NOT_CARRIED, ClaudeToolHub, ClaudeTools, key_chord, ref_points
from bridge.tools.operations.client import NoCurrentTab
from bridge.wire.claude import ClaudeReply, parse_tool_response

Answer = Callable[[str, dict[str, Any]], dict[str, Any]]


class ScriptedLink:
    """Answers calls the way the extension would (``answer(tool, args)`` -> tool_response)."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call(self, tool: str, args: dict[str, Any], *, timeout: float = 60.0) -> ClaudeReply:
        self.calls.append((tool, args))
        return parse_tool_response(self.answer(tool, args))


class ScriptedConnector:
    def __init__(self, link: ScriptedLink) -> None:
        self.link = link

    async def connect(self, timeout: float | None = None) -> ScriptedLink:
        return self.link


def ok(
    text: str, tab: int = 5, url: str = "https://example.test/", title: str = "T"
) -> dict[str, Any]:
    context = {
        "currentTabId": tab,
        "executedOnTabId": tab,
        "availableTabs": [{"tabId": tab, "title": title, "url": url}],
        "tabCount": 1,
    }
    return {
        "type": "tool_response",
        "result": {"content": [{"type": "text", "text": text}], "tabContext": context},
    }


def tools_for(answer: Answer) -> tuple[ClaudeTools, ScriptedLink]:
    link = ScriptedLink(answer)
    hub = ClaudeToolHub(cast(ClaudeConnector, ScriptedConnector(link)))
    return hub.client("test"), link


async def test_navigate_without_a_tab_creates_one_in_the_group_then_navigates() -> None:
    def answer(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if tool == "tabs_create":
            return ok("Created new tab. Tab ID: 42", tab=42, url="about:blank")
        return ok("Navigated", tab=42, url="https://example.test/a", title="A")

    tools, link = tools_for(answer)
    report = await tools.navigate("https://example.test/a")
    assert link.calls == [
        ("tabs_create", {}),
        ("navigate", {"url": "https://example.test/a", "tabId": 42}),
    ]
    assert (report.tab_id, report.url, report.title) == (42, "https://example.test/a", "A")
    assert tools.current == 42
    # The next one uses that tab.
    await tools.navigate("https://example.test/b")
    assert link.calls[-1] == ("navigate", {"url": "https://example.test/b", "tabId": 42})


async def test_acting_tools_send_the_extensions_actions_with_its_refs() -> None:
    tools, link = tools_for(lambda tool, args: ok("done"))
    tools.current = 5
    await tools.click("ref_3", double_click=True, modifiers=["Control", "Shift"])
    await tools.click("ref_4", button="right")
    await tools.hover("ref_5")
    await tools.press_key("Control+a")
    await tools.type("ref_6", "hello", submit=True)
    await tools.type("ref_7", "slow", slowly=True)
    await tools.select_option("ref_8", ["two"])
    await tools.fill_form([{"target": "ref_9", "value": True}])
    await tools.resize(800, 600)
    assert link.calls == [
        (
            "computer",
            {"action": "double_click", "ref": "ref_3", "modifiers": "ctrl+shift", "tabId": 5},
        ),
        ("computer", {"action": "right_click", "ref": "ref_4", "tabId": 5}),
        ("computer", {"action": "hover", "ref": "ref_5", "tabId": 5}),
        ("computer", {"action": "key", "text": "ctrl+a", "tabId": 5}),
        ("form_input", {"ref": "ref_6", "value": "hello", "tabId": 5}),
        ("computer", {"action": "key", "text": "Enter", "tabId": 5}),
        ("computer", {"action": "left_click", "ref": "ref_7", "tabId": 5}),
        ("computer", {"action": "type", "text": "slow", "tabId": 5}),
        ("form_input", {"ref": "ref_8", "value": "two", "tabId": 5}),
        ("form_input", {"ref": "ref_9", "value": True, "tabId": 5}),
        ("resize_window", {"width": 800, "height": 600, "tabId": 5}),
    ]


async def test_a_drag_goes_between_the_points_of_the_last_snapshot() -> None:
    tree = '- list "Cards" [ref=ref_1] (x=10,y=20)\n  - listitem "A" [ref=ref_2] (x=30,y=40)'
    tools, link = tools_for(lambda tool, args: ok(tree if tool == "read_page" else "dragged"))
    tools.current = 5
    with pytest.raises(ValueError, match="browser_snapshot"):
        await tools.drag("ref_2", "ref_1")
    snapshot = await tools.snapshot()
    assert snapshot.startswith("tab 5: https://example.test/\n- list")
    await tools.drag("ref_2", "ref_1")
    assert link.calls[-1] == (
        "computer",
        {
            "action": "left_click_drag",
            "start_coordinate": [30.0, 40.0],
            "coordinate": [10.0, 20.0],
            "tabId": 5,
        },
    )


async def test_a_screenshot_is_the_extensions_image() -> None:
    png = b"\x89PNG\r\n\x1a\n fake"
    image = {"type": "image", "data": base64.b64encode(png).decode(), "mimeType": "image/png"}
    tools, link = tools_for(
        lambda tool, args: {"type": "tool_response", "result": {"content": [image]}}
    )
    tools.current = 5
    assert await tools.screenshot() == (png, "png")
    assert link.calls == [("computer", {"action": "screenshot", "tabId": 5})]


async def test_evaluate_calls_the_function_and_reads_its_json() -> None:
    tools, link = tools_for(lambda tool, args: ok('{"a": 1}'))
    tools.current = 5
    assert await tools.evaluate("() => ({a: 1})") == {"a": 1}
    assert link.calls == [
        ("javascript_tool", {"action": "javascript_exec", "text": "(() => ({a: 1}))()", "tabId": 5})
    ]


async def test_what_the_extension_cannot_carry_says_so_and_never_reaches_it() -> None:
    tools, link = tools_for(lambda tool, args: ok("x"))
    tools.current = 5
    refusals = [
        tools.click("#save"),  # a CSS selector: the extension takes its own refs only
        tools.file_upload("ref_1", ["/tmp/a.txt"]),
        tools.handle_dialog(True),
        tools.network_request(1),
        tools.screenshot(full_page=True),
        tools.wait(text="Done"),
        tools.select_option("ref_1", ["a", "b"]),
        tools.evaluate("(el) => el.id", target="ref_1"),
        tools.tabs("close", tab=5),
    ]
    for refusal in refusals:
        with pytest.raises(
            NotOverClaudeExtension, match=r"not available over the Claude extension: .+"
        ):
            await refusal
    assert link.calls == []
    assert "bodies" in NOT_CARRIED["browser_network_request"]


async def test_no_current_tab_and_a_closed_tab_are_typed_errors() -> None:
    def answer(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if args.get("tabId") == 9:
            return {"type": "tool_response", "error": {"content": "Tab not found"}}
        return {"type": "tool_response", "error": {"content": "Element ref_99 not found"}}

    tools, _ = tools_for(answer)
    with pytest.raises(NoCurrentTab, match="browser_navigate"):
        await tools.snapshot()
    tools.current = 9
    with pytest.raises(TabClosed, match="tab 9 was closed"):
        await tools.hover("ref_1")
    assert tools.current is None
    tools.current = 5
    with pytest.raises(ClaudeToolError, match="computer failed: Element ref_99 not found"):
        await tools.click("ref_99")


async def test_tabs_are_the_extensions_tab_group() -> None:
    tools, link = tools_for(lambda tool, args: ok("tabs", tab=7, url="https://example.test/x"))
    listed = await tools.tabs("list")
    assert listed["tabs"] == [
        {
            "tab": 7,
            "title": "T",
            "url": "https://example.test/x",
            "active": False,
            "attached": True,
            "current": False,
        }
    ]
    assert link.calls == [("tabs_context", {"createIfEmpty": True})]
    with pytest.raises(ValueError, match="not in the Claude extension's tab group"):
        await tools.tabs("select", tab=8)
    assert (await tools.tabs("select", tab=7))["tab"] == 7 and tools.current == 7


async def test_urls_follow_the_same_rules_as_over_bridges_own_link() -> None:
    """A page the agent reads must not talk it into a javascript: or chrome: URL here either."""
    tools, link = tools_for(lambda tool, args: ok("x"))
    tools.current = 5
    for url in ("javascript:alert(1)", "chrome://settings", "file:///etc/passwd"):
        with pytest.raises(UrlRefused):
            await tools.navigate(url)
        with pytest.raises(UrlRefused):
            await tools.tabs("new", url=url)
    assert link.calls == []
    await tools.navigate("example.com")  # a bare host is https, as over bridge's own link
    assert link.calls == [("navigate", {"url": "https://example.com", "tabId": 5})]


async def test_network_requests_are_filtered_by_the_regex_here() -> None:
    lines = "GET https://example.test/api/items 200\nGET https://example.test/logo.png 200"
    tools, link = tools_for(lambda tool, args: ok(lines))
    tools.current = 5
    found = await tools.network_requests(filter=r"api/\w+")
    assert [r["url"] for r in found["requests"]] == ["GET https://example.test/api/items 200"]
    assert link.calls == [("read_network_requests", {"tabId": 5})]
    with pytest.raises(ValueError, match="not a regular expression"):
        await tools.network_requests(filter="(")


def test_key_chords_and_ref_points() -> None:
    assert key_chord("Enter") == "Enter"
    assert key_chord("Control+Shift+Tab") == "ctrl+shift+Tab"
    assert key_chord("Meta+a") == "cmd+a"
    assert ref_points('- button "Go" [ref=ref_12] (x=450,y=300) id="go"') == {
        "ref_12": (450.0, 300.0)
    }
    assert ref_points("- generic [ref=ref_1]") == {}
