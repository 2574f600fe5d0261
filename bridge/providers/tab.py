"""Finding the provider's tab for an ask (docs/flows.md#tab-reuse): the recorded one, else an
open tab of the site, else a new one; and keeping a background tab rendering."""

from __future__ import annotations

import asyncio
import logging

from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError, BridgeTimeout, CdpError, ProviderError
from bridge.providers.context import AskContext
from bridge.providers.places import is_temporary_url
from bridge.waiting import scaled

__all__ = ["connect", "keep_rendering", "new_tab", "try_tab"]

log = logging.getLogger(__name__)

REUSE_S = 7.0  # docs/sites.md#timeouts: reuse 3 s + health check 4 s
HEALTH_S = 4.0  # docs/sites.md#timeouts: the health check's location.href
#: A tab that shows the very conversation asked for is waited for as a navigation is: on a
#: busy machine its page may take longer than the health check to answer, and giving up
#: on it opens the same conversation in a second tab (docs/sites.md#timeouts).
PATIENT_S = 30.0
NEW_TAB_ATTEMPTS = 3  # docs/sites.md#timeouts: new tab creation, at most 2 retries


async def connect(ctx: AskContext) -> None:
    """Sets ``ctx.session`` to the tab to ask in, at the conversation the ask continues."""
    entry = await ctx.store.get_session_async(ctx.key, ctx.provider)
    place = ctx.place
    fresh = ctx.options.new_chat or entry is None
    target_url = ctx.spec.home_url if fresh or entry is None else entry.url
    if place is not None:
        # Asked somewhere (docs/sites.md#where): that place, whatever the session remembers;
        # a temporary ask never continues the remembered conversation.
        target_url = place.url
    if entry is not None and entry.tab_id is not None:
        found = await try_tab(ctx, entry.tab_id)
        if found is not None:
            ctx.session, ctx.used.tab = found[0], "session"
    if ctx.session is None:
        # Another project's tab (recorded for its key, or in use by its ask right now) is
        # its conversation: asking there would type into it and mix two conversations.
        others = await ctx.store.tabs_of_others_async(ctx.key)
        claims = ctx.browser.claims
        for info in await ctx.browser.list_tabs():
            if info.tab_id in others or not info.url.startswith(ctx.spec.url_prefixes):
                continue
            # Claimed before the first await: two asks looking at once never take one tab.
            had = info.tab_id in claims
            if claims.setdefault(info.tab_id, ctx.key) != ctx.key:
                continue
            found = await try_tab(ctx, info.tab_id, patient=info.url == target_url)
            if found is not None:
                ctx.session, ctx.used.tab = found[0], "open_tab"
                break
            if not had:
                claims.pop(info.tab_id, None)
    if ctx.session is None:
        ctx.session = await new_tab(ctx, target_url)
        ctx.used.tab = "new_tab"
        _claim(ctx)
        return
    _claim(ctx)
    current = str(await ctx.tab.evaluate("location.href"))
    if (
        ctx.options.new_chat
        or (entry is not None and current != target_url)
        # A project's, GPT's or Gem's home, or a temporary chat, is opened afresh: a new chat
        # there; a conversation is opened unless the tab shows it already.
        or (place is not None and (place.kind != "conversation" or current != target_url))
        # A temporary chat is never the place of an ordinary ask (C6.3).
        or (place is None and is_temporary_url(current))
    ):
        await ctx.tab.navigate(target_url, timeout=scaled(30.0))


def _claim(ctx: AskContext) -> None:
    tab_id = ctx.tab.tab_id
    if tab_id is not None:
        ctx.browser.claims[tab_id] = ctx.key


async def keep_rendering(ctx: AskContext) -> None:
    """A hidden tab renders no answer text and no frames (docs/sites.md#background-tab).

    Focus emulation makes the page render as if visible without touching the person's
    window focus, so answers stream into the DOM and progress can count characters.
    ``Page.bringToFront`` stays the last resort (bridge.providers.completion_loop).
    """
    if await ctx.tab.evaluate("document.visibilityState") == "hidden":
        await emulate_focus(ctx)


async def emulate_focus(ctx: AskContext) -> None:
    if not ctx.used.focus_emulated:
        await ctx.tab.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
        ctx.used.focus_emulated = True


async def try_tab(
    ctx: AskContext, tab_id: int, *, patient: bool = False
) -> tuple[CdpSession, str] | None:
    """Attach and health-check within the reuse deadline (``patient``: a tab showing the
    conversation asked for, within PATIENT_S): the session and the URL it shows, or None
    when the tab will not do (gone, unresponsive, or not on the provider's site)."""
    try:
        async with asyncio.timeout(scaled(PATIENT_S if patient else REUSE_S)):
            session = await ctx.browser.attach(tab_id)
        # Bounded on its own: loading is waited for.
        url = await _href(ctx, session, tab_id, scaled(PATIENT_S if patient else HEALTH_S))
    except (BridgeError, TimeoutError) as exc:
        log.info("tab %s not reusable: %s", tab_id, exc)
        return None
    if not url.startswith(ctx.spec.url_prefixes):
        return None
    return session, url


_NAVIGATING = ("navigated or closed", "context was destroyed")


async def _href(ctx: AskContext, session: CdpSession, tab_id: int, check: float) -> str:
    """The tab's URL, each try bounded by the health check's 4 s (docs/sites.md#timeouts).

    A tab that is (re)loading, as one the browser restored at its start, is not
    unresponsive: its page answers "Inspected target navigated or closed", or, while the
    restore has not committed yet, nothing at all until it has (seen in CI under load:
    the evaluate outlived 4 s, then failed as navigated). So a timeout on a tab the browser
    reports loading, or the navigated error, waits for its load (bounded as a navigation
    is, 30 s) and asks the URL again, instead of opening a second tab. A timeout on a
    loaded tab is a hung page: not reusable."""
    for _ in range(3):
        try:
            return str(await session.evaluate("location.href", timeout=check))
        except BridgeTimeout:
            if not await _loading(ctx, tab_id):
                raise
        except CdpError as exc:
            if not any(text in str(exc) for text in _NAVIGATING):
                raise
        await session.send("Page.enable")
        loaded = session.expect_event("Page.loadEventFired")
        try:
            try:
                ready = await session.evaluate("document.readyState", timeout=scaled(4.0))
            except CdpError:
                ready = "loading"
            if ready != "complete":
                await loaded.wait(scaled(30.0))
        finally:
            loaded.close()
    return str(await session.evaluate("location.href", timeout=check))


async def _loading(ctx: AskContext, tab_id: int) -> bool:
    return any(t.tab_id == tab_id and t.loading for t in await ctx.browser.list_tabs())


async def new_tab(ctx: AskContext, url: str) -> CdpSession:
    """A new tab at ``url``, a few attempts (docs/sites.md#timeouts), else a ProviderError."""
    last: BaseException | None = None
    for attempt in range(NEW_TAB_ATTEMPTS):
        try:
            async with asyncio.timeout(scaled(30.0)):
                return await ctx.browser.new_tab(url)
        except (BridgeError, TimeoutError) as exc:
            last = exc
            log.warning("new %s tab failed (attempt %d): %s", ctx.provider, attempt + 1, exc)
    raise ProviderError(
        ctx.provider,
        f"could not open {url} after {NEW_TAB_ATTEMPTS} attempts: {last}. Is the site "
        "reachable from that browser?",
    ) from last
