"""Chrome's accessibility tree as compact indented text an AI agent can read and act on.

The agent needs two things from a snapshot: what the page says and shows, and a handle on
each thing it may click or type into. So the output is one node per line, Playwright-MCP
style (``- role "name" [state] [ref=e3]: value``), with layout-only nodes left out and every
printed element carrying a ``ref`` the action tools resolve back to its backend DOM node.

Pure: input is the ``nodes`` list of CDP ``Accessibility.getFullAXTree`` per frame, output is
text. Deep or huge trees are fine: every walk uses an explicit stack, never recursion.

Rules, in short:

- the root (the node without ``parentId``; a ``RootWebArea``) is not printed, its children
  are, at depth 0;
- ignored nodes, and ``none``/``generic``/``presentation`` nodes without a name, are
  transparent: their children take their place (``InlineTextBox``, ``LineBreak`` and nested
  ``RootWebArea`` nodes always are);
- ``StaticText`` prints as ``- text: …``; consecutive texts merge into one line, and a text
  equal to its parent's name or value is dropped as redundant;
- a node whose only child is one text line prints it inline: ``- listitem [ref=e7]: First``;
- value roles (textbox, combobox…) print their value after a colon; if they also keep
  children, the children follow indented below that line;
- an ``Iframe`` node whose backend id is in ``FrameTree.children`` gets that frame's tree as
  its children, with that frame's ref prefix (``f1e2``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "NAME_LIMIT",
    "VALUE_LIMIT",
    "FrameTree",
    "NodeNotInTree",
    "RefTable",
    "parse_ref",
    "render",
]

#: Names longer than this are cut (with "…"): a name is a label, not content.
NAME_LIMIT = 200
#: Values and link URLs are cut here: long enough to check, short enough not to flood.
VALUE_LIMIT = 500

_TRANSPARENT_UNNAMED = frozenset({"none", "generic", "presentation"})
_ALWAYS_TRANSPARENT = frozenset({"InlineTextBox", "LineBreak", "RootWebArea", "WebArea"})
_VALUE_ROLES = frozenset({"textbox", "combobox", "searchbox", "spinbutton", "slider"})
_IFRAME_ROLES = frozenset({"iframe", "iframepresentational"})
_PREFIX_RE = re.compile(r"(?:f[1-9][0-9]*)?")
_REF_RE = re.compile(r"(f[1-9][0-9]*)?e(0|[1-9][0-9]*)")
# No space is put before closing punctuation or after opening punctuation when joining texts.
_NO_SPACE_BEFORE = frozenset(".,;:!?)]}»”’%")
_NO_SPACE_AFTER = frozenset("([{«“‘")


@dataclass
class FrameTree:
    """One frame's AX nodes plus the trees of the iframes it embeds.

    ``prefix`` namespaces the frame's refs ("" for the main frame, "f1", "f2"… for iframes)
    because backend DOM node ids are only unique per renderer, and an out-of-process iframe
    is a different renderer. ``children`` maps the backendDOMNodeId of an ``<iframe>`` owner
    node in *this* tree to the tree of the frame it shows.
    """

    nodes: list[dict[str, Any]]
    prefix: str = ""
    children: dict[int, FrameTree] = field(default_factory=dict)


class RefTable:
    """Stable refs: the same (prefix, backendDOMNodeId) always gets the same ref across
    snapshots (e3 stays e3 while the node lives); new nodes get the next number per prefix.

    Numbers are never reused, even after ``forget``: a stale ref then fails to resolve
    instead of silently pointing at a different element.
    """

    def __init__(self) -> None:
        self._by_node: dict[tuple[str, int], str] = {}
        self._by_ref: dict[str, tuple[str, int]] = {}
        self._last: dict[str, int] = {}

    def ref_for(self, prefix: str, backend_id: int) -> str:
        """The ref of that node ("e3", "f1e2"), minted on first sight."""
        key = (prefix, backend_id)
        ref = self._by_node.get(key)
        if ref is None:
            if not _PREFIX_RE.fullmatch(prefix):
                raise ValueError(f"frame prefix must be '' or f1, f2…; got {prefix!r}")
            number = self._last.get(prefix, 0) + 1
            self._last[prefix] = number
            ref = f"{prefix}e{number}"
            self._by_node[key] = ref
            self._by_ref[ref] = key
        return ref

    def lookup(self, ref: str) -> tuple[str, int] | None:
        """``(prefix, backend_id)`` of a ref this table handed out, or None."""
        return self._by_ref.get(ref)

    def forget(self, ref: str) -> None:
        """Drop a ref (its node is gone); unknown refs are ignored."""
        key = self._by_ref.pop(ref, None)
        if key is not None:
            del self._by_node[key]

    def __len__(self) -> int:
        return len(self._by_ref)


def parse_ref(text: str) -> tuple[str, int] | None:
    """``"e12"`` -> ``("", 12)``, ``"f1e4"`` -> ``("f1", 4)``; None for anything else, which
    callers then treat as a CSS selector. Case-sensitive: ``E1`` is a (tag) selector."""
    match = _REF_RE.fullmatch(text.strip())
    if match is None:
        return None
    return match.group(1) or "", int(match.group(2))


class NodeNotInTree(LookupError):
    """The node a partial render should start at is in none of the frames' trees."""


