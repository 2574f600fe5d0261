"""The Claude browser extension's native-messaging protocol, as its evidence shows it (no I/O).

The official Claude extension (Chrome Web Store id ``fcoeoabgfenejglbffodgkkbkcdhcgfn``)
starts the native host registered as ``com.anthropic.claude_code_browser_extension`` and
runs its browser tools for that host. bridge can be that host (``bridge.link.claude_host``),
so a person who has the signed extension needs no unpacked one. Every fact below is cited
in docs/claude-extension.md; the names of the sources in short:

- [spec] nonsleepr/claude-chrome-mcp ``docs/NATIVE_HOST_SPECIFICATION.md`` (a reverse-
  engineered specification of Claude Code's own host);
- [proto] the same repository's ``src/chrome-protocol.ts``; [server] ``src/mcp-server.ts``;
  [tools] ``src/tools.ts``; [consts] ``src/constants.ts``; [install] ``src/install.ts``;
- [a11y] ygncode/ai-browser-hack ``claude-extension/CLAUDE_EXTENSION_ANALYSIS.md`` (the
  extension's read_page output, version 1.0.31).

Framing is Chrome's own (``bridge.wire.native_framing``). What matters beyond it:

- the host answers ``ping`` with ``pong`` and ``get_status`` with ``status_response``;
- a tool runs by ``tool_request {method: "execute_tool", params: {tool, args}}``; its
  answer ``tool_response`` carries ``result {content, tabContext?}`` or ``error {content}``
  and **no request id**: answers come back in the order of the requests [server], so the
  host keeps exactly one request in flight (``ToolQueue``);
- two tools have other names at the extension: ``tabs_context_mcp``, ``tabs_create_mcp``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "CLAUDE_ALLOWED_ORIGIN",
    "CLAUDE_EXTENSION_ID",
    "CLAUDE_HOST_NAME",
    "EXTENSION_TOOL_NAMES",
    "TOOLS",
    "ClaudeReply",
    "ContentItem",
    "TabContext",
    "extension_tool_name",
    "host_reply",
    "parse_tool_response",
    "read_page_refs",
    "tab_id_from_text",
    "tool_request",
]

#: [consts] DEFAULT_EXTENSION_ID, MANIFEST_NAME; [install] the manifest's allowed_origins.
CLAUDE_EXTENSION_ID: Final = "fcoeoabgfenejglbffodgkkbkcdhcgfn"
CLAUDE_HOST_NAME: Final = "com.anthropic.claude_code_browser_extension"
CLAUDE_ALLOWED_ORIGIN: Final = f"chrome-extension://{CLAUDE_EXTENSION_ID}/"
#: The version the host reports in ``status_response`` (its own protocol, not bridge's).
HOST_VERSION: Final = "bridge-1"

#: [tools] the 14 tools and [server] translateToolName: the names the extension knows.
TOOLS: Final = (
    "navigate",
    "computer",
    "form_input",
    "find",
    "read_page",
    "get_page_text",
    "tabs_context",
    "tabs_create",
    "resize_window",
    "read_console_messages",
    "read_network_requests",
    "upload_image",
    "gif_creator",
    "javascript_tool",
)
EXTENSION_TOOL_NAMES: Final = {"tabs_context": "tabs_context_mcp", "tabs_create": "tabs_create_mcp"}
#: [tools] the computer tool's 13 actions.
COMPUTER_ACTIONS: Final = (
    "left_click",
    "right_click",
    "type",
    "screenshot",
    "wait",
    "scroll",
    "key",
    "left_click_drag",
    "double_click",
    "triple_click",
    "zoom",
    "scroll_to",
    "hover",
)

#: [server] handleTabsCreateWithUrl reads the new tab's id from the text with this pattern.
_TAB_ID = re.compile(r"Tab ID:\s*(\d+)")
#: [a11y] "Output Format": ``- button "Submit" [ref=ref_123] (x=450,y=300) …``.
_REF = re.compile(r"\[ref=(ref_\d+)\]")


def extension_tool_name(tool: str) -> str:
    """The name the extension knows ``tool`` by; ValueError for a tool it does not have."""
    if tool not in TOOLS:
        raise ValueError(f"the Claude extension has no tool {tool!r}: it has {', '.join(TOOLS)}")
    return EXTENSION_TOOL_NAMES.get(tool, tool)


def tool_request(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The host's message asking the extension to run ``tool`` ([proto] sendToolRequest)."""
    return {
        "type": "tool_request",
        "method": "execute_tool",
        "params": {"tool": extension_tool_name(tool), "args": args},
    }


