"""Reading whole conversations and the list of recent ones (docs/sites.md#conversations).

A conversation is read the way an answer is (docs/sites.md#answer-sources): the site's own
data first, the rendered page as the check and the fallback.

- **network**: when a conversation page loads, the page itself fetches the conversation
  (ChatGPT ``GET /backend-api/conversation/<id>`` → ``{mapping, current_node}`` or
  ``/backend-api/conversations/<id>`` → ``{messages[]}``, SITE-FACTS C7.8). bridge watches
  that request passively through CDP ``Network`` while it (re)loads the page, as it watches
  the answer request during an ask: nothing is sent by bridge, nothing intercepted. A chat
  revisited in the same page is served from memory (C6.5), so reading the network means
  loading the page. Gemini's read (``hNvQHb``, G7.4) has no documented payload, so Gemini
  has no network reading.
- **dom**: the rendered turns in document order, answers through page.js's markdown
  converter (the one ``extract`` uses), questions as their text. Gemini's history scroller
  is virtualized (G2.1: ~10 messages rendered, older ones on scroll-up, off-screen ones
  removed), so the reading scrolls it up step by step, collecting turns as they render,
  until a step at the top renders nothing new.

A network reading is believed only when the page agrees with it turn by turn (roles, and
:func:`bridge.providers.answer_sources.agreement` over each turn's words) and it is for the
conversation the page shows; otherwise the DOM's reading is returned and the rejection
said. The pure parts (the ``mapping`` walker, merging, the cross-check) come first here;
the tab work after them.

A conversation may be read while its newest answer is still being written, and a reader
must not take that partial text for the answer: each turn says whether it is ``complete``.
The network reading knows it per message (ChatGPT's ``status``, C7.5/C7.3); the page only
for the newest answer, by the same observation an ask's completion reads (a stop button or
a thinking status; where the pack names a finished mark, G2.7, its absence).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
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
from bridge.providers.answer_sources import AGREEMENT_THRESHOLD, agreement
from bridge.providers.ask_script import provider_page
from bridge.providers.flow import connect_tab
from bridge.providers.pack import Stream
from bridge.providers.request_watch import RequestWatch, refusal, watch_requests
from bridge.providers.results import Provider
from bridge.providers.specs import ProviderSpec
from bridge.store.state import StateStore
from bridge.waiting import scaled

__all__ = [
    "READ_FORMATS",
    "Conversation",
    "ConversationLink",
    "ConversationList",
    "ConversationSource",
    "PageTurn",
    "Turn",
    "chatgpt_conversation",
    "conversation_url",
    "cross_check",
    "get_conversation",
    "list_conversations",
    "merge_runs",
    "merge_window",
]

log = logging.getLogger(__name__)

Role = Literal["user", "assistant"]
ConversationSource = Literal["auto", "network", "dom"]

#: The names a transcript gives each side.
_NAMES: dict[str, str] = {"chatgpt": "ChatGPT", "gemini": "Gemini"}
#: What a conversation URL looks like, for error messages.
_EXAMPLES: dict[str, str] = {
    "chatgpt": "https://chatgpt.com/c/<id>",
    "gemini": "https://gemini.google.com/app/<id>",
}

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


# -- what a reading returns ----------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One turn: who spoke, and what, as markdown (a question as the person typed it).

    ``complete`` is False for an answer the site had not finished writing when it was read
    (still streaming, or, from ChatGPT's own data, left unfinished): its markdown is only
    what existed then, so a caller must not take it for the whole answer."""

    role: Role
    markdown: str
    complete: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "markdown": self.markdown, "complete": self.complete}


@dataclass
class Conversation:
    """A conversation's turns in order, and how they were read."""

    provider: Provider
    url: str
    turns: list[Turn]
    #: "network" (the page's own read response, checked against the page), "dom" (the
    #: rendered page), or "none" (the tab shows no conversation).
    source: str
    #: Sources tried before the one used, each with why it lost.
    rejected: list[tuple[str, str]] = field(default_factory=list)
    #: The worst turn's agreement between the network reading and the page (1.0 when the
    #: DOM was used or nothing could be compared).
    agreement: float = 1.0
    #: "session" (the project's tab, as an ask would use it) or "temporary" (a tab opened
    #: for a URL and closed again).
    tab: str = "session"
    #: Steps taken up a virtualized history (Gemini), 0 elsewhere.
    scroll_steps: int = 0
    notes: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "url": self.url,
            "turns": [t.to_dict() for t in self.turns],
            "source": self.source,
            "rejected": [{"source": s, "why": why} for s, why in self.rejected],
            "agreement": round(self.agreement, 3),
            "tab": self.tab,
            "scroll_steps": self.scroll_steps,
            "notes": list(self.notes),
            "elapsed_ms": round(self.elapsed_ms, 1),
        }

    def transcript(self) -> str:
        """The turns as one markdown text, each under a heading naming its side."""
        if not self.turns:
            return "(no turns)" + "".join(f"\n{note}" for note in self.notes)
        name = _NAMES.get(self.provider, self.provider)
        parts = [
            f"## {'User' if t.role == 'user' else name} "
            f"({i}{'' if t.complete else ', incomplete: still being written'})\n\n{t.markdown}"
            for i, t in enumerate(self.turns, 1)
        ]
        return "\n\n".join(parts)


