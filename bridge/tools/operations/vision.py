"""The vision family (``vision`` group, off by default): input by coordinates, for pages the
accessibility snapshot does not describe (canvas, maps, games, custom widgets), and a zoomed
look at a region of the viewport.

Coordinates are CSS pixels of the tab's visual viewport, as in a screenshot at scale 1
(``bridge.tools.pixels_core``). Input goes through ``Input.dispatchMouseEvent`` on the tab's
own session, in the frame of every action (``ToolClient._act``: navigations, dialogs, new
tabs reported); nothing here brings the tab to the front or focuses its window. A zoom is a
clipped capture at a larger scale: the person's page zoom is never touched.
"""

from __future__ import annotations

import base64
from typing import Any, Literal

from bridge.cdp.page_script import PageScript
from bridge.errors import BridgeError, BridgeTimeout
from bridge.tools.action_report import ActionReport
from bridge.tools.locating import CodeStep
from bridge.tools.operations.client import ToolClient
from bridge.tools.pixels_core import (
    Direction,
    Viewport,
    check_point,
    click_code,
    drag_code,
    move_code,
    scroll_delta,
    wheel_code,
    zoom_clip,
)
from bridge.tools.scripts import VISION_SCRIPT
from bridge.tools.targets import TabState, resolve_target
from bridge.waiting import scaled

__all__ = ["Vision"]

#: How long scrolling input caused may take to end (smooth scrolling in a person's Chrome).
SCROLL_SETTLE_S = 2.0
ZOOM_WAIT_S = 5.0
#: Intermediate pointer moves of a drag: sliders and drag handlers see a path, not a jump.
DRAG_STEPS = 5

Button = Literal["left", "right", "middle"]


async def viewport(state: TabState) -> Viewport:
    """The tab's visual viewport now (size, scroll offset, device pixel ratio)."""
    return Viewport.from_metrics(await state.tab.send("Page.getLayoutMetrics"))


async def _mouse(state: TabState, kind: str, x: float, y: float, **extra: Any) -> None:
    await state.tab.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, **extra})


