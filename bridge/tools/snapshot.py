"""The page's accessibility tree, every frame included: ``browser_snapshot`` (with refs) and
the ask tools' ``take_cdp_snapshot`` (``outline``, without), one path for both.

The main frame's tree comes from ``Accessibility.getFullAXTree``; each iframe's from the
same call with its ``frameId`` (same-process frames) or in its own child session
(out-of-process frames, attached by the recorder's ``Target.setAutoAttach``; an outline,
taken without a recorder, leaves those out). Each frame tree hangs under its ``<iframe>``
owner (``DOM.getFrameOwner``), and its refs get the frame's prefix (``f1e4``), stable for as
long as the frame lives.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError, CdpError
from bridge.tools.snapshot_render import FrameTree, NodeNotInTree, render
from bridge.tools.targets import FrameInfo, TabState

__all__ = ["OUTLINE_CHARS", "outline", "take_snapshot", "take_subtree"]

log = logging.getLogger(__name__)

MAX_FRAME_DEPTH = 5  # iframes inside iframes: deeper ones are left out of the snapshot
#: Most characters of an outline (take_cdp_snapshot sends a screenshot along with it).
OUTLINE_CHARS = 40_000


@dataclass
class _Walk:
    """What walking a tab's frames needs: the tab, the child sessions of its out-of-process
    frames (by frame id), each frame's ref prefix, and the frames found so far."""

    tab: CdpSession
    child_sessions: Mapping[str, str]
    prefix_of: Callable[[str], str]
    frames: dict[str, FrameInfo]


async def take_snapshot(
    state: TabState, *, max_chars: int | None = None, root: tuple[str, int] | None = None
) -> str:
    """The snapshot text (only ``root``'s subtree when given: a frame prefix and a backend
    node id, see ``render``); afterwards refs in it resolve through ``state``."""
    walk = _Walk(
        state.tab, state.recorder.child_sessions, state.frame_prefix, {"": FrameInfo("", None)}
    )
    tree = await _frame_tree(walk, prefix="", session_id=None, frame_id=None, depth=0)
    state.frames = walk.frames
    return render(tree, state.refs, max_chars=max_chars, root=root)


async def take_subtree(
    state: TabState, root: tuple[str, int], *, max_chars: int | None = None
) -> str:
    """The snapshot of one node's subtree (``root``: frame prefix, backend node id), the
    same text as ``take_snapshot(state, root=root)``, fetched alone when it can be: a
    subtree without iframes comes from ``Accessibility.queryAXTree`` on that node (the
    node and every descendant, ignored ones included, with their child ids), a fraction of
    the whole tree on a big page. A subtree holding an iframe (whose content only the frame
    walk brings), or a node the query does not return, takes the whole walk."""
    prefix, backend = root
    frame = state.frames.get(prefix)
    if frame is not None:
        try:
            nodes = (
                await state.tab.send(
                    "Accessibility.queryAXTree",
                    {"backendNodeId": backend},
                    session_id=frame.session_id,
                )
            )["nodes"]
        except CdpError as exc:  # the node is gone: the whole walk says so precisely
            log.debug("subtree of %s not queried: %s", root, exc)
            nodes = []
        if nodes and not any(_is_iframe(node) for node in nodes):
            try:
                return render(FrameTree(nodes, prefix), state.refs, max_chars=max_chars, root=root)
            except NodeNotInTree:
                pass
    return await take_snapshot(state, max_chars=max_chars, root=root)


def _is_iframe(node: dict[str, Any]) -> bool:
    role = node.get("role")
    value = role.get("value") if isinstance(role, dict) else None
    return isinstance(value, str) and value.lower() in ("iframe", "iframepresentational")


async def outline(tab: CdpSession, *, max_chars: int = OUTLINE_CHARS) -> str:
    """The snapshot's text without refs (nothing here could resolve them), for a tab no
    browser tool has attached: same-process iframes included, out-of-process ones left out."""
    prefixes: dict[str, str] = {}

    def prefix_of(frame_id: str) -> str:
        return prefixes.setdefault(frame_id, f"f{len(prefixes) + 1}")

    walk = _Walk(tab, {}, prefix_of, {"": FrameInfo("", None)})
    tree = await _frame_tree(walk, prefix="", session_id=None, frame_id=None, depth=0)
    return render(tree, None, max_chars=max_chars)


async def _frame_tree(
    walk: _Walk,
    *,
    prefix: str,
    session_id: str | None,
    frame_id: str | None,
    depth: int,
) -> FrameTree:
    tab = walk.tab
    params: dict[str, Any] = {"frameId": frame_id} if frame_id else {}
    ax_tree = tab.send("Accessibility.getFullAXTree", params, session_id=session_id)
    if depth >= MAX_FRAME_DEPTH:
        return FrameTree((await ax_tree)["nodes"], prefix)
    # The tree and the frame's child frames asked at once: one round trip, not two.
    found, child_ids = await asyncio.gather(ax_tree, _child_frames(walk, session_id, frame_id))
    tree = FrameTree(found["nodes"], prefix)
    for child_id in child_ids:
        try:
            owner = await tab.send(
                "DOM.getFrameOwner", {"frameId": child_id}, session_id=session_id
            )
        except BridgeError as exc:  # the frame went away meanwhile
            log.debug("frame %s has no owner: %s", child_id, exc)
            continue
        owner_id = int(owner["backendNodeId"])
        child_prefix = walk.prefix_of(child_id)
        child_session = walk.child_sessions.get(child_id)
        try:
            if child_session is not None:  # out of process: its own session
                child = await _frame_tree(
                    walk,
                    prefix=child_prefix,
                    session_id=child_session,
                    frame_id=None,
                    depth=depth + 1,
                )
            else:
                child = await _frame_tree(
                    walk,
                    prefix=child_prefix,
                    session_id=session_id,
                    frame_id=child_id,
                    depth=depth + 1,
                )
        except BridgeError as exc:
            log.debug("frame %s left out of the snapshot: %s", child_id, exc)
            continue
        tree.children[owner_id] = child
        walk.frames[child_prefix] = FrameInfo(
            child_prefix,
            child_session if child_session is not None else session_id,
            parent_prefix=prefix,
            owner_backend_id=owner_id,
        )
    return tree


async def _child_frames(walk: _Walk, session_id: str | None, frame_id: str | None) -> list[str]:
    """Frame ids of the frames directly inside ``frame_id`` (the session's root if None),
    in-process ones from the frame tree, out-of-process ones from the child sessions."""
    root = (await walk.tab.send("Page.getFrameTree", session_id=session_id))["frameTree"]
    node = root if frame_id is None else _find(root, frame_id)
    found = [str(c["frame"]["id"]) for c in (node or {}).get("childFrames", [])]
    if frame_id is None and session_id is None:
        # Out-of-process iframes of the main frame, in case its frame tree omits them.
        found += [f for f in walk.child_sessions if f not in found]
    return found


def _find(node: dict[str, Any], frame_id: str) -> dict[str, Any] | None:
    stack = [node]
    while stack:
        current = stack.pop()
        if current["frame"]["id"] == frame_id:
            return current
        stack.extend(current.get("childFrames", []))
    return None