@dataclass(frozen=True)
class ConversationLink:
    title: str
    url: str

    def to_dict(self) -> dict[str, str]:
        return {"title": self.title, "url": self.url}


@dataclass
class ConversationList:
    """Recent conversations as the site's page lists them."""

    provider: Provider
    conversations: list[ConversationLink]
    #: "sidebar" (the pack's sidebar selectors, ChatGPT C5.2) or "links" (any link on the
    #: page to a conversation URL: by behaviour, where no sidebar markup is evidenced).
    method: str
    page_url: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "conversations": [c.to_dict() for c in self.conversations],
            "method": self.method,
            "page_url": self.page_url,
            "notes": list(self.notes),
        }

    def text(self) -> str:
        if not self.conversations:
            return "(no conversations found)" + "".join(f"\n{n}" for n in self.notes)
        return "\n".join(f"- [{c.title or '(untitled)'}]({c.url})" for c in self.conversations)


# -- ChatGPT's read response (pure) ----------------------------------------------------------------

# content_type values whose string parts are what the page shows as a turn (C7.5); thoughts,
# reasoning recaps, code and tool output are not turns (C4.5).
_TURN_CONTENT = ("text", "multimodal_text")
# A mapping is a tree; a walk longer than this is a cycle or garbage.
_MAX_NODES = 100_000


def _message_role(message: Any) -> Role | None:
    """The role of a message the page shows as a turn, else None: a user or assistant text
    message, not hidden, on the final channel (or none), addressed to all (C7.5, C4.5)."""
    if not isinstance(message, dict):
        return None
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    if role not in ("user", "assistant"):
        return None  # system, tool, …
    metadata = message.get("metadata")
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return None
    content = message.get("content")
    if not isinstance(content, dict) or content.get("content_type") not in _TURN_CONTENT:
        return None
    if message.get("channel") not in (None, "final"):
        return None
    if message.get("recipient") not in (None, "all"):
        return None
    return "user" if role == "user" else "assistant"


def _unfinished(message: Any) -> bool:
    """A message the site has not finished: its ``status`` (C7.5) is there and is not
    ``finished_successfully``, the status a stream ends a complete message with (C7.3):
    ``in_progress`` while it is written, another value for one cut short. A message without
    a status says nothing, and counts as finished."""
    status = message.get("status") if isinstance(message, dict) else None
    return isinstance(status, str) and status != "finished_successfully"


def _message_turn(message: Any) -> Turn | None:
    role = _message_role(message)
    if role is None:
        return None
    parts = message["content"].get("parts")
    # multimodal_text mixes strings with objects (images, files): the strings are the text.
    text = "".join(p for p in parts if isinstance(p, str)) if isinstance(parts, list) else ""
    return Turn(role, text.strip(), complete=not _unfinished(message))


def _walk(mapping: dict[str, Any], current: str) -> list[Any] | None:
    """The messages from the root down to ``current``: the branch the page shows (edits and
    regenerations are siblings off it). None when ``current`` is not in the mapping."""
    if current not in mapping:
        return None
    chain: list[Any] = []
    seen: set[str] = set()
    node_id: Any = current
    while isinstance(node_id, str) and node_id not in seen and len(seen) < _MAX_NODES:
        seen.add(node_id)
        node = mapping.get(node_id)
        if not isinstance(node, dict):
            break
        chain.append(node.get("message"))
        node_id = node.get("parent")
    chain.reverse()
    return chain


def chatgpt_conversation(body: str) -> list[Turn] | None:
    """The turns of a ChatGPT conversation read response, in order; None if ``body`` is none.

    Both shapes of SITE-FACTS C7.8: ``{mapping, current_node}`` (CEX), walked from
    ``current_node`` to the root through each node's ``parent`` and reversed, and
    ``{messages[]}`` (AIH), taken in the order given (each entry a message, or a node
    holding one as ``message``). Only what the page shows is kept: user and assistant text
    messages that are not hidden, not on another channel and addressed to all; thoughts,
    recaps, system and tool messages are not turns. Consecutive assistant messages stay
    separate here (:func:`merge_runs` joins them, as the page shows them in one turn).
    A turn whose message is unfinished (:func:`_unfinished`) is not ``complete``; so is the
    last answer while the newest message (the current node: thoughts, a tool call, the
    answer itself) is unfinished, since the reply is still being written after it.
    Never raises: a body the site changed gives None and the DOM answers instead.
    """
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    mapping, current = data.get("mapping"), data.get("current_node")
    messages: list[Any] | None
    if isinstance(mapping, dict) and isinstance(current, str):
        messages = _walk(mapping, current)
    elif isinstance(data.get("messages"), list):
        messages = [
            m.get("message") if isinstance(m, dict) and "message" in m else m
            for m in data["messages"]
        ]
    else:
        return None
    if messages is None:
        return None
    turns = [turn for turn in map(_message_turn, messages) if turn is not None]
    if turns and messages and _unfinished(messages[-1]):
        _mark_writing(turns)
    return turns


