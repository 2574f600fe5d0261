"""What a failed scenario leaves to look at: a screenshot and the DOM of each provider tab.

Captured once, when a scenario fails (never on a pass: it costs a screenshot per tab), and
used twice: whole, as Allure attachments (with ``--alluredir``), and as a record in the run
report (``reports/<timestamp>.json``), which its HTML page shows. The record keeps the report
small and readable: the screenshot as JPEG (base64), and a DOM *excerpt*, not the page.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any

from bridge.core import Bridge
from bridge.errors import BridgeError
from bridge.providers.specs import PROVIDER_SPECS
from bridge.results import Provider
from bridge.waiting import scaled

__all__ = ["DOM_EXCERPT_CHARS", "Evidence", "capture_evidence", "dom_excerpt", "evidence_record"]

#: How much of a tab's DOM the report keeps (the whole DOM goes to Allure only).
DOM_EXCERPT_CHARS = 20_000
_JPEG_QUALITY = 70

# Shadow roots are where Gemini keeps its turns: serialise the open ones with the page.
_DOM_JS = """(() => {
  const roots = [];
  const walk = (node) => {
    for (const el of node.querySelectorAll('*')) {
      if (el.shadowRoot) { roots.push(el.shadowRoot); walk(el.shadowRoot); }
    }
  };
  walk(document);
  const root = document.documentElement;
  return root.getHTML ? root.getHTML({shadowRoots: roots}) : root.outerHTML;
})()"""

# What a person reading an excerpt does not need: code, styles and icon paths. (Not
# <template>: open shadow roots are serialised as templates, and Gemini's turns live there.)
_NOISE = re.compile(r"<(script|style|svg)\b[^>]*>.*?</\1\s*>", re.DOTALL | re.IGNORECASE)
_BODY = re.compile(r"<body\b", re.IGNORECASE)


@dataclass(frozen=True)
class Evidence:
    name: str
    body: bytes | str
    kind: str  # "png", "jpeg", "html" or "text"


def image_kind(data: bytes) -> str:
    """ "jpeg" or "png", from the bytes themselves (a browser may answer in either)."""
    return "jpeg" if data[:3] == b"\xff\xd8\xff" else "png"


async def capture_evidence(bridge: Bridge, providers: tuple[Provider, ...]) -> list[Evidence]:
    """A screenshot and the DOM of each provider tab this test's bridge has attached."""
    evidence: list[Evidence] = []
    try:
        tabs = await bridge.browser.list_tabs()
    except BridgeError as exc:
        return [Evidence("evidence", f"could not list tabs: {exc}", "text")]
    for provider in providers:
        prefixes = PROVIDER_SPECS[provider].url_prefixes
        for info in tabs:
            session = bridge.browser.sessions.get(info.tab_id)
            if session is None or session.ended is not None or not info.url.startswith(prefixes):
                continue
            name = f"{provider} tab {info.tab_id}"
            try:
                if await session.evaluate("document.visibilityState") == "hidden":
                    # A hidden tab paints no frames, so a screenshot would wait for one forever.
                    await session.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
                shot = await session.send(
                    "Page.captureScreenshot",
                    {"format": "jpeg", "quality": _JPEG_QUALITY},
                    timeout=scaled(10.0),
                )
                image = base64.b64decode(shot["data"])
                evidence.append(Evidence(f"{name} screenshot", image, image_kind(image)))
                dom = await session.evaluate(_DOM_JS, timeout=scaled(10.0))
                evidence.append(Evidence(f"{name} DOM", str(dom), "html"))
            except BridgeError as exc:
                evidence.append(Evidence(f"{name} evidence", f"could not capture: {exc}", "text"))
    return evidence


def dom_excerpt(html: str, limit: int = DOM_EXCERPT_CHARS) -> str:
    """The page's ``<body>`` without scripts, styles and SVG, cut to its last ``limit``
    characters: a failed ask concerns the newest turn, and both sites add turns at the end of
    the conversation, so the end of the body is what shows it (with the composer)."""
    body = html[m.start() :] if (m := _BODY.search(html)) else html
    body = _NOISE.sub("", body)
    if len(body) <= limit:
        return body
    return f"<!-- {len(body) - limit} characters before this excerpt -->\n" + body[-limit:]


def evidence_record(evidence: list[Evidence]) -> list[dict[str, Any]]:
    """The report's form: JSON-able, images base64, DOMs as excerpts."""
    out: list[dict[str, Any]] = []
    for item in evidence:
        if isinstance(item.body, bytes):
            data = base64.b64encode(item.body).decode("ascii")
            out.append({"name": item.name, "kind": item.kind, "data": data})
        elif item.kind == "html":
            excerpt = dom_excerpt(item.body)
            out.append({"name": f"{item.name} excerpt", "kind": "html", "text": excerpt})
        else:
            out.append({"name": item.name, "kind": item.kind, "text": item.body})
    return out
