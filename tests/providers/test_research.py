"""Deep Research end to end (docs/sites.md#research): the fake chatgpt.com in real Chromium
through the extension. The fake records what each question was sent with (the body's
``system_hints``, C9.3) and when its research started and finished, so a test sees what the
site got and did, not what bridge believes.
"""

from __future__ import annotations

import asyncio

import pytest

from bridge.app.facade import Bridge
from bridge.app.jobs import Job
from bridge.errors import ResearchUnavailable
from bridge.fakes import Behaviour, FakeSites
from bridge.fakes.research import CLARIFY_TEXT, plain_report, report_of
from bridge.providers import research

pytestmark = pytest.mark.e2e

QUESTION = "Research the history of Python decorators and how they are used today."


async def _composer_text(bridge: Bridge) -> str:
    tab = await bridge.provider_tab("chatgpt")
    return str(await tab.evaluate("document.querySelector('#prompt-textarea').innerText.trim()"))


async def test_a_research_is_started_with_its_button_and_returns_the_report_with_sources(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(research="offered"))
    result = await bridge.ask("chatgpt", QUESTION, new_chat=True, research=True, timeout=60)
    record = fakes.chatgpt.records[-1]
    assert record.research == "plan"  # the body carried the connector hint (C9.3)
    assert record.research_started_by == "button"  # bridge pressed the plan's Start (C9.6)
    assert record.research_done_at is not None
    markdown, refs = report_of(QUESTION)
    first_url = refs[0]["items"][0]["url"]
    assert result.used.research["state"] == "done"
    assert result.used.research["started"] == "button"
    assert result.used.research["armed"] == "chosen"
    assert [s["url"] for s in result.used.research["sources"]] == [
        r["items"][0]["url"] for r in refs
    ]
    assert result.used.completion == "research:done"
    assert result.used.extraction == "conversation_json"
    assert "\ue200" not in result.answer and f"[[1]]({first_url})" in result.answer
    assert result.answer.rstrip().endswith(
        f"[{refs[-1]['items'][0]['title']}]({refs[-1]['items'][0]['url']})"
    )
    assert "## Sources" in result.answer
    assert markdown.split("\n\n")[0].split("\ue200")[0] in result.answer


async def test_a_plan_that_counts_down_starts_by_itself(bridge: Bridge, fakes: FakeSites) -> None:
    """C9.6 (contested): OR's plan starts after its countdown; bridge presses nothing."""
    fakes.chatgpt.set_behaviour(
        Behaviour(research="offered", research_start="countdown", research_countdown_ms=400)
    )
    result = await bridge.ask("chatgpt", QUESTION, new_chat=True, research=True, timeout=60)
    assert fakes.chatgpt.records[-1].research_started_by == "countdown"
    assert result.used.research["started"] == "countdown"
    assert result.used.research["state"] == "done" and result.used.research["sources"]


async def test_clarifying_questions_are_the_answer_without_the_persons_answers(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(research="offered", research_clarify=True))
    result = await bridge.ask("chatgpt", QUESTION, new_chat=True, research=True, timeout=60)
    assert result.answer == CLARIFY_TEXT
    assert result.used.research["state"] == "questions"
    assert result.used.completion == "research:questions"
    records = fakes.chatgpt.records
    assert len(records) == 1 and records[0].research == "clarify"
    assert records[0].research_started_at is None  # nothing was started


async def test_the_persons_answers_are_sent_and_the_research_goes_on(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(research="offered", research_clarify=True))
    answers = "The last ten years; prefer primary sources; about two pages."
    result = await bridge.ask(
        "chatgpt",
        QUESTION,
        new_chat=True,
        research=True,
        research_answers=answers,
        timeout=60,
    )
    asked, answered = fakes.chatgpt.records
    assert asked.research == "clarify" and answered.research == "plan"
    assert answered.text == answers  # sent as the next message, with the hint again (C9.3)
    assert answered.conversation_id == asked.conversation_id
    assert result.used.research["answered"] is True
    assert result.used.research["state"] == "done"
    assert "## Sources" in result.answer


def _short_wait_for_an_absent_item(monkeypatch: pytest.MonkeyPatch, offer: str) -> None:
    """With no Deep Research item the product waits out its menu deadline (8 s) for one that
    never shows; 2 s shows the same absence here. A disabled item shows at once: that case
    keeps the product's deadline."""
    if offer == "absent":
        monkeypatch.setattr(research, "MENU_S", 2.0)


@pytest.mark.parametrize("offer", ["absent", "disabled"])
async def test_no_deep_research_offered_ends_the_ask_with_nothing_sent(
    bridge: Bridge, fakes: FakeSites, offer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(research=offer))  # type: ignore[arg-type]
    _short_wait_for_an_absent_item(monkeypatch, offer)
    with pytest.raises(ResearchUnavailable) as caught:
        await bridge.ask("chatgpt", QUESTION, new_chat=True, research=True, timeout=60)
    assert caught.value.code == "research_unavailable"
    assert "Nothing was typed or sent" in str(caught.value)
    assert fakes.chatgpt.records == []
    assert await _composer_text(bridge) == ""


async def test_an_ordinary_ask_sends_no_research_hint(bridge: Bridge, fakes: FakeSites) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(research="offered"))
    result = await bridge.ask("chatgpt", "What is a decorator?", new_chat=True)
    assert fakes.chatgpt.records[-1].research == ""
    assert result.used.research == {}


