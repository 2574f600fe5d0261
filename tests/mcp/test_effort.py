"""The thinking effort through a real MCP client over stdio (docs/sites.md#effort).

``python -m bridge.mcp`` runs as a subprocess with its own headless Chromium and the fake
sites mapped in (tests/mcp/stdio.py); the fakes record what each question was sent with.
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


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stdio_server(
    fake_sites: FakeSites, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Client]:
    state = tmp_path_factory.mktemp("mcp-effort")
    async for client in owned(lambda: stdio.stdio_server(fake_sites, state)):
        yield client


def _text(result: Any) -> str:
    return str(result.content[0].text)


async def test_each_ask_tool_takes_its_own_sites_option(stdio_server: Client) -> None:
    tools = {t.name: t for t in (await stdio_server.list_tools()).tools}
    chatgpt = tools["ask_chatgpt_web"].input_schema["properties"]
    gemini = tools["ask_gemini_web"].input_schema["properties"]
    assert "effort_unavailable" in chatgpt["effort"]["description"]
    assert "deep_think" not in chatgpt and "effort" not in gemini
    assert "deep_think" in gemini
    both = tools["ask_chatgpt_gemini_web"].input_schema["properties"]
    assert {"chatgpt_effort", "gemini_deep_think"} <= set(both)


async def test_chatgpt_is_asked_at_the_tier_chosen(stdio_server: Client, fakes: FakeSites) -> None:
    result = await stdio_server.call_tool(
        "ask_chatgpt_web",
        {"question": "How hard is this?", "new_chat": True, "effort": "extra high"},
    )
    assert not result.is_error, _text(result)
    assert fakes.chatgpt.records[-1].effort == "max"  # the body's thinking_effort (C13.6)
    used = (result.structured_content or {})["used"]
    assert used["effort"]["label"] == "Extra High" and used["effort"]["tier"] == "max"
    assert used["model"] == "gpt-5-5-thinking"


async def test_a_tier_that_cannot_be_confirmed_is_an_error_with_nothing_sent(
    stdio_server: Client, fakes: FakeSites
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(mode_sticks=False))
    result = await stdio_server.call_tool(
        "ask_chatgpt_web", {"question": "Hello?", "new_chat": True, "effort": "high"}
    )
    assert result.is_error
    assert "[effort_unconfirmed]" in _text(result)
    assert fakes.chatgpt.records == []


async def test_a_tier_the_menu_lacks_names_the_offered_ones(
    stdio_server: Client, fakes: FakeSites
) -> None:
    result = await stdio_server.call_tool(
        "ask_chatgpt_web", {"question": "Hello?", "new_chat": True, "effort": "turbo"}
    )
    assert result.is_error
    text = _text(result)
    assert "[effort_unavailable]" in text and "Extra High" in text
    assert fakes.chatgpt.records == []


async def test_gemini_is_asked_with_deep_think_and_answers_after_its_placeholder(
    stdio_server: Client, fakes: FakeSites
) -> None:
    result = await stdio_server.call_tool(
        "ask_gemini_web",
        {"question": "Prove that √2 is irrational.", "new_chat": True, "deep_think": True},
    )
    assert not result.is_error, _text(result)
    record = fakes.gemini.records[-1]
    assert record.deep_think is True  # the fake page's own marker of Deep Think on
    content = result.structured_content or {}
    assert content["used"]["deep_think"] is True
    assert "I'm on it" not in content["answer"]  # the placeholder reply (G10.2) is no answer
    assert record.answer.splitlines()[-1] in content["answer"]


async def test_deep_think_not_offered_is_an_error_with_nothing_sent(
    stdio_server: Client, fakes: FakeSites
) -> None:
    fakes.gemini.set_behaviour(Behaviour(deep_think="absent"))
    result = await stdio_server.call_tool(
        "ask_gemini_web", {"question": "Hello?", "new_chat": True, "deep_think": True}
    )
    assert result.is_error
    assert "[effort_unavailable]" in _text(result) and "no Deep Think" in _text(result)
    assert fakes.gemini.records == []
