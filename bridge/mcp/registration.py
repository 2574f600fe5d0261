"""The one way a tool is registered: ``@tool(server)``.

It gives every tool its title and annotations from ``bridge.mcp.annotations`` (refusing a tool
without a row there) and maps what the tool raises to a tool error in one place, so a client
reads the same kind of message from every tool:

- a ``BridgeError`` becomes ``[code] message``: the stable code for machines, the message
  saying what a person can do (bridge/errors.py);
- a ``ValueError`` (a bad argument: an empty question, an unknown target) becomes its
  message;
- anything else stays a crash, which the MCP server reports without its text.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

from bridge.errors import BridgeError
from bridge.mcp.annotations import hints_for

__all__ = ["text_result", "tool", "tool_error"]

P = ParamSpec("P")
R = TypeVar("R")


def tool_error(exc: BridgeError | ValueError) -> ToolError:
    """What a client reads when a tool fails on purpose."""
    if isinstance(exc, BridgeError):  # first: some are ValueErrors too (file_refused, …)
        return ToolError(f"[{exc.code}] {exc}")
    return ToolError(str(exc))


def tool(
    server: MCPServer, *, description: str | None = None
) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]:
    """Register an async function as the tool of its name, with its row's title and
    annotations and its errors mapped (``tool_error``). ``description`` replaces the
    docstring, for tools made by a factory. ``UnannotatedTool`` when the name has no row.
    The function comes back unchanged."""

    def register(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        hints = hints_for(fn.__name__)

        # functools.wraps keeps the name, docstring and annotations the SDK builds the
        # schema from (it follows __wrapped__ to the signature).
        @functools.wraps(fn)
        async def mapped(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return await fn(*args, **kwargs)
            except (BridgeError, ValueError) as exc:
                raise tool_error(exc) from exc

        server.add_tool(
            mapped,
            name=fn.__name__,
            title=hints.title,
            description=description,
            annotations=hints.annotations(),
        )
        return fn

    return register


def text_result(
    text: str, structured: dict[str, Any] | None = None, *, is_error: bool = False
) -> CallToolResult:
    """A tool result of one text, with the same data structured for programs."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=is_error,
    )
