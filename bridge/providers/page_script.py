"""The in-page script (``page.js``), injected once per document and then called into.

Every call is one small ``Runtime.evaluate`` of ``window.__bridgePage.<call>``. The 20-odd
KB of the script itself travel only when the document does not have this version yet: a
first call on a fresh document (after a navigation, a reload, a new tab) finds it missing,
injects it, and calls again. No bookkeeping on our side can go stale: the page itself says
whether it has the script.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from bridge.cdp import CdpSession
from bridge.waiting import scaled

__all__ = ["PAGE_JS", "PAGE_VERSION", "PageScript"]

_PAGE_JS_SOURCE = Path(__file__).with_name("page.js").read_text(encoding="utf-8")
PAGE_VERSION = hashlib.sha256(_PAGE_JS_SOURCE.encode()).hexdigest()[:12]
#: The script as an expression: evaluating it defines ``window.__bridgePage``.
PAGE_JS = _PAGE_JS_SOURCE.replace("__BRIDGE_PAGE_VERSION__", PAGE_VERSION).strip().rstrip(";")
_MISSING = "__bridge_page_missing__"


def call_expression(function: str, *args: Any) -> str:
    """``window.__bridgePage.function(args…)`` if this version is there, else the sentinel."""
    arguments = ", ".join(json.dumps(a, ensure_ascii=False) for a in args)
    return (
        f"((p) => p && p.version === '{PAGE_VERSION}' ? p.{function}({arguments}) "
        f": '{_MISSING}')(window.__bridgePage)"
    )


class PageScript:
    """``page.js`` in one tab: ``await page.call("observe", "chatgpt")``."""

    def __init__(self, tab: CdpSession) -> None:
        self.tab = tab
        self.injections = 0  # how often the script itself was sent (once per document)

    async def call(self, function: str, *args: Any, timeout: float | None = None) -> Any:
        """Call a page.js function (awaiting a promise it returns); inject first if needed.

        ``timeout`` bounds the page-side wait a function was given (it gets 5 s more for
        the round trip); without it, the session's default applies.
        """
        expression = call_expression(function, *args)
        limit = scaled(30.0) if timeout is None else timeout + scaled(5.0)
        value = await self.tab.evaluate(expression, await_promise=True, timeout=limit)
        if value == _MISSING:
            await self.tab.evaluate(PAGE_JS, timeout=scaled(30.0))
            self.injections += 1
            value = await self.tab.evaluate(expression, await_promise=True, timeout=limit)
        return value
