"""The MCP tools: thin wrappers over the same ``Bridge`` facade the pytest plugin drives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from bridge import __version__
from bridge.cdp import CdpSession
from bridge.core import Bridge
from bridge.errors import BridgeError
from bridge.inspect_page import accessibility_outline, dom_matches, screenshot
from bridge.mcp.browser_tools import register_browser_tools
from bridge.mcp.dom_tools import register_dom_tools
from bridge.results import Progress, Provider

__all__ = ["DEFAULT_GROUPS", "INSTRUCTIONS", "TOOL_GROUPS", "build_server", "parse_groups"]

INSTRUCTIONS = """\
bridge asks ChatGPT and Gemini through their web UIs in the user's own logged-in browser.
Default to ask_chatgpt_gemini_web: it asks both at once (no slower than the slower one) and
returns each answer, or each error, separately. Use ask_chatgpt_web / ask_gemini_web to ask
only one. new_chat=true starts a fresh conversation; otherwise the project's conversation
continues. take_cdp_snapshot and get_page_dom show what a provider tab displays when an
answer looks wrong.
The browser_* tools use any tab of the same browser: browser_navigate opens one for you
(or browser_tabs selects one), browser_snapshot shows the page with element refs, and the
acting tools take a ref or a CSS selector and say what changed.
"""

Question = Annotated[str, Field(description="The question, as you would type it in the chat.")]
NewChat = Annotated[
    bool, Field(description="Start a new conversation instead of continuing this project's one.")
]
Timeout = Annotated[
    float | None,
    Field(
        description="Seconds to wait for the answer (default 480: 8 minutes, "
        "docs/sites.md#timeouts).",
        gt=0,
    ),
]
Target = Annotated[
    str, Field(description="'chatgpt', 'gemini', or a tab id (a number) from the browser.")
]


def _text_result(
    text: str, structured: dict[str, Any], *, is_error: bool = False
) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=is_error,
    )


def _tool_error(exc: BridgeError) -> ToolError:
    return ToolError(f"[{exc.code}] {exc}")


TOOL_GROUPS = ("ask", "browser", "dom")
DEFAULT_GROUPS = ("ask", "browser")


def parse_groups(spec: str) -> tuple[str, ...]:
    """``--tools ask,browser`` / ``all`` -> the groups, or ValueError naming the known ones."""
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if "all" in names:
        return TOOL_GROUPS
    unknown = [n for n in names if n not in TOOL_GROUPS]
    if unknown or not names:
        raise ValueError(
            f"unknown tool group(s) {', '.join(unknown) or '(none)'}: use "
            f"{', '.join(TOOL_GROUPS)} or all, comma-separated"
        )
    return tuple(n for n in TOOL_GROUPS if n in names)


def build_server(
    get_bridge: Callable[[], Bridge],
    *,
    groups: Sequence[str] = DEFAULT_GROUPS,
    **server_options: Any,
) -> MCPServer:
    """The MCP server; ``get_bridge`` returns the running facade (tests pass their own)."""
    server: MCPServer = MCPServer(
        "bridge", instructions=INSTRUCTIONS, version=__version__, **server_options
    )
    if "ask" in groups:
        _register_ask_tools(server, get_bridge)
    if "browser" in groups:
        register_browser_tools(server, lambda: get_bridge().tools)
    if "dom" in groups:
        register_dom_tools(server, lambda: get_bridge().tools)
    return server


def _register_ask_tools(server: MCPServer, get_bridge: Callable[[], Bridge]) -> None:

    async def ask_one(
        provider: Provider, question: str, new_chat: bool, timeout: float | None, ctx: Context
    ) -> CallToolResult:
        try:
            result = await get_bridge().ask(
                provider,
                question,
                new_chat=new_chat,
                timeout=timeout,
                on_progress=_progress_reporter(ctx),
            )
        except BridgeError as exc:
            raise _tool_error(exc) from exc
        except ValueError as exc:
            raise ToolError(str(exc)) from exc
        return _text_result(result.answer, result.to_dict())

    @server.tool()
    async def ask_chatgpt_web(
        question: Question, ctx: Context, new_chat: NewChat = False, timeout: Timeout = None
    ) -> CallToolResult:
        """Ask ChatGPT (chatgpt.com) in the user's browser and return its answer.

        The text result is the answer (code blocks fenced); the structured result adds the
        conversation url, step timings and how the answer was obtained.
        """
        return await ask_one("chatgpt", question, new_chat, timeout, ctx)

    @server.tool()
    async def ask_gemini_web(
        question: Question, ctx: Context, new_chat: NewChat = False, timeout: Timeout = None
    ) -> CallToolResult:
        """Ask Gemini (gemini.google.com) in the user's browser and return its answer.

        The text result is the answer (code blocks fenced); the structured result adds the
        conversation url, step timings and how the answer was obtained.
        """
        return await ask_one("gemini", question, new_chat, timeout, ctx)

    @server.tool()
    async def ask_chatgpt_gemini_web(
        question: Question, ctx: Context, new_chat: NewChat = False, timeout: Timeout = None
    ) -> CallToolResult:
        """Ask ChatGPT and Gemini at once (recommended default) and return both answers.

        Each side's answer or error is reported separately: one side failing never hides
        the other's answer. The call is an error only when both sides fail.
        """
        try:
            both = await get_bridge().ask_both(
                question, new_chat=new_chat, timeout=timeout, on_progress=_progress_reporter(ctx)
            )
        except ValueError as exc:
            raise ToolError(str(exc)) from exc
        parts = []
        for provider in ("chatgpt", "gemini"):
            title = "ChatGPT" if provider == "chatgpt" else "Gemini"
            if provider in both.results:
                parts.append(f"## {title}\n\n{both.results[provider].answer}")
            elif provider in both.errors:
                error = both.errors[provider]
                parts.append(f"## {title}\n\n(error [{error.code}]: {error})")
        return _text_result("\n\n".join(parts), both.to_dict(), is_error=not both.results)

    async def resolve_tab(target: str) -> CdpSession:
        bridge = get_bridge()
        if target in ("chatgpt", "gemini"):
            provider: Provider = "chatgpt" if target == "chatgpt" else "gemini"
            return await bridge.provider_tab(provider)
        if target.isdigit():
            return await bridge.browser.attach(int(target))
        raise ToolError(f"unknown target {target!r}: use 'chatgpt', 'gemini' or a tab id number")

    @server.tool()
    async def take_cdp_snapshot(target: Target = "chatgpt") -> CallToolResult:
        """What a tab shows: its accessibility outline (roles and names) and a screenshot."""
        try:
            tab = await resolve_tab(target)
            outline = await accessibility_outline(tab)
            image = await screenshot(tab)
            url = await tab.evaluate("location.href")
        except BridgeError as exc:
            raise _tool_error(exc) from exc
        return CallToolResult(
            content=[
                TextContent(type="text", text=f"url: {url}\n\n{outline}"),
                Image(data=image, format="jpeg").to_image_content(),
            ]
        )

    @server.tool()
    async def get_page_dom(
        target: Target = "chatgpt",
        selector: Annotated[
            str, Field(description="CSS selector; shadow roots are searched too.")
        ] = "body",
        max_chars: Annotated[
            int, Field(description="Trim the HTML to this many characters.", ge=100, le=200_000)
        ] = 20_000,
    ) -> dict[str, Any]:
        """The elements matching a CSS selector in a tab, piercing open shadow roots."""
        try:
            tab = await resolve_tab(target)
            return await dom_matches(tab, selector, max_chars=max_chars)
        except BridgeError as exc:
            raise _tool_error(exc) from exc


def _progress_reporter(ctx: Context) -> Callable[[Progress], Any]:
    """Progress notifications (elapsed seconds, characters so far) keep idle clients patient."""

    async def report(progress: Progress) -> None:
        try:
            await ctx.report_progress(
                round(progress.elapsed_s, 2),
                None,
                f"{progress.provider}: {progress.phase}"
                + (f", {progress.chars} characters so far" if progress.chars else ""),
            )
        except Exception:  # a client that went away must not break the ask
            return

    return report
