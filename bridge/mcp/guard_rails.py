"""The guard rail flags of ``python -m bridge.mcp``: ``--allowed-origins``,
``--blocked-origins``, ``--read-only`` (docs/mcp.md#guard-rails).

The flags become one ``Guard`` (bridge.policy.guard) the runtime hands its ``Browser``: every
tab's commands are checked below the tools, so the DevTools endpoint obeys them too. Under
``--read-only`` the server also serves only the tools whose annotations row says they read
(``TOOL_HINTS``), and with ``--allowed-origins`` ``browser_navigate`` (which the guard holds to
that list): a client is not offered what it would only be refused.
"""

from __future__ import annotations

import argparse
import contextlib

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from bridge.mcp.annotations import TOOL_HINTS
from bridge.policy.guard import Guard
from bridge.policy.origins import OriginPolicy

__all__ = ["READ_ONLY_EXTRAS", "add_guard_arguments", "guard_from_args", "serve_reading_only"]

#: Not read-only tools served under --read-only anyway: the guard refuses what they would
#: do outside the flags (navigation only within --allowed-origins).
READ_ONLY_EXTRAS = frozenset({"browser_navigate"})


def add_guard_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("guard rails (enforced for the tools and the DevTools endpoint)")
    g.add_argument(
        "--allowed-origins",
        metavar="ORIGINS",
        help="semicolon-separated origins (https://example.com) or hosts (example.com, "
        "*.example.com) the browser may request; everything else is blocked",
    )
    g.add_argument(
        "--blocked-origins",
        metavar="ORIGINS",
        help="semicolon-separated origins or hosts the browser may not request (checked "
        "before --allowed-origins)",
    )
    g.add_argument(
        "--read-only",
        action="store_true",
        help="serve only reading tools; no input, no changes, navigation only within "
        "--allowed-origins",
    )


def guard_from_args(args: argparse.Namespace) -> Guard:
    """The flags as one Guard; ValueError naming a bad origin."""
    origins = OriginPolicy.from_flags(args.allowed_origins, args.blocked_origins)
    return Guard(origins, read_only=bool(args.read_only))


def serve_reading_only(server: MCPServer, *, navigation: bool = True) -> None:
    """Take every tool that acts off ``server`` (--read-only). Every tool has a row in
    ``TOOL_HINTS`` (registration refuses one without), so the rows name them all.
    ``navigation``: whether ``browser_navigate`` stays (it can only succeed within an allowed
    list: without one, it would only be refused)."""
    extras = READ_ONLY_EXTRAS if navigation else frozenset()
    for name, hints in TOOL_HINTS.items():
        if not hints.read_only and name not in extras:
            with contextlib.suppress(ToolError):  # a group not served
                server.remove_tool(name)
