"""The ``network`` tool group (off by default): playwright-mcp's route and network-state
tools, by their names and parameters, over ``bridge.tools.operations.network``.

Routes and offline are this client's: they apply to the tabs it acts on and end when it
removes them or leaves; no other client's tabs see them (docs/mcp.md#network).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from bridge.mcp.browser_tools import client_key
from bridge.mcp.registration import text_result, tool
from bridge.policy.routing import Route, parse_headers
from bridge.tools.browsing import BrowserTools, ToolHub

__all__ = ["register_network_tools"]


def register_network_tools(server: MCPServer, get_hub: Callable[[], ToolHub]) -> None:
    def tools(ctx: Context) -> BrowserTools:
        return get_hub().client(client_key(ctx))

    @tool(server)
    async def browser_route(
        pattern: Annotated[
            str,
            Field(description='URL pattern to match (e.g., "**/api/users", "**/*.{png,jpg}")'),
        ],
        ctx: Context,
        status: Annotated[
            int | None, Field(description="HTTP status code to return (default: 200)")
        ] = None,
        # str, not str | None: the SDK would decode a JSON body into a dict before we see it.
        body: Annotated[
            str, Field(description="Response body (text or JSON string); empty: none")
        ] = "",
        contentType: Annotated[  # playwright-mcp's parameter name
            str | None,
            Field(description='Content-Type header (e.g., "application/json", "text/html")'),
        ] = None,
        headers: Annotated[
            list[str] | None,
            Field(
                description='Headers in "Name: Value" format: of the mocked response, or '
                "added to the request when neither status nor body is given"
            ),
        ] = None,
        removeHeaders: Annotated[  # playwright-mcp's parameter name
            str | None,
            Field(description="Comma-separated list of header names to remove from request"),
        ] = None,
        abort: Annotated[
            bool, Field(description="Fail matching requests instead (as a network error would)")
        ] = False,
    ) -> CallToolResult:
        """Set up a route to mock network requests matching a URL pattern (this client's
        tabs; the newest route wins where several match)."""
        route = Route(
            pattern,
            owner=client_key(ctx),
            status=status,
            body=body or None,
            content_type=contentType,
            headers=parse_headers(headers),
            remove_headers=tuple(h.strip() for h in (removeHeaders or "").split(",") if h.strip()),
            abort=abort,
        )
        await tools(ctx).route(route)
        return text_result(f"Route added for pattern: {pattern}", route.to_dict())

    @tool(server)
    async def browser_route_list(ctx: Context) -> CallToolResult:
        """List all active network routes (this client's)."""
        routes = tools(ctx).route_list()
        lines = [f"{i}. {route.describe()}" for i, route in enumerate(routes, 1)]
        return text_result(
            "\n".join(lines) or "No active routes", {"routes": [r.to_dict() for r in routes]}
        )

    @tool(server)
    async def browser_unroute(
        ctx: Context,
        pattern: Annotated[
            str | None, Field(description="URL pattern to unroute (omit to remove all routes)")
        ] = None,
    ) -> CallToolResult:
        """Remove network routes matching a pattern (or all routes if no pattern specified)."""
        removed = await tools(ctx).unroute(pattern)
        text = (
            f"Removed {removed} route(s) for pattern: {pattern}"
            if pattern
            else f"Removed all {removed} route(s)"
        )
        return text_result(text, {"removed": removed})

    @tool(server)
    async def browser_network_state_set(
        state: Annotated[
            Literal["online", "offline"],
            Field(
                description='Set to "offline" to simulate offline mode, "online" to restore '
                "network connectivity"
            ),
        ],
        ctx: Context,
    ) -> CallToolResult:
        """Sets the network state of this client's tabs to online or offline. When offline,
        all network requests fail (routes still answer theirs)."""
        await tools(ctx).set_network_state(state)
        return text_result(f"Network is now {state}", {"state": state})
