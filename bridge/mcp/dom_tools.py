"""The ``dom`` tool group (off by default): DOM exploration for when the accessibility
snapshot is not enough. Thin wrappers over ``bridge.tools.dom``."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from bridge.errors import BridgeError
from bridge.mcp.browser_tools import Tab, Target, client_tools
from bridge.tools import dom
from bridge.tools.browsing import ToolHub

__all__ = ["register_dom_tools"]

Selector = Annotated[str, Field(description="CSS selector (open shadow roots are searched).")]


async def _json(call: Awaitable[dict[str, Any]]) -> CallToolResult:
    try:
        result = await call
    except BridgeError as exc:
        raise ToolError(f"[{exc.code}] {exc}") from exc
    except ValueError as exc:
        raise ToolError(str(exc)) from exc
    text = json.dumps(result, ensure_ascii=False, indent=1)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=result)


def register_dom_tools(server: MCPServer, get_hub: Callable[[], ToolHub]) -> None:
    async def page(ctx: Context, tab: int | None) -> Any:
        return await client_tools(get_hub(), ctx).page_script(tab)

    async def element(ctx: Context, target: str, tab: int | None) -> Any:
        return await client_tools(get_hub(), ctx).element(target, tab)

    @server.tool()
    async def browser_query_dom(
        selector: Selector,
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=200)] = 20,
        tab: Tab = None,
    ) -> CallToolResult:
        """Elements matching a selector: tag, id, classes, text, attributes, visibility."""
        return await _json(_run(page(ctx, tab), lambda p: dom.query_dom(p, selector, limit)))

    @server.tool()
    async def browser_get_visible_text(
        ctx: Context,
        selector: Annotated[str | None, Field(description="Default: the whole page.")] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """The text a person sees in the page or in one element."""
        return await _json(_run(page(ctx, tab), lambda p: dom.get_visible_text(p, selector)))

    @server.tool()
    async def browser_get_computed_styles(
        target: Target, ctx: Context, properties: list[str] | None = None, tab: Tab = None
    ) -> CallToolResult:
        """Computed CSS of an element (a useful default set, or the properties named)."""
        return await _json(
            _run(element(ctx, target, tab), lambda e: dom.get_computed_styles(e, properties))
        )

    @server.tool()
    async def browser_check_visibility(
        target: Target, ctx: Context, tab: Tab = None
    ) -> CallToolResult:
        """Whether an element is visible, and if not, why (hidden, covered, off-screen)."""
        return await _json(_run(element(ctx, target, tab), dom.check_visibility))

    @server.tool()
    async def browser_get_attributes(
        target: Target, ctx: Context, tab: Tab = None
    ) -> CallToolResult:
        """All attributes of an element, and its value/checked/disabled state."""
        return await _json(_run(element(ctx, target, tab), dom.get_attributes))

    @server.tool()
    async def browser_count_elements(
        selector: Selector, ctx: Context, tab: Tab = None
    ) -> CallToolResult:
        """How many elements match a selector (and how many of them in shadow roots)."""
        return await _json(_run(page(ctx, tab), lambda p: dom.count_elements(p, selector)))

    @server.tool()
    async def browser_get_page_metadata(ctx: Context, tab: Tab = None) -> CallToolResult:
        """Title, URL, language, description, canonical and social meta, element counts."""
        return await _json(_run(page(ctx, tab), dom.get_page_metadata))

    @server.tool()
    async def browser_get_filtered_aria_tree(
        ctx: Context,
        roles: list[str] | None = None,
        name: Annotated[str | None, Field(description="Substring of the accessible name.")] = None,
        max_depth: Annotated[int, Field(ge=1, le=50)] = 10,
        tab: Tab = None,
    ) -> CallToolResult:
        """Elements by ARIA role and name, nested (e.g. roles ["button", "link"])."""
        return await _json(
            _run(page(ctx, tab), lambda p: dom.get_filtered_aria_tree(p, roles, name, max_depth))
        )

    @server.tool()
    async def browser_find_by_text(
        text: str, ctx: Context, exact: bool = False, tab: Tab = None
    ) -> CallToolResult:
        """Elements whose own text (or label, placeholder, value) contains the text."""
        return await _json(_run(page(ctx, tab), lambda p: dom.find_by_text(p, text, exact)))

    @server.tool()
    async def browser_get_form_values(
        ctx: Context,
        selector: Annotated[str | None, Field(description="One form; default all.")] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Every field of the page's forms with its current value (passwords masked)."""
        return await _json(_run(page(ctx, tab), lambda p: dom.get_form_values(p, selector)))

    @server.tool()
    async def browser_check_element_state(
        target: Target, ctx: Context, tab: Tab = None
    ) -> CallToolResult:
        """attached, visible, enabled, editable, checked, focused, selected, in_viewport."""
        return await _json(_run(element(ctx, target, tab), dom.check_element_state))


async def _run(
    subject: Awaitable[Any], call: Callable[[Any], Awaitable[dict[str, Any]]]
) -> dict[str, Any]:
    return await call(await subject)
