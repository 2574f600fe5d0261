"""The browser tools' in-page scripts (``bridge/js``), built once: ``dom.js`` reads pages
(``window.__bridgeDom``: the dom tool group, deep queries, waits, the ask tools' DOM reads),
``actions.js`` acts on elements (``window.__bridgeActions``: actionability, selecting,
filling). Both are injected once per document and called through
``bridge.cdp.page_script.PageScript``.
"""

from __future__ import annotations

from bridge.cdp.page_script import PageScript, Script
from bridge.cdp.session import CdpSession

__all__ = ["ACTIONS_SCRIPT", "DOM_SCRIPT", "VISION_SCRIPT", "dom_page"]

DOM_SCRIPT = Script.load("dom.js", "__bridgeDom")
ACTIONS_SCRIPT = Script.load("actions.js", "__bridgeActions")
#: ``vision.js`` (``window.__bridgeVision``): when scrolling that input caused has ended.
VISION_SCRIPT = Script.load("vision.js", "__bridgeVision")


def dom_page(tab: CdpSession, *, session_id: str | None = None) -> PageScript:
    """The dom script in ``tab``'s top document (or in the child session ``session_id``)."""
    return PageScript(tab, DOM_SCRIPT, session_id=session_id)