def host_reply(message: dict[str, Any], now_ms: int) -> dict[str, Any] | None:
    """What the host answers to a message of the extension's that is not a tool response:
    ``pong`` to ``ping``, ``status_response`` to ``get_status`` [spec]; None for messages
    the host only takes note of (``tool_response``, ``notification``, ``mcp_*``)."""
    kind = message.get("type")
    if kind == "ping":
        return {"type": "pong", "timestamp": now_ms}
    if kind == "get_status":
        return {"type": "status_response", "native_host_version": HOST_VERSION}
    if kind in ("tool_response", "notification", "mcp_connected", "mcp_disconnected", "pong"):
        return None
    return {"type": "error", "error": f"Unknown message type: {kind}"}


@dataclass(frozen=True)
class ContentItem:
    """One piece of a tool's answer: text, or an image (base64 ``data``, ``mime``)."""

    kind: str  # "text" or "image"
    text: str = ""
    data: str = ""
    mime: str = ""


@dataclass(frozen=True)
class TabContext:
    """[proto] TabContext: the tabs of the extension's MCP tab group after a tool ran."""

    current: int | None
    executed_on: int | None
    tabs: tuple[dict[str, Any], ...]
    group: int | None = None


@dataclass(frozen=True)
class ClaudeReply:
    """A ``tool_response`` read: its content, its tab context, and whether it is an error."""

    content: tuple[ContentItem, ...]
    tab_context: TabContext | None = None
    error: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def text(self) -> str:
        return "\n".join(item.text for item in self.content if item.kind == "text")

    @property
    def images(self) -> list[ContentItem]:
        return [item for item in self.content if item.kind == "image"]


def _content(value: object) -> tuple[ContentItem, ...]:
    """[server] formatToolResponse: a string, or a list of text and image items."""
    if isinstance(value, str):
        return (ContentItem("text", text=value),)
    items: list[ContentItem] = []
    if isinstance(value, list):
        for item in value:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "text" and isinstance(item.get("text"), str):
                items.append(ContentItem("text", text=item["text"]))
            elif item.get("type") == "image" and isinstance(item.get("data"), str):
                mime = item.get("mimeType") or "image/png"
                items.append(ContentItem("image", data=item["data"], mime=str(mime)))
    return tuple(items)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _tab_context(value: object) -> TabContext | None:
    if not isinstance(value, dict):
        return None
    tabs = value.get("availableTabs")
    listed = tuple(
        {"tab": t["tabId"], "title": str(t.get("title", "")), "url": str(t.get("url", ""))}
        for t in (tabs if isinstance(tabs, list) else [])
        if isinstance(t, dict) and _int(t.get("tabId")) is not None
    )
    return TabContext(
        current=_int(value.get("currentTabId")),
        executed_on=_int(value.get("executedOnTabId")),
        tabs=listed,
        group=_int(value.get("tabGroupId")),
    )


def parse_tool_response(message: dict[str, Any]) -> ClaudeReply:
    """A ``tool_response`` as data. An ``error`` wins; its content may be text or not [server]."""
    error = message.get("error")
    if isinstance(error, dict) and "content" in error:
        content = error["content"]
        text = content if isinstance(content, str) else _error_text(content)
        return ClaudeReply((), error=text or "the extension reported an error", raw=message)
    result = message.get("result")
    if not isinstance(result, dict):
        return ClaudeReply((), raw=message)
    return ClaudeReply(
        _content(result.get("content")), _tab_context(result.get("tabContext")), raw=message
    )


def _error_text(content: object) -> str:
    items = _content(content)
    if items:
        return "\n".join(i.text for i in items if i.kind == "text")
    return json.dumps(content, ensure_ascii=False)


def tab_id_from_text(text: str) -> int | None:
    """The id in a ``tabs_create`` answer's ``Tab ID: N`` ([server]), or None."""
    found = _TAB_ID.search(text)
    return int(found.group(1)) if found else None


def read_page_refs(text: str) -> list[str]:
    """The element refs a ``read_page`` answer names, in order ([a11y])."""
    return _REF.findall(text)
