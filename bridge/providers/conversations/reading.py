"""Reading a conversation from its tab, and the list of recent ones: the I/O half of
``bridge.providers.conversations`` (docs/sites.md#conversations).

The page's read request is watched passively while the page (re)loads; the rendered turns
are read through page.js (scrolling a virtualized history up step by step); the pure parts
(``read_formats``, ``merge``) decide which reading is believed.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bridge.cdp.browser import Browser
from bridge.cdp.page_script import PageScript
from bridge.cdp.session import CdpSession
from bridge.errors import (
    BridgeError,
    ChallengeShown,
    ConversationNotFound,
    LoginRequired,
    StepTimeout,
)
from bridge.providers.ask_script import provider_page
from bridge.providers.conversations.merge import cross_check, merge_runs, merge_window
from bridge.providers.conversations.read_formats import READ_FORMATS
from bridge.providers.conversations.turns import (
    Conversation,
    ConversationLink,
    ConversationList,
    ConversationSource,
    PageTurn,
    Turn,
    mark_writing,
)
from bridge.providers.conversations.urls import conversation_path, conversation_url, last_segment
from bridge.providers.flow import connect_tab
from bridge.providers.pack import Stream
from bridge.providers.request_watch import RequestWatch, refusal, watch_requests
from bridge.providers.specs import ProviderSpec
from bridge.store.state import StateStore
from bridge.waiting import scaled

__all__ = ["get_conversation", "list_conversations"]

log = logging.getLogger(__name__)

# -- limits (docs/sites.md#conversations) ------------------------------------------------------

#: The page's turns have loaded when none changed for this long (they arrive in bursts).
TURNS_QUIET_MS = 300
#: How long a conversation page may take to show its first turn.
TURNS_WAIT_S = 15.0
#: The read request normally finished before the page showed the turns it carries.
READ_GRACE_S = 10.0
#: One step up a virtualized history: it ends at the first mutation that changes the turn
#: at the top, else after this long without any mutation, and never lasts longer than
#: HISTORY_STEP_S.
HISTORY_QUIET_MS = 1500
HISTORY_STEP_S = 8.0
#: The whole walk up: at most this many steps, and this long.
HISTORY_MAX_STEPS = 400
HISTORY_LIMIT_S = 180.0
#: Scrolling back down afterwards (cosmetic: the page is left as it was found).
RESTORE_QUIET_MS = 500
RESTORE_MAX_STEPS = 100
#: The sidebar's links have loaded when they did not change for this long...
LINKS_QUIET_MS = 400
#: ...and a page that shows none within this long has none to show.
LINKS_WAIT_S = 8.0

# -- the page's read request, watched passively ----------------------------------------------------


async def _settled(watch: RequestWatch, wait: float) -> None:
    """Every read seen so far finished and its body in, or ``wait`` seconds passed."""
    deadline = time.monotonic() + wait
    for read in list(watch.requests.values()):
        if not await watch.finished(read, max(0.0, deadline - time.monotonic())):
            return


def _reading(
    watch: RequestWatch, provider: str, conversation_id: str
) -> tuple[list[Turn] | None, str, int]:
    """``(turns, why not, HTTP status)`` of the newest usable read of ``conversation_id``;
    raises the typed error a refusal means (401, a challenge, 429)."""
    reads = list(watch.requests.values())
    if not reads:
        return None, "no conversation read request seen (a page served from memory, C6.5)", 0
    for read in reads:
        error = refusal(provider, read, "reading the conversation")
        if error is not None:
            raise error
    ours = [r for r in reads if last_segment(urlsplit(r.url).path) == conversation_id]
    if not ours:
        return None, "the read response is for another conversation", 0
    good = [r for r in ours if r.status == 200 and r.body is not None]
    if not good:
        last = ours[-1]
        status = last.status or 0
        why = last.failed or (f"HTTP {status}" if status else "no response")
        return None, why, status
    turns = READ_FORMATS[watch.rule.format](good[-1].body or "")
    if turns is None:
        return None, f"not a {watch.rule.format} body", 200
    return turns, "", 200


@contextlib.asynccontextmanager
async def _watch_reads(tab: CdpSession, rule: Stream | None) -> AsyncIterator[RequestWatch | None]:
    """Watch ``rule``'s requests while the block runs (``request_watch``)."""
    if rule is None:
        yield None
        return
    async with watch_requests(tab, rule) as watch:
        yield watch


# -- the page ------------------------------------------------------------------------------------


async def _render(tab: CdpSession) -> None:
    """A hidden tab renders no answer text (ChatGPT, C2.11) and no scrolling (no frames):
    focus emulation makes it render as if visible, without taking the person's focus
    (docs/sites.md#background-tab)."""
    if await tab.evaluate("document.visibilityState") == "hidden":
        await tab.send("Emulation.setFocusEmulationEnabled", {"enabled": True})


