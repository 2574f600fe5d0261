"""Waiting for the answer to finish: page observations in, the pure detector decides.

page.js reports each change of the page's state through a CDP binding (one report per
change, coalesced per task burst); the loop feeds them to the provider's detector
(``bridge.providers.completion``) and sleeps until the next report, the detector's own next
deadline, or a slow safety-net poll, whichever comes first. The end of the tab ends the
wait at once (``EventStream`` is rejected by the session). The reveal policy for
background tabs lives here too: focus emulation first, ``Page.bringToFront`` last.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bridge.errors import (
    BridgeError,
    LoginRequired,
    NavigatedAway,
    NoResponse,
    ProviderErrorTurn,
    ProviderStuck,
    RateLimited,
    StepTimeout,
)
from bridge.providers.completion import CompletionTimings, Phase, Verdict
from bridge.providers.context import AskContext
from bridge.providers.dumps import dump
from bridge.providers.specs import CompletionDetector
from bridge.providers.tab import emulate_focus
from bridge.waiting import EventStream, scaled

__all__ = [
    "CompletionSettings",
    "CompletionStrategy",
    "Observations",
    "feed",
    "raise_failure",
    "wait_for_completion",
    "watch_page",
]

log = logging.getLogger(__name__)

Observations = EventStream[dict[str, Any]]


@dataclass(frozen=True)
class CompletionSettings:
    """How the completion loop waits: the completion timings, the safety re-read and the focus
    grace before ``bringToFront``."""

    timings: CompletionTimings = field(default_factory=CompletionTimings)
    safety_poll_s: float = 5.0  # re-read the page this often even if no report arrives
    focus_grace_s: float = 2.0  # after focus emulation, how long before bringToFront


#: How an ask waits for its answer once sent: the event-driven loop below, or (in the
#: benchmark's baseline) the spec's 1 s polling.
CompletionStrategy = Callable[
    [AskContext, CompletionDetector, Observations, CompletionSettings], Awaitable[Verdict]
]


@contextlib.asynccontextmanager
async def watch_page(ctx: AskContext) -> AsyncIterator[Observations]:
    """Page reports as a stream, subscribed before the question is sent (the stop button's
    brief appearance must be seen); unsubscribed afterwards."""
    binding = f"__bridgeObs_{secrets.token_hex(6)}"
    await ctx.tab.send("Runtime.enable")
    await ctx.tab.send("Page.enable")  # a new document in the tab ends the wait (below)
    await ctx.tab.send("Runtime.addBinding", {"name": binding})
    reports: Observations = ctx.tab.stream(
        "Runtime.bindingCalled",
        lambda p: p.get("name") == binding,
        transform=lambda p: json.loads(p["payload"]),  # the observation, as JSON
    )

    def navigated(params: dict[str, Any]) -> None:
        # The sites change the URL during an answer client-side, without a new document
        # (docs/sites.md#navigated-away: /c/WEB:<id> then /c/<uuid>, SITE-FACTS C6.4); a new
        # main-frame document means the answer being written is gone (reload, another site).
        frame = params.get("frame", {})
        if not frame.get("parentId"):
            reports.reject(NavigatedAway(ctx.provider, str(frame.get("url", ""))))

    stop_watching = ctx.tab.on("Page.frameNavigated", navigated)
    try:
        await ctx.page.call("watch", ctx.provider, binding)
        yield reports
    finally:
        stop_watching()
        reports.close()
        if ctx.tab.ended is None:
            try:
                await ctx.page.call("unwatch", timeout=scaled(5.0))
                await ctx.tab.send("Runtime.removeBinding", {"name": binding})
            except BridgeError as exc:  # the page went away meanwhile: nothing left to undo
                log.debug("unwatching %s: %s", ctx.provider, exc)


def feed(ctx: AskContext, detector: CompletionDetector, raw: dict[str, Any]) -> Verdict:
    """One observation into the detector, stamped when processed (one clock for all)."""
    now = time.monotonic()
    ctx.observations.append({"t": round(now - ctx.started, 4), **raw})
    del ctx.observations[:-200]
    return detector.observe(now, raw)


async def wait_for_completion(
    ctx: AskContext,
    detector: CompletionDetector,
    reports: Observations,
    settings: CompletionSettings,
) -> Verdict:
    """The event-driven wait: returns the DONE verdict, or raises the typed failure."""
    deadline = time.monotonic() + ctx.options.timeout
    awaiting_text_since: float | None = None
    skip_clicked = False
    verdict = detector.verdict
    while True:
        now = time.monotonic()
        if now >= deadline:
            await dump(ctx, f"no completion within {ctx.options.timeout:.0f}s ({verdict.reason})")
            raise StepTimeout(
                ctx.provider, f"wait for the answer ({verdict.reason})", ctx.options.timeout
            )
        wait = min(deadline - now, scaled(settings.safety_poll_s))
        if verdict.next_deadline is not None:
            wait = min(wait, max(0.0, verdict.next_deadline - now))
        if awaiting_text_since is not None and not ctx.used.brought_to_front:
            wait = min(wait, max(0.0, awaiting_text_since + settings.focus_grace_s - now))
        raw = await reports.next(wait)
        if raw is None:
            now = time.monotonic()
            if verdict.next_deadline is not None and now >= verdict.next_deadline:
                verdict = detector.tick(now)
            else:  # the safety net: read the page ourselves
                raw = await ctx.page.call("observe", ctx.provider)
        if raw is not None:
            verdict = feed(ctx, detector, raw)
            await ctx.progress(verdict.phase.value, detector.chars(raw))
        ctx.verdicts.append(f"{verdict.phase.value}:{verdict.reason}")
        if verdict.phase is Phase.THINKING:
            ctx.used.thinking = True
            wants_skip = ctx.options.skip_thinking and not skip_clicked
            if wants_skip and raw and raw.get("has_skip_thinking_button"):
                skip_clicked = bool(await ctx.page.call("clickSkipThinking"))
                ctx.used.skipped_thinking = skip_clicked
        if verdict.phase is Phase.DONE:
            return verdict
        if verdict.phase in (Phase.FAILED, Phase.STUCK):
            await raise_failure(ctx, verdict)
        if verdict.phase is Phase.AWAITING_TEXT:
            awaiting_text_since = await _reveal_text(ctx, awaiting_text_since, settings)


async def _reveal_text(ctx: AskContext, since: float | None, settings: CompletionSettings) -> float:
    """A background tab renders no answer text (docs/sites.md#background-tab): emulate focus
    first (invisible to the person); only if the text still does not come, bring the tab to
    the front (which takes the person's focus)."""
    now = time.monotonic()
    if since is None:
        await emulate_focus(ctx)
        return now
    if not ctx.used.brought_to_front and now - since >= settings.focus_grace_s:
        await ctx.tab.send("Page.bringToFront")
        ctx.used.brought_to_front = True
    return since


async def raise_failure(ctx: AskContext, verdict: Verdict) -> None:
    """The typed error for a FAILED or STUCK verdict, with what the person can do."""
    if verdict.phase is Phase.STUCK:
        await dump(ctx, f"stuck: {verdict.reason}")
        raise ProviderStuck(ctx.provider, verdict.reason, 1)
    if verdict.reason == "login_wall":
        raise LoginRequired(ctx.provider)
    notices = await ctx.page.call("notices", ctx.provider)
    if verdict.reason == "rate_limited":
        # The reset time: as the notice shows it, else the refused request's retry-after.
        reset = notices.get("rateLimitResets") or (ctx.stream and ctx.stream.retry_after)
        raise RateLimited(
            ctx.provider, notices.get("rateLimit") or "rate limit notice", reset=reset or None
        )
    if verdict.reason == "error_turn":
        raise ProviderErrorTurn(ctx.provider, notices.get("error") or "error")
    await dump(ctx, f"failed: {verdict.reason}")
    raise NoResponse(ctx.provider, verdict.reason)


async def stop_answer(ctx: AskContext) -> None:
    """A cancelled ask stops the answer, so the next ask finds the composer ready."""
    try:
        async with asyncio.timeout(scaled(3.0)):
            await asyncio.shield(ctx.page.call("clickStop", ctx.provider))
    except (BridgeError, TimeoutError) as exc:
        log.info("could not stop the %s answer after a cancel: %s", ctx.provider, exc)
