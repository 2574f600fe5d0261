"""An element in a page, held by a remote object id: what actions and DOM reads act on.

Elements come from a snapshot ref (anchored on the backend DOM node, so a ref stays valid
while its node lives) or from a CSS selector that pierces open shadow roots. Either way the
result is an ``Element``: a ``Runtime.RemoteObjectId`` in the session of the frame that holds
it (``session_id`` is the child session of an out-of-process iframe, or None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bridge.cdp.page_script import PageScript, Script, call_function_on
from bridge.cdp.session import CdpSession
from bridge.tools.scripts import dom_page

__all__ = ["Element", "query_selector"]


@dataclass(frozen=True)
class Element:
    """A page element a tool acts on: a remote object in its tab (and frame session)."""

    tab: CdpSession
    object_id: str
    session_id: str | None = None
    description: str = ""  # how the caller named it, for messages ('button "Send"', a selector)

    async def call(self, function: str, *args: Any, await_promise: bool = False) -> Any:
        """``function`` (a JS function declaration: the agent's own, browser_evaluate) called
        with ``this`` = the element and ``args`` (JSON values); its return value by value.
        JavaScriptError if it threw."""
        return await call_function_on(
            self.tab,
            self.object_id,
            function,
            *args,
            session_id=self.session_id,
            await_promise=await_promise,
        )

    async def run(
        self, script: Script, function: str, *args: Any, await_promise: bool = False
    ) -> Any:
        """``script``'s ``function(element, *args)`` in the element's own frame (the script
        injected there once, when missing); its return value by value."""
        page = PageScript(self.tab, script, session_id=self.session_id)
        return await page.call_on(self.object_id, function, *args, await_promise=await_promise)


async def query_selector(
    tab: CdpSession, selector: str, *, session_id: str | None = None
) -> Element | None:
    """The first element matching ``selector`` (open shadow roots pierced: the document
    first, then each shadow root, outermost first), or None.

    A selector the page cannot parse raises JavaScriptError with the browser's message.
    """
    object_id = await dom_page(tab, session_id=session_id).call_object("deepQuery", selector)
    return None if object_id is None else Element(tab, object_id, session_id, selector)
