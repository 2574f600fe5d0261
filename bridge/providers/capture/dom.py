"""The page's structure in a capture (pure): what capture.js reported, reduced to what may be
kept, the shape of each pack entry's match, and the capture rebuilt as a document for CSS
matching offline (docs/captures.md).

What is kept is decided here, so it is tested without a browser:

- text nodes arrive as lengths only (capture.js never sends them) and are kept as length
  classes;
- ``aria-label``, ``title``, ``placeholder`` and ``mattooltip`` are UI text where they label a
  control of the page: kept verbatim only outside the person's content, outside lists and the
  navigation (where a label may be a conversation's title), when short, never when they share
  text with the question or the answer, and never when they hold an e-mail address or a phone
  number (an account button's label names its owner); everything kept verbatim is listed
  for review;
- ids and id-like values become ``:id``; URLs keep their shape; other attribute values are
  kept only when token-shaped (``send-button``, ``true``, ``radix-:r3:``), else replaced by a
  placeholder of their length; inline styles keep only their custom property names (a pack
  selects ChatGPT's speech button by one, C1.10); event handler attributes are dropped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bridge.providers.capture.sanitize import (
    LENGTH_CLASSES,
    length_class,
    looks_like_id,
    placeholder,
    url_shape,
)

__all__ = [
    "CONTENT_ENTRIES",
    "UI_TEXT_ATTRIBUTES",
    "Node",
    "content_selectors",
    "describe",
    "entry_matches",
    "route_shape",
    "sanitize_nodes",
    "shape",
    "skeleton_html",
]

Node = dict[str, Any]

#: Pack entries whose matches hold the person's content (their questions, answers,
#: conversations, files): nothing inside them is kept verbatim.
CONTENT_ENTRIES = (
    "input",
    "user_message",
    "assistant_message",
    "answer",
    "answer_fallback",
    "turn",
    "exchange",
    "user_text_line",
    "conversation_list",
    "conversation_item",
    "attachment_chip",
    "history_scroller",
    "research_report",
    "research_frame",
    "research_reopened",
)
#: Attributes that are UI text on a control (kept under the rules above).
UI_TEXT_ATTRIBUTES = frozenset({"aria-label", "title", "placeholder", "mattooltip"})
_UI_TEXT_MAX = 80
_URL_ATTRIBUTES = frozenset({"href", "src", "action", "poster", "data-src"})
_DROPPED = frozenset({"srcset", "value", "alt", "aria-valuetext", "aria-description", "content"})
#: Attributes whose values are the page's structure wherever they stand; inside the person's
#: content or a list, any other value is replaced (a list item's data-title is a title).
_STRUCTURAL = frozenset(
    {
        "id",
        "class",
        "role",
        "type",
        "name",
        "dir",
        "lang",
        "tabindex",
        "contenteditable",
        "disabled",
        "hidden",
        "inert",
        "data-testid",
        "data-test-id",
        "data-state",
        "data-turn",
        "data-type",
        "data-message-author-role",
        "data-message-role",
        "data-message-id",
    }
)
_TOKEN = re.compile(r"^[A-Za-z0-9_.:/+#-]{0,64}$")
#: What makes a label the person's, wherever it stands: an e-mail address (Google's account
#: button says "Google Account: <name> (<address>)"), a phone number.
_PERSONAL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+|\+?\d[\d ()./-]{7,}\d")
_CUSTOM_PROPERTY = re.compile(r"--[A-Za-z0-9_-]+")
_TAG = re.compile(r"^[a-z][a-z0-9-]*$")
_ATTRIBUTE_NAME = re.compile(r"^[A-Za-z_:][A-Za-z0-9_.:-]*$")
#: Elements never rebuilt for matching: they could run or load something in the checker's page.
_NOT_REBUILT = frozenset(
    {"script", "style", "meta", "link", "base", "iframe", "frame", "object", "embed", "template"}
)
_VOID = frozenset(
    {"area", "br", "col", "hr", "img", "input", "source", "track", "wbr", "param", "keygen"}
)


_ROUTE = re.compile(r"^[a-z_-]{1,16}$")


def route_shape(url: str) -> str:
    """A link's scheme, host and first path segment when it is a short route word
    (``/c/…``, ``/g/…``, ``/wiki/…``); every further segment is ``:x``, the query and the
    fragment go."""
    scheme, sep, rest = (
        url.partition(":") if re.match(r"^[a-z][a-z0-9+.-]*:", url) else ("", "", url)
    )
    host = ""
    if rest.startswith("//"):
        host, _, rest = rest[2:].partition("/")
        rest = "/" + rest
    path = rest.split("?", 1)[0].split("#", 1)[0]
    segments = [p for p in path.split("/") if p]
    shaped = ""
    if segments:
        first = segments[0] if _ROUTE.match(segments[0]) else ":x"
        shaped = "/" + "/".join([first, *(":x" for _ in segments[1:])])
    prefix = f"{scheme}{sep}" + (f"//{host.split('@')[-1]}" if host else "")
    return prefix + (shaped or ("/" if path.startswith("/") else ""))


def content_selectors(selectors: Mapping[str, Sequence[str]]) -> list[str]:
    """The CSS of the pack's content entries (capture.js marks what is inside them)."""
    return [css for name in CONTENT_ENTRIES for css in selectors.get(name, ())]


