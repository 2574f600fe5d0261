"""Looking at a page for the ask tools: an accessibility outline, a screenshot, matching DOM.

Used by the MCP tools ``take_cdp_snapshot`` and ``get_page_dom``, on any tab (a provider's
included) without attaching the browser tools to it. Both reads are the browser tools' own:
the outline is ``browser_snapshot``'s text without refs (``bridge.tools.snapshot.outline``),
the DOM read ``query_dom``'s matches as HTML (``bridge.tools.dom.get_matching_html``).
"""

from __future__ import annotations

import base64
from typing import Any, Literal

from bridge.cdp.session import CdpSession
from bridge.tools.dom import dom_page, get_matching_html
from bridge.tools.snapshot import OUTLINE_CHARS, outline

__all__ = ["accessibility_outline", "dom_matches", "screenshot"]


async def screenshot(
    tab: CdpSession, *, quality: int = 70, image_format: Literal["jpeg", "png"] = "jpeg"
) -> bytes:
    """The viewport as a JPEG (small enough for MCP clients' message limits) or, for a file a
    person opens, a PNG (``quality`` is the JPEG's only)."""
    if await tab.evaluate("document.visibilityState") == "hidden":
        # A hidden tab produces no frames; emulated focus makes it render without stealing focus.
        await tab.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
    params: dict[str, Any] = {"format": image_format}
    if image_format == "jpeg":
        params["quality"] = quality
    shot = await tab.send("Page.captureScreenshot", params)
    return base64.b64decode(shot["data"])


async def accessibility_outline(tab: CdpSession, *, max_chars: int = OUTLINE_CHARS) -> str:
    """The page's accessibility tree (same-process iframes included) as the snapshot's
    indented ``- role "name" [state]: value`` lines, without refs."""
    return await outline(tab, max_chars=max_chars)


async def dom_matches(tab: CdpSession, selector: str, *, max_chars: int = 20_000) -> dict[str, Any]:
    """Elements matching ``selector`` anywhere, shadow roots included, trimmed to max_chars:
    ``{"total", "shown", "items": [{"inShadowRoot", "html"}]}``."""
    return await get_matching_html(dom_page(tab), selector, max_chars)
