"""The composer: wait until the page is ready, type the question, send it.

Input and send each have a list of methods tried in order until the page confirms the
step (docs/sites.md#input-fallbacks, docs/sites.md#send-fallbacks). The lists are data: a
``ProviderSpec`` names its input methods, and an ``AskFlow`` may replace either list (the
tests that prove each fallback works start the list at that fallback).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bridge.errors import (
    ChallengeShown,
    InputNotAccepted,
    LoginRequired,
    NotSent,
    ProviderStuck,
    QuestionTakenBack,
    SendFailed,
    StepTimeout,
)
from bridge.providers.context import AskContext
from bridge.providers.dumps import dump
from bridge.waiting import scaled

__all__ = [
    "INPUT_METHODS",
    "SEND_METHODS",
    "InputMethod",
    "SendMethod",
    "click_send",
    "confirm_request",
    "press_key",
    "ready",
    "trusted_click",
    "type_question",
    "watch_take_back",
]

SETTLE_QUIET_MS = 250  # an existing conversation still loading its earlier turns
SETTLE_LIMIT_MS = 5000
STUCK_PRECHECK_MS = 5000  # docs/sites.md#gemini-stuck: a left-over stop button must go by then
SEND_ENABLED_S = 60.0
#: How long after the send a new user turn may still vanish with its text back in the editor:
#: Gemini's "rollback" takes 1–2 s (SITE-FACTS G14.2); twice the longest seen, and the watch
#: costs nothing once the answer has come (docs/sites.md#sent).
TAKE_BACK_WINDOW_S = 4.0


@dataclass(frozen=True)
class InputMethod:
    """One way to put the question in the composer (script, insertText, keys), tried in the
    pack's ``flow.input_methods`` order."""

    name: str
    phase: int  # reported as ``used.input_phase`` (1 = script, 2 = insertText, 3 = keys)
    apply: Callable[[AskContext], Awaitable[Any]]


@dataclass(frozen=True)
class SendMethod:
    """One way to send the question (the send button, Enter, …), tried in order until the
    site shows it was sent."""

    name: str
    apply: Callable[[AskContext], Awaitable[bool]]  # False: this method cannot even try


async def page_ready(ctx: AskContext, wait_s: float, what: str) -> None:
    """The page shows its composer and has settled, or the typed reason it cannot be asked
    (login page, Cloudflare check); ``what`` names the step for a time-out."""
    state = await ctx.page.call("whenReady", ctx.provider, int(wait_s * 1000), timeout=wait_s)
    if state == "challenge":
        raise ChallengeShown(ctx.provider)
    if state == "login":
        raise LoginRequired(ctx.provider)
    if state != "ready":
        await dump(ctx, f"{what}: never happened")
        raise StepTimeout(ctx.provider, what, wait_s)
    # Earlier turns of an existing conversation may still be arriving (Gemini loads them
    # after its composer): wait for the page to settle before counting.
    if await ctx.page.call("needsSettle", ctx.provider):
        await ctx.page.call(
            "quiet", SETTLE_QUIET_MS, SETTLE_LIMIT_MS, timeout=SETTLE_LIMIT_MS / 1000
        )


async def ready(ctx: AskContext) -> int:
    """Composer present and page settled; returns the number of answers already there."""
    await page_ready(ctx, scaled(ctx.spec.input_wait_s), "wait for the input field")
    if ctx.spec.checks_stuck_before_asking:
        gone = await ctx.page.call(
            "whenStopGone", ctx.provider, STUCK_PRECHECK_MS, timeout=STUCK_PRECHECK_MS / 1000
        )
        if gone != "gone":
            raise ProviderStuck(ctx.provider, "stuck_stop_button", 1)
    counts = await ctx.page.call("counts", ctx.provider)
    ctx.initial_users = int(counts["user"])
    return int(counts["assistant"])


# -- input ----------------------------------------------------------------------------------


async def _by_script(ctx: AskContext) -> None:
    await ctx.page.call("setInputByScript", ctx.provider, ctx.question)


async def _by_insert_text(ctx: AskContext) -> None:
    await ctx.page.call("clearInput", ctx.provider)
    await ctx.tab.send("Input.insertText", {"text": ctx.question})


async def _by_key_events(ctx: AskContext) -> None:
    await ctx.page.call("clearInput", ctx.provider)
    for ch in ctx.question:
        if ch == "\n":
            await press_key(ctx, "Enter", shift=True)
        else:
            await ctx.tab.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": ch})
            await ctx.tab.send("Input.dispatchKeyEvent", {"type": "keyUp"})


INPUT_METHODS: dict[str, InputMethod] = {
    m.name: m
    for m in (
        InputMethod("script", 1, _by_script),
        InputMethod("insert_text", 2, _by_insert_text),
        InputMethod("key_events", 3, _by_key_events),
    )
}


async def type_question(ctx: AskContext, methods: Sequence[InputMethod]) -> None:
    """Each method in turn until the composer holds the question."""
    for method in methods:
        await method.apply(ctx)
        if await ctx.page.call("inputHolds", ctx.provider, ctx.question):
            ctx.used.input_phase = method.phase
            if method.phase > 1:
                ctx.used.fallbacks.append(f"input:phase{method.phase}")
            return
    await dump(ctx, "input not accepted")
    raise InputNotAccepted(
        ctx.provider,
        f"the {ctx.provider} composer did not take the question after {len(methods)} input "
        "methods; is the page showing a dialog? Reload the tab and ask again.",
    )