class Vision(ToolClient):
    """``browser_mouse_click_xy``, ``browser_mouse_move_xy``, ``browser_mouse_drag_xy``,
    ``browser_scroll``, ``browser_zoom``."""

    async def mouse_click_xy(
        self,
        x: float,
        y: float,
        *,
        button: Button = "left",
        click_count: int = 1,
        element: str | None = None,
        tab: int | None = None,
    ) -> ActionReport:
        """Press and release ``button`` at (x, y), ``click_count`` times (2: a double click)."""
        if not 1 <= click_count <= 3:
            raise ValueError("click_count is 1, 2 (a double click) or 3")
        state = await self._state(tab)
        check_point(x, y, await viewport(state))

        async def go() -> None:
            await _mouse(state, "mouseMoved", x, y)
            state.clicked(x, y)  # a recording's marker (bridge.tools.screencast)
            for count in range(1, click_count + 1):
                common = {"button": button, "clickCount": count}
                await _mouse(state, "mousePressed", x, y, **common)
                await _mouse(state, "mouseReleased", x, y, **common)

        what = f" ({element})" if element else ""
        times = {1: "", 2: " twice", 3: " three times"}[click_count]
        step = CodeStep(lambda _: click_code(x, y, button, click_count))
        return await self._act(state, f"Clicked{times} at ({x:g}, {y:g}){what}", go, code=step)

    async def mouse_move_xy(self, x: float, y: float, tab: int | None = None) -> ActionReport:
        state = await self._state(tab)
        check_point(x, y, await viewport(state))

        async def go() -> None:
            await _mouse(state, "mouseMoved", x, y)

        step = CodeStep(lambda _: move_code(x, y))
        return await self._act(state, f"Moved the mouse to ({x:g}, {y:g})", go, code=step)

    async def mouse_drag_xy(
        self,
        start_x: float,
        start_y: float,
        end_x: float,
        end_y: float,
        tab: int | None = None,
    ) -> ActionReport:
        """Press the left button at the start, move in steps to the end, release there."""
        state = await self._state(tab)
        view = await viewport(state)
        check_point(start_x, start_y, view, "start")
        check_point(end_x, end_y, view, "end")

        async def go() -> None:
            await _mouse(state, "mouseMoved", start_x, start_y)
            press = {"button": "left", "clickCount": 1}
            await _mouse(state, "mousePressed", start_x, start_y, **press)
            for step in range(1, DRAG_STEPS + 1):
                x = start_x + (end_x - start_x) * step / DRAG_STEPS
                y = start_y + (end_y - start_y) * step / DRAG_STEPS
                await _mouse(state, "mouseMoved", x, y, button="left", buttons=1)
            await _mouse(state, "mouseReleased", end_x, end_y, **press)

        return await self._act(
            state,
            f"Dragged from ({start_x:g}, {start_y:g}) to ({end_x:g}, {end_y:g})",
            go,
            code=CodeStep(lambda _: drag_code(start_x, start_y, end_x, end_y, DRAG_STEPS)),
        )

    async def scroll(
        self,
        direction: Direction = "down",
        amount: float | Literal["page"] = "page",
        *,
        x: float | None = None,
        y: float | None = None,
        target: str | None = None,
        tab: int | None = None,
    ) -> ActionReport:
        """Turn the mouse wheel at (x, y) (default: the viewport's centre), which scrolls
        what is under it; or, with ``target``, scroll that element into view."""
        state = await self._state(tab)
        view = await viewport(state)
        if target:
            el = await resolve_target(state, target, timeout=self.timeout)

            async def into_view() -> None:
                await state.tab.send(
                    "DOM.scrollIntoViewIfNeeded",
                    {"objectId": el.object_id},
                    session_id=el.session_id,
                )
                await self._settle(state)

            step = CodeStep(lambda loc: [f"{loc[0]}.scroll_into_view_if_needed()"], ((el, target),))
            report = await self._act(state, f"Scrolled {target} into view", into_view, code=step)
            await self._where(state, report)
            return report
        wx = view.width / 2 if x is None else x
        wy = view.height / 2 if y is None else y
        check_point(wx, wy, view, "wheel position")
        dx, dy = scroll_delta(direction, amount, view)

        async def wheel() -> None:
            await _mouse(state, "mouseWheel", wx, wy, deltaX=dx, deltaY=dy)
            await self._settle(state)

        size = "a page" if amount == "page" else f"{float(amount):g}px"
        report = await self._act(
            state,
            f"Scrolled {direction} {size} at ({wx:g}, {wy:g})",
            wheel,
            code=CodeStep(lambda _: wheel_code(wx, wy, dx, dy)),
        )
        await self._where(state, report)
        return report

    async def _settle(self, state: TabState) -> None:
        """Return once the scrolling the input caused has ended (vision.js ``settle``)."""
        limit = scaled(SCROLL_SETTLE_S)
        page = PageScript(state.tab, VISION_SCRIPT)
        await page.call("settle", int(limit * 1000), timeout=limit + scaled(5.0))

    async def _where(self, state: TabState, report: ActionReport) -> None:
        view = await viewport(state)
        report.extra["scroll_x"] = view.page_x
        report.extra["scroll_y"] = view.page_y

    async def zoom(
        self,
        x: float,
        y: float,
        width: float,
        height: float,
        *,
        scale: float = 2.0,
        tab: int | None = None,
    ) -> tuple[bytes, dict[str, Any]]:
        """A PNG of the region (viewport CSS pixels) enlarged ``scale`` times, and what it
        shows (the region, the factor, the image's size)."""
        state = await self._state(tab)
        zoom = zoom_clip(x, y, width, height, await viewport(state), scale)
        try:
            shot = await state.tab.send(
                "Page.captureScreenshot",
                {"format": "png", "clip": zoom.clip},
                timeout=scaled(ZOOM_WAIT_S),
            )
        except BridgeTimeout:
            raise BridgeError(
                "Chrome rendered no frame of this background tab for a zoomed capture; open "
                "the page in a tab of its own with browser_tabs new"
            ) from None
        rx, ry, rw, rh = zoom.region
        info = {
            "region": {"x": rx, "y": ry, "width": rw, "height": rh},
            "scale": zoom.factor,
            "image_width": zoom.image_size[0],
            "image_height": zoom.image_size[1],
        }
        return base64.b64decode(shot["data"]), info
