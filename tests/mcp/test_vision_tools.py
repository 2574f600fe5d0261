"""The vision and record groups, and browser_screenshot's new options, over MCP (the
in-memory client, real Chromium with the extension): what an agent sends and gets back."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from PIL import Image

from bridge.app.facade import Bridge
from bridge.mcp.server import build_server
from tests.tools.vision_site import serve_vision_page

pytestmark = pytest.mark.e2e

GROUPS = ("browser", "vision", "record")


@pytest.fixture(scope="module")
def page() -> Iterator[str]:
    yield from serve_vision_page()


@pytest.fixture
def allowed(bridge: Bridge, tmp_path: Path) -> Iterator[Path]:
    """tmp_path allowed for writes, as with --allow-path <tmp_path>, for this test only."""
    before = bridge.file_policy
    bridge.file_policy = before.allowing(tmp_path)
    yield tmp_path
    bridge.file_policy = before


def _ok(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    return result


async def _eval(client: Client, function: str) -> Any:
    result = _ok(await client.call_tool("browser_evaluate", {"function": function}))
    return json.loads(result.content[0].text)


async def test_an_agent_clicks_zooms_and_screenshots_by_pixels(bridge: Bridge, page: str) -> None:
    async with Client(build_server(lambda: bridge, groups=GROUPS)) as client:
        _ok(await client.call_tool("browser_navigate", {"url": page}))
        clicked = _ok(
            await client.call_tool(
                "browser_mouse_click_xy", {"x": 160, "y": 100, "element": "Press button"}
            )
        )
        assert "Clicked at (160, 100) (Press button)" in clicked.content[0].text
        assert await _eval(client, "() => log.textContent") == "click1;"
        # include_snapshot: the page after the click, as the browser group's tools give it.
        again = _ok(
            await client.call_tool(
                "browser_mouse_click_xy", {"x": 160, "y": 100, "include_snapshot": True}
            )
        )
        assert "### Snapshot" in again.content[0].text and "Press" in again.content[0].text
        zoomed = _ok(
            await client.call_tool(
                "browser_zoom", {"x": 300, "y": 50, "width": 80, "height": 40, "scale": 3}
            )
        )
        image, text = zoomed.content
        assert image.type == "image" and image.mime_type == "image/png"
        with Image.open(io.BytesIO(base64.b64decode(image.data))) as shot:
            assert shot.size == (240, 120)
        assert "×3" in text.text and zoomed.structured_content["image_width"] == 240
        # The default screenshot is what it always was: one PNG, nothing else.
        plain = _ok(await client.call_tool("browser_screenshot", {}))
        assert [c.type for c in plain.content] == ["image"]
        assert plain.content[0].mime_type == "image/png"
        small = _ok(await client.call_tool("browser_screenshot", {"type": "jpeg", "max_size": 300}))
        assert small.content[0].mime_type == "image/jpeg"
        data = base64.b64decode(small.content[0].data)
        assert data[:3] == b"\xff\xd8\xff"
        with Image.open(io.BytesIO(data)) as shot:
            assert max(shot.size) == 300
        assert "divide its pixel coordinates" in small.content[1].text
        outside = await client.call_tool("browser_mouse_click_xy", {"x": 99999, "y": 1})
        assert outside.is_error and "[point_outside_viewport]" in outside.content[0].text


async def test_an_agent_records_a_gif_and_cannot_write_it_outside(
    bridge: Bridge, page: str, allowed: Path
) -> None:
    async with Client(build_server(lambda: bridge, groups=GROUPS)) as client:
        _ok(await client.call_tool("browser_navigate", {"url": page}))
        _ok(await client.call_tool("browser_record_gif", {"action": "start_recording"}))
        _ok(await client.call_tool("browser_mouse_click_xy", {"x": 160, "y": 100}))
        _ok(await client.call_tool("browser_wait", {"text": "click1;"}))
        stopped = _ok(await client.call_tool("browser_record_gif", {"action": "stop_recording"}))
        assert stopped.structured_content["clicks"] == 1
        refused = await client.call_tool(
            "browser_record_gif", {"action": "export", "filename": "../../escape.gif"}
        )
        assert refused.is_error and "[path_not_allowed]" in refused.content[0].text
        exported = _ok(
            await client.call_tool(
                "browser_record_gif",
                {"action": "export", "filename": str(allowed / "run.gif")},
            )
        )
        path = Path(exported.structured_content["path"])
        assert path == allowed / "run.gif" and path.read_bytes()[:6] == b"GIF89a"
