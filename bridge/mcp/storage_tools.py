"""The ``storage`` and ``pdf`` tool groups (off by default): thin MCP wrappers over
``bridge.tools.operations.storage`` and ``.pdf``.

Names and parameters are playwright-mcp's (its cookies.ts, webstorage.ts, storage.ts,
pdf.ts), so prompts written for it work; every tool also takes bridge's optional ``tab``.
Unlike playwright-mcp, which owns a browser context of its own, these act in the person's
own browser: so every one is limited to the current tab's origin (docs/mcp.md#storage).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from bridge.mcp.browser_tools import Tab, client_key
from bridge.mcp.registration import text_result, tool
from bridge.tools.browsing import BrowserTools, ToolHub
from bridge.tools.storage_core import cookie_line

__all__ = ["register_pdf_tools", "register_storage_tools"]

Key = Annotated[str, Field(description="The storage key.")]


def register_storage_tools(server: MCPServer, get_hub: Callable[[], ToolHub]) -> None:
    def tools(ctx: Context) -> BrowserTools:
        return get_hub().client(client_key(ctx))

    @tool(server)
    async def browser_cookie_list(
        ctx: Context,
        domain: Annotated[str | None, Field(description="Filter cookies by domain")] = None,
        path: Annotated[str | None, Field(description="Filter cookies by path")] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """List the cookies of the current page (those Chrome sends to its URL; never other
        sites' cookies), optionally filtered by domain/path."""
        cookies = await tools(ctx).cookie_list(domain, path, tab)
        text = "\n".join(cookie_line(c) for c in cookies) or "No cookies found"
        return text_result(text, {"cookies": cookies})

    @tool(server)
    async def browser_cookie_get(
        name: Annotated[str, Field(description="Cookie name to get")],
        ctx: Context,
        tab: Tab = None,
    ) -> CallToolResult:
        """Get one of the current page's cookies by name."""
        cookie = await tools(ctx).cookie_get(name, tab)
        text = cookie_line(cookie, details=True) if cookie else f"Cookie '{name}' not found"
        return text_result(text, {"cookie": cookie})

    @tool(server)
    async def browser_cookie_set(
        name: Annotated[str, Field(description="Cookie name")],
        value: Annotated[str, Field(description="Cookie value")],
        ctx: Context,
        domain: Annotated[
            str | None,
            Field(description="Cookie domain: the current host (default) or a parent of it"),
        ] = None,
        path: Annotated[str | None, Field(description="Cookie path (default /)")] = None,
        expires: Annotated[
            float | None, Field(description="Cookie expiration as Unix timestamp")
        ] = None,
        httpOnly: Annotated[  # playwright-mcp's parameter names
            bool | None, Field(description="Whether the cookie is HTTP only")
        ] = None,
        secure: Annotated[bool | None, Field(description="Whether the cookie is secure")] = None,
        sameSite: Annotated[
            Literal["Strict", "Lax", "None"] | None,
            Field(description="Cookie SameSite attribute"),
        ] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Set a cookie for the current page's site (only its host or a parent domain)."""
        params = await tools(ctx).cookie_set(
            name,
            value,
            domain=domain,
            path=path,
            expires=expires,
            http_only=httpOnly,
            secure=secure,
            same_site=sameSite,
            tab=tab,
        )
        where = params.get("domain") or "this host only"
        return text_result(
            f"Cookie '{name}' set (domain: {where}, path: {params['path']})",
            {"name": name, "domain": params.get("domain"), "path": params["path"]},
        )

    @tool(server)
    async def browser_cookie_delete(
        name: Annotated[str, Field(description="Cookie name to delete")],
        ctx: Context,
        tab: Tab = None,
    ) -> CallToolResult:
        """Delete the current page's cookies of that name (no other site's)."""
        count = await tools(ctx).cookie_delete(name, tab)
        return text_result(f"Deleted {count} cookie(s) named '{name}'", {"deleted": count})

    @tool(server)
    async def browser_cookie_clear(ctx: Context, tab: Tab = None) -> CallToolResult:
        """Clear the current page's cookies (those sent to its URL; never the whole jar)."""
        count = await tools(ctx).cookie_clear(tab)
        return text_result(f"Deleted {count} cookie(s) of the current page", {"deleted": count})

    for area in ("local", "session"):
        _register_web_storage(server, tools, area)

    @tool(server)
    async def browser_storage_state(
        ctx: Context,
        filename: Annotated[
            str | None,
            Field(
                description="File name to save the storage state to. Defaults to "
                "`storage-state-{timestamp}.json`. Relative to bridge's working directory; "
                "only inside an allowed folder."
            ),
        ] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Save the current origin's storage state (cookies, local storage) to a file, as
        Playwright's storageState JSON, for later reuse."""
        path, cookies, items = await tools(ctx).storage_state(filename, tab)
        return text_result(
            f"Storage state saved to {path} ({cookies} cookie(s), {items} localStorage item(s))",
            {"path": str(path), "cookies": cookies, "local_storage": items},
        )

    @tool(server)
    async def browser_set_storage_state(
        filename: Annotated[
            str, Field(description="Path to the storage state file to restore from")
        ],
        ctx: Context,
        tab: Tab = None,
    ) -> CallToolResult:
        """Restore the current origin's storage state (cookies, local storage) from a file.
        This clears the origin's existing cookies and local storage first; a file naming any
        other origin is refused whole."""
        done = await tools(ctx).set_storage_state(filename, tab)
        return text_result(
            f"Storage state restored from {filename} for {done['origin']}: {done['cookies']} "
            f"cookie(s), {done['local_storage']} localStorage item(s)",
            done,
        )


def _register_web_storage(
    server: MCPServer, tools: Callable[[Context], BrowserTools], area: str
) -> None:
    """One area's five tools (``browser_localstorage_*`` / ``browser_sessionstorage_*``),
    made once per area as playwright-mcp has them."""
    label = f"{area}Storage"
    prefix = f"browser_{area}storage"

    async def run(ctx: Context, op: str, key: str, value: str, tab: int | None) -> Any:
        return await tools(ctx).web_storage(area, op, key, value, tab)

    async def list_items(ctx: Context, tab: Tab = None) -> CallToolResult:
        items = await run(ctx, "list", "", "", tab)
        text = "\n".join(f"{i['name']}={i['value']}" for i in items) or f"No {label} items found"
        return text_result(text, {"items": items})

    async def get_item(key: Key, ctx: Context, tab: Tab = None) -> CallToolResult:
        value = await run(ctx, "get", key, "", tab)
        text = f"{label} key '{key}' not found" if value is None else f"{key}={value}"
        return text_result(text, {"key": key, "value": value})

    async def set_item(
        key: Key,
        value: Annotated[str, Field(description="Value to set")],
        ctx: Context,
        tab: Tab = None,
    ) -> CallToolResult:
        await run(ctx, "set", key, value, tab)
        return text_result(f"{label} key '{key}' set", {"key": key})

    async def delete_item(key: Key, ctx: Context, tab: Tab = None) -> CallToolResult:
        await run(ctx, "delete", key, "", tab)
        return text_result(f"{label} key '{key}' deleted", {"key": key})

    async def clear(ctx: Context, tab: Tab = None) -> CallToolResult:
        await run(ctx, "clear", "", "", tab)
        return text_result(f"{label} of the current page cleared", {"cleared": True})

    made: dict[str, tuple[Callable[..., Awaitable[CallToolResult]], str]] = {
        "list": (list_items, f"List all {label} key-value pairs of the current page's origin."),
        "get": (get_item, f"Get a {label} item of the current page's origin by key."),
        "set": (set_item, f"Set a {label} item of the current page's origin."),
        "delete": (delete_item, f"Delete a {label} item of the current page's origin."),
        "clear": (clear, f"Clear all {label} of the current page's origin."),
    }
    for op, (fn, description) in made.items():
        fn.__name__ = fn.__qualname__ = f"{prefix}_{op}"
        tool(server, description=description)(fn)


def register_pdf_tools(server: MCPServer, get_hub: Callable[[], ToolHub]) -> None:
    @tool(server)
    async def browser_pdf_save(
        ctx: Context,
        filename: Annotated[
            str | None,
            Field(
                description="File name to save the pdf to. Defaults to `page-{timestamp}.pdf`. "
                "Relative to bridge's working directory; only inside an allowed folder."
            ),
        ] = None,
        tab: Tab = None,
    ) -> CallToolResult:
        """Save the page as PDF (under an allowed folder); returns the file's path."""
        path = await get_hub().client(client_key(ctx)).pdf_save(filename, tab)
        return text_result(f"Saved the page as PDF: {path}", {"path": str(path)})
