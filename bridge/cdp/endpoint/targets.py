"""How the endpoint names and describes a tab to DevTools clients (a CDP target), shared by
the server's listings, the browser-level methods and the sessions' announcements."""

from __future__ import annotations

from typing import Any

from bridge.cdp.browser import TabInfo

__all__ = ["BROWSER_SESSION", "CONTEXT_ID", "Params", "target_id", "target_info"]

CONTEXT_ID = "bridge-default-context"  # one context: the person's profile
BROWSER_SESSION = "browser"  # Target.attachToBrowserTarget's session: browser-level again
Params = dict[str, Any]


def target_id(info: TabInfo) -> str:
    """The tab's DevTools target id: its main frame id, which CDP clients rely on."""
    return info.target_id or f"tab-{info.tab_id}"


def target_info(info: TabInfo, *, attached: bool, context: str = CONTEXT_ID) -> Params:
    return {
        "targetId": target_id(info),
        "type": "page",
        "title": info.title,
        "url": info.url,
        "attached": attached,
        "canAccessOpener": False,
        "browserContextId": context,
    }
