"""The conversation tools in process (mcp.Client(server)): get_conversation and
list_conversations over the fake sites (docs/sites.md#conversations)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from bridge.app.facade import Bridge
from bridge.fakes import FakeSites
from bridge.mcp.server import build_server

pytestmark = pytest.mark.e2e

BASES = {"chatgpt": "https://chatgpt.com/c/", "gemini": "https://gemini.google.com/app/"}


def _client(bridge: Bridge) -> Client:
    return Client(build_server(lambda: bridge))


async def test_the_tools_and_their_schemas(bridge: Bridge) -> None:
    async with Client(build_server(lambda: bridge, groups=("ask",))) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"get_conversation", "list_conversations"} <= set(tools)
    read = tools["get_conversation"].input_schema
    assert read["required"] == ["provider"]
    assert "url" in read["properties"] and "list_conversations" in str(read["properties"]["url"])
    assert tools["list_conversations"].input_schema["required"] == ["provider"]
    assert tools["get_conversation"].description and tools["list_conversations"].description


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_list_then_read_a_conversation(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    site = getattr(fakes, provider)
    exchanges = [
        ("How do I reverse a list in Python?", "Use `reversed()` or:\n\n```python\nxs[::-1]\n```"),
        ("And in place?", "Call **`xs.reverse()`**."),
    ]
    conversation_id = site.create_conversation(exchanges, title="Reversing lists")
    url = BASES[provider] + conversation_id
    async with _client(bridge) as client:
        listed = await client.call_tool("list_conversations", {"provider": provider})
        assert not listed.is_error
        assert f"- [Reversing lists]({url})" in listed.content[0].text  # type: ignore[union-attr]
        data: dict[str, Any] = listed.structured_content or {}
        assert data["conversations"] == [{"title": "Reversing lists", "url": url}]

        result = await client.call_tool("get_conversation", {"provider": provider, "url": url})
    assert not result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    name = "ChatGPT" if provider == "chatgpt" else "Gemini"
    assert text.startswith("## User (1)\n\nHow do I reverse a list in Python?")
    assert f"## {name} (4)\n\nCall **`xs.reverse()`**." in text
    read: dict[str, Any] = result.structured_content or {}
    assert read["url"] == url and read["tab"] == "temporary"
    assert [(t["role"], t["markdown"]) for t in read["turns"]] == [
        (role, markdown)
        for question, answer in exchanges
        for role, markdown in (("user", question), ("assistant", answer))
    ]
    assert read["source"] == ("network" if provider == "chatgpt" else "dom")


async def test_a_wrong_url_says_what_to_give(bridge: Bridge) -> None:
    async with _client(bridge) as client:
        result = await client.call_tool(
            "get_conversation", {"provider": "gemini", "url": "https://chatgpt.com/c/abc"}
        )
    assert result.is_error
    message = result.content[0].text  # type: ignore[union-attr]
    assert "not a gemini conversation URL" in message
    assert "https://gemini.google.com/app/<id>" in message
