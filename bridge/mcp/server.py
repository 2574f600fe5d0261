"""The MCP server: its tool groups, the instructions clients read, and ``build_server``.

The tools are thin wrappers over the same ``Bridge`` facade the pytest plugin drives, one
module per family (``ask_tools``, ``browser_tools``, ``dom_tools``), each registered through
``bridge.mcp.registration.tool``: titles and annotations from one table, errors mapped in one
place (docs/mcp.md). The ask group's jobs and conversations are resources too
(``bridge.mcp.resources``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer

from bridge import __version__
from bridge.app.facade import Bridge
from bridge.errors import NotOverClaudeExtension
from bridge.mcp.ask_tools import register_ask_tools
from bridge.mcp.browser_tools import register_browser_tools, register_claude_tools
from bridge.mcp.devtools_tools import register_devtools_tools
from bridge.mcp.dom_tools import register_dom_tools
from bridge.mcp.network_tools import register_network_tools
from bridge.mcp.resources import ResourceServer, register_resources
from bridge.mcp.storage_tools import register_pdf_tools, register_storage_tools
from bridge.mcp.testing_tools import register_testing_tools
from bridge.mcp.vision_tools import register_record_tools, register_vision_tools
from bridge.tools.browsing import ToolHub
from bridge.tools.claude import NOT_CARRIED, ClaudeToolHub

__all__ = [
    "CLAUDE_INSTRUCTIONS",
    "DEFAULT_GROUPS",
    "GROUP_REGISTRARS",
    "INSTRUCTIONS",
    "TOOL_GROUPS",
    "build_claude_server",
    "build_server",
    "parse_groups",
    "selected_groups",
]

INSTRUCTIONS = """\
bridge asks ChatGPT and Gemini through their web UIs in the user's own logged-in browser.
Default to ask_chatgpt_gemini_web: it asks both at once (no slower than the slower one) and
returns each answer, or each error, separately. Use ask_chatgpt_web / ask_gemini_web to ask
only one. new_chat=true starts a fresh conversation; otherwise the project's conversation
continues. take_cdp_snapshot and get_page_dom show what a provider tab displays when an
answer looks wrong.
Long answers (thinking models take 10-40 minutes): an ask not done within max_wait seconds
(default 50) returns a job id and its progress instead of the answer. Call get_answer with
that job id (it waits up to `wait` seconds) until it returns the answer; list_jobs shows the
recent jobs. Jobs survive a restart of bridge or of the browser.
The browser_* tools use any tab of the same browser: browser_navigate opens one for you
(or browser_tabs selects one), browser_snapshot shows the page with element refs, and the
acting tools take a ref or a CSS selector and say what changed.
get_conversation returns every turn of the project's conversation (or of a url), and
list_conversations the recent conversations with their urls.
Jobs and conversations are also resources (bridge://jobs/{job_id},
bridge://conversations/{provider}/{conversation_id}): reading one never waits.
"""

CLAUDE_INSTRUCTIONS = """\
bridge over the Claude browser extension (--link claude): the browser_* tools act through the
extension's own tools, in the tabs of its tab group. browser_snapshot returns the extension's
page tree, whose refs (ref_1, ref_2, …) the acting tools take; CSS selectors are not taken.
browser_record_gif records actions as a GIF. Tools the extension cannot carry (asking ChatGPT
and Gemini, file uploads, dialogs, the dom group) say so in their error.
"""

#: The tool groups of ``--tools``, in the order they are listed, each with what registers
#: it on a server. Only ``DEFAULT_GROUPS`` are on unless asked for: the capability groups
#: (dom, network, storage, …) each widen what a client may do to the person's browser.
Registrar = Callable[[MCPServer, Callable[[], Bridge]], None]


def _ask(server: MCPServer, get_bridge: Callable[[], Bridge]) -> None:
    register_ask_tools(server, get_bridge)
    if isinstance(server, ResourceServer):  # build_server's: the jobs and conversations too
        register_resources(server, get_bridge)


GROUP_REGISTRARS: dict[str, Registrar] = {
    "ask": _ask,
    "browser": lambda server, get_bridge: register_browser_tools(
        server, lambda: get_bridge().tools
    ),
    "dom": lambda server, get_bridge: register_dom_tools(server, lambda: get_bridge().tools),
    "storage": lambda s, get_bridge: register_storage_tools(s, lambda: get_bridge().tools),
    "pdf": lambda s, get_bridge: register_pdf_tools(s, lambda: get_bridge().tools),
    "testing": lambda server, get_bridge: register_testing_tools(
        server, lambda: get_bridge().tools
    ),
    "devtools": lambda server, get_bridge: register_devtools_tools(
        server, lambda: get_bridge().tools
    ),
    "vision": lambda s, get_bridge: register_vision_tools(s, lambda: get_bridge().tools),
    "record": lambda s, get_bridge: register_record_tools(s, lambda: get_bridge().tools),
    "network": lambda server, bridge: register_network_tools(server, lambda: bridge().tools),
}
TOOL_GROUPS = tuple(GROUP_REGISTRARS)
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


def selected_groups(tools: str, caps: str = "") -> tuple[str, ...]:
    """The groups of ``--tools`` and ``--caps`` together (``--caps pdf`` adds to the
    defaults, as playwright-mcp's option does); ValueError as ``parse_groups``."""
    return parse_groups(",".join(part for part in (tools, caps) if part.strip()))


def build_server(
    get_bridge: Callable[[], Bridge],
    *,
    groups: Sequence[str] = DEFAULT_GROUPS,
    **server_options: Any,
) -> MCPServer:
    """The MCP server; ``get_bridge`` returns the running facade (tests pass their own).
    With the ask group come its resources too: the jobs and the conversations."""
    server = ResourceServer(
        "bridge", instructions=INSTRUCTIONS, version=__version__, **server_options
    )
    for name, register in GROUP_REGISTRARS.items():
        if name in groups:
            register(server, get_bridge)
    return server


def build_claude_server(
    get_hub: Callable[[], ClaudeToolHub],
    *,
    groups: Sequence[str] = DEFAULT_GROUPS,
    **server_options: Any,
) -> MCPServer:
    """The MCP server over the Claude extension (``--link claude``): the same tools, the
    browser ones carried by the extension's tools and every other one saying why it cannot
    be (``NotOverClaudeExtension``), so a client sees the same surface either way."""
    server: MCPServer = MCPServer(
        "bridge", instructions=CLAUDE_INSTRUCTIONS, version=__version__, **server_options
    )

    def no_asks() -> Bridge:
        raise NotOverClaudeExtension(
            "asking ChatGPT and Gemini", NOT_CARRIED["asking ChatGPT and Gemini"]
        )

    def no_dom() -> ToolHub:
        raise NotOverClaudeExtension("the dom tools", NOT_CARRIED["dom tools"])

    def not_carried(name: str) -> Callable[[], Bridge]:
        def refuse() -> Bridge:
            raise NotOverClaudeExtension(f"the {name} tools", NOT_CARRIED["capability tools"])

        return refuse

    if "ask" in groups:
        register_ask_tools(server, no_asks)
    if "browser" in groups:
        register_browser_tools(server, get_hub)
        register_claude_tools(server, get_hub)
    if "dom" in groups:
        register_dom_tools(server, no_dom)
    # The extension has its own recorder (gif_creator): the record group is that one here,
    # registered once (with the browser group, or alone).
    if "record" in groups and "browser" not in groups:
        register_claude_tools(server, get_hub)
    # The capability groups act through CDP sessions of bridge's own extension.
    for name, register in GROUP_REGISTRARS.items():
        if name not in ("ask", "browser", "dom", "record") and name in groups:
            register(server, not_carried(name))
    return server
