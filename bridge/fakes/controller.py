"""Per-site control and record keeping, shared by test code and the server thread.

A test sets behaviours and reads records from its own thread (or event loop) while the fake
server, on its own thread, opens questions and the page reports what it showed. Everything here
is guarded by one lock per site; waiting is on a condition (threads) or on futures resolved via
``call_soon_threadsafe`` (event loops), never by polling.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from bridge.fakes.behaviour import Behaviour, answer_markdown

__all__ = [
    "Exchange",
    "PageEvent",
    "QuestionRecord",
    "SiteController",
    "UploadedFile",
    "default_title",
]

PageEvent = Literal["first_token", "text_visible", "complete"]
"""What a page reports about an answer (see :class:`QuestionRecord` for the meaning)."""


@dataclass(frozen=True)
class QuestionRecord:
    """One question a fake site received, and what its page showed of the answer.

    Times are epoch seconds. ``received_at`` is the server's clock when the question arrived; the
    others are measured in the page (``performance.timeOrigin + performance.now()``) at the moment
    the DOM showed the thing, so they mean "the page showed it", not "the server sent it":

    - ``first_token_at``: the answer's first content was rendered into the DOM. Under ChatGPT's
      background-tab quirk that content is the empty ``<p data-start data-end>`` shell.
    - ``text_visible_at``: the answer's text was first non-empty in the DOM (within a
      millisecond of ``first_token_at``, unless the background-tab quirk held the text back).
    - ``completed_at``: the page reached its final state for this question (ChatGPT: the stop
      button gone from the submit slot, which holds the speech button again while the composer
      is empty, and a finished answer's action bar shown; Gemini: the response footer marked
      ``complete`` with its "Good response" / "Bad response" buttons; for the error and
      rate-limit states, the message shown and the composer usable again). Never set for the
      ``stuck`` state, unless ChatGPT's Stop ends it (Gemini's hung UI ignores Stop).
    """

    id: str
    site: str
    text: str
    conversation_id: str
    behaviour: Behaviour
    answer: str
    """The markdown the site answers with ("" unless the state is ``ok`` or ``stuck``)."""
    received_at: float
    first_token_at: float | None = None
    text_visible_at: float | None = None
    completed_at: float | None = None
    stopped: bool = False
    """The person (or a driver) pressed stop before the answer finished."""
    files: tuple[UploadedFile, ...] = ()
    """The uploaded files the page sent with the question (its attachments)."""
    mode: str = ""
    """The mode the page asked in, as its request said it (ChatGPT: the body's ``model``
    slug; Gemini: the mode its model header names). The fakes' own shapes: the real ones
    are undocumented or opaque (docs/sites.md#modes)."""
    effort: str = ""
    """ChatGPT: the send body's ``thinking_effort`` (``standard``, ``extended``, ``max``;
    SITE-FACTS C13.6), "" when the body had none (docs/sites.md#effort)."""
    deep_think: bool = False
    """Gemini: Deep Think was on when the question was sent (the fake's own request header:
    the real wire flag is undocumented, docs/sites.md#effort)."""
    time_scale: float = 1.0
    """The site's clock for this answer (:attr:`SiteController.time_scale`)."""
    place: str = ""
    """Where the page asked, as its request said it: ChatGPT's ``conversation_mode.gizmo_id``
    (a project's ``g-p-…`` or a GPT's ``g-…``, SITE-FACTS C12.2), Gemini's Gem id at index 19
    of the StreamGenerate inner request (G9.2); "" outside them."""
    temporary: bool = False
    """The question was asked in a temporary chat: Gemini's inner request index 45 was 1
    (G13.2); ChatGPT's page was at ``?temporary-chat=true`` (C6.3; its request's own flag is
    undocumented, so the fake reads the page URL the request came from)."""
    page: str = ""
    """The path and query of the page that sent the question (its ``Referer``)."""
    finished_at: float | None = None
    """The server's clock when it had sent the whole answer. Unlike ``completed_at`` it is set
    also when no page was reading any more: the real sites finish an answer whose page went
    away (tab or browser closed), and so do the fakes."""
    research: str = ""
    """ChatGPT Deep Research (docs/sites.md#research): "" for an ordinary question (its body
    had no Deep Research ``system_hints``, C9.3); "clarify" when it was answered with
    clarifying questions (C9.5); "plan" when it got the research plan (C9.6)."""
    research_started_at: float | None = None
    """When the plan's research started (server clock), pressed or counted down."""
    research_started_by: str = ""
    """How it started: "button" (the page's Start control) or "countdown"."""
    research_done_at: float | None = None
    """When the research's report was finished (server clock): what the closing figure of
    docs/sites.md#research measures from."""


@dataclass(frozen=True)
class Exchange:
    """One question and its answer as a conversation stores them (``None``: no answer turn)."""

    question: str
    answer: str | None
    finished: bool = True
    """False while the site is still writing the answer (a reopened conversation shows it so)."""


#: Questions the site refuses: not kept in their conversation.
_REFUSED = ("rate_limited", "rollback")


def default_title(question: str) -> str:
    """A chat title made of the question's first words (the real sites generate one)."""
    words = question.split()
    return " ".join(words[:6]) or "New chat"


@dataclass(frozen=True)
class UploadedFile:
    """A file a page uploaded (``POST /__fake/upload``), as the server received it."""

    id: str
    name: str
    size: int
    sha256: str
    content_type: str


@dataclass
class _AsyncWaiter:
    predicate: Callable[[QuestionRecord], bool]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[QuestionRecord] = field(repr=False)


class SiteController:
    """Behaviour settings, records and conversations of one fake site (thread-safe)."""

    def __init__(self, site: str) -> None:
        self.site = site
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._default = Behaviour()
        self._queue: deque[Behaviour] = deque()
        self._records: dict[str, QuestionRecord] = {}
        self._conversations: dict[str, list[Exchange]] = {}
        self._exchange_of: dict[str, int] = {}  # question id -> index in its conversation
        self._uploads: dict[str, UploadedFile] = {}
        self._titles: dict[str, str] = {}  # conversation id -> title, most recent last
        self._async_waiters: list[_AsyncWaiter] = []
        self._time_scale = 1.0
        self._places: set[str] = set()

    # -- settings, used by tests -------------------------------------------------------------

    @property
    def behaviour(self) -> Behaviour:
        """The default behaviour: what the page reads at load and every unqueued question gets."""
        with self._lock:
            return self._default

    def set_behaviour(self, behaviour: Behaviour) -> None:
        """Make ``behaviour`` the default for every next question (until :meth:`reset`)."""
        with self._lock:
            self._default = behaviour

    def queue(self, *behaviours: Behaviour) -> None:
        """Use these behaviours for the next questions only, one each, in order."""
        with self._lock:
            self._queue.extend(behaviours)

    @property
    def time_scale(self) -> float:
        """The site's clock: every answer's durations (chunk pauses, thinking) are multiplied
        by it, so ``0.01`` plays a three-minute answer in under two seconds."""
        with self._lock:
            return self._time_scale

    @time_scale.setter
    def time_scale(self, scale: float) -> None:
        if not scale > 0:
            raise ValueError(f"time_scale must be a positive number, not {scale!r}")
        with self._lock:
            self._time_scale = float(scale)

    def add_place(self, place_id: str) -> None:
        """Let the account have a project (``g-p-<32 hex>``), a GPT (``g-<id>``) or a Gem (its
        id): its pages are served; any other's are 404 (the fake's own answer)."""
        with self._lock:
            self._places.add(place_id)

    def has_place(self, place_id: str) -> bool:
        with self._lock:
            return place_id in self._places

    def reset(self) -> None:
        """Back to defaults: no queue, no records, no conversations, the real clock."""
        with self._lock:
            self._time_scale = 1.0
            self._default = Behaviour()
            self._queue.clear()
            self._records.clear()
            self._conversations.clear()
            self._exchange_of.clear()
            self._uploads.clear()
            self._titles.clear()
            self._places.clear()

    # -- conversations ---------------------------------------------------------------------------

    def create_conversation(
        self, exchanges: Iterable[tuple[str, str]], title: str | None = None
    ) -> str:
        """Store an existing conversation of (question, answer) pairs and return its id, so a
        test can open ``/c/<id>`` or ``/app/<id>`` with earlier turns already there. It is
        listed first in the sidebar, as ``title`` (default: its first question's words)."""
        conversation_id = self._new_conversation_id()
        stored = [Exchange(q, a) for q, a in exchanges]
        with self._lock:
            self._conversations[conversation_id] = stored
            self._titles[conversation_id] = title or default_title(
                stored[0].question if stored else ""
            )
        return conversation_id

    def conversation_list(self) -> list[tuple[str, str]]:
        """``(id, title)`` of every conversation, the most recently created or continued
        first: what the sites' sidebars list (one whose only question was refused is none)."""
        with self._lock:
            return [
                (cid, title)
                for cid, title in reversed(self._titles.items())
                if self._conversations.get(cid)
            ]

    def conversation(self, conversation_id: str) -> tuple[Exchange, ...] | None:
        """The exchanges stored for ``conversation_id``, or ``None`` if there is no such one."""
        with self._lock:
            exchanges = self._conversations.get(conversation_id)
            return None if exchanges is None else tuple(exchanges)

    def _new_conversation_id(self) -> str:
        # Each site's real ids have their own shape: ChatGPT a UUID, Gemini 16 hex digits.
        if self.site == "gemini":
            return uuid.uuid4().hex[:16]
        return str(uuid.uuid4())

    # -- records ---------------------------------------------------------------------------------

    @property
    def records(self) -> list[QuestionRecord]:
        """Every question received since the last reset, oldest first."""
        with self._lock:
            return list(self._records.values())

    def wait_for_record(
        self, predicate: Callable[[QuestionRecord], bool], timeout: float
    ) -> QuestionRecord:
        """Block until a record matches ``predicate`` and return it (the newest such).

        Raises ``TimeoutError`` after ``timeout`` seconds. Blocks the calling thread: from a
        coroutine use :meth:`wait_for_record_async`.
        """
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                match = self._find(predicate)
                if match is not None:
                    return match
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no {self.site} record matched within {timeout} s")
                self._changed.wait(remaining)

    async def wait_for_record_async(
        self, predicate: Callable[[QuestionRecord], bool], timeout: float
    ) -> QuestionRecord:
        """Like :meth:`wait_for_record`, without blocking the running event loop."""
        loop = asyncio.get_running_loop()
        waiter = _AsyncWaiter(predicate, loop, loop.create_future())
        with self._lock:
            match = self._find(predicate)
            if match is not None:
                return match
            self._async_waiters.append(waiter)
        try:
            return await asyncio.wait_for(asyncio.shield(waiter.future), timeout)
        except TimeoutError:
            raise TimeoutError(f"no {self.site} record matched within {timeout} s") from None
        finally:
            with self._lock:
                if waiter in self._async_waiters:
                    self._async_waiters.remove(waiter)

    def _find(self, predicate: Callable[[QuestionRecord], bool]) -> QuestionRecord | None:
        return next((r for r in reversed(self._records.values()) if predicate(r)), None)

    def _store(self, record: QuestionRecord) -> None:
        """Save ``record`` and wake waiters; the caller holds the lock."""
        self._records[record.id] = record
        self._changed.notify_all()
        for waiter in list(self._async_waiters):
            if waiter.predicate(record):
                self._async_waiters.remove(waiter)
                waiter.loop.call_soon_threadsafe(_resolve, waiter.future, record)

    # -- used by the fake server -----------------------------------------------------------------

    def open_question(
        self,
        text: str,
        conversation_id: str | None,
        files: Sequence[str] = (),
        mode: str = "",
        *,
        place: str = "",
        temporary: bool = False,
        page: str = "",
        effort: str = "",
        deep_think: bool = False,
    ) -> QuestionRecord:
        """Record a question the page sent and decide how it is answered.

        Takes the next queued behaviour, else the default. An unknown or missing conversation
        id starts a new conversation, as the real sites do for a first question. A rate-limited
        or rolled-back question is not stored in the conversation: the site refused it.
        """
        received_at = time.time()
        new_id = self._new_conversation_id()
        with self._lock:
            behaviour = self._queue.popleft() if self._queue else self._default
            if conversation_id is None or conversation_id not in self._conversations:
                conversation_id = new_id
                self._conversations[conversation_id] = []
                if not temporary:  # a temporary chat is kept out of the history (G13.2)
                    self._titles[conversation_id] = default_title(text)
            if behaviour.state not in _REFUSED and conversation_id in self._titles:
                title = self._titles.pop(conversation_id, default_title(text))
                self._titles[conversation_id] = title
            answered = behaviour.state in ("ok", "stuck")
            answer = answer_markdown(text, behaviour) if answered else ""
            record = QuestionRecord(
                id=str(uuid.uuid4()),
                site=self.site,
                text=text,
                conversation_id=conversation_id,
                behaviour=behaviour,
                answer=answer,
                received_at=received_at,
                files=tuple(self._uploads[i] for i in files if i in self._uploads),
                time_scale=self._time_scale,
                mode=mode,
                place=place,
                temporary=temporary,
                page=page,
                effort=effort,
                deep_think=deep_think,
            )
            if behaviour.state not in _REFUSED:
                exchanges = self._conversations[conversation_id]
                self._exchange_of[record.id] = len(exchanges)
                exchanges.append(Exchange(text, None, finished=not answered))
            self._store(record)
            return record

    def answer_sent(self, record: QuestionRecord, sent: str) -> None:
        """Remember how much of the answer the server sent, so a reload shows it (the
        conversation's history request returns it)."""
        with self._lock:
            exchanges = self._conversations.get(record.conversation_id)
            index = self._exchange_of.get(record.id)
            if exchanges is not None and index is not None:
                exchanges[index] = Exchange(record.text, sent, finished=False)

    def answer_ended(self, record: QuestionRecord, *, complete: bool) -> None:
        """The site stopped writing ``record``'s answer: all of it (``complete``), or cut short
        (stopped, stuck, shutting down). A reload then shows it as final, and a complete
        answer's record gets ``finished_at`` whether or not a page was still reading."""
        with self._lock:
            exchanges = self._conversations.get(record.conversation_id)
            index = self._exchange_of.get(record.id)
            if exchanges is not None and index is not None:
                exchanges[index] = replace(exchanges[index], finished=True)
            current = self._records.get(record.id)
            if complete and current is not None and current.finished_at is None:
                self._store(replace(current, finished_at=time.time()))

    def update_record(self, record_id: str, **changes: Any) -> QuestionRecord | None:
        """Change a record's fields (Deep Research's plan, start and end); None if unknown."""
        with self._lock:
            current = self._records.get(record_id)
            if current is None:
                return None
            updated = replace(current, **changes)
            self._store(updated)
            return updated

    def record(self, record_id: str) -> QuestionRecord | None:
        with self._lock:
            return self._records.get(record_id)

    def hurry(self, record_id: str, time_scale: float = 0.001) -> QuestionRecord:
        """Play the rest of an answer still being written at another clock (from its next
        chunk on). A test can then queue an answer too long to end by itself and hurry it to
        its end once what it waits for has happened (a page follows it, a job was returned):
        the answer is "still streaming" by an event, not by guessing a long enough length.
        KeyError for an unknown record; ValueError for a scale that is not positive."""
        if not time_scale > 0:
            raise ValueError(f"time_scale must be a positive number, not {time_scale!r}")
        updated = self.update_record(record_id, time_scale=float(time_scale))
        if updated is None:
            raise KeyError(f"no question {record_id!r} on the fake {self.site}")
        return updated

    def clock(self, record: QuestionRecord) -> float:
        """``record``'s time scale now (:meth:`hurry` may have changed it since it began)."""
        current = self.record(record.id)
        return (current or record).time_scale

    def exchange_index(self, record_id: str) -> int | None:
        """Which exchange of its conversation a question is (None: refused, not stored)."""
        with self._lock:
            return self._exchange_of.get(record_id)

    def set_answer(self, record: QuestionRecord, answer: str) -> QuestionRecord:
        """Answer ``record`` with ``answer`` instead (Deep Research's clarifying turn or plan)."""
        return self.update_record(record.id, answer=answer) or record

    def newest_question(self, conversation_id: str) -> QuestionRecord | None:
        """The record of the conversation's newest exchange (None: no such conversation, or
        its newest exchange was made by :meth:`create_conversation`)."""
        with self._lock:
            exchanges = self._conversations.get(conversation_id)
            if not exchanges:
                return None
            newest = len(exchanges) - 1
            return next(
                (
                    r
                    for r in reversed(self._records.values())
                    if r.conversation_id == conversation_id
                    and self._exchange_of.get(r.id) == newest
                ),
                None,
            )

    @property
    def uploads(self) -> list[UploadedFile]:
        """Every file uploaded since the last reset, sent with a question or not."""
        with self._lock:
            return list(self._uploads.values())

    def accept_upload(self, name: str, data: bytes, content_type: str) -> UploadedFile:
        """Store what a page uploaded; the page names it by the returned id when it sends."""
        upload = UploadedFile(
            id=f"file-{uuid.uuid4().hex}",
            name=name,
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            content_type=content_type,
        )
        with self._lock:
            self._uploads[upload.id] = upload
        return upload

    def page_reported(
        self, question_id: str, event: PageEvent, at: float, stopped: bool = False
    ) -> bool:
        """Store a time the page reported; the first report of each event wins.

        Returns False for an unknown question (e.g. one from before a reset).
        """
        with self._lock:
            record = self._records.get(question_id)
            if record is None:
                return False
            updated = record
            if event == "first_token" and record.first_token_at is None:
                updated = replace(updated, first_token_at=at)
            elif event == "text_visible" and record.text_visible_at is None:
                updated = replace(updated, text_visible_at=at)
            elif event == "complete" and record.completed_at is None:
                updated = replace(updated, completed_at=at)
            if stopped and not record.stopped:
                updated = replace(updated, stopped=True)
            if updated is not record:
                self._store(updated)
            return True


def _resolve(future: asyncio.Future[QuestionRecord], record: QuestionRecord) -> None:
    if not future.done():
        future.set_result(record)
