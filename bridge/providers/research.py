"""Deep Research in the page (docs/sites.md#research): turning it on before the question, and
following it after the send until the report is finished. The decisions are
:mod:`bridge.providers.research_core`'s; this module is the page work around them.

Start (before anything is typed): the site's own control, each step with a trusted click and
read back: ChatGPT's composer "+" (``selectors.research_button``) → the menu item "Deep
research" (``selectors.research_item`` labelled ``texts.research_labels``, C9.1) → the
composer's "Deep research" pill (``selectors.research_pill``, C9.2). No item, a disabled one,
or no pill afterwards ends the ask with ``ResearchUnavailable``: nothing typed, nothing sent.

After the send the wait is event-driven: each change of the page's DOM (page.js
``whenPageChanges``) brings a look, and without changes a look comes anyway after a pause
that doubles from ``REREAD_FIRST_S`` to ``REREAD_MAX_S`` (the report can finish in the
conversation JSON without a DOM change the page.js knows of). Each look is the page
(``researchPage``: a start control, the plan, a running marker, a stop button) and, for
ChatGPT, the conversation JSON read with the page's credentials (C9.9). Then:

- a start control shows → press it (C9.6, PDX), ``used.research["started"] = "button"``;
- research evidence without our press → the site's countdown started it ("countdown", OR);
- the widget says completed (C9.11) → the report (markdown with its sources) is the answer;
- a finished turn without research evidence (C9.5), every look saying so for
  ``QUESTIONS_QUIET_S`` → the site asks clarifying questions:
  with ``research_answers`` they are sent as the next message (Deep Research armed again if
  the pill went) and the wait goes on; without them the questions are the answer
  (``used.research["state"] == "questions"``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bridge.errors import BridgeError, ResearchFailed, ResearchUnavailable, StepTimeout
from bridge.providers import composer
from bridge.providers.composer import InputMethod, SendMethod, press_key, trusted_click
from bridge.providers.context import AskContext
from bridge.providers.dumps import dump
from bridge.providers.research_core import (
    PageLook,
    Report,
    Step,
    Widget,
    decide,
    find_widget,
    newest_reply,
    report_markdown,
    user_messages_before,
)
from bridge.waiting import scaled

__all__ = [
    "REREAD_FIRST_S",
    "REREAD_MAX_S",
    "RESEARCH_TIMEOUT_S",
    "ResearchOutcome",
    "choose_research",
    "follow_research",
    "page_report",
    "users_before_question",
]

log = logging.getLogger(__name__)

#: The default wait for a report: C9.12 (oracle 40 min, "5-30+ minutes") and G11.8 (up to
#: 20 min) put real research in the tens of minutes.
RESEARCH_TIMEOUT_S = 2400.0
REREAD_FIRST_S = 1.0  # the first re-read without a page change
REREAD_MAX_S = 30.0  # the longest pause between re-reads without a page change
QUESTIONS_QUIET_S = 2.0  # a reply without research evidence must stay so this long
START_RETRY_S = 3.0  # the start control still shown this long after a press: press again
START_PRESSES = 3  # presses of the start control at most
MENU_S = 8.0  # a click to the menu's (or the pill's) answer
CONTROL_S = 5.0  # the control is drawn with the composer, ready by now
_NEEDED = ("research_button", "research_item", "research_pill")


@dataclass(frozen=True)
class ResearchOutcome:
    """How a research ended: the answer's text and what ``used.research`` records."""

    answer: str
    state: str  # "done" | "questions"
    source: str  # where the answer was read: "conversation_json", "page"
    sources: tuple[dict[str, str], ...] = ()