def render(
    tree: FrameTree,
    refs: RefTable | None,
    *,
    max_chars: int | None = None,
    root: tuple[str, int] | None = None,
) -> str:
    """The snapshot text of ``tree`` (and its iframes), refs taken from ``refs`` (None: no
    refs, for a text nothing will act on).

    With ``root`` (a frame prefix and a backend DOM node id), only that node's subtree, the
    node itself at level 0 (or, for a node that prints nothing, its printed children);
    ``NodeNotInTree`` when no frame with that prefix holds such a node.

    With ``max_chars``, lines stop before the text would pass that size and a last line says
    how many were left out; the whole result then stays within ``max_chars`` (unless that is
    too small for even the footer line)."""
    lines = list(_lines(tree, refs, root))
    if max_chars is None:
        return "\n".join(lines)
    total = sum(len(line) + 1 for line in lines) - 1 if lines else 0
    if total <= max_chars:
        return "\n".join(lines)
    # The footer is measured with the largest count it could show, so the result always fits.
    budget = max_chars - len(_footer(len(lines))) - 1
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = len(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    kept.append(_footer(len(lines) - len(kept)))
    return "\n".join(kept)


def _footer(hidden: int) -> str:
    return f"- … ({hidden} more lines not shown; use a selector-based tool or scroll)"


# --- walking -------------------------------------------------------------------------------


class _Frame:
    """A FrameTree indexed for lookups, built once per render."""

    def __init__(self, tree: FrameTree) -> None:
        self.tree = tree
        self.by_id: dict[str, dict[str, Any]] = {}
        root: dict[str, Any] | None = None
        for node in tree.nodes:
            node_id = str(node.get("nodeId", ""))
            self.by_id.setdefault(node_id, node)
            if root is None and "parentId" not in node:
                root = node
        if root is None and tree.nodes:
            root = tree.nodes[0]
        self.root = root


@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Node:
    frame: _Frame
    node: dict[str, Any]


_Item = _Text | _Node


def _lines(
    tree: FrameTree, refs: RefTable | None, root: tuple[str, int] | None = None
) -> Iterator[str]:
    frames: dict[int, _Frame] = {}
    seen: set[int] = set()
    if root is None:
        top = _frame_of(tree, frames)
        if top.root is None:
            return
        start = _flatten(top, [top.root], "", "", seen)
    else:
        frame, node = _locate(tree, frames, root)
        start = _flatten(frame, [node], "", "", seen)
    stack: list[tuple[_Item, int]] = [(item, 0) for item in reversed(start)]
    while stack:
        item, depth = stack.pop()
        indent = "  " * depth
        if isinstance(item, _Text):
            yield f"{indent}- text: {item.text}"
            continue
        head, value, children = _describe(item, refs, frames, seen)
        if value:
            yield f"{indent}- {head}: {value}"
        elif len(children) == 1 and isinstance(children[0], _Text):
            yield f"{indent}- {head}: {children[0].text}"
            continue
        else:
            yield f"{indent}- {head}:" if children else f"{indent}- {head}"
        stack.extend((child, depth + 1) for child in reversed(children))


def _locate(
    tree: FrameTree, frames: dict[int, _Frame], root: tuple[str, int]
) -> tuple[_Frame, dict[str, Any]]:
    """The frame with prefix ``root[0]`` and its node with backend id ``root[1]``."""
    prefix, backend = root
    trees = [tree]
    while trees:
        current = trees.pop()
        trees.extend(current.children.values())
        if current.prefix != prefix:
            continue
        frame = _frame_of(current, frames)
        for node in current.nodes:
            if node.get("backendDOMNodeId") == backend:
                return frame, node
    raise NodeNotInTree(f"no node {backend} in frame {prefix or 'main'}")


def _frame_of(tree: FrameTree, frames: dict[int, _Frame]) -> _Frame:
    frame = frames.get(id(tree))
    if frame is None:
        frame = frames[id(tree)] = _Frame(tree)
    return frame


def _describe(
    item: _Node, refs: RefTable | None, frames: dict[int, _Frame], seen: set[int]
) -> tuple[str, str, list[_Item]]:
    """The line of a printed node without "- " and colon, its value (for value roles, else
    ""), and its printed children."""
    node, frame = item.node, item.frame
    role = _role(node)
    is_iframe = role.lower() in _IFRAME_ROLES
    name = _name(node)
    parts = ["iframe" if is_iframe else role]
    if name:
        parts.append(json.dumps(_cut(name, NAME_LIMIT), ensure_ascii=False))
    parts.extend(_states(node))
    backend = node.get("backendDOMNodeId")
    if refs is not None and isinstance(backend, int) and not isinstance(backend, bool):
        parts.append(f"[ref={refs.ref_for(frame.tree.prefix, backend)}]")
    url = _prop(node, "url") if role == "link" else None
    if isinstance(url, str) and url:
        parts.append(f"[url={_cut(url, VALUE_LIMIT)}]")
    value = _value(node) if role in _VALUE_ROLES else ""

    inner_tree = (
        frame.tree.children.get(backend) if is_iframe and isinstance(backend, int) else None
    )
    if inner_tree is not None:
        inner = _frame_of(inner_tree, frames)
        starts = [inner.root] if inner.root is not None else []
        children = _flatten(inner, starts, name, value, seen)
    else:
        children = _flatten(frame, _child_nodes(frame, node), name, value, seen)
    return " ".join(parts), _cut(value, VALUE_LIMIT), children


def _flatten(
    frame: _Frame,
    starts: list[dict[str, Any]],
    parent_name: str,
    parent_value: str,
    seen: set[int],
) -> list[_Item]:
    """The printed children of a parent whose own children are ``starts``: transparent nodes
    hoisted, consecutive texts merged, texts repeating the parent's name or value dropped.

    ``seen`` spans the whole render, so a malformed tree with a cycle cannot hang it."""
    items: list[_Item] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            text = _join_texts(pending)
            pending.clear()
            if text and text != parent_name and text != parent_value:
                items.append(_Text(text))

    stack = list(reversed(starts))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        role = _role(node)
        if node.get("ignored"):
            stack.extend(reversed(_child_nodes(frame, node)))
        elif role == "StaticText":
            pending.append(_raw_name(node))
        elif role in _ALWAYS_TRANSPARENT or (role in _TRANSPARENT_UNNAMED and not _name(node)):
            stack.extend(reversed(_child_nodes(frame, node)))
        else:
            flush()
            items.append(_Node(frame, node))
    flush()
    return items


def _child_nodes(frame: _Frame, node: dict[str, Any]) -> list[dict[str, Any]]:
    found = (frame.by_id.get(str(child)) for child in node.get("childIds") or ())
    return [child for child in found if child is not None]


# --- node fields -----------------------------------------------------------------------------


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _join_texts(pieces: list[str]) -> str:
    """Adjacent StaticText pieces as one line. Chrome keeps inline spacing inside the pieces
    ("Hello " + "world"), but block boundaries ("a" | "b" from two divs) have none, so a space
    is added between pieces unless either side already has one or punctuation hugs it."""
    out = ""
    for piece in pieces:
        if not piece:
            continue
        if (
            out
            and not out[-1].isspace()
            and not piece[0].isspace()
            and piece[0] not in _NO_SPACE_BEFORE
            and out[-1] not in _NO_SPACE_AFTER
        ):
            out += " "
        out += piece
    return _collapse(out)


def _field(node: dict[str, Any], key: str) -> Any:
    holder = node.get(key)
    return holder.get("value") if isinstance(holder, dict) else None


def _role(node: dict[str, Any]) -> str:
    role = _field(node, "role")
    return role if isinstance(role, str) else ""


def _raw_name(node: dict[str, Any]) -> str:
    name = _field(node, "name")
    return name if isinstance(name, str) else ""


def _name(node: dict[str, Any]) -> str:
    return _collapse(_raw_name(node))


def _value(node: dict[str, Any]) -> str:
    return _collapse(_scalar(_field(node, "value")))


def _scalar(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _prop(node: dict[str, Any], name: str) -> Any:
    for prop in node.get("properties") or ():
        if isinstance(prop, dict) and prop.get("name") == name:
            return _field(prop, "value")
    return None


def _is_true(value: Any) -> bool:
    return value is True or value == "true"


def _states(node: dict[str, Any]) -> list[str]:
    """State brackets in a fixed order, whatever order Chrome listed the properties in."""
    states: list[str] = []
    checked = _prop(node, "checked")
    if _is_true(checked):
        states.append("[checked]")
    elif checked == "mixed":
        states.append("[checked=mixed]")
    if _is_true(_prop(node, "disabled")):
        states.append("[disabled]")
    if _is_true(_prop(node, "expanded")):
        states.append("[expanded]")
    level = _prop(node, "level")
    if isinstance(level, int | float) and not isinstance(level, bool):
        states.append(f"[level={_scalar(level)}]")
    pressed = _prop(node, "pressed")
    if _is_true(pressed):
        states.append("[pressed]")
    elif pressed == "mixed":
        states.append("[pressed=mixed]")
    if _is_true(_prop(node, "required")):
        states.append("[required]")
    if _is_true(_prop(node, "selected")):
        states.append("[selected]")
    return states
