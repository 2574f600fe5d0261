"""A Gemini Deep Research job picked up from its conversation (bridge.providers.research_resume,
docs/sites.md#research): the pure reading of a reopened research (G11.6), then the fake
gemini.google.com in real Chromium — the asking call gone, the conversation opened again, the
report read from the reopened chat's messages (no panel there), nothing typed."""

from __future__ import annotations

import asyncio

import pytest

from bridge.app.facade import Bridge
from bridge.app.jobs import Job
from bridge.fakes import Behaviour, FakeSites
from bridge.fakes.research import RESEARCH_DONE_NOTICE, plain_report
from bridge.providers import research_resume
from bridge.providers.research_resume import reopened_report

QUESTION = "Research the history of Python decorators and how they are used today."

# -- pure ------------------------------------------------------------------------------------


def test_a_reopened_research_needs_plan_notice_and_report() -> None:
    plan = "Research plan: 1. Find sources. 2. Analyse them. 3. Write the report."
    assert reopened_report([]) is None
    assert reopened_report([plan]) is None  # still running: the plan only
    assert reopened_report([plan, RESEARCH_DONE_NOTICE]) is None
    report = "# Decorators\n\n" + "A long report. " * 20
    assert reopened_report([plan, RESEARCH_DONE_NOTICE, report]) == report.strip()


def test_the_report_is_the_longest_message_after_the_plan_never_the_plan() -> None:
    plan = "A very long plan. " * 50
    report = "The report, shorter than its plan but longer than the notice."
    assert reopened_report([plan, RESEARCH_DONE_NOTICE, report]) == report
    assert reopened_report([plan, report, RESEARCH_DONE_NOTICE]) == report
    assert reopened_report([plan, " ", "\n"]) is None


# -- end to end ------------------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize("when", ["finished", "running"])
async def test_a_gemini_research_job_picked_up_later_reads_the_reopened_report(
    bridge: Bridge, fakes: FakeSites, when: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The asking call went away (cancelled) once the research started; the conversation is
    opened again (the old page's own wait is gone with it), and the job picked up from it
    reads the report the reopened chat shows: at once when the research finished, after
    opening the chat again when it was still running (a reopened chat shows its plan only)."""
    # A reopened chat of a running research shows its plan and nothing more until it is
    # opened again, which the product does after the page stays still for RELOAD_QUIET_S
    # (15 s), however soon the research ends: here it ends within 3 s, so 3 s of stillness
    # takes the same path (each reopening shows what the site has by then).
    monkeypatch.setattr(research_resume, "RELOAD_QUIET_S", 3.0)
    fakes.gemini.set_behaviour(Behaviour(research="offered", research_ms=3000))
    asking = asyncio.ensure_future(
        bridge.ask("gemini", QUESTION, new_chat=True, research=True, timeout=60)
    )
    await fakes.gemini.wait_for_record_async(lambda r: r.research_started_at is not None, 30)
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    if when == "finished":
        await fakes.gemini.wait_for_record_async(lambda r: r.research_done_at is not None, 30)
    [record] = fakes.gemini.records
    tab = await bridge.provider_tab("gemini")
    url = str(await tab.evaluate("location.href"))
    await tab.navigate(url, timeout=30)  # the page that asked is gone; its chat reopened
    job = Job.new("gemini", QUESTION, bridge.session_key, 60, research=True)
    job.url = url
    result = await bridge.collect_answer(job, on_progress=lambda p: None, on_tab=lambda t: None)
    assert len(fakes.gemini.records) == 1  # nothing asked again
    assert fakes.gemini.records[0].research_done_at is not None
    markdown, _ = plain_report(record.text)
    assert result.used.research["state"] == "done"
    assert result.used.research["sources"] == []  # not shown by a reopened chat (G11.6)
    assert result.used.completion == "research:done"
    assert result.used.extraction == "page_reopened"
    assert markdown.split("\n\n")[0] in result.answer
    assert RESEARCH_DONE_NOTICE not in result.answer


@pytest.mark.e2e
async def test_a_gemini_research_job_picked_up_on_its_own_page_reads_the_panel(
    bridge: Bridge, fakes: FakeSites
) -> None:
    """The page that asked is still open and shows the report in its immersive panel when
    the research finishes (G11.6): the job picked up there reads it with its cited sources."""
    fakes.gemini.set_behaviour(Behaviour(research="offered", research_ms=3000))
    asking = asyncio.ensure_future(
        bridge.ask("gemini", QUESTION, new_chat=True, research=True, timeout=60)
    )
    await fakes.gemini.wait_for_record_async(lambda r: r.research_started_at is not None, 30)
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    tab = await bridge.provider_tab("gemini")
    job = Job.new("gemini", QUESTION, bridge.session_key, 60, research=True)
    job.url = str(await tab.evaluate("location.href"))
    job.tab_id = tab.tab_id
    result = await bridge.collect_answer(job, on_progress=lambda p: None, on_tab=lambda t: None)
    assert len(fakes.gemini.records) == 1
    _, sources = plain_report(QUESTION)
    assert result.used.research["state"] == "done"
    assert result.used.research["sources"] == sources
    assert result.used.extraction == "page"