async def choose_research(ctx: AskContext) -> dict[str, Any]:
    """Turn Deep Research on in the site's own control and see it armed, or raise
    ``ResearchUnavailable`` (nothing typed). An armed pill already shown needs no click.
    Returns what ``used.research`` starts with (``armed``: "already" or "chosen")."""
    p = ctx.provider
    missing = [n for n in _NEEDED if n not in ctx.spec.pack.selectors]
    if missing:
        raise ResearchUnavailable(
            p,
            f"the {p} pack names no Deep Research control "
            f"({', '.join('selectors.' + n for n in missing)}; docs/sites.md#research)",
            [],
        )
    if await ctx.page.call("researchArmed", p):
        return {"armed": "already"}
    try:
        wait_s = scaled(CONTROL_S)
        shown = await ctx.page.call(
            "whenVisible", p, "research_button", int(wait_s * 1000), timeout=wait_s + 5
        )
        target = await ctx.page.call("controlTarget", p, "research_button") if shown else None
        if not target:
            await dump(ctx, "no research control")
            raise ResearchUnavailable(p, f"the {p} page shows no '+' (tools) control", [])
        # A "+" that opens the file chooser instead of a menu (an older layout, C1.13) must
        # not put a file dialog in front of the person: choosers are intercepted meanwhile.
        await ctx.tab.send("Page.enable")
        await ctx.tab.send("Page.setInterceptFileChooserDialog", {"enabled": True})
        try:
            await trusted_click(ctx, target)
            wait_s = scaled(MENU_S)
            opened = await ctx.page.call(
                "whenVisible", p, "research_item", int(wait_s * 1000), timeout=wait_s + 5
            )
        finally:
            if ctx.tab.ended is None:
                await ctx.tab.send("Page.setInterceptFileChooserDialog", {"enabled": False})
        items = await ctx.page.call("researchItems", p) if opened else []
        offered = [str(i.get("label") or "") for i in items]
        found = [i for i in items if i.get("research")]
        if not found:
            await dump(ctx, "no Deep Research item")
            raise ResearchUnavailable(p, "its menu has no Deep Research item", offered)
        if found[0].get("disabled"):
            raise ResearchUnavailable(
                p, "Deep Research is shown but disabled", offered, str(found[0].get("notice"))
            )
        target = await ctx.page.call("researchTarget", p)
        if not target:
            raise ResearchUnavailable(p, "the Deep Research item went away", offered)
        await trusted_click(ctx, target)
        wait_s = scaled(MENU_S)
        armed = await ctx.page.call("whenResearchArmed", p, int(wait_s * 1000), timeout=wait_s + 5)
        if armed != "armed":
            await dump(ctx, "Deep Research not armed")
            raise ResearchUnavailable(
                p,
                "after choosing Deep Research the composer shows no 'Deep research' pill",
                offered,
            )
        return {"armed": "chosen"}
    finally:
        await _close_menu(ctx)


async def _close_menu(ctx: AskContext) -> None:
    """A menu left open gets Escape (the composer must be free to type); logged if it stays."""
    if ctx.tab.ended is not None:
        return
    try:
        if await ctx.page.call("researchItems", ctx.provider):
            await press_key(ctx, "Escape")
            if await ctx.page.call("researchItems", ctx.provider):
                log.warning("%s: the research menu stayed open after Escape", ctx.provider)
    except BridgeError as exc:
        log.info("%s: closing the research menu: %s", ctx.provider, exc)


async def users_before_question(ctx: AskContext) -> int:
    """How many user messages come before the job's question in its conversation (a resumed
    research counts its widget from there): read from the conversation JSON where the pack
    has it, else all but the page's newest user turn."""
    counts = await ctx.page.call("counts", ctx.provider)
    fallback = max(0, int(counts["user"]) - 1)
    if ctx.spec.pack.selectors.get("research_frame") is None:
        return fallback
    from bridge.providers.conversations.urls import conversation_id  # see _look

    ident = conversation_id(ctx.spec, str(await ctx.tab.evaluate("location.href")))
    if not ident:
        return fallback
    read = await ctx.page.call("researchConversation", ctx.provider, ident)
    body = read.get("body") if isinstance(read, dict) else None
    if not isinstance(body, dict):
        return fallback
    found = user_messages_before(body, ctx.question)
    return fallback if found is None else found


