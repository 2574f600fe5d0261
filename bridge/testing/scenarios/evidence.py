"""What a failed scenario leaves to look at: a screenshot and the DOM of each provider tab.

Captured once, when a scenario fails (never on a pass: it costs a screenshot per tab), and
used twice: whole, as Allure attachments (with ``--alluredir``), and as a record in the run
report (``reports/<timestamp>.json``), which its HTML page shows. The record keeps the report
small and readable: the screenshot as JPEG (base64), and a DOM *excerpt*, not the page.

The excerpt is the part of the page a failed ask is about: the conversation's newest turns,
found with the provider pack's own selectors (``turn``, else ``user_message`` and
``assistant_message``; the same ones the ask used, so no selector is guessed here), as many
as fit in :data:`DOM_EXCERPT_CHARS`. A page with no turn (a login wall, a composer that never
appeared) has no answer area; its excerpt is then the start of ``<body>``. Both without
scripts, styles and SVG icons, which only a machine reads.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any

from bridge.app.facade import Bridge
from bridge.errors import BridgeError
from bridge.providers.results import Provider
from bridge.providers.specs import provider_spec
from bridge.tools.dom import dom_page
from bridge.waiting import scaled

__all__ = [
    "DOM_EXCERPT_CHARS",
    "Evidence",
    "Excerpt",
    "body_excerpt",
    "capture_evidence",
    "evidence_record",
    "turns_excerpt",
]

#: How much of a tab's DOM the report keeps (the whole DOM goes to Allure only).
DOM_EXCERPT_CHARS = 20_000
_JPEG_QUALITY = 70

# What a person reading an excerpt does not need: code, styles and icon paths. (Not
# <template>: open shadow roots are serialised as templates, and Gemini's turns use them.)
_NOISE = re.compile(r"<(script|style|svg)\b[^>]*>.*?</\1\s*>", re.DOTALL | re.IGNORECASE)
_BODY = re.compile(r"<body\b", re.IGNORECASE)


@dataclass(frozen=True)
class Excerpt:
    """The part of a DOM the report keeps, and which part it is, in words."""

    text: str
    of: str  # e.g. "the newest 2 of 14 turns", "the start of <body> (no turn found)"


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence attached to a scenario's report (a screenshot, the page, a text)."""

    name: str
    body: bytes | str
    kind: str  # "png", "jpeg", "html" or "text"
    excerpt: Excerpt | None = None  # "html": what the report keeps of ``body``


def image_kind(data: bytes) -> str:
    """ "jpeg" or "png", from the bytes themselves (a browser may answer in either)."""
    return "jpeg" if data[:3] == b"\xff\xd8\xff" else "png"


async def capture_evidence(bridge: Bridge, providers: tuple[Provider, ...]) -> list[Evidence]:
    """A screenshot and the DOM of each provider tab this test's bridge has attached.

    Each piece is tried on its own: a tab too busy to paint a screenshot may still give its
    DOM, and what could not be captured is said as a text piece rather than raised (the
    scenario's own failure is what the run must report).
    """
    evidence: list[Evidence] = []
    try:
        tabs = await bridge.browser.list_tabs()
    except BridgeError as exc:
        return [Evidence("evidence", f"could not list tabs: {exc}", "text")]
    for provider in providers:
        spec = provider_spec(provider, bridge.store.root)
        selectors = spec.pack.selectors
        turn = selectors.get("turn")
        turn_css = list(turn.css) if turn is not None else []
        turn_css = turn_css or [
            *selectors["user_message"].css,
            *selectors["assistant_message"].css,
        ]
        for info in tabs:
            session = bridge.browser.sessions.get(info.tab_id)
            if (
                session is None
                or session.ended is not None
                or not info.url.startswith(spec.url_prefixes)
            ):
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
            except BridgeError as exc:
                evidence.append(Evidence(f"{name} screenshot", f"could not capture: {exc}", "text"))
            try:
                # dom.js: the page with its open shadow roots (Gemini keeps parts of its
                # turns in them), and the newest turns by the pack's own selectors.
                page = dom_page(session)
                dom = str(await page.call("pageHtml", timeout=scaled(10.0)))
                found = await page.call(
                    "turnsHtml", turn_css, DOM_EXCERPT_CHARS, timeout=scaled(10.0)
                )
            except BridgeError as exc:
                evidence.append(Evidence(f"{name} DOM", f"could not capture: {exc}", "text"))
                continue
            excerpt = _turns_found(found) or body_excerpt(dom)
            evidence.append(Evidence(f"{name} DOM", dom, "html", excerpt))
    return evidence


def _turns_found(found: Any) -> Excerpt | None:
    """The page's answer of dom.js ``turnsHtml`` as an excerpt; None when it found no turn."""
    if not isinstance(found, dict):
        return None
    turns, total = found.get("turns"), found.get("total")
    if not isinstance(turns, list) or not turns or not isinstance(total, int):
        return None
    return turns_excerpt([str(t) for t in turns], total)


def turns_excerpt(turns: list[str], total: int, limit: int = DOM_EXCERPT_CHARS) -> Excerpt:
    """The newest of ``turns`` (oldest first, the page's last ``len(turns)`` of ``total``)
    that fit in ``limit`` characters; the newest is always kept, cut to its start when it
    alone is longer (its opening tags say which element it is, what follows is the answer)."""
    kept: list[str] = []
    size = 0
    for turn in reversed(turns):
        clean = _NOISE.sub("", turn)
        if kept and size + len(clean) + 1 > limit:
            break
        kept.insert(0, clean)
        size += len(clean) + 1
    text = "\n".join(kept)
    if len(text) > limit:
        text = text[:limit] + f"\n<!-- {len(text) - limit} more characters of this turn -->"
    shown = "the newest turn" if len(kept) == 1 else f"the newest {len(kept)} turns"
    return Excerpt(text, f"{shown} of {total}")


def body_excerpt(html: str, limit: int = DOM_EXCERPT_CHARS) -> Excerpt:
    """The start of the page's ``<body>``, for a page without turns: what it shows instead
    (a login wall, an error, a composer) comes first in its markup."""
    body = html[m.start() :] if (m := _BODY.search(html)) else html
    body = _NOISE.sub("", body)
    if len(body) > limit:
        body = body[:limit] + f"\n<!-- {len(body) - limit} more characters -->"
    return Excerpt(body, "the start of <body> (no turn found)")


def evidence_record(evidence: list[Evidence]) -> list[dict[str, Any]]:
    """The report's form: JSON-able, images base64, DOMs as excerpts."""
    out: list[dict[str, Any]] = []
    for item in evidence:
        if isinstance(item.body, bytes):
            data = base64.b64encode(item.body).decode("ascii")
            out.append({"name": item.name, "kind": item.kind, "data": data})
        elif item.kind == "html":
            excerpt = item.excerpt or body_excerpt(item.body)
            out.append(
                {
                    "name": f"{item.name} excerpt",
                    "kind": "html",
                    "text": excerpt.text,
                    "excerpt_of": excerpt.of,
                }
            )
        else:
            out.append({"name": item.name, "kind": item.kind, "text": item.body})
    return out
