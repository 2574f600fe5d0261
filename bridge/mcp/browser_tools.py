"""The ``browser`` tool group: thin MCP wrappers over ``bridge.tools.browsing.BrowserTools``.

Names and parameters follow playwright-mcp and unibrowse, so prompts written for them work.
Every tool takes an optional ``tab``; without it the tool acts on this client's current tab.
Each MCP session is its own client: two clients never act on each other's current tab.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from bridge.errors import NotOverClaudeExtension
from bridge.mcp.registration import text_result, tool
from bridge.tools.action_report import ActionReport
from bridge.tools.browsing import BrowserTools, ToolHub
from bridge.tools.claude import ClaudeToolHub, ClaudeTools
from bridge.tools.operations.lean import FIND_LIMIT, SNAPSHOT_CHARS
from bridge.tools.snapshot_lean import compile_find, find_lines, find_report, limit_depth

__all__ = [
    "CLIENT_HEADER",
    "AnyHub",
    "acted",
    "client_key",
    "client_tools",
    "register_browser_tools",
    "register_claude_tools",
]

Tab = Annotated[
    int | None, Field(description="Tab id (browser_tabs list); default: this client's current tab.")
]
Target = Annotated[
    str,
    Field(
        description="Element: a ref from the latest browser_snapshot (e12, f1e4) or a CSS "
        "selector (open shadow roots are searched)."
    ),
]


CLIENT_HEADER = "x-bridge-client"

#: The browser tools' hub: bridge's own (CDP through its extension), or the Claude
#: extension's tools (``--link claude``): the same operations, the same results.
AnyHub = ToolHub | ClaudeToolHub


def client_key(ctx: Context) -> str:
    """Which client a request comes from, so each keeps its own current tab.

    MCP's current protocol is stateless (no session id), so: an explicit ``X-Bridge-Client``
    header (for several instances of one app over HTTP); else a legacy ``Mcp-Session-Id``;
    else the client's own name and version from the request's metadata (Claude Code and
    Cursor differ); over stdio the process serves exactly one client anyway. Headers and
    names are client-supplied: they keep cooperating clients apart; the bearer token, not
    they, is the security boundary.
    """
    headers = ctx.headers or {}
    explicit = headers.get(CLIENT_HEADER) or headers.get("mcp-session-id")
    if explicit:
        return f"header:{explicit}"
    meta = ctx.request_context.meta or {}
    info = meta.get("io.modelcontextprotocol/clientInfo") if isinstance(meta, dict) else None
    if isinstance(info, dict) and info.get("name"):
        return f"client:{info.get('name')}@{info.get('version', '')}"
    return "local"


def client_tools(hub: AnyHub, ctx: Context) -> BrowserTools | ClaudeTools:
    """This client's tools, with its own current tab (see ``client_key``)."""
    return hub.client(client_key(ctx))


IncludeSnapshot = Annotated[
    bool,
    Field(
        description="Also return the page's snapshot after the action: a diff against your "
        "last snapshot of the tab when you took one (default: only what the action changed)."
    ),
]


def _report(report: ActionReport) -> CallToolResult:
    """An action's result: what it did and what changed, as text and as data."""
    return text_result(report.to_text(), report.to_dict())


async def acted(
    tools: BrowserTools | ClaudeTools, report: ActionReport, include_snapshot: bool
) -> CallToolResult:
    """An acting tool's result (``_report``), with the snapshot after it when asked: the
    one place ``include_snapshot`` is handled, for every acting tool."""
    if not include_snapshot:
        return _report(report)
    data = report.to_dict()
    if report.dialog is not None:  # a page behind a dialog cannot be read
        note = "(no snapshot: answer the dialog first)"
        data["snapshot"] = {"skipped": "dialog_open"}
    elif isinstance(tools, BrowserTools):
        lean = await tools.lean_snapshot(report.tab_id, diff=True)
        note, data["snapshot"] = lean.text, lean.data
    else:  # the Claude extension's link: its own snapshot, whole
        note = await tools.snapshot(report.tab_id, max_chars=SNAPSHOT_CHARS)
        data["snapshot"] = {"tab": report.tab_id}
    return text_result(f"{report.to_text()}\n\n### Snapshot\n{note}", data)


