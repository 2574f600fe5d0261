"""A selector for a pack entry that matches nothing in a capture (pure): which element of the
capture the entry most likely meant, and selectors built from that element's stable
attributes, best first (docs/captures.md#checking-a-capture).

The element is found the way a person fixing the pack would look for it: the same tag and
attributes as the entry's selectors with values sharing their words (``send-button`` →
``composer-submit-button``), and the labels the pack knows for the control (the send
button's "Send prompt"). The caller confirms each proposed selector with the browser's own
CSS engine against the same capture (``check``), so a proposal always matches the element.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from bridge.providers.capture.dom import Node
from bridge.providers.capture.sanitize import looks_like_id

__all__ = ["LABELS", "Compound", "candidates", "selectors_for", "subject"]

#: The pack's texts that label an entry's control (page.js falls back to them: the send and
#: stop buttons by aria-label in the composer, C1.5/C1.7, G1.3/G1.5).
LABELS: Mapping[str, tuple[str, ...]] = {
    "send_button": ("send_labels",),
    "stop_button": ("stop_labels",),
    "research_button": ("research_labels",),
    "research_pill": ("research_pill_labels",),
    "effort_button": ("effort_opener_labels",),
    "deep_think_item": ("deep_think_labels",),
    "thinking_status": ("thinking_labels",),
}

_ATTRIBUTE = re.compile(
    r"\[\s*([A-Za-z_:][-A-Za-z0-9_.:]*)\s*(?:([~^$*|]?=)\s*(\"[^\"]*\"|'[^']*'|[^\]\s]+))?\s*(?:[is])?\s*\]"
)
_WORDS = re.compile(r"[a-z0-9]+")
# Class names that a build tool made (hashes), which change with every release: digits,
# BEM-ish "__", or a case mix no person writes ("wcDTda_…").
_HASHED = re.compile(r"__|\d.*\d|[a-z][A-Z]{2,}|[A-Z]{2,}[a-z]{2}")


@dataclass(frozen=True)
class Compound:
    """The part of a selector that names the element itself (after the last combinator):
    its tag, id, classes and attribute conditions; pseudo-classes are left out."""

    tag: str | None
    id: str | None
    classes: tuple[str, ...]
    attributes: tuple[tuple[str, str | None], ...]  # (name, value or None for presence)


def _strip_pseudo(text: str) -> str:
    """``:not(...)``, ``:has(...)`` and other pseudo-classes removed (nested parentheses)."""
    out, depth, i = [], 0, 0
    while i < len(text):
        ch = text[i]
        if depth == 0 and ch == ":":
            j = i + 1
            while j < len(text) and (text[j].isalnum() or text[j] in "-:"):
                j += 1
            if j < len(text) and text[j] == "(":
                depth, i = 1, j + 1
                while i < len(text) and depth:
                    depth += {"(": 1, ")": -1}.get(text[i], 0)
                    i += 1
                continue
            i = j
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def subject(css: str) -> Compound:
    """The subject compound of a CSS selector (its last compound; of a list, the first)."""
    first = css.split(",")[0]
    depth, quote, start = 0, "", 0
    for i, ch in enumerate(first):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif depth == 0 and ch in " >+~":
            start = i + 1
    last = _strip_pseudo(first[start:].strip())
    attributes = tuple(
        (m.group(1), m.group(3).strip("\"'") if m.group(3) else None)
        for m in _ATTRIBUTE.finditer(last)
    )
    bare = _ATTRIBUTE.sub("", last)
    tag = re.match(r"^[A-Za-z][-A-Za-z0-9]*", bare)
    ident = re.search(r"#([-A-Za-z0-9_]+)", bare)
    classes = tuple(re.findall(r"\.([-A-Za-z0-9_]+)", bare))
    return Compound(
        tag.group(0).lower() if tag else None,
        ident.group(1) if ident else None,
        classes,
        attributes,
    )


def _words(value: str) -> set[str]:
    return set(_WORDS.findall(value.lower()))


def _similarity(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def _score(node: Node, compounds: Sequence[Compound], labels: Iterable[str]) -> float:
    attrs = node["attrs"]
    best = 0.0
    for compound in compounds:
        score = 0.0
        if compound.tag and compound.tag == node["tag"]:
            score += 2
        for name, value in compound.attributes:
            if name in attrs:
                score += 1
                if value is not None:
                    score += 3 * _similarity(value, attrs[name])
        if compound.id and attrs.get("id"):
            score += 3 * _similarity(compound.id, attrs["id"])
        classes = set(attrs.get("class", "").split())
        if compound.classes:
            score += 2 * len(classes & set(compound.classes)) / len(compound.classes)
        best = max(best, score)
    shown = {attrs.get(a, "").casefold().strip() for a in ("aria-label", "title", "mattooltip")}
    shown.discard("")
    for label in labels:
        folded = label.casefold().strip()
        if folded in shown:
            best += 5
        elif any(folded and folded in s for s in shown):
            best += 3
    return best


def candidates(
    nodes: Sequence[Node], css: Sequence[str], labels: Iterable[str] = (), limit: int = 3
) -> list[int]:
    """The elements of ``nodes`` an entry of ``css`` most likely meant, best first: only
    ones that share something real with it (the tag and a word of an attribute's value, or
    a label), never merely the tag."""
    compounds = [subject(c) for c in css]
    wanted = list(labels)
    scored = []
    for node in nodes:
        score = _score(node, compounds, wanted)
        if score >= 3:
            scored.append((score, -int(node["i"]), int(node["i"])))
    scored.sort(reverse=True)
    return [index for _, _, index in scored[:limit]]


def _quoted(value: str) -> str:
    return json.dumps(value)  # a CSS string: double quotes, backslash escapes


def _stable(value: str | None) -> bool:
    return bool(value) and value != ":id" and not looks_like_id(str(value))


def _edited(node: Node, compound: Compound) -> str | None:
    """The entry's own selector with the element's values in it (``div#prompt-input[…]`` →
    ``div#prompt-textarea[…]``): the smallest change a person would make. None when the
    element keeps none of the selector's parts."""
    attrs: Mapping[str, str] = node["attrs"]
    parts = []
    if compound.id and _stable(attrs.get("id")) and re.fullmatch(r"[A-Za-z][-\w]*", attrs["id"]):
        parts.append(f"#{attrs['id']}")
    classes = set(attrs.get("class", "").split())
    parts += [f".{c}" for c in compound.classes if c in classes]
    for name, value in compound.attributes:
        if name not in attrs:
            continue
        if value is None:
            parts.append(f"[{name}]")
        elif _stable(attrs[name]) and not set(attrs[name]) <= {"x"}:
            parts.append(f"[{name}={_quoted(attrs[name])}]")
    if not parts:
        return None
    return str(node["tag"]) + "".join(parts)


def selectors_for(node: Node, css: Sequence[str] = ()) -> list[str]:
    """Selectors for one element, best first: the entry's own selectors with the element's
    values in them, then selectors from its stable attributes: the ones the entry used, a
    test id, an id that is no generated one, the aria-label, stable classes."""
    tag = str(node["tag"])
    attrs: Mapping[str, str] = node["attrs"]
    out: list[str] = [e for c in css if (e := _edited(node, subject(c))) is not None]
    used = [name for c in css for name, _ in subject(c).attributes]
    for name in [*used, "data-testid", "data-test-id"]:
        value = attrs.get(name)
        if value and _stable(value) and not set(value) <= {"x"}:
            out.append(f"{tag}[{name}={_quoted(value)}]")
    ident = attrs.get("id")
    if ident and ident != ":id" and re.fullmatch(r"[A-Za-z][-A-Za-z0-9_]*", ident):
        out.append(f"{tag}#{ident}")
    label = attrs.get("aria-label")
    if label and not set(label) <= {"x"}:  # a placeholder is no label
        out.append(f"{tag}[aria-label={_quoted(label)}]")
    stable = [c for c in attrs.get("class", "").split() if not _HASHED.search(c)]
    if stable:
        out.append(tag + "".join(f".{c}" for c in stable[:3]))
    return list(dict.fromkeys(out))
