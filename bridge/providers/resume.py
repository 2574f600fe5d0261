"""Picking up a job's answer where the asking process left it (docs/flows.md#jobs-resume).

The process that asked may be gone (an MCP server restarted, a browser closed), but the
answer is not: the sites finish it on their servers and keep it in the conversation. So a
job whose owner died is watched again from its conversation, without typing anything:

1. **tab** — the job's tab if it still shows the conversation, else an open tab showing it,
   else a new tab at the conversation URL (a job whose URL was never learnt can only use
   its own tab);
2. **ready** — the page loaded and settled (earlier turns still arriving);
3. **belongs** — the newest user turn must be the job's question: anything else means the
   conversation went on without it, and its newest answer is not this job's;
4. **finished** — no stop button and the answer's own "finished" marks (ChatGPT's action
   bar, Gemini's completed footer or feedback buttons): read it at once;
5. **writing** — a stop button: the page follows the answer still being written (ChatGPT
   resumes its stream), so the same completion detector as an ask watches it to the end;
6. **neither** — no answer yet, or an unfinished one the page does not follow: wait for the
   page to change, and open the conversation again when it stays still for
   ``RELOAD_QUIET_S`` (the site shows more of it on each load).

The answer is then read by the ask's own extraction. The network stream is not there for
a resumed answer (the request that carried it belonged to the old page), so the turn's copy
action or the rendered DOM gives it (docs/sites.md#answer-sources).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from bridge.cdp.browser import Browser
from bridge.cdp.session import CdpSession
from bridge.errors import (
    ProviderError,
    StepTimeout,
)
from bridge.providers import composer
from bridge.providers import tab as tab_step
from bridge.providers.completion import Phase, Verdict
from bridge.providers.completion_loop import Observations, feed, raise_failure, watch_page
from bridge.providers.context import AskContext
from bridge.providers.dumps import dump
from bridge.providers.extraction import extract
from bridge.providers.flow import AskFlow, conclude, outputs_dir_of, research_result
from bridge.providers.outputs import collect_outputs
from bridge.providers.research import follow_research, users_before_question
from bridge.providers.research_resume import resume_page_research
from bridge.providers.results import AskResult, Provider
from bridge.providers.specs import AskOptions, ProgressCallback, ProviderSpec, provider_spec
from bridge.store.state import StateStore
from bridge.waiting import scaled

__all__ = [
    "RELOAD_QUIET_S",
    "AnswerNotInConversation",
    "JobLost",
    "is_conversation_url",
    "resume_answer",
]

log = logging.getLogger(__name__)

#: An answer neither finished nor being written, on a page that stays still this long: open
#: the conversation again (each load shows what the site has written by then).
RELOAD_QUIET_S = 15.0
#: A resumed answer past its ask's timeout still gets this long to be seen finishing.
MIN_WATCH_S = 30.0
#: ChatGPT's transient routes before the conversation id is known (SITE-FACTS C6.4).
_TRANSIENT_IDS = ("WEB:", "local-")


class AnswerNotInConversation(ProviderError):
    """The job's conversation no longer ends with its question."""

    code = "answer_not_in_conversation"

    def __init__(self, provider: str, url: str, newest: str | None) -> None:
        shown = "no question at all" if newest is None else f"{_clip(newest)!r}"
        super().__init__(
            provider,
            f"the conversation at {url} does not end with this job's question (its newest "
            f"question is {shown}): it went on without it, so its newest answer is not this "
            "job's. Open the conversation to find the answer, or ask again.",
        )


class JobLost(ProviderError):
    """Nothing says where the job's answer is."""

    code = "job_lost"

    def __init__(self, provider: str, tab_id: int | None) -> None:
        tab = "its tab is gone" if tab_id is not None else "no tab was recorded"
        super().__init__(
            provider,
            f"this job's {provider} conversation URL was never recorded (the asking process "
            f"ended before the site named the conversation) and {tab}. The answer may be in "
            f"the newest conversation of {provider}'s history; or ask again.",
        )