async def _look(ctx: AskContext, users_before: int) -> tuple[PageLook, dict[str, Any] | None]:
    """The page's signals and, for ChatGPT once the URL names the conversation, its JSON."""
    raw = await ctx.page.call("researchPage", ctx.provider)
    conversation: dict[str, Any] | None = None
    widget: Widget | None = None
    if ctx.spec.pack.selectors.get("research_frame") is not None:  # ChatGPT's report is JSON
        # Imported here: the conversations package reads through the flow, which uses this.
        from bridge.providers.conversations.urls import conversation_id

        url = str(await ctx.tab.evaluate("location.href"))
        ident = conversation_id(ctx.spec, url)
        if ident:
            read = await ctx.page.call("researchConversation", ctx.provider, ident)
            body = read.get("body") if isinstance(read, dict) else None
            if isinstance(body, dict) and read.get("status") == 200:
                conversation = body
                widget = find_widget(body, users_before)
    look = PageLook(
        start=bool(raw.get("start")),
        plan=bool(raw.get("plan")),
        running=bool(raw.get("running")),
        done=bool(raw.get("done")),
        generating=bool(raw.get("generating")),
        reply=str(raw.get("reply") or ""),
        widget=widget,
    )
    return look, conversation


async def follow_research(
    ctx: AskContext,
    users_before: int,
    inputs: Sequence[InputMethod],
    sends: Sequence[SendMethod],
) -> ResearchOutcome:
    """After the send: press the plan's start, answer clarifying questions when the person
    gave answers, and wait for the finished report (module docstring); ``StepTimeout`` at
    ``options.timeout``, ``ResearchFailed`` for a completed research without a report."""
    p = ctx.provider
    research = ctx.used.research
    research.setdefault("started", "")
    research.setdefault("answered", False)
    deadline = time.monotonic() + ctx.options.timeout
    pause = scaled(REREAD_FIRST_S)
    pressed = False
    presses, pressed_at = 0, 0.0
    seen_running = False
    # A reply without research evidence counts as the site's questions only once every look
    # for QUESTIONS_QUIET_S said so (G11.9: research may start without a confirm button,
    # its indicator a moment later).
    questions_since: float | None = None
    while True:
        look, conversation = await _look(ctx, users_before)
        evidence = look.widget is not None or look.running
        if evidence and not research["started"]:
            research["started"] = "button" if pressed else "countdown"
        seen_running = seen_running or evidence
        step = decide(look, started=pressed or seen_running)
        await ctx.progress("research")
        if step is Step.DONE:
            return await _finished(ctx, look, pressed)
        # The start control still shown a while after a press: the press did not take (a
        # click that landed while the plan was still being laid out, on a busy machine), so
        # it is pressed again, a few times at most; the control goes once the research starts.
        may_press = not pressed or (
            presses < START_PRESSES and time.monotonic() - pressed_at >= scaled(START_RETRY_S)
        )
        if step is Step.PRESS_START and may_press:
            target = await ctx.page.call("researchStartTarget", p)
            if target:
                await trusted_click(ctx, target)
                pressed, presses, pressed_at = True, presses + 1, time.monotonic()
                pause = scaled(REREAD_FIRST_S)
                continue
        if step is not Step.QUESTIONS:
            questions_since = None
        elif questions_since is None:
            questions_since = time.monotonic()
        quiet_s = scaled(QUESTIONS_QUIET_S)
        if questions_since is not None and time.monotonic() - questions_since >= quiet_s:
            reply = newest_reply(conversation, users_before) if conversation else None
            questions = reply or look.reply
            answers = ctx.options.research_answers
            if answers and not research["answered"]:
                await _send_answers(ctx, answers, inputs, sends)
                research["answered"] = True
                questions_since = None
                pause = scaled(REREAD_FIRST_S)
                continue
            if not research["answered"]:
                research["state"] = "questions"
                research["sources"] = []
                return ResearchOutcome(
                    questions, "questions", "conversation_json" if reply else "page"
                )
            # Answers were sent and a plain turn came back again: no research.
            await dump(ctx, "research not started after the answers")
            raise ResearchFailed(
                p,
                "the site answered the clarifying answers with an ordinary turn and started no "
                "research (SITE-FACTS C9.13, 'deep-research-not-started')",
                str(await ctx.tab.evaluate("location.href")),
            )
        now = time.monotonic()
        if now >= deadline:
            await dump(ctx, f"no research report within {ctx.options.timeout:.0f}s")
            raise StepTimeout(p, "wait for the Deep Research report", ctx.options.timeout)
        wait_s = min(pause, deadline - now)
        if questions_since is not None:  # look again when the quiet time is over
            wait_s = min(wait_s, max(0.0, questions_since + quiet_s - now))
        changed = await ctx.page.call(
            "whenPageChanges", p, int(wait_s * 1000), timeout=wait_s + scaled(5.0)
        )
        pause = scaled(REREAD_FIRST_S) if changed else min(pause * 2, scaled(REREAD_MAX_S))