async def _ready(page: PageScript, spec: ProviderSpec) -> None:
    """The page loaded, or the reason it cannot be read (a login page, a Cloudflare check)."""
    wait_s = scaled(spec.input_wait_s)
    state = await page.call("whenReady", spec.name, int(wait_s * 1000), timeout=wait_s)
    if state == "challenge":
        raise ChallengeShown(spec.name)
    if state == "login":
        raise LoginRequired(spec.name)
    if state != "ready":
        raise StepTimeout(spec.name, "wait for the conversation page", wait_s)


async def _when_turns(page: PageScript, provider: str, least: int) -> int:
    wait_s = scaled(TURNS_WAIT_S)
    count = await page.call(
        "whenTurns", provider, least, TURNS_QUIET_MS, int(wait_s * 1000), timeout=wait_s
    )
    return int(count)


def _page_turns(spec: ProviderSpec, raw: Any) -> list[PageTurn]:
    turns = [PageTurn.from_page(t) for t in raw if isinstance(t, dict)] if raw else []
    # Answers read from the DOM get the tidying the ask's DOM answers get.
    return [
        PageTurn(
            t.key,
            t.role,
            spec.normalize_answer(t.markdown) if t.role == "assistant" else t.markdown,
        )
        for t in turns
    ]


async def _writing(page: PageScript, spec: ProviderSpec) -> bool:
    """Whether the page shows its newest answer still being written, by the observation an
    ask's completion reads (page.js ``observe``), no markup of its own: a stop button (C1.7,
    G1.5) or ChatGPT's thinking status or skip control (C4.1, C4.4); and where the pack names
    a finished mark for answers (Gemini's completed footer, G2.7), the newest answer having
    neither it nor its feedback buttons (G2.6), as a reopened Gemini page shows an answer it
    does not follow (the marks ``resume`` reads too)."""
    obs = await page.call("observe", spec.name)
    if not isinstance(obs, dict):
        return False
    if any(
        obs.get(k) for k in ("has_stop_button", "still_generating_text", "has_skip_thinking_button")
    ):
        return True
    if "response_complete" in spec.pack.selectors and "response_complete" in obs:
        answers = int(obs.get("model_response_count", obs.get("answer_count", 0)) or 0)
        return answers > 0 and not (obs["response_complete"] or obs.get("has_feedback_buttons"))
    return False


async def _dom_reading(page: PageScript, spec: ProviderSpec) -> tuple[list[PageTurn], int, str]:
    """The page's turns ``(turns, steps up the history, note)``: as rendered, or for a
    virtualized history (the pack's ``selectors.history_scroller``, G2.1) collected while
    scrolling it up until a step at the top renders nothing new."""
    collected: list[PageTurn] = []
    merge_window(collected, _page_turns(spec, await page.call("conversationTurns", spec.name)))
    if "history_scroller" not in spec.pack.selectors:
        return collected, 0, ""
    steps, note = 0, ""
    step_s = scaled(HISTORY_STEP_S)
    deadline = time.monotonic() + scaled(HISTORY_LIMIT_S)
    quiet = int(HISTORY_QUIET_MS * scaled(1.0))
    while True:
        if steps >= HISTORY_MAX_STEPS or time.monotonic() > deadline:
            note = (
                f"stopped scrolling up the history after {steps} steps: earlier turns may be "
                "missing"
            )
            break
        step = await page.call(
            "historyStep", spec.name, "top", quiet, int(step_s * 1000), timeout=step_s
        )
        steps += 1
        if not step.get("scroller"):
            break  # nothing scrolls: every turn is rendered
        added = merge_window(collected, _page_turns(spec, step.get("turns")))
        if not added and not step.get("changed") and step.get("atEnd"):
            break  # at the top, and nothing more came: the first turn is rendered
    await _scroll_back(page, spec.name)
    return collected, steps, note


async def _scroll_back(page: PageScript, provider: str) -> None:
    """Leave the history at its newest turns, where the page keeps it."""
    step_s = scaled(HISTORY_STEP_S)
    for _ in range(RESTORE_MAX_STEPS):
        step = await page.call(
            "historyStep", provider, "bottom", RESTORE_QUIET_MS, int(step_s * 1000), timeout=step_s
        )
        if not step.get("changed"):
            return


