"""Generated images and files through a real MCP client over stdio (docs/mcp.md#outputs).

``python -m bridge.mcp`` runs as a subprocess with its own headless Chromium and the fake
sites mapped in (tests/mcp/stdio.py): an image comes back as image content plus its path, a
file as a resource link with its name, size and type, a refused download as the error.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client

from bridge.fakes import Behaviour, FakeSites
from bridge.fakes.images import png
from tests.mcp import stdio
from tests.mcp.stdio import owned

pytestmark = pytest.mark.e2e


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stdio_server(
    fake_sites: FakeSites, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Client]:
    state = tmp_path_factory.mktemp("mcp-outputs")
    async for client in owned(lambda: stdio.stdio_server(fake_sites, state)):
        yield client


def _of(result: Any, kind: str) -> list[Any]:
    return [c for c in result.content if c.type == kind]


async def test_a_generated_image_comes_back_as_image_content_and_its_path(
    stdio_server: Client, fakes: FakeSites
) -> None:
    fakes.chatgpt.queue(Behaviour(image=True))
    result = await stdio_server.call_tool(
        "ask_chatgpt_web", {"question": "Draw a red kite.", "new_chat": True}
    )
    assert not result.is_error, result.content[0].text
    expected = png(fakes.chatgpt.records[-1].id)
    [image] = _of(result, "image")
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data) == expected
    [saved] = (result.structured_content or {})["used"]["outputs"]
    assert saved["kind"] == "image" and saved["bytes"] == len(expected)
    assert Path(saved["path"]).read_bytes() == expected
    assert any(saved["path"] in c.text for c in _of(result, "text"))
    # A job's outputs go in a folder named after the job, under the state directory.
    job = (result.structured_content or {})["job"]
    assert Path(saved["path"]).parent.name == job
    assert Path(saved["path"]).parent.parent.name == "outputs"


async def test_a_generated_file_comes_back_as_a_resource_link(
    stdio_server: Client, fakes: FakeSites, tmp_path: Path
) -> None:
    fakes.chatgpt.queue(Behaviour(files=("summary.csv",)))
    result = await stdio_server.call_tool(
        "ask_chatgpt_web",
        {"question": "Summarise as CSV.", "new_chat": True, "outputs_dir": str(tmp_path)},
    )
    assert not result.is_error, result.content[0].text
    [link] = _of(result, "resource_link")
    body = b"name,value\nsummary.csv,11\n"
    assert (link.name, link.size, link.mime_type) == ("summary.csv", len(body), "text/csv")
    assert link.uri == (tmp_path / "summary.csv").as_uri()
    assert (tmp_path / "summary.csv").read_bytes() == body


async def test_a_refused_download_is_the_calls_error(
    stdio_server: Client, fakes: FakeSites, tmp_path: Path
) -> None:
    fakes.chatgpt.queue(Behaviour(files=("plot.csv",), download="refused"))
    result = await stdio_server.call_tool(
        "ask_chatgpt_web",
        {"question": "Plot it.", "new_chat": True, "outputs_dir": str(tmp_path)},
    )
    assert result.is_error
    text = result.content[0].text
    assert "[download_refused]" in text and "'plot.csv'" in text and "expired" in text
    assert list(tmp_path.iterdir()) == []


async def test_a_protected_outputs_folder_is_refused_with_nothing_sent(
    stdio_server: Client, fakes: FakeSites
) -> None:
    result = await stdio_server.call_tool(
        "ask_chatgpt_web",
        {"question": "Draw.", "new_chat": True, "outputs_dir": str(Path.home() / ".ssh")},
    )
    assert result.is_error
    assert "[outputs_folder_refused]" in result.content[0].text
    assert fakes.chatgpt.records == []