async def _finished(ctx: AskContext, look: PageLook, pressed: bool) -> ResearchOutcome:
    research = ctx.used.research
    if not research.get("started"):
        research["started"] = "button" if pressed else "countdown"
    widget = look.widget
    if widget is None:  # the page's own done signal (Gemini's export button, G11.5)
        return await page_report(ctx)
    report: Report = report_markdown(widget)
    if not report.markdown.strip():
        await dump(ctx, "research completed without a report")
        raise ResearchFailed(
            ctx.provider,
            "the research says completed but its report is empty",
            str(await ctx.tab.evaluate("location.href")),
        )
    sources = tuple(s.to_dict() for s in report.sources)
    research["state"] = "done"
    research["sources"] = list(sources)
    return ResearchOutcome(report.markdown, "done", "conversation_json", sources)


async def page_report(ctx: AskContext) -> ResearchOutcome:
    """The report as the page shows it (Gemini's immersive panel, G11.6): its markdown and
    cited sources, with a "Sources" list as for ChatGPT's."""
    shown = await ctx.page.call("researchReport", ctx.provider)
    markdown = str(shown.get("markdown") or "").strip()
    sources = tuple(
        {"title": str(s.get("title") or s.get("url")), "url": str(s.get("url"))}
        for s in shown.get("sources") or []
    )
    if not markdown:
        await dump(ctx, "research done without a report on the page")
        raise ResearchFailed(
            ctx.provider,
            "the page says the research is done but shows no report",
            str(await ctx.tab.evaluate("location.href")),
        )
    if sources:
        listed = "\n".join(f"{n}. [{s['title']}]({s['url']})" for n, s in enumerate(sources, 1))
        markdown = f"{markdown}\n\n## Sources\n\n{listed}"
    research = ctx.used.research
    research["state"] = "done"
    research["sources"] = list(sources)
    return ResearchOutcome(markdown, "done", "page", sources)


async def _send_answers(
    ctx: AskContext, answers: str, inputs: Sequence[InputMethod], sends: Sequence[SendMethod]
) -> None:
    """The person's answers to the clarifying questions as the next message, with Deep
    Research armed again if the composer lost it (nothing is typed unless it is armed)."""
    await choose_research(ctx)
    counts = await ctx.page.call("counts", ctx.provider)
    ctx.initial_users = int(counts["user"])
    asked = ctx.question
    ctx.question = answers
    try:
        await composer.type_question(ctx, inputs)
        await composer.wait_send_enabled(ctx)
        await composer.click_send(ctx, sends)
    finally:
        ctx.question = asked
