"""Long asks as jobs (docs/flows.md#jobs), through ``python -m bridge.mcp`` over stdio.

The fake sites run on a fast clock (``time_scale``): a three-minute answer takes seconds.
Each server launches its own headless Chromium (``--launch --headless --isolated``), as in
tests/mcp/test_transports.py. The restart tests kill a server with SIGKILL mid-answer: its
browser goes down with it (a launched browser dies with its parent), the fake site goes on
writing the answer server-side as the real sites do, and a new server, with a new browser,
collects the answer from the conversation URL the job recorded.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import select
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client

from bridge.app.facade import Bridge
from bridge.app.jobs import Job
from bridge.fakes import Behaviour, FakeSites, QuestionRecord, SiteController, answer_lines
from bridge.fakes.images import png
from tests.mcp.stdio import owned, stdio_server

pytestmark = pytest.mark.e2e

QUESTION = "How do I read files asynchronously in Python?"


def _text(result: Any) -> str:
    return str(result.content[0].text)


def _browser_pid(state: Path) -> int:
    found = re.findall(r"\(pid (\d+)\)", (state / "stderr.log").read_text())
    return int(found[-1])


async def _exited(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` (not our child) ends within ``timeout``: a pidfd becomes
    readable when it does, so this waits for the event, not by polling."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        if select.select([fd], [], [], 0)[0]:
            return True
        loop = asyncio.get_running_loop()
        ended = loop.create_future()
        loop.add_reader(fd, lambda: ended.done() or ended.set_result(None))
        try:
            await asyncio.wait_for(ended, timeout)
            return True
        except TimeoutError:
            return False
        finally:
            loop.remove_reader(fd)
    finally:
        os.close(fd)


async def _kill_owner(state: Path, job_id: str, how: signal.Signals = signal.SIGKILL) -> None:
    """Signal the server that owns the job (the pid its record names); it ends, and its
    browser with it. A SIGTERM lets it clean up: it must leave the job running, not failed."""
    path = state / "jobs" / f"{job_id}.json"
    record = json.loads(path.read_text())
    assert record["url"], "the conversation URL must be on disk before the server dies"
    browser = _browser_pid(state)
    os.kill(record["owner"]["pid"], how)
    assert await _exited(record["owner"]["pid"], 10)
    assert await _exited(browser, 10), "the launched browser outlived its server"
    assert json.loads(path.read_text())["status"] == "running"


async def _finished(site: SiteController, record: QuestionRecord) -> QuestionRecord:
    return await site.wait_for_record_async(
        lambda r: r.id == record.id and r.finished_at is not None, 120
    )


async def _ask_long(client: Client, fakes: FakeSites, max_wait: float) -> dict[str, Any]:
    """A three-minute ChatGPT answer (site time), returned as a job after ``max_wait``."""
    result = await client.call_tool(
        "ask_chatgpt_web", {"question": QUESTION, "new_chat": True, "max_wait": max_wait}
    )
    assert not result.is_error, _text(result)
    job: dict[str, Any] = result.structured_content or {}
    assert job["status"] == "running"
    assert f'get_answer with job="{job["job"]}"' in _text(result)
    if job["url"] is None:  # a slow start: not even sent yet when max_wait ran out
        # The site names the conversation with the stream's first message, before the
        # first words show (SITE-FACTS C6.4); the job knows the URL from then on.
        await fakes.chatgpt.wait_for_record_async(
            lambda r: r.text == QUESTION and r.first_token_at is not None, 60
        )
        again = await client.call_tool("get_answer", {"job": job["job"], "wait": 0})
        job = again.structured_content or {}
    assert job["url"].startswith("https://chatgpt.com/c/"), job
    return job


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
async def test_a_long_answer_survives_a_killed_server(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path, how: signal.Signals
) -> None:
    # Half an hour of site time (90 s here, fine chunks): it cannot end by itself before the
    # new server follows it; the test hurries the rest once that server reports progress.
    fakes.chatgpt.time_scale = 0.05
    fakes.chatgpt.queue(Behaviour(duration_ms=1_800_000, chunk_chars=8))
    state = tmp_path / "state"
    async with stdio_server(fake_sites, state) as first:
        job = await _ask_long(first, fakes, max_wait=2)
        await _kill_owner(state, job["job"], how)
    asked = fakes.chatgpt.records[-1]
    assert asked.finished_at is None  # the site is still writing it, with no page reading

    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")
        if "characters so far" in (message or ""):  # the new server follows the answer
            fakes.chatgpt.hurry(asked.id)

    async with stdio_server(fake_sites, state) as second:  # a new server, a new browser
        listed = (await second.call_tool("list_jobs", {})).structured_content or {}
        [entry] = [j for j in listed["jobs"] if j["id"] == job["job"]]
        assert (entry["status"], entry["owner_alive"]) == ("running", False)
        assert entry["question"] == QUESTION and entry["url"] == job["url"]
        result = await second.call_tool(
            "get_answer", {"job": job["job"], "wait": 55}, progress_callback=on_progress
        )
        returned_at = time.time()
    assert not result.is_error, _text(result)
    finished = await _finished(fakes.chatgpt, asked)
    assert _text(result) == asked.answer  # exactly what the site sent
    data = result.structured_content or {}
    assert data["job"] == job["job"] and data["url"] == job["url"]
    assert data["used"]["tab"] == "new_tab"  # the old browser is gone: opened at the URL
    # The reopened page follows the answer still being written (ChatGPT resumes its stream),
    # watched by the ask's own detector; no network stream for a resumed answer.
    assert data["used"]["completion"] != "resumed_finished", data["used"]
    assert data["used"]["extraction"] in ("copy", "dom"), data["used"]
    assert any("collected by bridge process" in note for note in data.get("notes", []))
    assert any("characters so far" in m for m in progress)  # progress flowed while it waited
    print(
        f"\nfake finished the answer -> get_answer returned it: "
        f"{returned_at - (finished.finished_at or 0):.3f} s (resumed mid-answer, {how.name})"
    )
    record = json.loads((state / "jobs" / f"{job['job']}.json").read_text())
    assert (record["status"], record["resumed"]) == ("done", 1)


async def test_an_answer_finished_while_no_server_ran_is_collected(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    fakes.chatgpt.time_scale = 0.05
    # Too long to end by itself (90 s here), hurried once its server is dead; with a generated
    # image, which the new server saves (docs/sites.md#outputs).
    fakes.chatgpt.queue(Behaviour(duration_ms=1_800_000, chunk_chars=8, image=True))
    state = tmp_path / "state"
    async with stdio_server(fake_sites, state) as first:
        job = await _ask_long(first, fakes, max_wait=1)
        await _kill_owner(state, job["job"])
    fakes.chatgpt.hurry(fakes.chatgpt.records[-1].id)
    finished = await _finished(fakes.chatgpt, fakes.chatgpt.records[-1])
    async with stdio_server(fake_sites, state) as second:
        started = time.time()
        result = await second.call_tool("get_answer", {"job": job["job"], "wait": 50})
        returned_at = time.time()
    assert not result.is_error, _text(result)
    assert _text(result) == finished.answer
    data = result.structured_content or {}
    assert data["used"]["completion"] == "resumed_finished"
    # The image the dead server never saw: saved by the new one in the job's folder, and
    # returned as image content as a live job's would be.
    expected = png(finished.id)
    [saved] = data["used"]["outputs"]
    assert saved["kind"] == "image" and Path(saved["path"]).read_bytes() == expected
    assert Path(saved["path"]).parent == state / "outputs" / job["job"]
    [image] = [c for c in result.content if c.type == "image"]
    assert base64.b64decode(image.data) == expected
    print(
        f"\nfake finished the answer -> get_answer returned it: "
        f"{returned_at - (finished.finished_at or 0):.3f} s (no server ran meanwhile; "
        f"the get_answer call itself took {returned_at - started:.3f} s)"
    )


# -- one server for the rest -------------------------------------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def server(
    fake_sites: FakeSites, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Client]:
    state = tmp_path_factory.mktemp("mcp-jobs")
    async for client in owned(lambda: stdio_server(fake_sites, state)):
        yield client


async def test_asking_both_returns_the_fast_answer_and_a_job_for_the_slow_one(
    server: Client, fakes: FakeSites
) -> None:
    # ChatGPT answers at once; Gemini takes far longer than max_wait, with room for a slow
    # machine on both sides (ChatGPT within 8 s, Gemini's 100 s well past them: it cannot
    # end by itself; hurried once its job was returned).
    fakes.gemini.time_scale = 0.05
    fakes.gemini.queue(Behaviour(duration_ms=2_000_000, chunk_chars=8))
    result = await server.call_tool(
        "ask_chatgpt_gemini_web", {"question": QUESTION, "new_chat": True, "max_wait": 8}
    )
    assert not result.is_error, _text(result)
    text = _text(result)
    data = result.structured_content or {}
    chatgpt = fakes.chatgpt.records[-1]
    assert data["chatgpt"]["answer"] == chatgpt.answer
    assert f"## ChatGPT\n\n{chatgpt.answer}" in text
    pending = data["gemini"]
    assert pending["status"] == "running" and pending["provider"] == "gemini"
    assert f"## Gemini\n\n(Gemini is still answering ({pending['phase']}" in text
    assert f'get_answer with job="{pending["job"]}"' in text

    listed = (await server.call_tool("list_jobs", {})).structured_content or {}
    by_id = {j["id"]: j for j in listed["jobs"]}
    assert by_id[data["chatgpt"]["job"]]["status"] == "done"
    assert by_id[pending["job"]]["status"] == "running"
    assert by_id[pending["job"]]["owner_alive"] is True
    assert {j["question"] for j in by_id.values()} == {QUESTION}

    fakes.gemini.hurry(fakes.gemini.records[-1].id)  # the rest of it at once
    answer = await server.call_tool("get_answer", {"job": pending["job"], "wait": 50})
    assert not answer.is_error, _text(answer)
    gemini = fakes.gemini.records[-1]
    assert _text(answer) == gemini.answer
    assert (answer.structured_content or {})["url"].startswith("https://gemini.google.com/app/")
    listed = (await server.call_tool("list_jobs", {"limit": 2})).structured_content or {}
    assert [j["status"] for j in listed["jobs"]] == ["done", "done"]


async def test_a_failed_job_is_an_error_result_with_its_typed_error(
    server: Client, fakes: FakeSites
) -> None:
    fakes.gemini.queue(Behaviour(state="rate_limited"))
    started = await server.call_tool(
        "ask_gemini_web", {"question": QUESTION, "new_chat": True, "max_wait": 0}
    )
    assert not started.is_error  # max_wait 0: the job at once, whatever comes
    job_id = (started.structured_content or {})["job"]
    result = await server.call_tool("get_answer", {"job": job_id, "wait": 50})
    assert result.is_error
    assert _text(result).startswith("[rate_limited] ")
    assert (result.structured_content or {})["error"]["code"] == "rate_limited"


async def test_a_call_cancelled_before_its_job_was_returned_stops_the_answer(
    server: Client, fakes: FakeSites
) -> None:
    """Nobody could collect that answer: it is stopped, and the tab takes the next question."""
    fakes.chatgpt.queue(Behaviour(length="long", chunk_chars=10, chunk_interval_ms=50))
    asking = asyncio.ensure_future(
        server.call_tool(
            "ask_chatgpt_web", {"question": "Explain Python asyncio in depth.", "new_chat": True}
        )
    )
    await fakes.chatgpt.wait_for_record_async(lambda r: r.first_token_at is not None, 30)
    asking.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asking
    stopped = await fakes.chatgpt.wait_for_record_async(lambda r: r.stopped, 30)
    listed = (await server.call_tool("list_jobs", {"limit": 1})).structured_content or {}
    [job] = listed["jobs"]
    assert job["question"] == stopped.text
    result = await server.call_tool("get_answer", {"job": job["id"], "wait": 30})
    assert result.is_error and _text(result).startswith("[cancelled] ")
    result = await server.call_tool("ask_chatgpt_web", {"question": "What is a Python decorator?"})
    assert not result.is_error, _text(result)
    assert "decorator" in _text(result)


async def test_an_unknown_job_is_a_clear_error(server: Client) -> None:
    result = await server.call_tool("get_answer", {"job": "chatgpt-0123456789", "wait": 0})
    assert result.is_error
    assert "[job_not_found]" in _text(result) and "list_jobs" in _text(result)


# -- in process: a page gone mid-answer, collected by another Bridge ---------------------------

LONG_QUESTION = "Compare Python threads, processes and asyncio for network servers."


async def _gone_mid_answer(bridge: Bridge, site: SiteController, *, new_chat: bool) -> Job:
    # (Gemini: ChatGPT's reopened page follows an answer still being written, tested above.)
    """A job whose page goes away mid-answer while its Bridge lets go of it, as a server
    stopping does: the site writes on, the record still says running, the lock is free."""
    job = await bridge.start_job("gemini", LONG_QUESTION, new_chat=new_chat)
    await site.wait_for_record_async(
        lambda r: r.text == LONG_QUESTION and r.first_token_at is not None, 60
    )
    where = await bridge.wait_job(job.id, 0)
    assert where.tab_id is not None
    bridge.abandon_jobs()
    await bridge.browser.close_tab(where.tab_id)  # its ask fails; nothing is recorded
    assert bridge.jobs.load(job.id).status == "running"
    return where


async def test_gemini_collected_from_a_conversation_still_being_written(
    bridge: Bridge, fakes: FakeSites
) -> None:
    """Gemini's reopened page shows an unfinished answer without following it: bridge waits
    for the page to change, opens the conversation again when it stays still, and reads
    the answer once it is finished (docs/flows.md#jobs-resume, step 6)."""
    await bridge.ask("gemini", "What is a Python list?", new_chat=True)  # a conversation URL
    fakes.gemini.time_scale = 0.04
    fakes.gemini.queue(Behaviour(duration_ms=200_000))  # 8 s here
    job = await _gone_mid_answer(bridge, fakes.gemini, new_chat=False)
    assert job.url is not None and job.url.startswith("https://gemini.google.com/app/")
    asked = fakes.gemini.records[-1]
    assert asked.finished_at is None
    other = Bridge(bridge.browser, state_dir=bridge.store.root, session_key=bridge.session_key)
    started = time.monotonic()
    done = await other.wait_job(job.id, 60)
    print(
        f"\nGemini answer collected after {time.monotonic() - started:.1f} s (reopened when still)"
    )
    assert done.status == "done", done.error
    assert done.result is not None
    assert answer_lines(done.result["answer"]) == answer_lines(asked.answer)
    assert done.result["used"]["completion"] == "resumed_finished"
    assert done.result["url"] == job.url


async def test_a_new_chat_whose_url_was_never_named_is_lost_clearly(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.gemini.time_scale = 0.05
    fakes.gemini.queue(Behaviour(duration_ms=200_000))
    job = await _gone_mid_answer(bridge, fakes.gemini, new_chat=True)
    assert (
        job.url is None
    )  # Gemini names a new chat once its reply is created (the fake: at its end)
    other = Bridge(bridge.browser, state_dir=bridge.store.root, session_key=bridge.session_key)
    failed = await other.wait_job(job.id, 30)
    assert failed.status == "failed" and failed.error is not None
    assert failed.error["code"] == "job_lost"
    assert "ask again" in failed.error["message"]
