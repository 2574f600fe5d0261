"""The ``dom`` tool group (off by default): DOM exploration for when the accessibility
snapshot is not enough. Thin wrappers over ``bridge.tools.dom``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from bridge.mcp.browser_tools import Tab, Target, client_key
from bridge.mcp.registration import text_result, tool
from bridge.tools import dom
from bridge.tools.browsing import ToolHub

__all__ = ["register_dom_tools"]

Selector = Annotated[str, Field(description="CSS selector (open shadow roots are searched).")]


def _json(result: dict[str, Any]) -> CallToolResult:
    """A reading as indented JSON text, and as data."""
    return text_result(json.dumps(result, ensure_ascii=False, indent=1), result)


def register_dom_tools(server: MCPServer, get_hub: Callable[[], ToolHub]) -> None:
    async def page(ctx: Context, tab: int | None) -> Any:
        return await get_hub().client(client_key(ctx)).page_script(tab)

    async def element(ctx: Context, target: str, tab: int | None) -> Any:
        return await get_hub().client(client_key(ctx)).element(target, tab)

    @tool(server)
    async def browser_query_dom(
        selector: Selector,
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=200)] = 20,
        tab: Tab = None,
    ) -> CallToolResult:
        """Elements matching a selector: tag, id, classes, text, attributes, visibility."""
        return _json(await dom.query_dom(await page(ctx, tab), selector, limit))

    @tool(server)
    async def browser_get_visible_text(
        ctx: Context,
        selector: Annotated[str | None, Field(description="Default: the whole page.")] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """The text a person sees in the page or in one element."""
        return _json(await dom.get_visible_text(await page(ctx, tab), selector))

    @tool(server)
    async def browser_get_computed_styles(
        target: Target, ctx: Context, properties: list[str] | None = None, tab: Tab = None
    ) -> CallToolResult:
        """Computed CSS of an element (a useful default set, or the properties named)."""
        return _json(await dom.get_computed_styles(await element(ctx, target, tab), properties))

    @tool(server)
    async def browser_check_visibility(
        target: Target, ctx: Context, tab: Tab = None
    ) -> CallToolResult:
        """Whether an element is visible, and if not, why (hidden, covered, off-screen)."""
        return _json(await dom.check_visibility(await element(ctx, target, tab)))

    @tool(server)
    async def browser_get_attributes(
        target: Target, ctx: Context, tab: Tab = None
    ) -> CallToolResult:
        """All attributes of an element, and its value/checked/disabled state."""
        return _json(await dom.get_attributes(await element(ctx, target, tab)))

    @tool(server)
    async def browser_count_elements(
        selector: Selector, ctx: Context, tab: Tab = None
    ) -> CallToolResult:
        """How many elements match a selector (and how many of them in shadow roots)."""
        return _json(await dom.count_elements(await page(ctx, tab), selector))

    @tool(server)
    async def browser_get_page_metadata(ctx: Context, tab: Tab = None) -> CallToolResult:
        """Title, URL, language, description, canonical and social meta, element counts."""
        return _json(await dom.get_page_metadata(await page(ctx, tab)))

    @tool(server)
    async def browser_get_filtered_aria_tree(
        ctx: Context,
        roles: list[str] | None = None,
        name: Annotated[str | None, Field(description="Substring of the accessible name.")] = None,
        max_depth: Annotated[int, Field(ge=1, le=50)] = 10,
        tab: Tab = None,
    ) -> CallToolResult:
        """Elements by ARIA role and name, nested (e.g. roles ["button", "link"])."""
        return _json(await dom.get_filtered_aria_tree(await page(ctx, tab), roles, name, max_depth))

    @tool(server)
    async def browser_find_by_text(
        text: str, ctx: Context, exact: bool = False, tab: Tab = None
    ) -> CallToolResult:
        """Elements whose own text (or label, placeholder, value) contains the text."""
        return _json(await dom.find_by_text(await page(ctx, tab), text, exact))

    @tool(server)
    async def browser_get_form_values(
        ctx: Context,
        selector: Annotated[str | None, Field(description="One form; default all.")] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Every field of the page's forms with its current value (passwords masked)."""
        return _json(await dom.get_form_values(await page(ctx, tab), selector))

    @tool(server)
    async def browser_check_element_state(
        target: Target, ctx: Context, tab: Tab = None
    ) -> CallToolResult:
        """attached, visible, enabled, editable, checked, focused, selected, in_viewport."""
        return _json(await dom.check_element_state(await element(ctx, target, tab)))
