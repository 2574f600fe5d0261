"""One ask, step by step (docs/flows.md): tab, ready, input, send, completion, extraction.

Each step is its own module; this one strings them together and records what was used.
``AskFlow`` is the configurable part of the flow (input and send methods, how completion
is awaited, its timings): ``Bridge`` takes one, the default being the product's flow.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bridge.cdp.browser import Browser
from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError
from bridge.providers import composer, tab
from bridge.providers.attachments import Attachments
from bridge.providers.completion import Phase, is_suspicious_answer
from bridge.providers.completion_loop import (
    CompletionSettings,
    CompletionStrategy,
    Observations,
    stop_answer,
    wait_for_completion,
    watch_page,
)
from bridge.providers.composer import INPUT_METHODS, SEND_METHODS, InputMethod, SendMethod
from bridge.providers.context import AskContext
from bridge.providers.dumps import dump
from bridge.providers.effort import choose_deep_think, choose_effort, deep_think_shown
from bridge.providers.extraction import extract
from bridge.providers.modes import choose_mode
from bridge.providers.network_answer import answer_stream
from bridge.providers.outputs import collect_outputs
from bridge.providers.places import check_place, landed, resolve_place
from bridge.providers.research import ResearchOutcome, choose_research, follow_research
from bridge.providers.results import AskResult, Provider
from bridge.providers.specs import AskOptions, ProviderSpec, provider_spec
from bridge.providers.uploads import attach_files
from bridge.store.outputs import new_output_id, outputs_folder
from bridge.store.state import StateStore
from bridge.tasks import TaskSet

__all__ = [
    "AskFlow",
    "conclude",
    "connect_tab",
    "outputs_dir_of",
    "research_result",
    "run_ask",
    "save_session",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AskFlow:
    """How asks are carried out. The defaults are the product's; a field set here applies
    to every provider (e.g. ``send_methods=SEND_METHODS[1:]`` starts at the mouse click)."""

    input_methods: Sequence[InputMethod] | None = None  # None: each spec's own list
    send_methods: Sequence[SendMethod] = SEND_METHODS
    completion: CompletionStrategy = wait_for_completion
    settings: CompletionSettings = field(default_factory=CompletionSettings)

    def inputs_for(self, spec: ProviderSpec) -> Sequence[InputMethod]:
        if self.input_methods is not None:
            return self.input_methods
        return [INPUT_METHODS[name] for name in spec.input_methods]


async def run_ask(
    browser: Browser,
    store: StateStore,
    provider: Provider,
    question: str,
    key: str,
    options: AskOptions,
    flow: AskFlow | None = None,
    *,
    on_tab: Callable[[CdpSession], None] | None = None,
    attachments: Attachments | None = None,
) -> AskResult:
    """One attempt at an ask (retries are the facade's); a typed BridgeError on failure.

    ``on_tab`` hears of the tab as soon as it is found (the facade lets diagnosis tools
    look at it while the answer is still coming). ``attachments`` (read and checked by
    ``prepare_files``) are uploaded before the question is typed; inlined ones are typed
    with it."""
    flow = flow or AskFlow()
    files = attachments or Attachments()
    spec = provider_spec(provider, store.root)  # the pack as it is now, override included
    ctx = AskContext(browser, store, spec, files.compose(question), key, options)
    # Bad forms (another host, a project for Gemini…) are refused before the browser is touched.
    ctx.place = resolve_place(spec, options)
    t = ctx.timings
    mark = time.monotonic()

    def lap() -> float:
        nonlocal mark
        now = time.monotonic()
        ms, mark = (now - mark) * 1000, now
        return ms

    await ctx.progress("connect")
    await tab.connect(ctx)
    if on_tab is not None:
        on_tab(ctx.tab)
    if ctx.place is not None:
        # An error page or a redirect away fails at once, not after the composer's wait.
        await landed(ctx, ctx.place)
    t.connect_ms = lap()
    await tab.keep_rendering(ctx)
    initial = await composer.ready(ctx)
    t.wait_input_ms = lap()
    if ctx.place is not None:
        # Before mode, files and text: a place the page does not show ends the ask unsent.
        await ctx.progress("place")
        ctx.used.place = await check_place(ctx, ctx.place)
        ctx.used.temporary = ctx.place.kind == "temporary"
    if options.mode:
        # Before files and text: a mode that cannot be confirmed ends the ask with nothing sent.
        await ctx.progress("mode")
        ctx.used.mode = await choose_mode(ctx, options.mode)
    if options.effort:
        # After the mode (the tier belongs to the model), before anything is typed.
        await ctx.progress("effort")
        ctx.used.effort = await choose_effort(ctx, options.effort)
    if options.deep_think:
        await ctx.progress("effort")
        ctx.used.deep_think = await choose_deep_think(ctx)
    else:
        ctx.used.deep_think = await deep_think_shown(ctx)
    if options.research:
        # Last of the choices, before files and text: not offered or not armed ends the ask
        # with nothing typed (docs/sites.md#research).
        await ctx.progress("research_setup")
        ctx.used.research = await choose_research(ctx)
    if files:
        # Uploads first, and finished, so the send never races them (input_ms includes it).
        await ctx.progress("attach")
        methods = await attach_files(ctx, files.uploads)
        ctx.used.attachments = files.summary(methods)
    await ctx.progress("input")
    await composer.type_question(ctx, flow.inputs_for(spec))
    t.input_ms = lap()
    await ctx.progress("send")
    await composer.wait_send_enabled(ctx)
    users_before = ctx.initial_users
    outcome: ResearchOutcome | None = None
    async with watch_page(ctx) as reports, _answer_stream(ctx, reports):
        detector = spec.new_detector(initial, time.monotonic(), flow.settings.timings)
        send_started = time.monotonic()
        await composer.click_send(ctx, flow.send_methods)
        t.send_ms = (time.monotonic() - send_started) * 1000
        async with _take_back_watch(ctx, reports):
            try:
                if options.research:
                    # The research's own wait: plan, clarifying questions, report.
                    outcome = await follow_research(
                        ctx, users_before, flow.inputs_for(spec), flow.send_methods
                    )
                else:
                    verdict = await flow.completion(ctx, detector, reports, flow.settings)
            except asyncio.CancelledError:
                # The caller gave up (an MCP client cancelled): stop the answer so the next
                # ask finds the composer ready instead of a tab still generating.
                await stop_answer(ctx)
                raise
            if outcome is None:
                assert verdict.phase is Phase.DONE
                choice = await extract(ctx)
                # Generated images and files, once the answer is read (docs/sites.md#outputs).
                saved = await collect_outputs(ctx, choice.text, outputs_dir_of(store, options))
                ctx.used.outputs = [item.to_dict() for item in saved]
    if outcome is not None:
        t.wait_response_ms = lap()
        return await research_result(ctx, provider, question, key, outcome)
    answer = choice.text
    t.wait_response_ms = lap()
    t.total_ms = (time.monotonic() - ctx.started) * 1000
    used = ctx.used
    used.completion = verdict.reason
    used.extraction = choice.source
    if verdict.used_fallback:
        used.fallbacks.append(f"completion:{verdict.reason}")
    for source, why in choice.rejected:
        used.fallbacks.append(f"extraction:{source} ({why})")
    return await conclude(ctx, provider, question, key, answer, suspicious="suspicious answer")


async def conclude(
    ctx: AskContext,
    provider: Provider,
    question: str,
    key: str,
    answer: str,
    *,
    suspicious: str | None,
) -> AskResult:
    """The one way an ask ends, live, researched or resumed: its result at the tab's URL
    now, flagged (and its page dumped with the note ``suspicious``) when the answer looks
    wrong, the conversation saved for the project (never a temporary chat's: it is
    recorded nowhere, docs/sites.md#where), and "done" said."""
    url = str(await ctx.tab.evaluate("location.href"))
    result = AskResult(
        provider=provider,
        question=question,
        answer=answer,
        url=url,
        timings=ctx.timings,
        used=ctx.used,
        session_key=key,
    )
    if suspicious is not None and is_suspicious_answer(answer, question):
        result.suspicious = True
        await dump(ctx, suspicious)
    if not ctx.options.temporary:
        await save_session(ctx.store, key, provider, url, ctx.tab.tab_id)
    await ctx.progress("done", len(answer))
    return result


def outputs_dir_of(store: StateStore, options: AskOptions) -> Path:
    """Where this ask's outputs go: the folder the facade checked, else a new one of its
    own under the state directory (made only when something is saved)."""
    if options.outputs_dir is not None:
        return Path(options.outputs_dir)
    return outputs_folder(store.root, options.outputs_id or new_output_id(), None)


async def research_result(
    ctx: AskContext, provider: Provider, question: str, key: str, outcome: ResearchOutcome
) -> AskResult:
    """A research's result: the report (or the site's clarifying questions) as the answer,
    ``used.completion`` "research:<state>", ``used.extraction`` where it was read."""
    t = ctx.timings
    t.total_ms = (time.monotonic() - ctx.started) * 1000
    used = ctx.used
    used.completion = f"research:{outcome.state}"
    used.extraction = outcome.source
    # A report is not checked like an answer: its sources and length are its own.
    return await conclude(ctx, provider, question, key, outcome.answer, suspicious=None)


@contextlib.asynccontextmanager
async def _answer_stream(ctx: AskContext, reports: Observations) -> AsyncIterator[None]:
    """Watch the answer request while the question is sent and answered; a status that
    ends the ask (429, 401, a challenge, a usage-limit wire code) ends the wait at once."""
    rule = ctx.spec.pack.stream_rule
    if rule is None:
        yield
        return
    async with answer_stream(ctx.tab, ctx.provider, rule, reports.reject) as stream:
        ctx.stream = stream
        try:
            yield
        finally:
            ctx.stream = None


@contextlib.asynccontextmanager
async def _take_back_watch(ctx: AskContext, reports: Observations) -> AsyncIterator[None]:
    """While the answer is awaited: a question the site takes back (its turn gone again, the
    text back in the editor: SITE-FACTS G14.2) ends the wait at once (docs/sites.md#sent)."""

    async def watch() -> None:
        try:
            await composer.watch_take_back(ctx, reports.reject)
        except BridgeError as exc:  # the tab went or navigated: the answer's wait says so
            log.debug("take-back watch on %s: %s", ctx.provider, exc)

    tasks = TaskSet("take-back watch", log)
    tasks.spawn(watch())
    try:
        yield
    finally:
        await tasks.stop()


async def connect_tab(
    browser: Browser, store: StateStore, provider: Provider, key: str, *, new_chat: bool = False
) -> CdpSession:
    """Only the tab step of an ask: the provider's tab, as an ask would find it."""
    ctx = AskContext(
        browser, store, provider_spec(provider, store.root), "", key, AskOptions(new_chat=new_chat)
    )
    await tab.connect(ctx)
    url = str(await ctx.tab.evaluate("location.href"))
    await save_session(store, key, provider, url, ctx.tab.tab_id)
    return ctx.tab


async def save_session(
    store: StateStore, key: str, provider: Provider, url: str, tab_id: int | None
) -> None:
    """Record the conversation for the next ask; a state directory that cannot be written
    costs the record, never the answer (the store says so, once)."""
    try:
        await store.put_session_async(key, provider, url, tab_id)
    except OSError as exc:
        store.report_fault("save the session to", store.sessions_path, exc)
