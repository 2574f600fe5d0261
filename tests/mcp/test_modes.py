"""The site's mode through a real MCP client over stdio (docs/sites.md#modes).

``python -m bridge.mcp`` runs as a subprocess with its own headless Chromium and the fake
sites mapped in (tests/mcp/stdio.py); the fakes record the mode each question came in.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client

from bridge.fakes import FakeSites
from tests.mcp import stdio
from tests.mcp.stdio import owned

pytestmark = pytest.mark.e2e


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stdio_server(
    fake_sites: FakeSites, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Client]:
    state = tmp_path_factory.mktemp("mcp-modes")
    async for client in owned(lambda: stdio.stdio_server(fake_sites, state)):
        yield client


def _text(result: Any) -> str:
    return str(result.content[0].text)


async def test_the_ask_tools_take_a_mode_per_side(stdio_server: Client) -> None:
    tools = {t.name: t for t in (await stdio_server.list_tools()).tools}
    for name in ("ask_chatgpt_web", "ask_gemini_web"):
        assert "mode_unavailable" in tools[name].input_schema["properties"]["mode"]["description"]
    both = tools["ask_chatgpt_gemini_web"].input_schema["properties"]
    assert {"chatgpt_mode", "gemini_mode"} <= set(both)


async def test_each_side_is_asked_in_its_own_mode(stdio_server: Client, fakes: FakeSites) -> None:
    result = await stdio_server.call_tool(
        "ask_chatgpt_gemini_web",
        {
            "question": "Which mode is this?",
            "new_chat": True,
            "chatgpt_mode": "instant",
            "gemini_mode": "thinking",
        },
    )
    assert not result.is_error, _text(result)
    assert fakes.chatgpt.records[-1].mode == "gpt-5-5-instant"
    assert fakes.gemini.records[-1].mode == "thinking"
    data = result.structured_content or {}
    assert data["chatgpt"]["used"]["mode"]["label"] == "Instant"
    assert data["gemini"]["used"]["mode"]["id"] == "thinking"


async def test_an_unknown_mode_is_an_error_naming_the_offered_ones(
    stdio_server: Client, fakes: FakeSites
) -> None:
    result = await stdio_server.call_tool(
        "ask_gemini_web", {"question": "Hello?", "new_chat": True, "mode": "ultra"}
    )
    assert result.is_error
    text = _text(result)
    assert "[mode_unavailable]" in text and "Fast" in text and "Thinking" in text
    assert fakes.gemini.records == []
