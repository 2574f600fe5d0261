"""A Gemini Deep Research job picked up from its conversation (docs/sites.md#research).

The page that asked waits for the report in the immersive panel (G11.6) with a request of its
own; once that page is gone, a reopened conversation shows no panel. SITE-FACTS G11.6 (GDX):
reopening the chat URL later, the research's messages are ``message-content .markdown``
elements (``selectors.research_reopened``) — [0] the plan, [1] the completion notice, [2] the
report, found as the longest. So a resumed Gemini research reads, in this order:

1. a start control (the plan never started): the ask's own research wait presses it;
2. the page's done signal (the export button, G11.5) with the panel: the panel's report and
   cited sources, as a live ask reads them;
3. the reopened shape (at least plan, notice and report after the newest user turn): the
   longest message after the plan is the report. Its sources are not recoverable: G11.6
   names the panel's source list only, and a reopened chat shows no panel
   (docs/sites.md#facts-without-evidence);
4. neither: look again at each change of the page and after pauses that double (the panel
   opens outside what page.js watches), and open the conversation again when it stays still
   for ``RELOAD_QUIET_S`` (a still-running research shows only its plan there; each load
   shows what the site has by then).

:func:`reopened_report` is the pure decision; :func:`resume_page_research` the page work.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from bridge.errors import StepTimeout
from bridge.providers import composer
from bridge.providers.composer import InputMethod, SendMethod
from bridge.providers.context import AskContext
from bridge.providers.dumps import dump
from bridge.providers.research import (
    REREAD_FIRST_S,
    REREAD_MAX_S,
    ResearchOutcome,
    follow_research,
    page_report,
    users_before_question,
)
from bridge.waiting import scaled

__all__ = ["RELOAD_QUIET_S", "REOPENED_MESSAGES", "reopened_report", "resume_page_research"]

#: G11.6: plan, completion notice, report.
REOPENED_MESSAGES = 3
#: A page that stays still this long is opened again (as bridge.providers.resume does).
RELOAD_QUIET_S = 15.0


def reopened_report(texts: Sequence[str]) -> str | None:
    """The report among a reopened research's messages (pure, G11.6): None until the plan,
    the completion notice and the report are all there; then the longest message after the
    plan (the plan itself is never the report, however long)."""
    if len(texts) < REOPENED_MESSAGES:
        return None
    report = max(texts[1:], key=lambda text: len(text.strip()))
    return report.strip() or None


async def resume_page_research(
    ctx: AskContext, inputs: Sequence[InputMethod], sends: Sequence[SendMethod]
) -> ResearchOutcome:
    """The report of the research the job's question started, read from its conversation
    (module docstring), waiting at most ``ctx.options.timeout`` from the job's pick-up."""
    p = ctx.provider
    deadline = ctx.started + ctx.options.timeout
    research = ctx.used.research
    # Looks come at each DOM change the page reports and, without one, after a pause that
    # doubles (the panel opens outside what page.js watches, as in the ask's own wait).
    pause = scaled(REREAD_FIRST_S)
    still_since = time.monotonic()
    while True:
        look = await ctx.page.call("researchPage", p)
        if look.get("start"):
            # The plan still waits for its start: the ask's own wait presses it and follows.
            users_before = await users_before_question(ctx)
            return await follow_research(ctx, users_before, inputs, sends)
        if look.get("done"):
            return await page_report(ctx)
        shown = await ctx.page.call("researchReopened", p)
        texts = [str(t) for t in shown.get("texts") or []]
        report = reopened_report(texts)
        if report is not None:
            research.setdefault("started", "")
            research["state"] = "done"
            research["sources"] = []
            return ResearchOutcome(report, "done", "page_reopened")
        await ctx.progress("research")
        now = time.monotonic()
        if now >= deadline:
            await dump(ctx, "resumed research showed no report in time")
            raise StepTimeout(p, "wait for the Deep Research report", ctx.options.timeout)
        if now - still_since >= scaled(RELOAD_QUIET_S):
            # Still: open the conversation again to see what the site has by now.
            here = str(await ctx.tab.evaluate("location.href"))
            await ctx.tab.navigate(here, timeout=scaled(30.0))
            wait = min(scaled(ctx.spec.input_wait_s), max(1.0, deadline - time.monotonic()))
            await composer.page_ready(ctx, wait, "load the conversation")
            still_since, pause = time.monotonic(), scaled(REREAD_FIRST_S)
            continue
        wait_s = min(pause, deadline - now, still_since + scaled(RELOAD_QUIET_S) - now)
        changed = await ctx.page.call(
            "whenPageChanges", p, int(max(0.0, wait_s) * 1000), timeout=wait_s + scaled(5.0)
        )
        if changed:
            still_since, pause = time.monotonic(), scaled(REREAD_FIRST_S)
        else:
            pause = min(pause * 2, scaled(REREAD_MAX_S))
