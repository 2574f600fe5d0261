"""The vision tools' arithmetic, pure (bridge.tools.pixels_core)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.errors import PointOutsideViewport
from bridge.tools.pixels_core import (
    MAX_ZOOM_SIDE,
    Viewport,
    check_point,
    click_code,
    drag_code,
    scroll_delta,
    shot_scale,
    wheel_code,
    zoom_clip,
)

VIEW = Viewport(800, 600, page_x=0, page_y=1000, dpr=1)


def test_viewport_from_layout_metrics_with_a_device_pixel_ratio() -> None:
    metrics = {
        "cssVisualViewport": {"clientWidth": 800, "clientHeight": 600, "pageX": 5, "pageY": 70},
        "cssLayoutViewport": {"clientWidth": 800, "clientHeight": 600},
        "layoutViewport": {"clientWidth": 1600, "clientHeight": 1200},
    }
    assert Viewport.from_metrics(metrics) == Viewport(800, 600, 5, 70, 2.0)
    assert Viewport.from_metrics({}).dpr == 1.0


def test_points_outside_the_viewport_are_refused_with_its_size() -> None:
    check_point(0, 0, VIEW)
    check_point(799.5, 599, VIEW)
    for x, y in ((800, 10), (-1, 10), (10, 600)):
        with pytest.raises(PointOutsideViewport, match="800×600 CSS pixels"):
            check_point(x, y, VIEW)


def test_scroll_deltas() -> None:
    assert scroll_delta("down", 300, VIEW) == (0, 300)
    assert scroll_delta("up", 300, VIEW) == (0, -300)
    assert scroll_delta("right", "page", VIEW) == (720, 0)
    assert scroll_delta("left", "page", VIEW) == (-720, 0)
    assert scroll_delta("down", "page", VIEW) == (0, 540)
    with pytest.raises(ValueError, match="positive"):
        scroll_delta("down", 0, VIEW)
    with pytest.raises(ValueError, match="direction"):
        scroll_delta("sideways", 10, VIEW)  # type: ignore[arg-type]


@given(
    st.floats(1, 20000),
    st.floats(1, 20000),
    st.sampled_from([1.0, 1.5, 2.0, 3.0]),
    st.integers(1, 10000),
)
def test_a_bounded_shot_never_exceeds_max_size_and_is_never_enlarged(
    width: float, height: float, dpr: float, max_size: int
) -> None:
    scale = shot_scale(width, height, dpr, max_size)
    assert 0 < scale <= 1
    assert max(width, height) * dpr * scale <= max_size + 1e-6


def test_no_max_size_keeps_scale_one() -> None:
    assert shot_scale(5000, 100, 2, None) == 1.0
    with pytest.raises(ValueError):
        shot_scale(10, 10, 1, 0)


def test_zoom_clip_is_in_document_coordinates_and_sized_by_the_factor() -> None:
    zoom = zoom_clip(100, 50, 200, 100, VIEW, 3)
    assert zoom.clip == {"x": 100, "y": 1050, "width": 200, "height": 100, "scale": 3}
    assert zoom.image_size == (600, 300)
    on_retina = zoom_clip(0, 0, 100, 100, Viewport(800, 600, dpr=2), 2)
    assert on_retina.clip["scale"] == 1  # ×2 in image pixels on a 2× screen
    assert on_retina.image_size == (200, 200)


def test_zoom_clamps_to_the_viewport_and_bounds_the_image() -> None:
    zoom = zoom_clip(700, 500, 300, 300, VIEW, 2)
    assert zoom.region == (700, 500, 100, 100)
    huge = zoom_clip(0, 0, 800, 600, VIEW, 10)
    assert max(huge.image_size) <= MAX_ZOOM_SIDE
    with pytest.raises(PointOutsideViewport):
        zoom_clip(900, 0, 50, 50, VIEW, 2)
    with pytest.raises(ValueError):
        zoom_clip(0, 0, 0, 50, VIEW, 2)


def test_the_actions_as_playwright_lines() -> None:
    assert click_code(160, 100.5) == ["page.mouse.click(160, 100.5)"]
    assert click_code(1, 2, "right", 2) == ["page.mouse.click(1, 2, button='right', click_count=2)"]
    assert drag_code(1, 2, 3, 4, 5) == [
        "page.mouse.move(1, 2)",
        "page.mouse.down()",
        "page.mouse.move(3, 4, steps=5)",
        "page.mouse.up()",
    ]
    assert wheel_code(10, 20, 0, -300) == ["page.mouse.move(10, 20)", "page.mouse.wheel(0, -300)"]
