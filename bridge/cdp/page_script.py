"""In-page scripts, injected once per document and then called into.

A script is a JavaScript expression that defines ``window[<global>]`` with a ``version``
and functions. Every call is one small ``Runtime.evaluate`` of
``window[<global>].<function>(args)``; the script itself travels only when the document
does not have this version yet: a first call on a fresh document (after a navigation, a
reload, a new tab) finds it missing, injects it, and calls again. No bookkeeping on our
side can go stale: the page itself says whether it has the script.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bridge.cdp.session import CdpSession
from bridge.waiting import scaled

__all__ = ["PageScript", "Script"]

_MISSING = "__bridge_script_missing__"
VERSION_PLACEHOLDER = "__BRIDGE_PAGE_VERSION__"


@dataclass(frozen=True)
class Script:
    """A script file that defines ``window[global_name]`` (its version from its content)."""

    global_name: str
    source: str
    version: str

    @classmethod
    def load(cls, path: Path, global_name: str) -> Script:
        text = path.read_text(encoding="utf-8")
        version = hashlib.sha256(text.encode()).hexdigest()[:12]
        source = text.replace(VERSION_PLACEHOLDER, version).strip().rstrip(";")
        # Named in DevTools and CPU profiles (bridge.bench.page_cost tells bridge's page
        # work from the site's by it).
        source += f"\n//# sourceURL=bridge/{path.name}"
        return cls(global_name, source, version)

    def call_expression(self, function: str, *args: Any) -> str:
        """``window.G.function(args…)`` if this version is there, else the sentinel."""
        arguments = ", ".join(json.dumps(a, ensure_ascii=False) for a in args)
        return (
            f"((p) => p && p.version === '{self.version}' ? p.{function}({arguments}) "
            f": '{_MISSING}')(window.{self.global_name})"
        )


class PageScript:
    """A script in one tab: ``await page.call("observe", "chatgpt")``."""

    def __init__(self, tab: CdpSession, script: Script) -> None:
        self.tab = tab
        self.script = script
        self.injections = 0  # how often the script itself was sent (once per document)

    async def call(self, function: str, *args: Any, timeout: float | None = None) -> Any:
        """Call a function of the script (awaiting a promise it returns); inject if needed.

        ``timeout`` bounds the page-side wait a function was given (it gets 5 s more for
        the round trip); without it, the session's default applies.
        """
        expression = self.script.call_expression(function, *args)
        limit = scaled(30.0) if timeout is None else timeout + scaled(5.0)
        value = await self.tab.evaluate(expression, await_promise=True, timeout=limit)
        if value == _MISSING:
            await self.tab.evaluate(self.script.source, timeout=scaled(30.0))
            self.injections += 1
            value = await self.tab.evaluate(expression, await_promise=True, timeout=limit)
        return value