async def _read(
    tab: CdpSession,
    spec: ProviderSpec,
    state_dir: Path | None,
    *,
    load: str | None,
    source: ConversationSource,
    tab_kind: str,
) -> Conversation:
    """Read the conversation ``tab`` shows, after loading ``load`` into it (None: as it is)."""
    started = time.monotonic()
    provider = spec.name
    page = provider_page(tab, state_dir)
    await _render(tab)
    rule = spec.pack.network.conversation_read
    watch_rule = rule if load is not None and source != "dom" else None
    network: list[Turn] | None = None
    network_why = ""
    status = 0
    async with _watch_reads(tab, watch_rule) as watch:
        if load is not None:
            await tab.navigate(load, timeout=scaled(30.0))
        await _ready(page, spec)
        url = str(await tab.evaluate("location.href"))
        path = conversation_path(spec, url)

        def result(turns: list[Turn], chosen: str, **more: Any) -> Conversation:
            return Conversation(
                provider,
                url,
                turns,
                chosen,
                tab=tab_kind,
                elapsed_ms=(time.monotonic() - started) * 1000,
                **more,
            )

        if path is None:
            return result(
                [],
                "none",
                notes=[
                    f"the {provider} tab shows no conversation ({url}): ask first, or give "
                    "the url of a conversation"
                ],
            )
        shown = await _when_turns(page, provider, 1)
        # Looked at before and after the reading: text read while the answer was still
        # coming is partial even if it ended meanwhile.
        writing = await _writing(page, spec)
        if watch is not None:
            await _settled(watch, scaled(READ_GRACE_S))
            network, network_why, status = _reading(watch, provider, last_segment(path))
            if network is not None and len(network) > shown:
                await _when_turns(page, provider, len(network))
    if rule is None:
        network_why = (
            f"{provider} has no documented conversation read format (docs/sites.md#conversations)"
        )
    elif watch_rule is None and source != "dom":
        network_why = "the page was not loaded, so its read request was not seen"
    page_turns, steps, note = await _dom_reading(page, spec)
    writing = await _writing(page, spec) or writing
    dom = merge_runs([Turn(t.role, t.markdown) for t in page_turns])
    if writing:
        mark_writing(dom)
    notes = [note] if note else []
    if not dom and status == 404:
        raise ConversationNotFound(provider, url)
    if not dom and not network:
        notes.append(
            f"the page showed no turns within {scaled(TURNS_WAIT_S):.0f}s (a conversation "
            "this account cannot open, or one still loading)"
        )
    rejected: list[tuple[str, str]] = []
    if source == "dom":
        return result(dom, "dom", scroll_steps=steps, notes=notes)
    if source == "network":  # measuring one source: its reading as it is, checked by nobody
        if network is None:
            rejected.append(("network", network_why))
        return result(
            merge_runs(network or []), "network", rejected=rejected, scroll_steps=steps, notes=notes
        )
    if network is not None:
        merged = merge_runs(network)
        if writing:  # the page still writes what the read response had so far
            mark_writing(merged)
        score, why = cross_check(merged, dom)
        if not why:
            if not dom:
                notes.append("the page showed no turns to check the read response against")
            return result(merged, "network", agreement=score, scroll_steps=steps, notes=notes)
        rejected.append(("network", why))
    else:
        rejected.append(("network", network_why))
    return result(dom, "dom", rejected=rejected, scroll_steps=steps, notes=notes)


async def get_conversation(
    browser: Browser,
    store: StateStore,
    spec: ProviderSpec,
    key: str,
    url: str | None,
    source: ConversationSource = "auto",
) -> Conversation:
    """Every turn of the project's conversation (``url`` None: the tab an ask would use,
    reloaded so its read request is seen, unless ``source`` is "dom") or of ``url`` (in the
    project's tab when it shows that conversation, else in a background tab of its own,
    closed afterwards: the project's tab stays where the next ask continues).

    The caller holds the project's provider lock (``Bridge``): a running ask finishes first.
    """
    if url is not None:
        url = conversation_url(spec, url)
        entry = await store.get_session_async(key, spec.name)
        if entry is None or entry.url.split("#", 1)[0] != url:
            tab = await browser.new_tab("about:blank")
            try:
                return await _read(
                    tab, spec, store.root, load=url, source=source, tab_kind="temporary"
                )
            finally:
                try:
                    await browser.close_tab(tab.tab_id)
                except BridgeError as exc:  # already gone
                    log.debug("closing the reading tab %s: %s", tab.tab_id, exc)
    tab = await connect_tab(browser, store, spec.name, key)
    current = str(await tab.evaluate("location.href"))
    reload = source != "dom" and conversation_path(spec, current) is not None
    return await _read(
        tab,
        spec,
        store.root,
        load=current if reload and spec.pack.network.conversation_read else None,
        source=source,
        tab_kind="session",
    )


async def list_conversations(
    tab: CdpSession, spec: ProviderSpec, state_dir: Path | None
) -> ConversationList:
    """The recent conversations ``tab``'s page lists (docs/sites.md#conversations): ChatGPT's
    sidebar (C5.2) by the pack's selectors; elsewhere, or when those find nothing, any link
    on the page to a conversation URL, outside the messages (by behaviour)."""
    page = provider_page(tab, state_dir)
    await _ready(page, spec)
    wait_s = scaled(LINKS_WAIT_S)
    found = await page.call(
        "whenConversationLinks", spec.name, LINKS_QUIET_MS, int(wait_s * 1000), timeout=wait_s
    )
    links = [
        ConversationLink(str(link.get("title", "")), str(link.get("url", "")))
        for link in found.get("links", [])
        if isinstance(link, dict)
    ]
    notes: list[str] = []
    if not links:
        notes.append(
            f"no links to {spec.name} conversations on the page within {wait_s:.0f}s: the "
            "sidebar may be closed (open it and ask again), or the account has none"
        )
    page_url = str(await tab.evaluate("location.href"))
    return ConversationList(spec.name, links, str(found.get("method", "")), page_url, notes)
