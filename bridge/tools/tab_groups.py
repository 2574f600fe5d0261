"""Each client's tabs in a Chrome tab group of its own, named after the client: what the
group is called and its colour, pure (the extension's ``groupTab`` command does the rest).

The person sees at a glance which tabs an agent is using and which agent: "claude-code" in
blue, "cursor" in green. The colour comes from the name, so an app keeps its colour from one
session to the next.
"""

from __future__ import annotations

import re
import zlib

__all__ = ["GROUP_COLORS", "group_color", "group_title"]

#: Chrome's tab group colours (chrome.tabGroups.Color).
GROUP_COLORS = ("grey", "blue", "red", "yellow", "green", "pink", "purple", "cyan", "orange")
MAX_TITLE = 32


def group_title(client: str) -> str:
    """A short human name for a client key (``bridge.mcp.browser_tools.client_key``): the
    app's name without its version (``client:claude-code@1.0.3`` -> ``claude-code``), an
    explicit header's value, or ``bridge`` for the local / default client. Client-supplied
    text: control characters are dropped and the length is capped."""
    kind, _, rest = client.partition(":")
    if kind == "client" and rest:
        name = rest.rsplit("@", 1)[0] if "@" in rest else rest
    elif kind == "header" and rest:
        name = rest
    elif client in ("local", "default", ""):
        name = "bridge"
    else:
        name = client
    name = re.sub(r"[\x00-\x1f\x7f-\x9f]", "", name).strip()
    return name[:MAX_TITLE] or "bridge"


def group_color(title: str) -> str:
    """A stable colour for a group title (the same every run; CRC-32, not ``hash()``, which
    Python salts per process)."""
    return GROUP_COLORS[zlib.crc32(title.encode("utf-8")) % len(GROUP_COLORS)]
