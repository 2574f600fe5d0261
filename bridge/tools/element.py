"""An element in a page, held by a remote object id: what actions and DOM reads act on.

Elements come from a snapshot ref (anchored on the backend DOM node, so a ref stays valid
while its node lives) or from a CSS selector that pierces open shadow roots. Either way the
result is an ``Element``: a ``Runtime.RemoteObjectId`` in the session of the frame that holds
it (``session_id`` is the child session of an out-of-process iframe, or None).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bridge.cdp.session import CdpSession, JavaScriptError

__all__ = ["DEEP_QUERY_JS", "Element", "query_selector"]

#: ``deepQuery(selector)``: the first match in the document or any open shadow root.
DEEP_QUERY_JS = """
(selector) => {
  const visit = (root) => {
    const hit = root.querySelector(selector);
    if (hit) return hit;
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) {
        const inner = visit(el.shadowRoot);
        if (inner) return inner;
      }
    }
    return null;
  };
  return visit(document);
}
"""


@dataclass(frozen=True)
class Element:
    tab: CdpSession
    object_id: str
    session_id: str | None = None
    description: str = ""  # how the caller named it, for messages ('button "Send"', a selector)

    async def call(self, function: str, *args: Any, await_promise: bool = False) -> Any:
        """``function`` (a JS function declaration) called with ``this`` = the element and
        ``args`` (JSON values); its return value by value. JavaScriptError if it threw."""
        result = await self.tab.send(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": function,
                "objectId": self.object_id,
                "arguments": [{"value": a} for a in args],
                "returnByValue": True,
                "awaitPromise": await_promise,
            },
            session_id=self.session_id,
        )
        details = result.get("exceptionDetails")
        if details:
            exc = details.get("exception", {})
            raise JavaScriptError(
                "Runtime.callFunctionOn", str(exc.get("description") or details.get("text"))
            )
        return result.get("result", {}).get("value")


async def query_selector(
    tab: CdpSession, selector: str, *, session_id: str | None = None
) -> Element | None:
    """The first element matching ``selector`` (open shadow roots pierced), or None.

    A selector the page cannot parse raises JavaScriptError with the browser's message.
    """
    result = await tab.send(
        "Runtime.evaluate",
        {"expression": f"({DEEP_QUERY_JS})({json.dumps(selector)})", "returnByValue": False},
        session_id=session_id,
    )
    details = result.get("exceptionDetails")
    if details:
        exc = details.get("exception", {})
        raise JavaScriptError("querySelector", str(exc.get("description") or details.get("text")))
    obj = result.get("result", {})
    if obj.get("subtype") == "null" or "objectId" not in obj:
        return None
    return Element(tab, str(obj["objectId"]), session_id, selector)
