"""Deep Research through a real MCP client over stdio (docs/sites.md#research): always a job,
progress while it runs, the report with its sources from get_answer.

``python -m bridge.mcp`` runs as a subprocess with its own headless Chromium and the fake
sites mapped in (tests/mcp/stdio.py); the fakes record what each question was sent with.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client

from bridge.fakes import Behaviour, FakeSites
from bridge.fakes.research import report_of
from bridge.waiting import scaled
from tests.mcp import stdio
from tests.mcp.stdio import owned

pytestmark = pytest.mark.e2e

QUESTION = "Research how Python decorators evolved and how they are used today."


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stdio_server(
    fake_sites: FakeSites, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Client]:
    state = tmp_path_factory.mktemp("mcp-research")
    async for client in owned(lambda: stdio.stdio_server(fake_sites, state)):
        yield client


def _text(result: Any) -> str:
    return str(result.content[0].text)


async def test_a_research_is_a_job_with_progress_and_its_report_comes_from_get_answer(
    stdio_server: Client, fakes: FakeSites
) -> None:
    # A research of 4 site seconds: the ask returns long before the report is done.
    fakes.chatgpt.set_behaviour(Behaviour(research="offered", research_ms=4000))
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    started = await stdio_server.call_tool(
        "ask_chatgpt_web",
        {"question": QUESTION, "new_chat": True, "research": True, "timeout": 120},
        progress_callback=on_progress,
    )
    assert not started.is_error, _text(started)
    job = (started.structured_content or {})["job"]
    assert "Deep Research is running" in _text(started)
    # The tool returns once the page sent the question; the fake server may record it a
    # moment later (a busy run): wait for its record rather than read it at once.
    await fakes.chatgpt.wait_for_record_async(lambda r: r.research == "plan", scaled(10.0))
    result = await stdio_server.call_tool(
        "get_answer", {"job": job, "wait": 55}, progress_callback=on_progress
    )
    returned_at = time.time()
    assert not result.is_error, _text(result)
    record = fakes.chatgpt.records[-1]
    assert record.research_started_by == "button" and record.research_done_at is not None
    data = result.structured_content or {}
    used = data["used"]
    _markdown, refs = report_of(QUESTION)
    assert used["research"]["state"] == "done"
    assert [s["url"] for s in used["research"]["sources"]] == [r["items"][0]["url"] for r in refs]
    assert "## Sources" in _text(result)
    assert any("research" in m for m in progress)  # progress said so while it ran
    # The closing figure (docs/sites.md#research): printed, never asserted.
    print(f"\nreport done -> get_answer returned it: {returned_at - record.research_done_at:.3f} s")


async def test_no_deep_research_offered_is_an_error_with_nothing_sent(
    stdio_server: Client, fakes: FakeSites
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(research="disabled"))
    result = await stdio_server.call_tool(
        "ask_chatgpt_web", {"question": QUESTION, "new_chat": True, "research": True}
    )
    assert result.is_error
    assert "[research_unavailable]" in _text(result)
    assert fakes.chatgpt.records == []


async def test_clarifying_questions_come_back_as_the_answer(
    stdio_server: Client, fakes: FakeSites
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(research="offered", research_clarify=True))
    started = await stdio_server.call_tool(
        "ask_chatgpt_web", {"question": QUESTION, "new_chat": True, "research": True}
    )
    job = (started.structured_content or {})["job"]
    result = await stdio_server.call_tool("get_answer", {"job": job, "wait": 55})
    assert not result.is_error, _text(result)
    assert (result.structured_content or {})["used"]["research"]["state"] == "questions"
    assert "Which period" in _text(result)


async def test_both_sites_research_returns_a_job_per_site_and_a_refusal_for_the_other(
    stdio_server: Client, fakes: FakeSites
) -> None:
    """ask_chatgpt_gemini_web with research: ChatGPT's side comes back as its job once its
    question is sent; Gemini, without Deep Research, as its research_unavailable error with
    nothing sent; the call is no error (one side still runs) and the report follows."""
    fakes.chatgpt.set_behaviour(Behaviour(research="offered", research_ms=4000))
    fakes.gemini.set_behaviour(Behaviour(research="absent"))
    started = await stdio_server.call_tool(
        "ask_chatgpt_gemini_web",
        {
            "question": QUESTION,
            "new_chat": True,
            "research": True,
            "chatgpt_research_answers": "Focus on Python 3.",
            "timeout": 120,
        },
    )
    assert not started.is_error, _text(started)
    data = started.structured_content or {}
    assert data["gemini"]["error"]["code"] == "research_unavailable"
    assert fakes.gemini.records == []
    assert "ChatGPT Deep Research is running" in _text(started)
    result = await stdio_server.call_tool("get_answer", {"job": data["chatgpt"]["job"], "wait": 55})
    assert not result.is_error, _text(result)
    used = (result.structured_content or {})["used"]
    assert used["research"]["state"] == "done" and used["research"]["sources"]
    await fakes.chatgpt.wait_for_record_async(lambda r: r.research == "plan", scaled(10.0))