def register_browser_tools(server: MCPServer, get_hub: Callable[[], AnyHub]) -> None:
    def tools(ctx: Context) -> BrowserTools | ClaudeTools:
        return client_tools(get_hub(), ctx)

    @tool(server)
    async def browser_navigate(
        url: str, ctx: Context, tab: Tab = None, include_snapshot: IncludeSnapshot = False
    ) -> CallToolResult:
        """Open a URL in the current tab (a new tab if this client has none yet)."""
        t = tools(ctx)
        return await acted(t, await t.navigate(url, tab), include_snapshot)

    @tool(server)
    async def browser_go_back(
        ctx: Context, tab: Tab = None, include_snapshot: IncludeSnapshot = False
    ) -> CallToolResult:
        """Go back in the tab's history."""
        t = tools(ctx)
        return await acted(t, await t.go_back(tab), include_snapshot)

    @tool(server)
    async def browser_go_forward(
        ctx: Context, tab: Tab = None, include_snapshot: IncludeSnapshot = False
    ) -> CallToolResult:
        """Go forward in the tab's history."""
        t = tools(ctx)
        return await acted(t, await t.go_forward(tab), include_snapshot)

    @tool(server)
    async def browser_snapshot(
        ctx: Context,
        tab: Tab = None,
        target: Annotated[
            str | None,
            Field(
                description="Only this element's subtree: a ref from an earlier snapshot "
                "(e12) or a CSS selector."
            ),
        ] = None,
        depth: Annotated[
            int | None,
            Field(
                description="Only this many levels below the page (or the target, which is "
                "level 0); deeper parts become a line saying how to see them.",
                ge=0,
            ),
        ] = None,
        diff: Annotated[
            bool,
            Field(
                description="Only what changed since your last snapshot of this tab (same "
                "target and depth), as a unified diff; the whole snapshot when most changed."
            ),
        ] = False,
        filename: Annotated[
            str | None,
            Field(
                description="Save the snapshot to this file (relative to bridge's working "
                "directory, inside the allowed folders) and return only its path."
            ),
        ] = None,
    ) -> CallToolResult:
        """The page's accessibility tree with element refs (iframes and shadow DOM included).
        Prefer it to screenshots for finding what to act on; target, depth, diff and
        filename keep it small."""
        t = tools(ctx)
        if isinstance(t, BrowserTools):
            lean = await t.lean_snapshot(
                tab, target=target, depth=depth, diff=diff, filename=filename
            )
            return text_result(lean.text, lean.data)
        if target or diff or filename:
            raise NotOverClaudeExtension(
                "browser_snapshot's target, diff and filename",
                "they need bridge's own snapshot of the page",
            )
        text = await t.snapshot(tab, max_chars=SNAPSHOT_CHARS)
        if depth is not None:
            head, _, body = text.partition("\n")
            text = "\n".join([head, *limit_depth(body.split("\n"), depth, root_printed=False)])
        return text_result(text)

    @tool(server)
    async def browser_find(
        ctx: Context,
        text: Annotated[
            str | None, Field(description="Text to look for (any case). Give text or regex.")
        ] = None,
        regex: Annotated[
            str | None,
            Field(
                description="A regular expression (Python syntax), case-sensitive unless "
                "written /pattern/i. Give text or regex."
            ),
        ] = None,
        max_results: Annotated[
            int, Field(description="Most matches to show.", ge=1, le=1000)
        ] = FIND_LIMIT,
        tab: Tab = None,
    ) -> CallToolResult:
        """Search the page's snapshot: the matching lines with their refs, each under its
        ancestors' lines, without the rest of the page."""
        t = tools(ctx)
        if isinstance(t, BrowserTools):
            found = await t.find(text, regex, max_results=max_results, tab=tab)
            return text_result(found.text, found.data)
        query, matches = compile_find(text, regex)
        head, _, body = (await t.snapshot(tab)).partition("\n")
        result = find_lines(body.split("\n"), matches, limit=max_results)
        lines = [head, *find_report(query, result)]
        return text_result("\n".join(lines), {"total": result.total, "shown": result.shown})

    @tool(server)
    async def browser_click(
        target: Target,
        ctx: Context,
        element: Annotated[
            str | None, Field(description="What it is, in words (for the log).")
        ] = None,
        button: Literal["left", "right", "middle"] = "left",
        double_click: bool = False,
        modifiers: Annotated[
            list[Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]] | None,
            Field(description="Keys held during the click."),
        ] = None,
        tab: Tab = None,
        include_snapshot: IncludeSnapshot = False,
    ) -> CallToolResult:
        """Click an element once it is visible, enabled, stable and not covered."""
        t = tools(ctx)
        report = await t.click(
            target,
            element=element,
            button=button,
            double_click=double_click,
            modifiers=list(modifiers or []),
            tab=tab,
        )
        return await acted(t, report, include_snapshot)

    @tool(server)
    async def browser_hover(
        target: Target, ctx: Context, tab: Tab = None, include_snapshot: IncludeSnapshot = False
    ) -> CallToolResult:
        """Move the mouse over an element (opens hover menus)."""
        t = tools(ctx)
        return await acted(t, await t.hover(target, tab), include_snapshot)

    @tool(server)
    async def browser_type(
        target: Target,
        text: str,
        ctx: Context,
        submit: Annotated[bool, Field(description="Press Enter afterwards.")] = False,
        slowly: Annotated[bool, Field(description="One key at a time (for key handlers).")] = False,
        tab: Tab = None,
        include_snapshot: IncludeSnapshot = False,
    ) -> CallToolResult:
        """Replace the text of an editable element."""
        t = tools(ctx)
        report = await t.type(target, text, submit=submit, slowly=slowly, tab=tab)
        return await acted(t, report, include_snapshot)

    @tool(server)
    async def browser_fill_form(
        fields: Annotated[
            list[dict[str, Any]],
            Field(
                description="[{target, value}]: text, true/false for checkboxes and radios, "
                "an option value or label for selects."
            ),
        ],
        ctx: Context,
        tab: Tab = None,
        include_snapshot: IncludeSnapshot = False,
    ) -> CallToolResult:
        """Fill several form fields in one call."""
        t = tools(ctx)
        return await acted(t, await t.fill_form(fields, tab), include_snapshot)

    @tool(server)
    async def browser_select_option(
        target: Target,
        values: list[str],
        ctx: Context,
        tab: Tab = None,
        include_snapshot: IncludeSnapshot = False,
    ) -> CallToolResult:
        """Select options of a <select> by value or label."""
        t = tools(ctx)
        return await acted(t, await t.select_option(target, values, tab), include_snapshot)

    @tool(server)
    async def browser_drag(
        start_target: Target,
        end_target: Target,
        ctx: Context,
        tab: Tab = None,
        include_snapshot: IncludeSnapshot = False,
    ) -> CallToolResult:
        """Drag one element onto another (HTML5 drag and drop or mouse drags)."""
        t = tools(ctx)
        return await acted(t, await t.drag(start_target, end_target, tab), include_snapshot)

    @tool(server)
    async def browser_press_key(
        key: Annotated[
            str, Field(description="A key or chord: Enter, Escape, Control+A, Shift+Tab.")
        ],
        ctx: Context,
        tab: Tab = None,
        include_snapshot: IncludeSnapshot = False,
    ) -> CallToolResult:
        """Press a key in the focused element."""
        t = tools(ctx)
        return await acted(t, await t.press_key(key, tab), include_snapshot)

    @tool(server)
    async def browser_wait(
        ctx: Context,
        time: Annotated[
            float | None,
            Field(
                description="Seconds (at most 30): alone, a pause; with a condition, its limit.",
                gt=0,
            ),
        ] = None,
        text: Annotated[str | None, Field(description="Return once this text shows.")] = None,
        text_gone: Annotated[
            str | None, Field(description="Return once this text is gone.")
        ] = None,
        selector: Annotated[str | None, Field(description="Return once this matches.")] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Wait until text appears or disappears, or a selector matches (returns at once then)."""
        result = await tools(ctx).wait(time, text, text_gone, selector, tab)
        return text_result(json.dumps(result), result)

    @tool(server)
    async def browser_screenshot(
        ctx: Context,
        target: Annotated[
            str | None, Field(description="Only this element (ref or selector).")
        ] = None,
        full_page: bool = False,
        type: Annotated[
            Literal["png", "jpeg", "webp"] | None,
            Field(description="Image format (default png; jpeg for a huge full page)."),
        ] = None,
        quality: Annotated[
            int | None, Field(ge=0, le=100, description="jpeg/webp quality, 0-100.")
        ] = None,
        max_size: Annotated[
            int | None,
            Field(
                gt=0,
                description="Longest side in pixels at most: scaled down, never up; the "
                "result says the factor (image pixels per CSS pixel).",
            ),
        ] = None,
        filename: Annotated[
            str | None,
            Field(
                description="Also save it here: a name (in bridge's working directory) or a "
                "path inside a folder allowed with --allow-path; other paths are refused."
            ),
        ] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """A screenshot of the tab (never brings it to the front); huge pages are scaled.
        Scaled by max_size, it says the factor from CSS pixels to its pixels."""
        hub_tools = tools(ctx)
        if type is None and quality is None and max_size is None and filename is None:
            data, kind = await hub_tools.screenshot(target, full_page, tab)
            return CallToolResult(content=[Image(data=data, format=kind).to_image_content()])
        if not isinstance(hub_tools, BrowserTools):
            raise NotOverClaudeExtension(
                "screenshot type, quality, max_size and filename",
                "the extension's screenshot action takes none of them",
            )
        shot = await hub_tools.capture(
            target,
            full_page,
            tab,
            type=type,
            quality=quality,
            max_size=max_size,
            filename=filename,
        )
        info: dict[str, Any] = {"format": shot.format}
        notes = [f"{shot.format} screenshot"]
        if shot.scale is not None:
            info["scale"] = shot.scale
            notes.append(
                f"scaled to {shot.scale:.4g} image pixels per CSS pixel: divide its pixel "
                "coordinates by that for the vision tools"
            )
        if shot.path is not None:
            info["path"] = str(shot.path)
            notes.append(f"saved to {shot.path}")
        return CallToolResult(
            content=[
                Image(data=shot.data, format=shot.format).to_image_content(),
                TextContent(type="text", text="; ".join(notes)),
            ],
            structured_content=info,
        )

    @tool(server)
    async def browser_get_console_logs(
        ctx: Context,
        level: Annotated[
            Literal["debug", "log", "info", "warning", "error"] | None,
            Field(description="Only this level and above."),
        ] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Console messages and uncaught errors since bridge attached to the tab."""
        result = await tools(ctx).console_logs(level, tab)
        text = "\n".join(f"[{m['level']}] {m['text']}" for m in result["messages"]) or "(none)"
        return text_result(text, result)

    @tool(server)
    async def browser_network_requests(
        ctx: Context,
        filter: Annotated[str | None, Field(description="Regular expression on the URL.")] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Requests since bridge attached: index, method, URL, status, type, size, time."""
        result = await tools(ctx).network_requests(filter, tab)
        lines = [
            f"{r['index']}. {r['method']} {r['url']} → {r['status']} ({r['type']})"
            for r in result["requests"]
        ]
        return text_result("\n".join(lines) or "(none)", result)

    @tool(server)
    async def browser_network_request(index: int, ctx: Context, tab: Tab = None) -> CallToolResult:
        """One request's headers and (truncated) bodies, by its index."""
        result = await tools(ctx).network_request(index, tab)
        return text_result(json.dumps(result, indent=1, ensure_ascii=False), result)

    @tool(server)
    async def browser_tabs(
        action: Literal["list", "new", "select", "close"],
        ctx: Context,
        tab: Annotated[int | None, Field(description="The tab to select or close.")] = None,
        url: Annotated[str | None, Field(description="For 'new': where to open it.")] = None,
    ) -> CallToolResult:
        """List all tabs, open a new one, or select or close one by id."""
        result = await tools(ctx).tabs(action, tab, url)
        if action == "list":
            lines = [
                f"{'*' if t['current'] else ' '} {t['tab']}: {t['title']} — {t['url']}"
                + (" (attached)" if t["attached"] else "")
                for t in result["tabs"]
            ]
            return text_result("\n".join(lines), result)
        return text_result(json.dumps(result), result)

    @tool(server)
    async def browser_evaluate(
        function: Annotated[str, Field(description="'() => …' or '(element) => …' JavaScript.")],
        ctx: Context,
        target: Annotated[str | None, Field(description="The element passed in.")] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Run JavaScript in the page; returns its JSON result."""
        value = await tools(ctx).evaluate(function, target, tab)
        text = json.dumps(value, ensure_ascii=False, default=str)
        return text_result(text, {"result": value})

    @tool(server)
    async def browser_file_upload(
        target: Target,
        paths: Annotated[
            list[str],
            Field(
                description="Paths of files on this machine, under bridge's working directory "
                "or a path the person allowed with --allow-path; hidden files and credential "
                "folders are refused (path_not_allowed)."
            ),
        ],
        ctx: Context,
        tab: Tab = None,
        include_snapshot: IncludeSnapshot = False,
    ) -> CallToolResult:
        """Put files into an <input type=file>."""
        t = tools(ctx)
        return await acted(t, await t.file_upload(target, paths, tab), include_snapshot)

    @tool(server)
    async def browser_handle_dialog(
        accept: bool,
        ctx: Context,
        prompt_text: Annotated[str | None, Field(description="The answer to a prompt().")] = None,
        tab: Tab = None,
        include_snapshot: IncludeSnapshot = False,
    ) -> CallToolResult:
        """Accept or dismiss the open alert, confirm, prompt or beforeunload dialog."""
        t = tools(ctx)
        report = await t.handle_dialog(accept, prompt_text, tab)
        return await acted(t, report, include_snapshot)

    @tool(server)
    async def browser_resize(
        width: Annotated[int, Field(gt=0, le=10000)],
        height: Annotated[int, Field(gt=0, le=10000)],
        ctx: Context,
        tab: Tab = None,
        include_snapshot: IncludeSnapshot = False,
    ) -> CallToolResult:
        """Set the page's viewport size in CSS pixels."""
        t = tools(ctx)
        return await acted(t, await t.resize(width, height, tab), include_snapshot)


def register_claude_tools(server: MCPServer, get_hub: Callable[[], ClaudeToolHub]) -> None:
    """The tool only the Claude extension link has: its GIF recorder."""

    @tool(server)
    async def browser_record_gif(
        action: Literal["start_recording", "stop_recording", "export", "clear"],
        ctx: Context,
        filename: Annotated[
            str | None, Field(description="For export: the GIF's name in the downloads.")
        ] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Record the tab's actions as an animated GIF (the Claude extension's gif_creator):
        start_recording, act, stop_recording, then export (the browser downloads it)."""
        hub = get_hub()
        text = await hub.client(client_key(ctx)).record_gif(
            action, download=action == "export", filename=filename, tab=tab
        )
        return text_result(text, {"action": action, "result": text})
