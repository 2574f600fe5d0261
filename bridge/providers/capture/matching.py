"""capture.js in a page (I/O): the live page's structure during an ask, and a capture rebuilt
as a document in a tab of its own, where the browser's own CSS engine matches selectors
against it (the engine the person's Chrome runs them with; no network: the document loads
nothing, ``dom.skeleton_html``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from bridge.cdp.browser import Browser
from bridge.cdp.page_script import script_file
from bridge.cdp.session import CdpSession, JavaScriptError
from bridge.errors import BridgeError, CdpError
from bridge.providers.capture.dom import Node, skeleton_html

__all__ = ["MAX_NODES", "WORLD", "CaptureMatcher", "call_capture", "capture_matcher"]

_CAPTURE_JS = script_file("capture.js").strip().rstrip(";")
#: The isolated world's name (shown in DevTools' context picker).
WORLD = "bridge-capture"
#: A page of more elements than this is cut (the capture says so): a capture stays a file a
#: person can review, and a page of a long conversation still fits.
MAX_NODES = 20_000


async def call_capture(
    tab: CdpSession,
    mode: str,
    selectors: Sequence[str],
    content: Sequence[str] = (),
    max_nodes: int = MAX_NODES,
    worlds: dict[int, int] | None = None,
) -> dict[str, Any]:
    """capture.js in an isolated world of ``tab``'s main frame (the page's scripts cannot
    change what it reports). ``worlds`` (tab id → context id) keeps the world between
    calls of one capture: two round trips fewer per read; a world its document took with it
    is made again."""
    params: dict[str, Any] = {
        "functionDeclaration": _CAPTURE_JS,
        "arguments": [{"value": a} for a in (mode, list(selectors), list(content), max_nodes)],
        "returnByValue": True,
        "awaitPromise": mode == "browser",
    }
    known = worlds.get(tab.tab_id) if worlds is not None else None
    result: dict[str, Any] | None = None
    if known is not None:
        try:
            result = await tab.send(
                "Runtime.callFunctionOn", {**params, "executionContextId": known}
            )
        except CdpError:  # the document (and its world) went: a new one below
            result = None
    if result is None:
        tree = await tab.send("Page.getFrameTree")
        frame = str(tree["frameTree"]["frame"]["id"])
        world = await tab.send("Page.createIsolatedWorld", {"frameId": frame, "worldName": WORLD})
        context = int(world["executionContextId"])
        if worlds is not None:
            worlds[tab.tab_id] = context
        result = await tab.send("Runtime.callFunctionOn", {**params, "executionContextId": context})
    details = result.get("exceptionDetails")
    if details:
        exc = details.get("exception") or {}
        text = exc.get("description") or details.get("text") or "exception"
        raise JavaScriptError("Runtime.callFunctionOn", f"capture.js ({mode}): {text}")
    value = result.get("result", {}).get("value")
    return value if isinstance(value, dict) else {}


class CaptureMatcher:
    """Matches CSS against captures in one blank tab of its own (``capture_matcher``)."""

    def __init__(self, tab: CdpSession) -> None:
        self.tab = tab

    async def match(
        self, nodes: Sequence[Node], selectors: Sequence[str]
    ) -> dict[str, list[int] | str]:
        """Per selector, the indices of the capture's elements it matches (or the browser's
        reason for refusing it)."""
        tree = await self.tab.send("Page.getFrameTree")
        frame = str(tree["frameTree"]["frame"]["id"])
        await self.tab.send(
            "Page.setDocumentContent", {"frameId": frame, "html": skeleton_html(nodes)}
        )
        found = await call_capture(self.tab, "match", selectors)
        matches = found.get("matches", {})
        return {
            css: (m if isinstance(m, str) else [int(i) for i in m])
            for css, m in dict(matches).items()
        }


@contextlib.asynccontextmanager
async def capture_matcher(browser: Browser) -> AsyncIterator[CaptureMatcher]:
    """A blank background tab for matching, closed afterwards (it takes nobody's focus)."""
    tab = await browser.new_tab()
    try:
        yield CaptureMatcher(tab)
    finally:
        with contextlib.suppress(BridgeError):
            await browser.close_tab(tab.tab_id)