def _mark_writing(turns: list[Turn]) -> None:
    """The newest answer is still being written: not ``complete`` (a question last means
    its answer has not begun, and the question itself is whole)."""
    if turns and turns[-1].role == "assistant":
        turns[-1] = replace(turns[-1], complete=False)


#: Parsers of a pack's ``network.conversation_read`` formats.
READ_FORMATS: dict[str, Callable[[str], list[Turn] | None]] = {
    "chatgpt-conversation": chatgpt_conversation,
}


# -- merging and checking (pure) ---------------------------------------------------------------


def merge_runs(turns: Sequence[Turn]) -> list[Turn]:
    """Consecutive assistant messages as one turn (the page shows a tool-using answer's
    messages in one turn), complete only if each of them is; questions are never joined
    (an unanswered one stands alone)."""
    out: list[Turn] = []
    for turn in turns:
        if out and turn.role == "assistant" and out[-1].role == "assistant":
            joined = "\n\n".join(t for t in (out[-1].markdown, turn.markdown) if t)
            out[-1] = Turn("assistant", joined, out[-1].complete and turn.complete)
        else:
            out.append(turn)
    return out


def cross_check(network: Sequence[Turn], page: Sequence[Turn]) -> tuple[float, str]:
    """How well the page agrees with a network reading: ``(worst agreement, why not)``,
    ``why`` empty when it is believed.

    The page may show fewer turns (a virtualized list shows the newest), never more; its
    turns are compared with the reading's last ones, role by role, each turn's words by
    :func:`agreement` (rendering drops markup, never words)."""
    if not page:
        return 1.0, ""
    if len(page) > len(network):
        return 0.0, f"the page shows {len(page)} turns, the read response {len(network)}"
    offset = len(network) - len(page)
    worst, where = 1.0, 0
    for i, (ours, shown) in enumerate(zip(network[offset:], page, strict=True), offset + 1):
        if ours.role != shown.role:
            return 0.0, f"turn {i} is a {shown.role} turn on the page, {ours.role} in the response"
        score = agreement(ours.markdown, shown.markdown)
        if score < worst:
            worst, where = score, i
    if worst < AGREEMENT_THRESHOLD:
        return worst, f"turn {where} disagrees with the page ({worst:.2f})"
    return worst, ""


@dataclass(frozen=True)
class PageTurn:
    """A turn as the page renders it, with the key that finds it again after a re-render
    (the message id [C2.3] or its exchange's id [G2.2]; else its role and text)."""

    key: str
    role: Role
    markdown: str

    @classmethod
    def from_page(cls, raw: dict[str, Any]) -> PageTurn:
        role: Role = "user" if raw.get("role") == "user" else "assistant"
        text = str(raw.get("text", ""))
        return cls(str(raw.get("key") or f"{role}\n{text}"), role, text)


def merge_window(collected: list[PageTurn], window: Sequence[PageTurn]) -> int:
    """Fold the turns rendered now into those collected so far, in order; returns how many
    were new.

    A virtualized history renders a contiguous slice of the conversation: a new turn goes
    before the next turn of the slice that is already known (or after the last known one).
    A slice that shares no turn with what is known lies above it (the walk goes up)."""
    known = {t.key for t in collected}
    if not any(t.key in known for t in window):
        fresh = list({t.key: t for t in window}.values())
        collected[:0] = fresh
        return len(fresh)
    added = 0
    pending: list[PageTurn] = []
    after = 0
    for turn in window:
        if turn.key in known:
            at = next(i for i, t in enumerate(collected) if t.key == turn.key)
            collected[at:at] = pending
            added += len(pending)
            after = at + len(pending) + 1
            pending = []
        elif all(p.key != turn.key for p in pending):
            pending.append(turn)
    collected[after:after] = pending
    return added + len(pending)


# -- URLs ----------------------------------------------------------------------------------------


def _conversation_path(spec: ProviderSpec, url: str) -> str | None:
    """The conversation part of ``url``'s path (``/c/<id>``, ``/app/<id>``), else None."""
    if not url.startswith(spec.url_prefixes):
        return None
    match = spec.pack.urls.conversation_path.compile().match(urlsplit(url).path)
    return match.group(0) if match else None


def _last_segment(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def conversation_url(spec: ProviderSpec, url: str) -> str:
    """``url`` checked to be one of ``spec``'s conversations (ValueError saying what to give
    otherwise), without its fragment."""
    url = url.strip().split("#", 1)[0]
    if _conversation_path(spec, url) is None:
        raise ValueError(
            f"{url!r} is not a {spec.name} conversation URL: give one like "
            f"{_EXAMPLES.get(spec.name, spec.home_url)} (list_conversations shows the "
            "recent ones), or no url for the project's own conversation"
        )
    return url


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
    ours = [r for r in reads if _last_segment(urlsplit(r.url).path) == conversation_id]
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
        path = _conversation_path(spec, url)

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
            network, network_why, status = _reading(watch, provider, _last_segment(path))
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
        _mark_writing(dom)
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
            _mark_writing(merged)
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
    reload = source != "dom" and _conversation_path(spec, current) is not None
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
