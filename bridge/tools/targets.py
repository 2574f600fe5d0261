"""Turning a tool's ``target`` into an element: a snapshot ref or a CSS selector.

A ref (``e12``, ``f1e4``) names a backend DOM node in one frame of the latest snapshot; it
stays valid while that node lives (``DOM.resolveNode`` on the backend id), and a node that
is gone is an error that says to take a new snapshot. A selector is looked up in the page,
piercing open shadow roots, and waited for (on DOM mutations) up to the action timeout.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bridge.cdp.session import CdpSession, JavaScriptError
from bridge.errors import BridgeError, CdpError
from bridge.tools.element import Element
from bridge.tools.recorder import TabRecorder
from bridge.tools.scripts import ACTIONS_SCRIPT, dom_page
from bridge.tools.snapshot_render import RefTable, parse_ref

__all__ = ["FrameInfo", "TabState", "TargetNotFound", "resolve_target"]


class TargetNotFound(BridgeError):
    """A ref, selector or text named no element of the latest snapshot; the message says
    what to do."""

    code = "target_not_found"


@dataclass(frozen=True)
class FrameInfo:
    """A frame of the latest snapshot: where its nodes live and where it sits."""

    prefix: str  # "" for the main frame, "f1", …
    session_id: str | None  # child session of an out-of-process iframe, else None
    parent_prefix: str | None = None
    owner_backend_id: int | None = None  # the <iframe> element in the parent frame


@dataclass
class TabState:
    """Everything bridge keeps about one tab for the browser tools."""

    tab: CdpSession
    recorder: TabRecorder
    refs: RefTable = field(default_factory=RefTable)
    frames: dict[str, FrameInfo] = field(default_factory=lambda: {"": FrameInfo("", None)})
    _frame_prefixes: dict[str, str] = field(default_factory=dict)
    _main_frame: str = ""
    #: Told where the pointer pressed (viewport CSS pixels), by every click the tools send:
    #: a GIF recording of the tab draws its markers there (bridge.tools.screencast).
    click_watchers: list[Callable[[float, float], None]] = field(default_factory=list)
    #: While a recording screencasts the tab: its latest frame, for a screenshot that must
    #: not start (and stop) a screencast of its own (operations.reading).
    screencasting: Callable[[], bytes | None] | None = None

    def clicked(self, x: float, y: float) -> None:
        """A click was sent at (x, y): tell whoever watches."""
        for watcher in list(self.click_watchers):
            watcher(x, y)

    @property
    def tab_id(self) -> int:
        return self.tab.tab_id

    async def main_frame_id(self) -> str:
        """The tab's main frame id (the same for the tab's life; asked once)."""
        if not self._main_frame:
            tree = await self.tab.send("Page.getFrameTree")
            self._main_frame = str(tree["frameTree"]["frame"]["id"])
        return self._main_frame

    def frame_prefix(self, frame_id: str) -> str:
        """The ref prefix of an iframe ("f1", "f2"…), the same for as long as it lives."""
        prefix = self._frame_prefixes.get(frame_id)
        if prefix is None:
            prefix = f"f{len(self._frame_prefixes) + 1}"
            self._frame_prefixes[frame_id] = prefix
        return prefix


async def resolve_target(state: TabState, target: str, *, timeout: float) -> Element:
    """The element ``target`` names (TargetNotFound with what to do when there is none)."""
    ref = parse_ref(target)
    if ref is not None:
        return await _from_ref(state, target, ref)
    return await _from_selector(state.tab, target, timeout)


async def _from_ref(state: TabState, target: str, ref: tuple[str, int]) -> Element:
    prefix, _ = ref
    located = state.refs.lookup(target)
    frame = state.frames.get(prefix)
    if located is None or frame is None:
        raise TargetNotFound(
            f"ref {target} is not in the latest snapshot of tab {state.tab_id}: take a new "
            "snapshot (browser_snapshot) and use a ref from it, or pass a CSS selector"
        )
    _, backend_id = located
    try:
        resolved = await state.tab.send(
            "DOM.resolveNode", {"backendNodeId": backend_id}, session_id=frame.session_id
        )
    except CdpError as exc:
        raise TargetNotFound(
            f"ref {target} no longer exists on the page (it changed since the snapshot): take "
            "a new snapshot (browser_snapshot)"
        ) from exc
    object_id = resolved.get("object", {}).get("objectId")
    if not object_id:
        raise TargetNotFound(f"ref {target} cannot be reached: take a new snapshot")
    element = Element(state.tab, str(object_id), frame.session_id, target)
    # A removed node can still be resolved while something holds it: it is gone all the same.
    if not await element.run(ACTIONS_SCRIPT, "isConnected"):
        raise TargetNotFound(
            f"ref {target} was removed from the page since the snapshot: take a new snapshot "
            "(browser_snapshot)"
        )
    return element


async def _from_selector(tab: CdpSession, selector: str, timeout: float) -> Element:
    """The first match (``query_selector``'s), waited for on DOM mutations up to ``timeout``."""
    try:
        object_id = await dom_page(tab).call_object(
            "waitForSelector", selector, int(timeout * 1000), timeout=timeout
        )
    except JavaScriptError as exc:
        raise TargetNotFound(
            f"{selector!r} is not a valid CSS selector or ref: {exc.detail}"
        ) from exc
    if object_id is None:
        raise TargetNotFound(
            f"no element matches {selector!r} (open shadow roots searched) within "
            f"{timeout:.0f}s; take a snapshot (browser_snapshot) to see what the page shows"
        )
    return Element(tab, object_id, None, selector)
