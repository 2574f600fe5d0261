"""The answer as the site copies it: the turn's own copy button, its clipboard write
captured in the page (docs/sites.md#answer-sources, SITE-FACTS C2.6, C2.7).

ChatGPT's turn copy button puts the answer's markdown on the clipboard; oracle reads
answers that way. bridge clicks only the *turn's* copy button (the pack's selector, inside
the newest assistant turn), never a code block's "Copy code", which copies one block.
The write is captured, not performed: ``navigator.clipboard.writeText``/``write`` are
replaced on the page's clipboard object for the moment of the click and put back after,
so the person's clipboard keeps what they copied. A site that copies through a ``copy``
event is read from the event's data. The page side is page.js's ``copyAnswer``.
"""

from __future__ import annotations

import logging

from bridge.cdp.page_script import PageScript
from bridge.errors import BridgeError
from bridge.waiting import scaled

__all__ = ["copy_answer"]

log = logging.getLogger(__name__)


async def copy_answer(
    page: PageScript, *, turn: str, button: str, assistant: str, wait: float = 3.0
) -> tuple[str, str]:
    """The markdown the newest turn's copy button copies, and "" with why when none
    (page.js ``copyAnswer``)."""
    limit = scaled(wait)
    try:
        found = await page.call(
            "copyAnswer", turn, button, assistant, int(limit * 1000), timeout=limit
        )
    except BridgeError as exc:
        log.debug("copy action on tab %s: %s", page.tab.tab_id, exc)
        return "", f"copy action failed: {exc}"
    if not isinstance(found, dict):
        return "", "copy action returned nothing"
    if "text" in found:
        return str(found["text"]), ""
    return "", str(found.get("why", "no text"))