def _shares_text(value: str, secrets: Iterable[str]) -> bool:
    """Whether ``value`` is part of a secret or holds one (below four characters, words like
    "OK" are everybody's)."""
    folded = value.casefold().strip()
    for secret in secrets:
        other = secret.casefold().strip()
        if (len(folded) >= 4 and folded in other) or (len(other) >= 4 and other in folded):
            return True
    return False


def _attribute(
    name: str, value: str, *, ui_text_allowed: bool, secrets: Sequence[str], kept: list[str]
) -> str | None:
    """The value kept for one attribute, or None to drop it."""
    lowered = name.lower()
    if lowered.startswith("on") or lowered in _DROPPED or not _ATTRIBUTE_NAME.match(name):
        return None
    if lowered in UI_TEXT_ATTRIBUTES:
        short = 0 < len(value) <= _UI_TEXT_MAX
        personal = _PERSONAL.search(value) is not None
        if ui_text_allowed and short and not personal and not _shares_text(value, secrets):
            kept.append(value)
            return value
        return placeholder(value)
    if lowered in _URL_ATTRIBUTES:
        if value.startswith("data:"):
            return "data:"
        # In the conversation or a list, a link's path is the person's (a cited page's
        # title, a file's name, a project's name): only its route is kept.
        return url_shape(value) if ui_text_allowed else route_shape(value)
    if lowered == "style":
        return "; ".join(dict.fromkeys(_CUSTOM_PROPERTY.findall(value)))
    if lowered == "class":
        return " ".join(c for c in value.split() if _TOKEN.match(c) and not looks_like_id(c))
    if looks_like_id(value):
        return ":id"
    structural = lowered in _STRUCTURAL or (lowered.startswith("aria-") and lowered != "aria-label")
    if structural and _TOKEN.match(value):
        return value  # the site's own vocabulary (true, textbox, send-button), not text
    if not ui_text_allowed:
        return placeholder(value)
    if _TOKEN.match(value) and not _shares_text(value, secrets):
        return value
    return placeholder(value)


_CONTROL_TAGS = frozenset({"button", "input", "textarea", "select", "summary", "label", "a"})
_CONTROL_ROLES = frozenset(
    {
        "button",
        "link",
        "menuitem",
        "menuitemradio",
        "menuitemcheckbox",
        "option",
        "tab",
        "switch",
        "checkbox",
        "radio",
        "combobox",
        "textbox",
    }
)


def _control(item: Mapping[str, Any]) -> bool:
    """A control the page labels for its user (a button, a menu item, a field; a custom
    element named a button): the only places a label is UI text rather than, say, a
    heading's title naming the conversation."""
    tag = str(item.get("tag", ""))
    role = str(dict(item.get("attrs", {})).get("role", ""))
    return tag in _CONTROL_TAGS or role in _CONTROL_ROLES or tag.endswith("-button")


def sanitize_nodes(
    raw: Sequence[Mapping[str, Any]], *, secrets: Sequence[str]
) -> tuple[list[Node], list[str]]:
    """capture.js's elements as a capture keeps them, and every string kept verbatim.

    ``secrets``: the question and the answer, which no kept string may share text with
    (the length classes of text nodes are all that is left of them anyway)."""
    nodes: list[Node] = []
    kept: list[str] = []
    for item in raw:
        ui_text_allowed = not item.get("c") and not item.get("l") and _control(item)
        attrs: dict[str, str] = {}
        for name, value in dict(item.get("attrs", {})).items():
            reduced = _attribute(
                str(name),
                str(value),
                ui_text_allowed=ui_text_allowed,
                secrets=secrets,
                kept=kept,
            )
            if reduced is not None:
                attrs[str(name)] = reduced
        nodes.append(
            {
                "i": int(item["i"]),
                "p": int(item["p"]),
                "tag": str(item["tag"]),
                "attrs": attrs,
                "text": [length_class(int(n)) for n in item.get("text", [])],
            }
        )
    return nodes, sorted(set(kept))


