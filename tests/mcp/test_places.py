"""Where to ask through a real MCP client over stdio (docs/sites.md#where).

``python -m bridge.mcp`` runs as a subprocess with its own headless Chromium and the fake
sites mapped in (tests/mcp/stdio.py); the fakes record where each question arrived.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client

from bridge.fakes import Behaviour, FakeSites
from tests.mcp import stdio
from tests.mcp.stdio import owned

pytestmark = pytest.mark.e2e

PROJECT = "g-p-0123456789abcdef0123456789abcdef"


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stdio_server(
    fake_sites: FakeSites, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Client]:
    state = tmp_path_factory.mktemp("mcp-places")
    async for client in owned(lambda: stdio.stdio_server(fake_sites, state)):
        yield client


def _text(result: Any) -> str:
    return str(result.content[0].text)


async def test_the_ask_tools_take_the_places(stdio_server: Client) -> None:
    tools = {t.name: t for t in (await stdio_server.list_tools()).tools}
    for name in ("ask_chatgpt_web", "ask_gemini_web"):
        props = tools[name].input_schema["properties"]
        assert {"conversation", "project", "gpt", "gem", "temporary"} <= set(props)
        assert "place_not_found" in props["project"]["description"]
    both = tools["ask_chatgpt_gemini_web"].input_schema["properties"]
    assert {"chatgpt_conversation", "gemini_conversation", "project", "gem", "temporary"} <= set(
        both
    )


async def test_a_project_and_a_temporary_chat_reach_the_site(
    stdio_server: Client, fakes: FakeSites
) -> None:
    fakes.chatgpt.add_place(PROJECT)
    result = await stdio_server.call_tool(
        "ask_chatgpt_gemini_web",
        {"question": "Where is this asked?", "project": PROJECT, "temporary": False},
    )
    assert not result.is_error, _text(result)
    assert fakes.chatgpt.records[-1].place == PROJECT  # conversation_mode.gizmo_id (C12.2)
    assert fakes.gemini.records[-1].place == ""  # the project is ChatGPT's side only
    data = result.structured_content or {}
    assert data["chatgpt"]["used"]["place"]["kind"] == "project"
    result = await stdio_server.call_tool(
        "ask_chatgpt_web", {"question": "Is this temporary?", "temporary": True}
    )
    assert not result.is_error, _text(result)
    assert fakes.chatgpt.records[-1].temporary
    assert (result.structured_content or {})["used"]["temporary"] is True


async def test_a_missing_place_and_a_bad_form_send_nothing(
    stdio_server: Client, fakes: FakeSites
) -> None:
    result = await stdio_server.call_tool(
        "ask_chatgpt_web",
        {"question": "Hello?", "project": "g-p-ffffffffffffffffffffffffffffffff"},
    )
    assert result.is_error and "[place_not_found]" in _text(result), _text(result)
    result = await stdio_server.call_tool(
        "ask_chatgpt_web",
        {"question": "Hello?", "conversation": "https://evil.example/c/1"},
    )
    assert result.is_error and "bridge opens no other host" in _text(result), _text(result)
    result = await stdio_server.call_tool(
        "ask_gemini_web", {"question": "Hello?", "project": PROJECT}
    )
    assert result.is_error and "chatgpt place" in _text(result), _text(result)
    result = await stdio_server.call_tool(
        "ask_gemini_web", {"question": "Hello?", "gem": "4221cfdd4fe7"}
    )
    assert result.is_error and "[place_not_found]" in _text(result), _text(result)
    fakes.gemini.set_behaviour(Behaviour(temporary_chat=False))  # no temporary-chat button
    result = await stdio_server.call_tool(
        "ask_gemini_web", {"question": "Hello?", "temporary": True}
    )
    assert result.is_error and "[temporary_chat_unavailable]" in _text(result), _text(result)
    assert fakes.chatgpt.records == [] and fakes.gemini.records == []
