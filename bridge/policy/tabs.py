"""Which of the browser's tabs a client of bridge may act on (pure: no I/O).

The person's other tabs are the person's: their bank, their mail, whatever a hostile page
the agent visits would like the agent to open. So by default (scope ``"own"``) the browser
tools and the DevTools endpoint act only on

- tabs bridge opened (a tool's new tab, an ask's provider tab, a DevTools client's page) and
  the popups those open, and
- tabs the person shared with bridge (the popup's "Share this tab with bridge": the seeds'
  "use the tab I'm looking at").

Scope ``"all"`` is for people who want bridge to act on every tab (``--tabs all``), and for a
browser bridge launched itself, whose every tab is bridge's. The ask flow is not a client
here: it uses the provider's own tabs (chatgpt.com, gemini.google.com) by design.
"""

from __future__ import annotations

from typing import Final, Literal

from bridge.errors import BridgeError

__all__ = ["SCOPES", "Access", "TabNotShared", "TabScope", "access", "refusal"]

TabScope = Literal["own", "all"]
SCOPES: Final = ("own", "all")
#: How a client may use a tab: bridge opened it, the person shared it, every tab is open to
#: bridge (scope "all"), or it is the person's.
Access = Literal["opened", "shared", "all", "not shared"]


class TabNotShared(BridgeError):
    """A client named a tab of the person's that the person has not shared with bridge."""

    code = "tab_not_shared"


def access(tab_id: int, *, scope: str, opened: set[int], shared: set[int]) -> Access:
    if tab_id in opened:
        return "opened"
    if tab_id in shared:
        return "shared"
    return "all" if scope == "all" else "not shared"


def refusal(tab_id: int) -> TabNotShared:
    return TabNotShared(
        f"tab {tab_id} is one of the person's own tabs, which bridge does not touch unless the "
        "person shares it: ask them to click bridge's icon on that tab and press 'Share this "
        "tab with bridge' (or to start bridge with --tabs all). Tabs bridge opens itself "
        "(browser_tabs new, browser_navigate) are always yours"
    )
