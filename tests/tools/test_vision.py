"""The vision and record families and the richer screenshots, in real Chromium through the
extension, on a local page whose boxes are where the test put them: input by coordinates
lands there, scrolling moves the page, a zoom is the region's size times its factor, and a
recorded click comes back as a GIF with its marker (bridge.tools.operations.vision,
.recording, .reading)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PIL import Image

from bridge.errors import BridgeError, GifRecordingError, PathNotAllowed, PointOutsideViewport
from bridge.tools.browsing import BrowserTools, ToolHub, ToolSettings
from bridge.tools.operations.reading import _screencast_frame
from tests.tools.vision_site import serve_vision_page

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def page() -> Iterator[str]:
    yield from serve_vision_page()


async def centre(tools: BrowserTools, selector: str) -> tuple[float, float]:
    box: dict[str, float] = await tools.evaluate(
        f"() => {{ const r = document.querySelector({selector!r}).getBoundingClientRect();"
        " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; }"
    )
    return box["x"], box["y"]


async def js(tools: BrowserTools, expression: str) -> Any:
    return await tools.evaluate(f"() => {expression}")


def image_size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        return image.size


async def test_a_click_at_a_buttons_centre_clicks_it(tools: BrowserTools, page: str) -> None:
    await tools.navigate(page)
    x, y = await centre(tools, "#b")
    report = await tools.mouse_click_xy(x, y, element="the Press button")
    assert "Clicked at" in report.to_text() and "the Press button" in report.to_text()
    assert await js(tools, "log.textContent") == "click1;"
    await tools.mouse_click_xy(x, y, click_count=2)
    assert await js(tools, "log.textContent") == "click1;click1;click2;"
    # Beside the button: nothing is clicked.
    await tools.mouse_click_xy(x + 200, y + 200)
    assert await js(tools, "log.textContent") == "click1;click1;click2;"


async def test_points_outside_the_viewport_are_refused(tools: BrowserTools, page: str) -> None:
    await tools.navigate(page)
    width = await js(tools, "innerWidth")
    with pytest.raises(PointOutsideViewport, match="outside the viewport"):
        await tools.mouse_click_xy(width + 10, 10)
    with pytest.raises(PointOutsideViewport):
        await tools.mouse_drag_xy(10, 10, 10, -5)


async def test_a_drag_moves_a_slider(tools: BrowserTools, page: str) -> None:
    await tools.navigate(page)
    _, y = await centre(tools, "#s")
    await tools.mouse_drag_xy(52, y, 349, y)
    assert int(await js(tools, "document.querySelector('#s').value")) > 80


async def test_moving_the_mouse_hovers(tools: BrowserTools, page: str) -> None:
    await tools.navigate(page)
    await js(
        tools, "(window.over = '', document.querySelector('#red').onmouseover = () => over = 'red')"
    )
    await tools.mouse_move_xy(320, 70)
    assert await js(tools, "over") == "red"


async def test_scrolling_moves_the_page_and_brings_a_target_into_view(
    tools: BrowserTools, page: str
) -> None:
    await tools.navigate(page)
    report = await tools.scroll("down", 500)
    assert await js(tools, "scrollY") == 500
    assert report.extra["scroll_y"] == 500
    await tools.scroll("up", 500)
    assert await js(tools, "scrollY") == 0
    await tools.scroll("down", "page")  # most of a viewport: a line of context stays
    assert await js(tools, "scrollY") == round(0.9 * await js(tools, "innerHeight"))
    report = await tools.scroll(target="#far")
    top = await js(tools, "document.querySelector('#far').getBoundingClientRect().top")
    assert 0 <= top < await js(tools, "innerHeight")
    assert report.extra["scroll_y"] > 2000


async def test_a_zoom_is_the_region_enlarged(tools: BrowserTools, page: str) -> None:
    await tools.navigate(page)
    await tools.scroll("down", 30)  # a scrolled page: the region is still viewport pixels
    data, info = await tools.zoom(300, 20, 80, 40, scale=2)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert image_size(data) == (160, 80) == (info["image_width"], info["image_height"])
    with Image.open(io.BytesIO(data)) as image:
        rgb = image.convert("RGB")
        assert rgb.getpixel((40, 40))[:3] == (255, 0, 0)  # the red box's half
        assert rgb.getpixel((120, 40))[:3] == (0, 0, 255)  # the blue box's half
    # The person's page zoom is untouched.
    assert await js(tools, "devicePixelRatio") == 1


async def test_screenshot_types_and_max_size(tools: BrowserTools, page: str) -> None:
    await tools.navigate(page)
    jpeg = await tools.capture(type="jpeg", quality=50)
    assert jpeg.format == "jpeg" and jpeg.data[:3] == b"\xff\xd8\xff"
    webp = await tools.capture(type="webp")
    assert webp.data[:4] == b"RIFF" and webp.data[8:12] == b"WEBP"
    small = await tools.capture(max_size=200)
    width, height = image_size(small.data)
    assert max(width, height) == 200 and small.scale is not None
    # The viewport without its scrollbar, scaled by the factor the result names.
    assert width == round(await js(tools, "document.documentElement.clientWidth") * small.scale)
    full = await tools.capture(full_page=True, max_size=300, type="jpeg")
    assert max(image_size(full.data)) <= 300
    # Never scaled up: an element smaller than max_size keeps its size.
    box = await tools.capture(target="#red", max_size=1000)
    assert image_size(box.data) == (40, 40)
    # The default is what it was: a PNG of the viewport, no scale named.
    data, kind = await tools.screenshot()
    assert kind == "png" and data[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="quality"):
        await tools.capture(quality=10)


async def test_a_screenshot_is_saved_only_under_an_allowed_folder(
    tools: BrowserTools, page: str, tmp_path: Path
) -> None:
    tools.hub.files = tools.hub.files.allowing(tmp_path)  # as with --allow-path <tmp_path>
    await tools.navigate(page)
    shot = await tools.capture(type="jpeg", filename=str(tmp_path / "shot.jpg"))
    assert shot.path == tmp_path / "shot.jpg" and shot.path.read_bytes() == shot.data
    again = await tools.capture(filename=str(tmp_path / "shot.jpg"))  # never overwritten
    assert again.path == tmp_path / "shot (1).jpg"
    # An attacker's names (a page told the agent to save "there"): refused, nothing written.
    for name in ("../escaped.png", str(tmp_path / ".." / "escaped.png"), "/etc/cron.d/x"):
        with pytest.raises(PathNotAllowed):
            await tools.capture(filename=name)
    assert not (tmp_path.parent / "escaped.png").exists()


def gif_frames(data: bytes) -> list[Image.Image]:
    with Image.open(io.BytesIO(data)) as image:
        frames = []
        for n in range(image.n_frames):
            image.seek(n)
            frames.append(image.convert("RGB"))
        return frames


def reddish(pixel: tuple[int, ...]) -> bool:
    r, g, b = pixel[:3]
    return r > 190 and g < 90 and b < 90


async def test_a_recorded_click_is_a_gif_with_its_marker(
    tools: BrowserTools, page: str, tmp_path: Path
) -> None:
    tools.hub.files = tools.hub.files.allowing(tmp_path)
    await tools.navigate(page)
    started = await tools.record_gif("start_recording")
    assert started["recording"] is True
    x, y = await centre(tools, "#b")
    for n in range(1, 5):
        await tools.mouse_click_xy(x, y)
        await tools.wait(text="click1;" * n)
    await tools.click("#b")  # the browser group's click is marked too
    await tools.wait(text="click1;" * 5)
    stopped = await tools.record_gif("stop_recording")
    assert stopped["recording"] is False and stopped["clicks"] == 5
    # A frame for each change of the page: every frame acknowledged (unacknowledged, Chrome
    # stops sending after the first few).
    assert stopped["frames"] >= 6, stopped
    exported = await tools.record_gif("export", filename=str(tmp_path / "flow.gif"))
    path = Path(exported["path"])
    assert path == tmp_path / "flow.gif"
    data = path.read_bytes()
    assert data[:6] == b"GIF89a"
    frames = gif_frames(data)
    assert len(frames) > 1
    inner = await js(tools, "innerWidth")
    px, py = round(x * frames[0].width / inner), round(y * frames[0].width / inner)
    assert not reddish(frames[0].getpixel((px, py)))  # before the click: the plain button
    assert any(reddish(f.getpixel((px, py))) for f in frames[1:])
    # The page's change shows: the log's text (at 10,150 CSS) was drawn after the click.
    lx, ly = round(14 * frames[0].width / inner), round(150 * frames[0].width / inner)
    region = (lx, ly, lx + round(60 * frames[0].width / inner), ly + 20)
    first, last = frames[0].crop(region), frames[-1].crop(region)
    assert first.getextrema() != last.getextrema()
    # Cleared: nothing left to export.
    await tools.record_gif("clear")
    with pytest.raises(GifRecordingError, match="no frames"):
        await tools.record_gif("export", filename=str(tmp_path / "empty.gif"))


async def test_an_export_outside_allowed_folders_is_refused(
    tools: BrowserTools, page: str, tmp_path: Path
) -> None:
    await tools.navigate(page)
    with pytest.raises(GifRecordingError, match="start_recording first"):
        await tools.record_gif("export")
    await tools.record_gif("start_recording")
    await tools.mouse_click_xy(*(await centre(tools, "#b")))
    await tools.record_gif("stop_recording")
    for name in ("../evil.gif", "/etc/evil.gif", str(tmp_path / "evil.gif"), "~/.ssh/x.gif"):
        with pytest.raises(PathNotAllowed):
            await tools.record_gif("export", filename=name)
    assert not (tmp_path / "evil.gif").exists()


async def test_a_recording_ends_when_the_client_leaves_or_the_tab_closes(
    hub: ToolHub, page: str
) -> None:
    tools = hub.client("recorder")
    await tools.navigate(page)
    await tools.record_gif("start_recording")
    state = hub.states[tools.current or 0]
    assert state.click_watchers and state.screencasting is not None
    await hub.leave("recorder")
    assert not state.click_watchers and state.screencasting is None
    with pytest.raises(GifRecordingError):
        await tools.record_gif("stop_recording")
    # The tab closing ends it too; its frames stay for an export.
    other = hub.client("recorder-2")
    await other.navigate(page)
    await other.record_gif("start_recording")
    closing = other.current or 0
    await hub.browser.close_tab(closing)
    await other.tabs("list")
    status = await other.record_gif("stop_recording")
    assert status["recording"] is False
    assert not hub.states[closing].click_watchers


async def test_a_click_by_coordinates_reports_what_it_changed(
    tools: BrowserTools, page: str
) -> None:
    await tools.navigate(page)
    report = await tools.mouse_click_xy(*(await centre(tools, "#alert")))
    assert report.dialog is not None and report.dialog["message"] == "Saved!"
    await tools.handle_dialog(True)
    report = await tools.mouse_click_xy(*(await centre(tools, "#next")))
    assert report.url_changed and report.url.endswith("#second")


async def test_a_page_that_never_stops_drawing_cannot_fill_memory(
    tools: BrowserTools, page: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hostile (or just animated) page changes every frame: the recording keeps a bounded
    number of frames and counts the rest."""
    monkeypatch.setattr("bridge.tools.screencast.MAX_FRAMES", 5)
    await tools.navigate(page)
    await tools.record_gif("start_recording")
    await tools.evaluate("() => spin(120)")
    await tools.wait(text="ticks:120")
    status = await tools.record_gif("stop_recording")
    assert status["frames"] == 5 and status["dropped_frames"] > 0
    assert "only the first" in status["note"]


