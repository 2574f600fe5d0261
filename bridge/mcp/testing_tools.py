"""The ``testing`` tool group (off by default; playwright-mcp's testing capability): verify
what the page shows as a test would, get an element's Playwright locator, and write the
session so far as a pytest-playwright test. Thin wrappers over ``bridge.tools.operations
.testing``; while this group is served, every action is recorded as Playwright code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from bridge.mcp.browser_tools import Tab, Target, client_key
from bridge.mcp.registration import text_result, tool
from bridge.tools.browsing import BrowserTools, ToolHub

__all__ = ["register_testing_tools"]

Element = Annotated[str | None, Field(description="What it is, in words (for messages).")]


def _passed(result: dict[str, Any]) -> CallToolResult:
    return text_result(f"Passed.\n- Playwright code: {result['code']}", result)


def register_testing_tools(server: MCPServer, get_hub: Callable[[], ToolHub]) -> None:
    def tools(ctx: Context) -> BrowserTools:
        return get_hub().client(client_key(ctx))

    @tool(server)
    async def browser_verify_element_visible(
        role: Annotated[
            str, Field(description='ARIA role, as in the snapshot\'s `- button "Save"`.')
        ],
        accessible_name: Annotated[
            str, Field(description='Accessible name, as in the snapshot\'s `- button "Save"`.')
        ],
        ctx: Context,
        tab: Tab = None,
    ) -> CallToolResult:
        """Verify an element with this role and name is visible; fails saying what is seen."""
        return _passed(await tools(ctx).verify_element_visible(role, accessible_name, tab))

    @tool(server)
    async def browser_verify_text_visible(
        text: str, ctx: Context, tab: Tab = None
    ) -> CallToolResult:
        """Verify a text is visible on the page. Prefer browser_verify_element_visible."""
        return _passed(await tools(ctx).verify_text_visible(text, tab))

    @tool(server)
    async def browser_verify_list_visible(
        target: Target,
        items: Annotated[list[str], Field(description="Texts the list shows.", min_length=1)],
        ctx: Context,
        element: Element = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Verify a list (or any element) shows each of these texts."""
        return _passed(await tools(ctx).verify_list_visible(target, items, element, tab))

    @tool(server)
    async def browser_verify_value(
        type: Literal["textbox", "checkbox", "radio", "combobox", "slider"],
        target: Target,
        value: Annotated[
            str, Field(description='The value; for a checkbox or radio "true" or "false".')
        ],
        ctx: Context,
        element: Element = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Verify a form field's value (or whether a checkbox or radio is checked)."""
        return _passed(await tools(ctx).verify_value(type, target, value, element, tab))

    @tool(server)
    async def browser_generate_locator(
        target: Target, ctx: Context, element: Element = None, tab: Tab = None
    ) -> CallToolResult:
        """The Playwright-for-Python locator that finds exactly this element (role and name,
        label, placeholder, text, test id, else CSS), checked against the page."""
        result = await tools(ctx).generate_locator(target, tab)
        return text_result(result["locator"], result)

    @tool(server)
    async def browser_generate_test(
        ctx: Context,
        filename: Annotated[
            str | None,
            Field(
                description="Where to write it: a .py file under bridge's working directory "
                "or an --allow-path folder (default test_bridge_session.py there); an "
                "existing file is never overwritten (a numbered name is used)."
            ),
        ] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Write this session's actions and verifications on the tab as a pytest-playwright
        test (runs with `pytest`, or `pytest --bridge-playwright` through bridge)."""
        result = await tools(ctx).generate_test(filename, tab)
        text = f"Wrote {result['path']} ({result['lines']} lines):\n\n{result['content']}"
        return text_result(text, result)