async def test_a_research_job_picked_up_later_waits_for_its_report(
    bridge: Bridge, fakes: FakeSites
) -> None:
    """The asking call went away (cancelled) while the site researched on; a job picked up
    from the conversation (bridge.providers.resume) waits for the report instead of taking
    the plan for the answer, and types nothing."""
    fakes.chatgpt.set_behaviour(Behaviour(research="offered", research_ms=3000))
    asking = asyncio.ensure_future(
        bridge.ask("chatgpt", QUESTION, new_chat=True, research=True, timeout=60)
    )
    await fakes.chatgpt.wait_for_record_async(lambda r: r.research_started_at is not None, 30)
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    [record] = fakes.chatgpt.records
    assert record.research_done_at is None  # the site researches on
    tab = await bridge.provider_tab("chatgpt")
    url = str(await tab.evaluate("location.href"))
    job = Job.new("chatgpt", QUESTION, bridge.session_key, 60, research=True)
    job.url = url
    progress: list[str] = []
    result = await bridge.collect_answer(
        job, on_progress=lambda p: progress.append(p.phase), on_tab=lambda tab: None
    )
    assert len(fakes.chatgpt.records) == 1  # nothing asked again
    assert result.used.research["state"] == "done"
    assert result.used.research["sources"] and "## Sources" in result.answer
    assert "research" in progress


# -- Gemini (G11) ---------------------------------------------------------------------------------


async def test_gemini_research_is_confirmed_started_and_read_from_its_panel(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.gemini.set_behaviour(Behaviour(research="offered"))
    result = await bridge.ask("gemini", QUESTION, new_chat=True, research=True, timeout=60)
    record = fakes.gemini.records[-1]
    assert record.research == "plan" and record.research_started_by == "button"
    assert record.research_done_at is not None
    markdown, sources = plain_report(QUESTION)
    assert result.used.research["state"] == "done"
    assert result.used.research["started"] == "button"  # "Start research" (G11.3)
    assert result.used.research["sources"] == sources
    assert result.used.extraction == "page"
    assert markdown.split("\n\n")[0] in result.answer
    assert result.answer.endswith(f"{len(sources)}. [{sources[-1]['title']}]({sources[-1]['url']})")


@pytest.mark.parametrize("offer", ["absent", "disabled"])
async def test_gemini_without_deep_research_sends_nothing(
    bridge: Bridge, fakes: FakeSites, offer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.gemini.set_behaviour(Behaviour(research=offer))  # type: ignore[arg-type]
    _short_wait_for_an_absent_item(monkeypatch, offer)
    with pytest.raises(ResearchUnavailable):
        await bridge.ask("gemini", QUESTION, new_chat=True, research=True, timeout=60)
    assert fakes.gemini.records == []


async def test_misused_research_options_are_refused_before_any_browser_work(
    bridge: Bridge, fakes: FakeSites
) -> None:
    with pytest.raises(ValueError, match="research=True"):
        await bridge.ask("chatgpt", QUESTION, research_answers="yes")
    with pytest.raises(ValueError, match="temporary"):
        await bridge.start_job("chatgpt", QUESTION, research=True, temporary=True)
    with pytest.raises(ValueError, match="research_answers is empty"):
        await bridge.ask("chatgpt", QUESTION, research=True, research_answers=" ")
    assert fakes.chatgpt.records == []


# -- both sites at once (ask_both) ----------------------------------------------------------------


async def test_both_sites_research_at_once_and_each_report_has_its_sources(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(research="offered"))
    fakes.gemini.set_behaviour(Behaviour(research="offered"))
    both = await bridge.ask_both(QUESTION, new_chat=True, research=True, timeout=60)
    assert both.errors == {}
    for provider, site in (("chatgpt", fakes.chatgpt), ("gemini", fakes.gemini)):
        [record] = site.records
        assert record.research == "plan" and record.research_done_at is not None
        used = both.results[provider].used  # type: ignore[index]
        assert used.research["state"] == "done" and used.research["sources"]
    _, sources = plain_report(QUESTION)
    assert both.results["gemini"].used.research["sources"] == sources
    assert "## Sources" in both.results["chatgpt"].answer


async def test_a_site_without_deep_research_fails_alone_and_the_other_reports(
    bridge: Bridge, fakes: FakeSites
) -> None:
    """The refusing side sends nothing (ResearchUnavailable, as alone); the other side's
    research runs to its report: one side's refusal never hides the other's answer."""
    fakes.chatgpt.set_behaviour(Behaviour(research="offered"))
    fakes.gemini.set_behaviour(Behaviour(research="absent"))
    both = await bridge.ask_both(QUESTION, new_chat=True, research=True, timeout=60)
    assert isinstance(both.errors["gemini"], ResearchUnavailable)
    assert fakes.gemini.records == []
    assert both.results["chatgpt"].used.research["state"] == "done"
    assert fakes.chatgpt.records[-1].research_done_at is not None


async def test_each_sites_research_answers_go_to_that_site_only(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(research="offered", research_clarify=True))
    fakes.gemini.set_behaviour(Behaviour(research="offered"))
    both = await bridge.ask_both(
        QUESTION,
        new_chat=True,
        research=True,
        research_answers={"chatgpt": "Focus on Python 3."},
        timeout=60,
    )
    assert both.errors == {}
    asked, answered = fakes.chatgpt.records
    assert asked.research == "clarify" and answered.text == "Focus on Python 3."
    assert both.results["chatgpt"].used.research["answered"] is True
    assert len(fakes.gemini.records) == 1  # Gemini asked no questions, got no answers
    assert both.results["chatgpt"].used.research["state"] == "done"
    with pytest.raises(ValueError, match="research=True"):
        await bridge.ask_both(QUESTION, research_answers={"gemini": "yes"})