async def test_a_background_screenshot_during_a_recording_uses_its_latest_frame() -> None:
    """The fallback for a background tab starts and stops a screencast of its own, which
    would end a recording's: while one runs, its latest frame is the screenshot."""
    state: Any = SimpleNamespace(screencasting=lambda: b"\xff\xd8\xff frame")
    assert await _screencast_frame(state) == (b"\xff\xd8\xff frame", "jpeg")
    state.screencasting = lambda: None  # no frame yet: a clear error, no second screencast
    with pytest.raises(BridgeError, match="GIF recording"):
        await _screencast_frame(state)


async def test_with_codegen_each_action_gives_its_playwright_line(
    tools: BrowserTools, page: str
) -> None:
    tools.hub.settings = ToolSettings(codegen="python")  # as with --codegen python
    await tools.navigate(page)
    x, y = await centre(tools, "#b")
    report = await tools.mouse_click_xy(x, y)
    assert report.code == [f"page.mouse.click({x:g}, {y:g})"]
    report = await tools.scroll("down", 200)
    assert report.code and report.code[-1] == "page.mouse.wheel(0, 200)"
    report = await tools.scroll(target="#far")
    assert report.code and report.code[0].endswith(".scroll_into_view_if_needed()")


async def test_one_recording_per_tab(hub: ToolHub, page: str) -> None:
    first, second = hub.client("first"), hub.client("second")
    await first.navigate(page)
    await first.record_gif("start_recording")
    assert (await first.record_gif("start_recording"))["note"] == "already recording"
    with pytest.raises(GifRecordingError, match="another client is recording"):
        await second.record_gif("start_recording", tab=first.current)
    await first.record_gif("stop_recording")
    assert (await second.record_gif("start_recording", tab=first.current))["recording"]
    await hub.leave("second")