def _clip(text: str, size: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= size else flat[: size - 1] + "…"


def is_conversation_url(spec: ProviderSpec, url: str | None) -> bool:
    """Whether ``url`` names one conversation of the provider (its pack's conversation path,
    docs/sites.md#chatgpt-urls, #gemini-urls), not a new chat or a transient route."""
    if not url or not url.startswith(spec.url_prefixes):
        return False
    path = urlsplit(url).path
    if not spec.pack.urls.conversation_path.compile().search(path):
        return False
    last = path.rstrip("/").rsplit("/", 1)[-1]
    return not last.startswith(_TRANSIENT_IDS)


def _same_conversation(a: str, b: str) -> bool:
    pa, pb = urlsplit(a), urlsplit(b)
    return pa.netloc == pb.netloc and pa.path.rstrip("/") == pb.path.rstrip("/")


@dataclass(frozen=True)
class _PageState:
    users: int
    answers: int
    user_text: str | None
    answer_after_user: bool
    obs: dict[str, Any]


async def resume_answer(
    browser: Browser,
    store: StateStore,
    provider: Provider,
    question: str,
    key: str,
    *,
    url: str | None,
    tab_id: int | None,
    timeout: float,
    flow: AskFlow | None = None,
    on_progress: ProgressCallback | None = None,
    on_tab: Callable[[CdpSession], None] | None = None,
    research: bool = False,
    research_answers: str | None = None,
    outputs_dir: str | None = None,
    outputs_id: str | None = None,
) -> AskResult:
    """The answer to ``question`` read from its conversation (``url``, or the tab
    ``tab_id``), waiting at most ``timeout`` seconds (at least ``MIN_WATCH_S``) for one
    still being written; a typed BridgeError otherwise. A Deep Research job (``research``)
    keeps waiting for its report instead (docs/sites.md#research). The answer's generated
    images and files are saved as a live ask's are: in ``outputs_dir``, else
    ``<state dir>/outputs/<outputs_id>/`` (docs/sites.md#outputs)."""
    flow = flow or AskFlow()
    spec = provider_spec(provider, store.root)
    budget = max(timeout, scaled(MIN_WATCH_S))
    options = AskOptions(
        timeout=budget,
        on_progress=on_progress,
        research=research,
        research_answers=research_answers,
        outputs_dir=outputs_dir,
        outputs_id=outputs_id,
    )
    ctx = AskContext(browser, store, spec, question, key, options)
    deadline = ctx.started + budget
    await ctx.progress("connect")
    await _find_tab(ctx, url, tab_id)
    if on_tab is not None:
        on_tab(ctx.tab)
    ctx.timings.connect_ms = (time.monotonic() - ctx.started) * 1000
    await tab_step.keep_rendering(ctx)
    if research:
        await _ready(ctx, deadline)
        return await resume_research(ctx, flow)
    waiting_from = time.monotonic()
    while True:
        await _ready(ctx, deadline)
        state = await _page_state(ctx)
        here = str(await ctx.tab.evaluate("location.href"))
        _check_question(ctx, state, url or here)
        await _check_failure(ctx, state)
        if _finished(ctx, state):
            verdict = Verdict(Phase.DONE, "resumed_finished", None, False)
            break
        found = await _watch(ctx, flow, state, deadline)
        if found is not None:
            verdict = found
            break
        # Still: open the conversation again to see what the site has written since.
        await ctx.progress("waiting", 0)
        await ctx.tab.navigate(here, timeout=scaled(30.0))
    choice = await extract(ctx)
    # The images and files the answer generated, as a live ask saves them: the process that
    # asked died before it could, and they are the job's as much as its text is.
    saved = await collect_outputs(ctx, choice.text, outputs_dir_of(store, options))
    ctx.used.outputs = [item.to_dict() for item in saved]
    t, used = ctx.timings, ctx.used
    t.wait_response_ms = (time.monotonic() - waiting_from) * 1000
    t.total_ms = (time.monotonic() - ctx.started) * 1000
    used.completion = verdict.reason
    used.extraction = choice.source
    if verdict.used_fallback:
        used.fallbacks.append(f"completion:{verdict.reason}")
    for source, why in choice.rejected:
        if source != "network":  # never there for a resumed answer: no fallback of note
            used.fallbacks.append(f"extraction:{source} ({why})")
    return await conclude(
        ctx, provider, question, key, choice.text, suspicious="suspicious answer (resumed)"
    )


async def resume_research(ctx: AskContext, flow: AskFlow) -> AskResult:
    """A Deep Research job picked up from its conversation: nothing is typed unless the site
    asks clarifying questions and the job has the person's answers; the research's own wait
    follows its report (bridge.providers.research), counting from the job's question."""
    inputs, sends = flow.inputs_for(ctx.spec), flow.send_methods
    if ctx.spec.pack.selectors.get("research_frame") is None:
        # Gemini: the report is on the page only, in the panel or the reopened chat.
        outcome = await resume_page_research(ctx, inputs, sends)
    else:
        users_before = await users_before_question(ctx)
        outcome = await follow_research(ctx, users_before, inputs, sends)
    ctx.timings.wait_response_ms = (time.monotonic() - ctx.started) * 1000
    return await research_result(ctx, ctx.provider, ctx.question, ctx.key, outcome)


# -- the steps -----------------------------------------------------------------------------


async def _find_tab(ctx: AskContext, url: str | None, tab_id: int | None) -> None:
    spec = ctx.spec
    known = is_conversation_url(spec, url)
    if tab_id is not None:
        found = await tab_step.try_tab(ctx, tab_id)
        # The job's own tab: at its conversation, or (URL never learnt) anywhere on the site;
        # the question check below tells whether it still shows the job's conversation.
        if found is not None and (not known or _same_conversation(found[1], str(url))):
            ctx.session, ctx.used.tab = found[0], "session"
            return
    if known:
        assert url is not None
        for info in await ctx.browser.list_tabs():
            if info.tab_id != tab_id and _same_conversation(info.url, url):
                # The job's conversation itself: worth a navigation's patience (tab.py).
                found = await tab_step.try_tab(ctx, info.tab_id, patient=True)
                if found is not None:
                    ctx.session, ctx.used.tab = found[0], "open_tab"
                    return
        ctx.session, ctx.used.tab = await tab_step.new_tab(ctx, url), "new_tab"
        return
    raise JobLost(ctx.provider, tab_id)


async def _ready(ctx: AskContext, deadline: float) -> None:
    """The page loaded, its earlier turns in (composer.ready without counting or the Gemini
    stuck check: a resumed answer may be one still being written)."""
    wait_s = min(scaled(ctx.spec.input_wait_s), max(1.0, deadline - time.monotonic()))
    await composer.page_ready(ctx, wait_s, "load the conversation")


async def _page_state(ctx: AskContext) -> _PageState:
    selectors = ctx.spec.pack.selectors
    # The newest user turn's text and whether an answer follows it, by the pack's selectors.
    users = list(selectors["user_message"].css)
    answers = list(selectors["assistant_message"].css)
    raw = await ctx.page.call("turnState", users, answers)
    obs = await ctx.page.call("observe", ctx.provider)
    return _PageState(
        users=int(raw["users"]),
        answers=int(raw["answers"]),
        user_text=raw["user_text"] if isinstance(raw["user_text"], str) else None,
        answer_after_user=bool(raw["answer_after_user"]),
        obs=obs,
    )


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _check_question(ctx: AskContext, state: _PageState, url: str) -> None:
    """The newest user turn is the job's question (the page may add a hidden "You said"
    heading, or the question may carry files inlined before it)."""
    asked = _norm(ctx.question)
    shown = _norm(state.user_text or "")
    if asked and shown and (asked in shown or (len(shown) >= 20 and shown in asked)):
        return
    raise AnswerNotInConversation(ctx.provider, url, state.user_text)


async def _check_failure(ctx: AskContext, state: _PageState) -> None:
    """A login wall, or an answer that is an error or a limit notice, ends it as an ask's
    wait would (completion_loop.raise_failure)."""
    obs = state.obs
    reason = None
    if obs.get("login_wall"):
        reason = "login_wall"
    elif state.answer_after_user and obs.get("error_turn"):
        reason = "error_turn"
    elif state.answer_after_user and obs.get("rate_limited") and not obs.get("has_stop_button"):
        reason = "rate_limited"
    if reason is not None:
        await raise_failure(ctx, Verdict(Phase.FAILED, reason, None, False))


def _finished(ctx: AskContext, state: _PageState) -> bool:
    """The answer after the question is there, final and not empty: no stop button, and the
    marks the sites put on a finished answer only (ChatGPT's action bar, C2.6; Gemini's
    completed footer or feedback buttons, G2.6, G2.7)."""
    obs = state.obs
    if not state.answer_after_user or obs.get("has_stop_button"):
        return False
    marks = ("action_bar", "response_complete", "has_feedback_buttons")
    marked = any(obs.get(mark) for mark in marks)
    text_len = int(obs.get("last_assistant_text_len", obs.get("last_response_text_len", 0)))
    return bool(marked) and text_len > 0


async def _watch(
    ctx: AskContext, flow: AskFlow, state: _PageState, deadline: float
) -> Verdict | None:
    """Follow the page: the DONE verdict once the answer is complete, or None when the page
    stayed still for ``RELOAD_QUIET_S`` (the caller opens the conversation again)."""
    async with watch_page(ctx) as reports:
        while True:
            if state.obs.get("has_stop_button"):
                return await _follow(ctx, flow, state, reports, deadline)
            if _finished(ctx, state):
                return Verdict(Phase.DONE, "resumed_finished", None, False)
            await _check_failure(ctx, state)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                await dump(ctx, "resumed answer did not finish in time")
                raise StepTimeout(ctx.provider, "wait for the resumed answer", ctx.options.timeout)
            if await reports.next(min(remaining, scaled(RELOAD_QUIET_S))) is None:
                return None
            state = await _page_state(ctx)  # the page changed: look again


async def _follow(
    ctx: AskContext, flow: AskFlow, state: _PageState, reports: Observations, deadline: float
) -> Verdict:
    """The page is writing the answer: the ask's completion detector, counting the answer
    already shown as the new one (its turn is the one after the question)."""
    raw = state.obs
    count = int(raw.get("assistant_count", raw.get("model_response_count", state.answers)))
    initial = count - 1 if state.answer_after_user else count
    detector = ctx.spec.new_detector(max(0, initial), time.monotonic(), flow.settings.timings)
    verdict = feed(ctx, detector, raw)
    await ctx.progress(verdict.phase.value, detector.chars(raw))
    if verdict.phase is Phase.DONE:
        return verdict
    if verdict.phase in (Phase.FAILED, Phase.STUCK):
        await raise_failure(ctx, verdict)
    ctx.options.timeout = max(1.0, deadline - time.monotonic())
    verdict = await flow.completion(ctx, detector, reports, flow.settings)
    assert verdict.phase is Phase.DONE
    return verdict
