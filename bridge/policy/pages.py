"""Which pages the DevTools endpoint lets a client drive (pure).

The endpoint's clients hold a token, not the person's trust in every page: a tab showing an
extension page runs with that extension's privileges (in bridge's own popup, a script has
``chrome.debugger`` over every tab), and a local file is the person's to open
(``--allow-file-urls``, as for the browser tools). Opening URLs is checked with the browser
tools' policy (``bridge.policy.urls.check_navigable``); these say which pages already open
are off limits, and which tabs' histories make the whole tab so.
"""

from __future__ import annotations

from bridge.wire.extension import EXTENSION_ID

__all__ = ["history_refusal", "page_refusal"]


def history_refusal(url: str, *, allow_file: bool) -> str | None:
    """Why a tab whose history holds ``url`` is never driven, or None (pure): its page's
    script could go back there (``history.back()``), out of the endpoint's sight. Only pages
    the debugger would stay on count: bridge's own extension pages and local files
    (Chrome takes the debugger away from other extensions' pages itself).
    """
    lowered = url.strip().lower()
    own = f"chrome-extension://{EXTENSION_ID}"
    if lowered == own or lowered.startswith(own + "/"):
        return (
            "the tab's history holds a page of the bridge extension, which a script in the tab "
            "could go back to: bridge never lets a DevTools client drive that tab. Open the "
            "page in a new tab (Target.createTarget)"
        )
    if lowered.startswith("file:") and not allow_file:
        return (
            "the tab's history holds a local file (file:), which a script in the tab could go "
            "back to, and file: URLs are off by default. Open the page in a new tab "
            "(Target.createTarget), or start bridge with --allow-file-urls"
        )
    return None


def page_refusal(url: str, *, allow_file: bool) -> str | None:
    """Why a page showing ``url`` is never driven through the endpoint, or None (pure).

    Extension pages run with their extension's privileges: in bridge's own, a script has
    ``chrome.debugger`` over every tab. Local files are the person's to open
    (``--allow-file-urls``), and a file: page may open other local files.
    """
    scheme = url.partition(":")[0].strip().lower() if ":" in url else ""
    if scheme == "chrome-extension":
        return (
            "the page is an extension page (chrome-extension:), which bridge never lets a "
            "DevTools client drive: it runs with the extension's privileges. Use a tab that "
            "shows a web page"
        )
    if scheme == "file" and not allow_file:
        return (
            "the page is a local file (file:), and file: URLs are off by default. If that is "
            "wanted, start bridge with --allow-file-urls"
        )
    return None
