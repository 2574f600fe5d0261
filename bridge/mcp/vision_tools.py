"""The ``vision`` tool group (off by default): input by coordinates and a zoomed look, for
pages the accessibility snapshot does not describe (canvas, maps, games); and the ``record``
group (off by default): ``browser_record_gif`` over bridge's own link. Names and parameters
follow playwright-mcp's vision tools (mouse.ts) and the Claude extension's recorder; thin
wrappers over ``bridge.tools.operations.vision`` and ``.recording``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from bridge.mcp.browser_tools import IncludeSnapshot, Tab, acted, client_key
from bridge.mcp.registration import text_result, tool
from bridge.tools.browsing import BrowserTools, ToolHub

__all__ = ["register_record_tools", "register_vision_tools"]

X = Annotated[
    float,
    Field(
        description="X in CSS pixels of the viewport, as in a browser_screenshot at scale 1 "
        "(0 = left edge); if the screenshot was scaled, divide its pixel x by the factor."
    ),
]
Y = Annotated[
    float,
    Field(description="Y in CSS pixels of the viewport (0 = top edge), like x."),
]


def register_vision_tools(server: MCPServer, get_hub: Callable[[], ToolHub]) -> None:
    def tools(ctx: Context) -> BrowserTools:
        return get_hub().client(client_key(ctx))

    @tool(server)
    async def browser_mouse_click_xy(
        x: X,
        y: Y,
        ctx: Context,
        element: Annotated[
            str | None, Field(description="What is there, in words (for the log).")
        ] = None,
        button: Literal["left", "right", "middle"] = "left",
        click_count: Annotated[int, Field(ge=1, le=3, description="2 = a double click.")] = 1,
        double_click: Annotated[bool, Field(description="The same as click_count 2.")] = False,
        tab: Tab = None,
        include_snapshot: IncludeSnapshot = False,
    ) -> CallToolResult:
        """Click at a point of the viewport (for what browser_snapshot has no ref for:
        canvas, maps, custom widgets). Says what the click changed."""
        count = 2 if double_click and click_count == 1 else click_count
        t = tools(ctx)
        report = await t.mouse_click_xy(
            x, y, button=button, click_count=count, element=element, tab=tab
        )
        return await acted(t, report, include_snapshot)

    @tool(server)
    async def browser_mouse_move_xy(
        x: X, y: Y, ctx: Context, tab: Tab = None, include_snapshot: IncludeSnapshot = False
    ) -> CallToolResult:
        """Move the mouse to a point of the viewport (hover effects, tooltips)."""
        t = tools(ctx)
        return await acted(t, await t.mouse_move_xy(x, y, tab), include_snapshot)

    @tool(server)
    async def browser_mouse_drag_xy(
        start_x: X,
        start_y: Y,
        end_x: X,
        end_y: Y,
        ctx: Context,
        tab: Tab = None,
        include_snapshot: IncludeSnapshot = False,
    ) -> CallToolResult:
        """Drag with the left button from one point of the viewport to another (sliders,
        canvas drawing, map panning), moving through points in between."""
        t = tools(ctx)
        report = await t.mouse_drag_xy(start_x, start_y, end_x, end_y, tab)
        return await acted(t, report, include_snapshot)

    @tool(server)
    async def browser_scroll(
        ctx: Context,
        direction: Literal["up", "down", "left", "right"] = "down",
        amount: Annotated[
            float | Literal["page"],
            Field(description="CSS pixels, or 'page' (most of the viewport)."),
        ] = "page",
        x: Annotated[
            float | None, Field(description="Where the wheel turns (default: the centre).")
        ] = None,
        y: Annotated[float | None, Field(description="Where the wheel turns.")] = None,
        target: Annotated[
            str | None,
            Field(description="Instead: scroll this element (ref or selector) into view."),
        ] = None,
        tab: Tab = None,
        include_snapshot: IncludeSnapshot = False,
    ) -> CallToolResult:
        """Turn the mouse wheel at a point (scrolls whatever is under it: the page or an
        inner list), or scroll an element into view; says the page's scroll position."""
        t = tools(ctx)
        report = await t.scroll(direction, amount, x=x, y=y, target=target, tab=tab)
        return await acted(t, report, include_snapshot)

    @tool(server)
    async def browser_zoom(
        x: X,
        y: Y,
        width: Annotated[float, Field(gt=0, description="CSS pixels.")],
        height: Annotated[float, Field(gt=0, description="CSS pixels.")],
        ctx: Context,
        scale: Annotated[
            float,
            Field(gt=0, le=10, description="Enlargement (image pixels per CSS pixel)."),
        ] = 2.0,
        tab: Tab = None,
    ) -> CallToolResult:
        """A close-up image of a region of the viewport, enlarged (small text, icons,
        charts). The page itself is not zoomed. Image pixel (px, py) is CSS point
        (x + px/scale, y + py/scale)."""
        data, info = await tools(ctx).zoom(x, y, width, height, scale=scale, tab=tab)
        region = info["region"]
        text = (
            f"Region ({region['x']:g}, {region['y']:g}) {region['width']:g}×"
            f"{region['height']:g} CSS px at ×{info['scale']:g}: image "
            f"{info['image_width']}×{info['image_height']} px"
        )
        return CallToolResult(
            content=[
                Image(data=data, format="png").to_image_content(),
                TextContent(type="text", text=text),
            ],
            structured_content=info,
        )


def register_record_tools(server: MCPServer, get_hub: Callable[[], ToolHub]) -> None:
    @tool(server)
    async def browser_record_gif(
        action: Literal["start_recording", "stop_recording", "export", "clear"],
        ctx: Context,
        filename: Annotated[
            str | None,
            Field(
                description="For export: where to write the GIF, a name (saved in bridge's "
                "working directory) or a path inside a folder the person allowed with "
                "--allow-path; other paths are refused (path_not_allowed)."
            ),
        ] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Record the tab as an animated GIF with click markers: start_recording, act,
        stop_recording, then export (returns the file's path)."""
        result = (
            await get_hub().client(client_key(ctx)).record_gif(action, filename=filename, tab=tab)
        )
        return text_result(json.dumps(result), result)
