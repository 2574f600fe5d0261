"""Per-site control and record keeping, shared by test code and the server thread.

A test sets behaviours and reads records from its own thread (or event loop) while the fake
server, on its own thread, opens questions and the page reports what it showed. Everything here
is guarded by one lock per site; waiting is on a condition (threads) or on futures resolved via
``call_soon_threadsafe`` (event loops), never by polling.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from bridge.fakes.behaviour import Behaviour, answer_markdown

__all__ = ["Exchange", "PageEvent", "QuestionRecord", "SiteController"]

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


@dataclass(frozen=True)
class Exchange:
    """One question and its answer as a conversation stores them (``None``: no answer turn)."""

    question: str
    answer: str | None


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
        self._async_waiters: list[_AsyncWaiter] = []

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

    def reset(self) -> None:
        """Back to defaults: no queue, no records, no conversations."""
        with self._lock:
            self._default = Behaviour()
            self._queue.clear()
            self._records.clear()
            self._conversations.clear()
            self._exchange_of.clear()

    # -- conversations ---------------------------------------------------------------------------

    def create_conversation(self, exchanges: Iterable[tuple[str, str]]) -> str:
        """Store an existing conversation of (question, answer) pairs and return its id, so a
        test can open ``/c/<id>`` or ``/app/<id>`` with earlier turns already there."""
        conversation_id = self._new_conversation_id()
        with self._lock:
            self._conversations[conversation_id] = [Exchange(q, a) for q, a in exchanges]
        return conversation_id

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

    def open_question(self, text: str, conversation_id: str | None) -> QuestionRecord:
        """Record a question the page sent and decide how it is answered.

        Takes the next queued behaviour, else the default. An unknown or missing conversation
        id starts a new conversation, as the real sites do for a first question. A rate-limited
        question is not stored in the conversation: the site refused it.
        """
        received_at = time.time()
        new_id = self._new_conversation_id()
        with self._lock:
            behaviour = self._queue.popleft() if self._queue else self._default
            if conversation_id is None or conversation_id not in self._conversations:
                conversation_id = new_id
                self._conversations[conversation_id] = []
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
            )
            if behaviour.state != "rate_limited":
                exchanges = self._conversations[conversation_id]
                self._exchange_of[record.id] = len(exchanges)
                exchanges.append(Exchange(text, None))
            self._store(record)
            return record

    def answer_sent(self, record: QuestionRecord, sent: str) -> None:
        """Remember how much of the answer the server sent, so a reload shows it (the
        conversation's history request returns it)."""
        with self._lock:
            exchanges = self._conversations.get(record.conversation_id)
            index = self._exchange_of.get(record.id)
            if exchanges is not None and index is not None:
                exchanges[index] = Exchange(record.text, sent)

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