def _brief(node: Node) -> dict[str, Any]:
    attrs = node["attrs"]
    return {
        "tag": node["tag"],
        "role": attrs.get("role"),
        "testid": attrs.get("data-testid") or attrs.get("data-test-id"),
        "id": attrs.get("id"),
        "classes": attrs.get("class", "").split(),
    }


def shape(nodes: Sequence[Node], index: int, depth: int = 4) -> dict[str, Any]:
    """The Shape of one element (docs/captures.md): what it is and where it stands."""
    node = nodes[index]
    brief = _brief(node)
    ancestors: list[dict[str, Any]] = []
    parent = node["p"]
    while parent >= 0 and len(ancestors) < depth:
        ancestors.append(_brief(nodes[parent]))
        parent = nodes[parent]["p"]
    return {
        "tag": brief["tag"],
        "role": brief["role"],
        "testid": brief["testid"],
        "aria_label": node["attrs"].get("aria-label"),
        "classes": brief["classes"],
        "ancestors": ancestors,
    }


def describe(shape: Mapping[str, Any]) -> str:
    """A Shape in one line, as a person reads a selector: ``button#composer-submit-button
    [data-testid=…][aria-label=…] in div < div#composer-background < form``."""

    def brief(part: Mapping[str, Any]) -> str:
        text = str(part.get("tag"))
        if part.get("id"):
            text += f"#{part['id']}"
        if part.get("testid"):
            text += f"[data-testid={part['testid']}]"
        if part.get("role"):
            text += f"[role={part['role']}]"
        if part.get("aria_label"):
            text += f"[aria-label={part['aria_label']}]"
        return text

    chain = " < ".join(brief(a) for a in list(shape.get("ancestors") or [])[:3])
    return brief(shape) + (f" in {chain}" if chain else "")


def entry_matches(
    selectors: Mapping[str, Sequence[str]],
    matches: Mapping[str, Sequence[int] | str],
    nodes: Sequence[Node],
) -> dict[str, list[dict[str, Any]]]:
    """Per pack entry, per CSS selector: how many elements matched and the first one's
    Shape (a selector the browser refused is reported with its error)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name, css_list in selectors.items():
        rows = []
        for css in css_list:
            found = matches.get(css, [])
            if isinstance(found, str):
                rows.append({"css": css, "count": 0, "first": None, "error": found})
                continue
            present = [i for i in found if 0 <= i < len(nodes)]
            first = shape(nodes, present[0]) if present else None
            rows.append({"css": css, "count": len(present), "first": first})
        out[name] = rows
    return out


_REPRESENTATIVE = (0, 1, *(bound + 1 for bound in LENGTH_CLASSES))


def skeleton_html(nodes: Sequence[Node]) -> str:
    """The capture as a document CSS can match against: every element with its kept
    attributes and ``data-bridge-i`` (its index), each text as a placeholder of its length
    class's shortest length. Nothing in it can run or load: event handlers are dropped,
    scripts, frames and the like are not rebuilt, and the document's policy forbids every
    load (a capture file is input, perhaps hostile)."""
    children: dict[int, list[int]] = {}
    for node in nodes:
        children.setdefault(int(node["p"]), []).append(int(node["i"]))
    by_index = {int(node["i"]): node for node in nodes}
    out: list[str] = [
        "<!doctype html><html><head>"
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'">'
        "</head>"
    ]

    def emit(index: int) -> None:
        node = by_index[index]
        tag = str(node["tag"]).lower()
        if not _TAG.match(tag) or tag in _NOT_REBUILT:
            return
        attrs = "".join(
            f' {name}="{html.escape(str(value), quote=True)}"'
            for name, value in dict(node["attrs"]).items()
            if _ATTRIBUTE_NAME.match(name) and not name.lower().startswith("on")
        )
        out.append(f'<{tag}{attrs} data-bridge-i="{index}">')
        if tag in _VOID:
            return
        for n in node.get("text", []):
            out.append("x" * _REPRESENTATIVE[min(int(n), len(_REPRESENTATIVE) - 1)])
        for child in children.get(index, []):
            emit(child)
        out.append(f"</{tag}>")

    roots = children.get(-1, [])
    if not roots or str(by_index[roots[0]]["tag"]).lower() != "body":
        out.append("<body>")
        for root in roots:
            emit(root)
        out.append("</body>")
    else:
        for root in roots:
            emit(root)
    out.append("</html>")
    return "".join(out)