_KEY_CODES = {"Enter": 13, "Escape": 27}


async def press_key(ctx: AskContext, key: str, *, shift: bool = False) -> None:
    base: dict[str, Any] = {
        "key": key,
        "code": key,
        "windowsVirtualKeyCode": _KEY_CODES.get(key, 0),
    }
    if shift:
        base["modifiers"] = 8
    await ctx.tab.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", **base})
    if key == "Enter" and not shift:
        await ctx.tab.send("Input.dispatchKeyEvent", {"type": "char", "text": "\r", **base})
    await ctx.tab.send("Input.dispatchKeyEvent", {"type": "keyUp", **base})


# -- send -----------------------------------------------------------------------------------


async def _script_click(ctx: AskContext) -> bool:
    return bool(await ctx.page.call("clickSend", ctx.provider))


async def trusted_click(ctx: AskContext, target: dict[str, Any]) -> None:
    """A real mouse click (CDP ``Input``) at ``target``'s ``x``/``y``: what sites that ignore
    synthetic clicks need (C1.13). It moves no focus to the window."""
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        params: dict[str, Any] = {"type": kind, "x": target["x"], "y": target["y"]}
        if kind != "mouseMoved":
            params.update(button="left", clickCount=1)
        await ctx.tab.send("Input.dispatchMouseEvent", params)


async def _mouse_click(ctx: AskContext) -> bool:
    target = await ctx.page.call("sendTarget", ctx.provider)
    if not target or target.get("disabled"):
        return False
    await trusted_click(ctx, target)
    return True


async def _enter(ctx: AskContext) -> bool:
    if not await ctx.page.call("focusInput", ctx.provider):
        return False
    await press_key(ctx, "Enter")
    return True


SEND_METHODS: tuple[SendMethod, ...] = (
    SendMethod("js_click", _script_click),
    SendMethod("cdp_mouse", _mouse_click),
    SendMethod("enter", _enter),
)


async def wait_send_enabled(ctx: AskContext) -> None:
    wait_s = scaled(SEND_ENABLED_S)
    state = await ctx.page.call("whenSendEnabled", ctx.provider, int(wait_s * 1000), timeout=wait_s)
    if state != "enabled":
        await dump(ctx, "send button never enabled")
        raise SendFailed(ctx.provider, f"the {ctx.provider} send button never became enabled")


async def click_send(ctx: AskContext, methods: Sequence[SendMethod]) -> None:
    """Each method in turn until the question shows as a new user turn; then, for a pack
    that names its answer request, that request must have been made too (docs/sites.md#sent)."""
    confirm_s = scaled(ctx.spec.send_confirm_s)
    for method in methods:
        if not await method.apply(ctx):
            continue
        sent = await ctx.page.call(
            "whenUserCountAbove",
            ctx.provider,
            ctx.initial_users,
            int(confirm_s * 1000),
            timeout=confirm_s,
        )
        if sent == "sent":
            ctx.used.send_method = method.name
            if method.name != SEND_METHODS[0].name:
                ctx.used.fallbacks.append(f"send:{method.name}")
            # The turn is on the page: no other method may be tried (it would ask twice).
            await confirm_request(ctx, confirm_s)
            return
    await dump(ctx, "send failed")
    raise SendFailed(
        ctx.provider,
        f"the question never appeared as a {ctx.provider} message after "
        f"{', '.join(m.name for m in methods)}; the page may be blocked by a dialog. "
        "Reload the tab.",
    )


async def confirm_request(ctx: AskContext, wait_s: float) -> None:
    """The new user turn shows: the site was asked only if the page also made the pack's
    answer request (SITE-FACTS C14.3, G14.2). It is usually made before the turn shows,
    so this rarely waits; ``NotSent`` when it never comes within ``wait_s``."""
    stream = ctx.stream
    if stream is None or stream.watch is None:  # the pack names no answer request
        ctx.used.sent = "turn"
        return
    if not await stream.watch.sent(wait_s):
        await dump(ctx, "turn shown, no request")
        rule = ctx.spec.pack.stream_rule
        raise NotSent(ctx.provider, f"{rule.method} {rule.url}", wait_s)
    ctx.used.sent = "turn+request"


async def watch_take_back(ctx: AskContext, fail: Callable[[BaseException], None]) -> None:
    """Run beside the answer's wait: when the new user turn vanishes again with the question
    back in the editor within ``TAKE_BACK_WINDOW_S`` (Gemini's rollback, SITE-FACTS G14.2),
    the server refused the question: ``fail`` gets ``QuestionTakenBack`` at once. Event-driven
    in the page (a MutationObserver with a deadline); returns quietly when the window ends."""
    window_s = scaled(TAKE_BACK_WINDOW_S)
    state = await ctx.page.call(
        "whenTakenBack",
        ctx.provider,
        ctx.initial_users,
        ctx.question,
        int(window_s * 1000),
        timeout=window_s + scaled(5.0),
    )
    if state == "taken_back":
        fail(QuestionTakenBack(ctx.provider))
