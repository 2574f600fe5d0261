"""The arithmetic of the vision tools and screenshots, pure: where a point lies, how far a
scroll goes, what a zoom or a bounded screenshot captures and at what scale.

Every coordinate an agent gives is a CSS pixel of the tab's visual viewport: what a
screenshot at scale 1 shows, (0, 0) its top-left corner. ``Page.captureScreenshot`` takes
its clip in document coordinates (the viewport's scroll offset added) and its output is the
clip's size times ``scale`` times the device pixel ratio, so a scale is divided by that
ratio to get image pixels of a known size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from bridge.errors import PointOutsideViewport

__all__ = [
    "MAX_ZOOM_SIDE",
    "Viewport",
    "check_point",
    "scroll_delta",
    "shot_scale",
    "zoom_clip",
]

#: A zoomed image's longest side at most (pixels): a larger factor is lowered to fit.
MAX_ZOOM_SIDE = 2000
#: One "page" of scrolling: most of the viewport, so a line of context stays in view.
PAGE_FRACTION = 0.9

Direction = Literal["up", "down", "left", "right"]


@dataclass(frozen=True)
class Viewport:
    """The visual viewport: its CSS size, its scroll offset in the document, and the device
    pixel ratio (image pixels per CSS pixel of a capture at scale 1)."""

    width: float
    height: float
    page_x: float = 0.0
    page_y: float = 0.0
    dpr: float = 1.0

    @classmethod
    def from_metrics(cls, metrics: dict[str, Any]) -> Viewport:
        """From ``Page.getLayoutMetrics``: ``cssVisualViewport`` (CSS pixels), and the
        ratio of the device-pixel ``layoutViewport`` to ``cssLayoutViewport``."""
        visual = metrics.get("cssVisualViewport") or {}
        css_layout = metrics.get("cssLayoutViewport") or {}
        device_layout = metrics.get("layoutViewport") or {}
        width = float(visual.get("clientWidth") or css_layout.get("clientWidth") or 0)
        height = float(visual.get("clientHeight") or css_layout.get("clientHeight") or 0)
        css_w = float(css_layout.get("clientWidth") or 0)
        dev_w = float(device_layout.get("clientWidth") or 0)
        dpr = dev_w / css_w if css_w > 0 and dev_w > 0 else 1.0
        return cls(
            width,
            height,
            float(visual.get("pageX") or 0),
            float(visual.get("pageY") or 0),
            dpr,
        )


def check_point(x: float, y: float, viewport: Viewport, what: str = "point") -> None:
    """PointOutsideViewport unless (x, y) lies in the viewport."""
    if 0 <= x < viewport.width and 0 <= y < viewport.height:
        return
    raise PointOutsideViewport(
        f"the {what} ({x:g}, {y:g}) is outside the viewport, which is "
        f"{viewport.width:g}×{viewport.height:g} CSS pixels (0,0 its top-left corner). "
        "Coordinates are CSS pixels of a screenshot at scale 1: take a new browser_screenshot "
        "(if it was scaled, divide its pixel coordinates by the factor it names), or scroll "
        "the content into view with browser_scroll first"
    )


def scroll_delta(
    direction: Direction, amount: float | Literal["page"], viewport: Viewport
) -> tuple[float, float]:
    """The wheel's (deltaX, deltaY) for ``amount`` CSS pixels (or a page) in ``direction``."""
    if amount == "page":
        along = viewport.height if direction in ("up", "down") else viewport.width
        pixels = float(round(along * PAGE_FRACTION))
    else:
        pixels = float(amount)
        if pixels <= 0:
            raise ValueError("amount is a positive number of CSS pixels, or 'page'")
    sign = -1 if direction in ("up", "left") else 1
    if direction in ("up", "down"):
        return 0.0, sign * pixels
    if direction in ("left", "right"):
        return sign * pixels, 0.0
    raise ValueError(f"direction is up, down, left or right, not {direction!r}")


def shot_scale(width: float, height: float, dpr: float, max_size: int | None) -> float:
    """The capture scale that makes an image of ``width``×``height`` CSS pixels at most
    ``max_size`` image pixels on its longest side: never above 1 (never enlarged)."""
    if max_size is None:
        return 1.0
    if max_size <= 0:
        raise ValueError("max_size is a positive number of pixels")
    longest = max(width, height, 1.0) * max(dpr, 0.01)
    return min(1.0, max_size / longest)


@dataclass(frozen=True)
class Zoom:
    """A zoom's capture: the clip for ``Page.captureScreenshot`` and the factor the image
    has (image pixels per CSS pixel), the requested one or less if it would be too large."""

    clip: dict[str, float]
    factor: float
    region: tuple[float, float, float, float]  # x, y, width, height after clamping

    @property
    def image_size(self) -> tuple[int, int]:
        _, _, w, h = self.region
        return round(w * self.factor), round(h * self.factor)


def zoom_clip(
    x: float, y: float, width: float, height: float, viewport: Viewport, factor: float
) -> Zoom:
    """The capture of the region (viewport CSS pixels, clamped to the viewport) enlarged by
    ``factor``; ValueError for a region with nothing of the viewport in it."""
    if width <= 0 or height <= 0:
        raise ValueError("the region's width and height are positive CSS pixels")
    if factor <= 0:
        raise ValueError("scale is a positive factor")
    left, top = max(0.0, x), max(0.0, y)
    right, bottom = min(viewport.width, x + width), min(viewport.height, y + height)
    if right <= left or bottom <= top:
        raise PointOutsideViewport(
            f"the region ({x:g}, {y:g}, {width:g}×{height:g}) has nothing of the viewport "
            f"in it, which is {viewport.width:g}×{viewport.height:g} CSS pixels: take a new "
            "browser_screenshot and pick a region inside it"
        )
    w, h = right - left, bottom - top
    factor = min(factor, MAX_ZOOM_SIDE / max(w, h))
    clip = {
        "x": left + viewport.page_x,
        "y": top + viewport.page_y,
        "width": w,
        "height": h,
        "scale": factor / max(viewport.dpr, 0.01),
    }
    return Zoom(clip, factor, (left, top, w, h))


# -- the actions as Playwright-for-Python lines (--codegen python, browser_generate_test) --


def _num(value: float) -> str:
    return f"{value:g}"


def click_code(x: float, y: float, button: str = "left", click_count: int = 1) -> list[str]:
    """``page.mouse.click(x, y, …)``: Playwright's mouse takes the same CSS pixels."""
    options = "" if button == "left" else f", button={button!r}"
    options += "" if click_count == 1 else f", click_count={click_count}"
    return [f"page.mouse.click({_num(x)}, {_num(y)}{options})"]


def move_code(x: float, y: float) -> list[str]:
    return [f"page.mouse.move({_num(x)}, {_num(y)})"]


def drag_code(sx: float, sy: float, ex: float, ey: float, steps: int) -> list[str]:
    return [
        *move_code(sx, sy),
        "page.mouse.down()",
        f"page.mouse.move({_num(ex)}, {_num(ey)}, steps={steps})",
        "page.mouse.up()",
    ]


def wheel_code(x: float, y: float, dx: float, dy: float) -> list[str]:
    """Playwright's wheel turns where the mouse is: moved there first."""
    return [*move_code(x, y), f"page.mouse.wheel({_num(dx)}, {_num(dy)})"]
