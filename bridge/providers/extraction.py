"""Reading the finished answer (docs/sites.md#answer-sources): the site's network stream
first, then the turn's copy action, then the rendered DOM converted back to markdown.
``bridge.providers.answer_sources`` decides (pure); this module gathers the readings."""

from __future__ import annotations

from bridge.providers.answer_sources import Candidate, Choice, choose
from bridge.providers.context import AskContext
from bridge.providers.copy_action import copy_answer
from bridge.waiting import scaled

__all__ = ["extract"]

#: How long the answer request may still be open once the page shows the answer finished:
#: normally not at all (ChatGPT's page finishes up to 2.7 s after its stream, SITE-FACTS
#: C3.1; Gemini's request ends before its stop button goes, G3.5).
STREAM_GRACE_S = 5.0


async def extract(ctx: AskContext) -> Choice:
    """The answer and the source it came from; rejected sources say why."""
    await ctx.progress("extracting")
    found = await ctx.page.call("extract", ctx.provider)
    rendered = ctx.spec.normalize_answer(str(found.get("text", ""))).strip()
    ctx.used.extraction_step = str(found.get("method", ""))
    wanted = ctx.options.answer_source
    candidates: list[Candidate] = []
    if wanted in ("auto", "network"):
        candidates.append(await _network(ctx))
    if wanted in ("auto", "copy") and ctx.spec.pack.copy_action is not None:
        candidates.append(await _copy(ctx))
    if wanted != "auto":  # measuring one source: its reading as it is, checked by nobody
        for candidate in candidates:
            if candidate.source == wanted:
                return Choice(candidate.text.strip(), wanted, ())
        if wanted != "dom":
            return Choice("", wanted, ((wanted, "not available for this provider"),))
    candidates.append(Candidate("dom", rendered))
    choice = choose(candidates, rendered)
    return Choice(choice.text.strip(), choice.source, choice.rejected, choice.agreement)


async def _network(ctx: AskContext) -> Candidate:
    if ctx.stream is None:
        return Candidate("network", "", why_not="no answer stream for this provider")
    answer, why = await ctx.stream.answer(scaled(STREAM_GRACE_S))
    if answer is None:
        return Candidate("network", "", why_not=why)
    if answer.model:
        ctx.used.model = answer.model  # which model answered, whichever source wins
    return Candidate("network", answer.text, complete=answer.complete)


async def _copy(ctx: AskContext) -> Candidate:
    action = ctx.spec.pack.copy_action
    assert action is not None
    text, why = await copy_answer(
        ctx.page, turn=action.turn, button=action.button, assistant=action.assistant
    )
    return Candidate("copy", text, why_not=why if not text else "")
