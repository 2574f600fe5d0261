"""``browser_snapshot``: the page's accessibility tree, every frame included, with refs.

The main frame's tree comes from ``Accessibility.getFullAXTree``; each iframe's from the
same call with its ``frameId`` (same-process frames) or in its own child session
(out-of-process frames, attached by the recorder's ``Target.setAutoAttach``). Each frame
tree hangs under its ``<iframe>`` owner (``DOM.getFrameOwner``), and its refs get the
frame's prefix (``f1e4``), stable for as long as the frame lives.
"""

from __future__ import annotations

import logging
from typing import Any

from bridge.errors import BridgeError
from bridge.tools.snapshot_render import FrameTree, render
from bridge.tools.targets import FrameInfo, TabState

__all__ = ["take_snapshot"]

log = logging.getLogger(__name__)

MAX_FRAME_DEPTH = 5  # iframes inside iframes: deeper ones are left out of the snapshot


async def take_snapshot(state: TabState, *, max_chars: int | None = None) -> str:
    """The snapshot text; afterwards refs in it resolve through ``state``."""
    frames: dict[str, FrameInfo] = {"": FrameInfo("", None)}
    tree = await _frame_tree(state, frames, prefix="", session_id=None, frame_id=None, depth=0)
    state.frames = frames
    return render(tree, state.refs, max_chars=max_chars)


async def _frame_tree(
    state: TabState,
    frames: dict[str, FrameInfo],
    *,
    prefix: str,
    session_id: str | None,
    frame_id: str | None,
    depth: int,
) -> FrameTree:
    tab = state.tab
    params: dict[str, Any] = {"frameId": frame_id} if frame_id else {}
    nodes = (await tab.send("Accessibility.getFullAXTree", params, session_id=session_id))["nodes"]
    tree = FrameTree(nodes, prefix)
    if depth >= MAX_FRAME_DEPTH:
        return tree
    for child_id in await _child_frames(state, session_id, frame_id):
        try:
            owner = await tab.send(
                "DOM.getFrameOwner", {"frameId": child_id}, session_id=session_id
            )
        except BridgeError as exc:  # the frame went away meanwhile
            log.debug("frame %s has no owner: %s", child_id, exc)
            continue
        owner_id = int(owner["backendNodeId"])
        child_prefix = state.frame_prefix(child_id)
        child_session = state.recorder.child_sessions.get(child_id)
        try:
            if child_session is not None:  # out of process: its own session
                child = await _frame_tree(
                    state,
                    frames,
                    prefix=child_prefix,
                    session_id=child_session,
                    frame_id=None,
                    depth=depth + 1,
                )
            else:
                child = await _frame_tree(
                    state,
                    frames,
                    prefix=child_prefix,
                    session_id=session_id,
                    frame_id=child_id,
                    depth=depth + 1,
                )
        except BridgeError as exc:
            log.debug("frame %s left out of the snapshot: %s", child_id, exc)
            continue
        tree.children[owner_id] = child
        frames[child_prefix] = FrameInfo(
            child_prefix,
            child_session if child_session is not None else session_id,
            parent_prefix=prefix,
            owner_backend_id=owner_id,
        )
    return tree


async def _child_frames(state: TabState, session_id: str | None, frame_id: str | None) -> list[str]:
    """Frame ids of the frames directly inside ``frame_id`` (the session's root if None),
    in-process ones from the frame tree, out-of-process ones from the child sessions."""
    root = (await state.tab.send("Page.getFrameTree", session_id=session_id))["frameTree"]
    node = root if frame_id is None else _find(root, frame_id)
    found = [str(c["frame"]["id"]) for c in (node or {}).get("childFrames", [])]
    if frame_id is None and session_id is None:
        # Out-of-process iframes of the main frame, in case its frame tree omits them.
        found += [f for f in state.recorder.child_sessions if f not in found]
    return found


def _find(node: dict[str, Any], frame_id: str) -> dict[str, Any] | None:
    stack = [node]
    while stack:
        current = stack.pop()
        if current["frame"]["id"] == frame_id:
            return current
        stack.extend(current.get("childFrames", []))
    return None
