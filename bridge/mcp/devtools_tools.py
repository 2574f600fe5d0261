"""The ``devtools`` tool group (off by default: ``--tools ...,devtools`` or ``--caps
devtools``): performance traces with an insight summary, and emulation. Thin wrappers over
``bridge.tools.operations.devtools``.

Names: the trace tools keep chrome-devtools-mcp's (``performance_start_trace``,
``performance_stop_trace``, ``performance_analyze_insight``), so prompts written for it work;
their ``performance_`` prefix already says what they are. Emulation is ``browser_emulate`` /
``browser_emulate_reset``: it acts on a tab like ``browser_resize`` does, and its parameters
are this server's (snake_case, a viewport object), not chrome-devtools-mcp's ``emulate``
strings, so borrowing that name would promise a compatibility it does not have.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from bridge.mcp.browser_tools import Tab, client_key
from bridge.mcp.registration import text_result, tool
from bridge.tools.browsing import BrowserTools, ToolHub

__all__ = ["register_devtools_tools"]

FilePath = Annotated[
    str | None,
    Field(
        description="Where to save the raw trace: a .json or .json.gz file inside the working "
        "directory or an --allow-path folder (never over a file). Default: bridge's outputs "
        "folder."
    ),
]


class Viewport(BaseModel):
    width: Annotated[int, Field(ge=1, le=10_000, description="CSS pixels")]
    height: Annotated[int, Field(ge=1, le=10_000, description="CSS pixels")]
    device_scale_factor: Annotated[float, Field(ge=0, le=10, description="0: the screen's")] = 0
    mobile: bool = False
    touch: bool = False


class Geolocation(BaseModel):
    latitude: Annotated[float, Field(ge=-90, le=90)]
    longitude: Annotated[float, Field(ge=-180, le=180)]
    accuracy: Annotated[float, Field(ge=0, description="metres")] = 100


class NetworkConditions(BaseModel):
    offline: bool = False
    latency: Annotated[float, Field(ge=0, le=60_000, description="added ms")] = 0
    download_throughput: Annotated[float, Field(description="bytes/s; -1: unlimited")] = -1
    upload_throughput: Annotated[float, Field(description="bytes/s; -1: unlimited")] = -1


NetworkPreset = Literal["Offline", "Slow 3G", "Fast 3G", "Slow 4G", "Fast 4G", "No throttling"]


def register_devtools_tools(server: MCPServer, get_hub: Callable[[], ToolHub]) -> None:
    def client(ctx: Context) -> BrowserTools:
        return get_hub().client(client_key(ctx))

    @tool(server)
    async def performance_start_trace(
        ctx: Context,
        reload: Annotated[
            bool, Field(description="Reload the page once tracing (its load is traced).")
        ] = False,
        auto_stop: Annotated[
            bool,
            Field(description="With reload: stop when the page has loaded and its network idled."),
        ] = False,
        file_path: FilePath = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Record a performance trace of the tab; summary: LCP, CLS, INP, long tasks."""
        result = await client(ctx).start_trace(
            reload=reload, auto_stop=auto_stop, file_path=file_path, tab=tab
        )
        if result is None:
            return text_result(
                "The performance trace is being recorded. Act in the page, then call "
                "performance_stop_trace.",
                {"recording": True},
            )
        return text_result(result.to_text(), result.to_dict())

    @tool(server)
    async def performance_stop_trace(ctx: Context, file_path: FilePath = None) -> CallToolResult:
        """Stop this client's trace: its insight summary and the raw trace file."""
        result = await client(ctx).stop_trace(file_path=file_path)
        return text_result(result.to_text(), result.to_dict())

    @tool(server)
    async def performance_analyze_insight(
        ctx: Context,
        insight_name: Annotated[
            str,
            Field(
                description="LCPBreakdown, CLSCulprits, INPBreakdown, RenderBlocking, "
                "LongTasks or DocumentLatency"
            ),
        ],
    ) -> CallToolResult:
        """One insight of the last trace in detail: LCPBreakdown, CLSCulprits, and more."""
        text = await client(ctx).analyze_insight(insight_name)
        return text_result(text, {"insight": insight_name, "text": text})

    @tool(server)
    async def browser_emulate(
        ctx: Context,
        cpu_throttling_rate: Annotated[
            float | None, Field(ge=1, le=20, description="CPU slowdown; 1 ends it.")
        ] = None,
        network: Annotated[
            NetworkPreset | NetworkConditions | None,
            Field(description='A preset or custom conditions; "No throttling" ends it.'),
        ] = None,
        viewport: Viewport | None = None,
        geolocation: Annotated[
            Geolocation | None,
            Field(description="Reaches pages the person allowed to read the location."),
        ] = None,
        user_agent: Annotated[str | None, Field(description='"" ends it.')] = None,
        color_scheme: Annotated[
            Literal["light", "dark", "auto"] | None, Field(description='"auto" ends it.')
        ] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Emulate CPU, network, viewport, location, UA, color scheme; undone on leave."""
        settings: dict[str, Any] = {}
        for name, value in (
            ("cpu_throttling_rate", cpu_throttling_rate),
            ("network", network),
            ("viewport", viewport),
            ("geolocation", geolocation),
            ("user_agent", user_agent),
            ("color_scheme", color_scheme),
        ):
            if value is not None:
                settings[name] = value.model_dump() if isinstance(value, BaseModel) else value
        result = await client(ctx).emulate(settings, tab)
        lines = [f"Tab {result['tab']}: " + ("; ".join(result["set"]) or "nothing new set")]
        if result["reset"]:
            lines.append("Back to the browser's own: " + ", ".join(result["reset"]))
        lines.append(
            "Emulating: "
            + (", ".join(result["emulating"]) or "nothing")
            + " (browser_emulate_reset puts it back; so does this client leaving)"
        )
        permission = result.get("geolocation_permission")
        if permission is not None and permission != "granted":
            lines.append(
                f"The page's geolocation permission is {permission!r}: bridge cannot grant "
                "it; the page gets the position only once the person allows the site."
            )
        return text_result("\n".join(lines), result)

    @tool(server)
    async def browser_emulate_reset(ctx: Context, tab: Tab = None) -> CallToolResult:
        """Put back everything this client emulated (on one tab, or on all)."""
        result = await client(ctx).emulate_reset(tab)
        done = result["reset"]
        text = (
            "; ".join(
                f"tab {t}: {', '.join(fields)} back to the browser's own"
                for t, fields in done.items()
            )
            or "Nothing was emulated by this client."
        )
        return text_result(text, result)
