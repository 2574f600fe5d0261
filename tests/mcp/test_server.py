"""The MCP tools in process (mcp.Client(server)): schemas, answers, error mapping, progress."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from mcp import Client

from bridge.app.facade import Bridge
from bridge.app.tab_snapshot import TARGET_HELP
from bridge.fakes import Behaviour, FakeSites
from bridge.mcp.server import INSTRUCTIONS, build_server

pytestmark = pytest.mark.e2e

QUESTION = "How do I read files asynchronously in Python?"


def _client(bridge: Bridge) -> Client:
    return Client(build_server(lambda: bridge))


async def test_tools_and_their_schemas(bridge: Bridge) -> None:
    async with Client(build_server(lambda: bridge, groups=("ask",))) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {
        "ask_chatgpt_web",
        "ask_gemini_web",
        "ask_chatgpt_gemini_web",
        "take_cdp_snapshot",
        "get_page_dom",
        "get_conversation",
        "list_conversations",
        "get_answer",
        "list_jobs",
    }
    for name in ("ask_chatgpt_web", "ask_gemini_web", "ask_chatgpt_gemini_web"):
        schema = tools[name].input_schema
        assert schema["required"] == ["question"]
        assert schema["properties"]["new_chat"]["default"] is False
        assert schema["properties"]["max_wait"]["default"] == 50
        assert "description" in schema["properties"]["question"]
        assert tools[name].description
    assert "ask_chatgpt_gemini_web" in INSTRUCTIONS


@pytest.mark.parametrize(
    ("tool", "site"), [("ask_chatgpt_web", "chatgpt"), ("ask_gemini_web", "gemini")]
)
async def test_ask_tool_returns_the_answer_and_its_details(
    bridge: Bridge, fakes: FakeSites, tool: str, site: str
) -> None:
    async with _client(bridge) as client:
        result = await client.call_tool(tool, {"question": QUESTION, "new_chat": True})
    assert not result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith(getattr(fakes, site).records[-1].answer.splitlines()[0])
    data: dict[str, Any] = result.structured_content or {}
    assert data["answer"] == text
    assert data["url"].startswith("https://")
    assert set(data["timings"]) >= {"connect_ms", "wait_response_ms", "total_ms"}
    assert data["used"]["send_method"] == "js_click"


async def test_errors_say_what_to_do(bridge: Bridge, fakes: FakeSites) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(state="logged_out"))
    async with _client(bridge) as client:
        result = await client.call_tool("ask_chatgpt_web", {"question": QUESTION, "new_chat": True})
    assert result.is_error
    message = result.content[0].text  # type: ignore[union-attr]
    assert "[login_required]" in message and "log in to ChatGPT" in message


async def test_empty_question_is_refused_clearly(bridge: Bridge) -> None:
    async with _client(bridge) as client:
        result = await client.call_tool("ask_gemini_web", {"question": "   "})
    assert result.is_error and "empty" in result.content[0].text  # type: ignore[union-attr]


async def test_both_reports_each_side_even_when_one_fails(bridge: Bridge, fakes: FakeSites) -> None:
    fakes.gemini.queue(Behaviour(state="rate_limited"))
    async with _client(bridge) as client:
        result = await client.call_tool(
            "ask_chatgpt_gemini_web", {"question": QUESTION, "new_chat": True}
        )
    assert not result.is_error  # one answer is still an answer
    text = result.content[0].text  # type: ignore[union-attr]
    assert f"## ChatGPT\n\n{fakes.chatgpt.records[-1].answer.splitlines()[0]}" in text
    assert "## Gemini\n\n(error [rate_limited]" in text
    data = result.structured_content or {}
    assert data["gemini"]["error"]["code"] == "rate_limited"
    assert data["chatgpt"]["answer"]


async def test_progress_notifications_arrive_during_a_slow_answer(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.gemini.queue(Behaviour(chunk_chars=10, chunk_interval_ms=40))
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with _client(bridge) as client:
        result = await client.call_tool(
            "ask_gemini_web",
            {"question": QUESTION, "new_chat": True},
            progress_callback=on_progress,
        )
    assert not result.is_error
    messages = [m or "" for _, m in seen]
    assert any("characters so far" in m for m in messages)
    elapsed = [p for p, _ in seen]
    assert elapsed == sorted(elapsed)  # elapsed time only grows


async def test_snapshot_has_an_outline_and_an_image(bridge: Bridge, fakes: FakeSites) -> None:
    await bridge.ask("chatgpt", QUESTION, new_chat=True)
    async with _client(bridge) as client:
        result = await client.call_tool("take_cdp_snapshot", {"target": "chatgpt"})
    assert not result.is_error
    kinds = [c.type for c in result.content]
    assert kinds == ["text", "image"]
    assert "url: https://chatgpt.com/c/" in result.content[0].text  # type: ignore[union-attr]
    assert result.content[1].mime_type == "image/jpeg"  # type: ignore[union-attr]


async def test_page_dom_pierces_shadow_roots(bridge: Bridge, fakes: FakeSites) -> None:
    await bridge.ask("gemini", QUESTION, new_chat=True)
    # Gemini's turns are light DOM (docs/sites.md#gemini-shadow-dom); a widget of the page
    # may still keep its own in a shadow root, and the tool must find both.
    tab = await bridge.provider_tab("gemini")
    await tab.evaluate(
        "document.body.appendChild(document.createElement('div'))"
        ".attachShadow({mode: 'open'}).innerHTML = '<model-response>in a widget</model-response>'"
    )
    async with _client(bridge) as client:
        result = await client.call_tool(
            "get_page_dom", {"target": "gemini", "selector": "model-response"}
        )
    data = result.structured_content or {}
    assert data["total"] == data["shown"] == 2
    assert [item["inShadowRoot"] for item in data["items"]] == [False, True]
    async with _client(bridge) as client:
        result = await client.call_tool(
            "get_page_dom", {"target": "gemini", "selector": "model-response", "max_chars": 500}
        )
    data = result.structured_content or {}
    assert (data["total"], data["shown"]) == (2, 1)  # the budget is for all items together
    assert len(data["items"][0]["html"]) <= 501


async def test_unknown_target_is_a_clear_error(bridge: Bridge) -> None:
    async with _client(bridge) as client:
        result = await client.call_tool("get_page_dom", {"target": "bing"})
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error and f"unknown target 'bing': use {TARGET_HELP}" in text


async def test_diagnosis_tools_answer_while_an_ask_runs(bridge: Bridge, fakes: FakeSites) -> None:
    """A snapshot or a DOM read during a long answer looks at the asking tab at once,
    instead of queueing behind the ask (which may take minutes)."""
    fakes.chatgpt.queue(Behaviour(thinking_ms=120_000))  # thinks for two minutes
    question = "Design a shortest path algorithm for a weighted graph."
    async with _client(bridge) as client:
        asking = asyncio.ensure_future(
            client.call_tool("ask_chatgpt_web", {"question": question, "new_chat": True})
        )
        try:
            await fakes.chatgpt.wait_for_record_async(lambda r: r.text == question, 30)
            async with asyncio.timeout(20):  # generous; far below the two-minute answer
                snapshot = await client.call_tool("take_cdp_snapshot", {"target": "chatgpt"})
                dom = await client.call_tool(
                    "get_page_dom", {"target": "chatgpt", "selector": "[data-message-author-role]"}
                )
            assert not asking.done()
            assert not snapshot.is_error and not dom.is_error
            assert "url: https://chatgpt.com/" in snapshot.content[0].text  # type: ignore[union-attr]
            assert (dom.structured_content or {})["total"] >= 1  # the question's turn is there
        finally:
            asking.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asking
