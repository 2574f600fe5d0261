"""The fake sites' own timing, on the server's event loop.

Streaming cadence and thinking time are behaviour of the simulated site, not waits of the code
under test, so they live here as *interruptible pauses*: each waits for an event (stop, skip,
server shutdown) with the site's cadence as the deadline.

The real sites finish an answer on the server even when its page goes away (tab or browser
closed, the driving process killed), and a reopened conversation shows it. So an answer is
written by a task of its own (:meth:`Live.run`): the page's request only follows it, and a
dropped request ends the following, not the answer. What ends an answer early is the page's
Stop (its "complete, stopped" report) or the server shutting down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator

from bridge.fakes.controller import QuestionRecord, SiteController

__all__ = ["Live", "chunks"]

log = logging.getLogger(__name__)

#: What writes one answer: the wire pieces in order, ending early once ``stopped`` is set.
AnswerSource = Callable[[asyncio.Event], AsyncIterator[str]]


def chunks(text: str, size: int) -> Iterator[str]:
    """``text`` in pieces of ``size`` characters: the site's "tokens"."""
    for start in range(0, len(text), size):
        yield text[start : start + size]


class _Generation:
    """One answer being written: the pieces so far, and whether it has ended."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.ended = False
        self._changed = asyncio.Event()

    def add(self, piece: str) -> None:
        self.pieces.append(piece)
        self._wake()

    def end(self) -> None:
        self.ended = True
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def follow(self) -> AsyncIterator[str]:
        """Every piece from the first, then each new one, until the answer ends."""
        sent = 0
        while True:
            while sent < len(self.pieces):
                yield self.pieces[sent]
                sent += 1
            if self.ended:
                return
            await self._changed.wait()


class Live:
    """State that exists only while the server runs: shutdown, per-answer skip events, and the
    answers being written.

    Lives on the server's loop; other threads reach it through ``loop.call_soon_threadsafe``.
    """

    def __init__(self) -> None:
        self.closing = asyncio.Event()
        self._skips: dict[str, asyncio.Event] = {}
        self._generations: dict[str, _Generation] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def run(
        self, controller: SiteController, record: QuestionRecord, source: AnswerSource
    ) -> AsyncIterator[str]:
        """Write ``record``'s answer in a task of its own, to its end (or a Stop, or shutdown),
        whoever reads it; the returned iterator follows it from the start for the page's
        request. The controller hears when it ended (:meth:`SiteController.answer_ended`)."""
        generation = _Generation()
        self._generations[record.id] = generation
        task = asyncio.ensure_future(self._write(controller, record, generation, source))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return generation.follow()

    def follow(self, question_id: str) -> AsyncIterator[str] | None:
        """The answer still being written for ``question_id`` from its start, for a reopened
        page; None once it has ended."""
        generation = self._generations.get(question_id)
        return None if generation is None else generation.follow()

    async def _write(
        self,
        controller: SiteController,
        record: QuestionRecord,
        generation: _Generation,
        source: AnswerSource,
    ) -> None:
        stopped = asyncio.Event()
        watcher = asyncio.ensure_future(self._watch_stop(controller, record.id, stopped))
        complete = False
        try:
            async for piece in source(stopped):
                generation.add(piece)
            complete = not stopped.is_set()
        except Exception:  # a fake's bug must show, and must not leave the answer hanging
            log.exception("the fake %s answer %s failed", controller.site, record.id)
        finally:
            watcher.cancel()
            self._generations.pop(record.id, None)
            generation.end()
            controller.answer_ended(record, complete=complete)

    async def _watch_stop(
        self, controller: SiteController, question_id: str, stopped: asyncio.Event
    ) -> None:
        """Set ``stopped`` when the page reports a Stop of this answer, or at shutdown."""
        reported = asyncio.ensure_future(
            controller.wait_for_record_async(lambda r: r.id == question_id and r.stopped, 1e9)
        )
        closing = asyncio.ensure_future(self.closing.wait())
        try:
            await asyncio.wait({reported, closing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            reported.cancel()
            closing.cancel()
        stopped.set()

    def close(self) -> None:
        """End every pause and every stream held open (stuck answers) so shutdown can finish."""
        self.closing.set()
        for skip in self._skips.values():
            skip.set()

    def skip_event(self, question_id: str) -> asyncio.Event:
        """The event that ends ``question_id``'s thinking phase early ("Skip thinking")."""
        skip = self._skips.setdefault(question_id, asyncio.Event())
        if self.closing.is_set():
            skip.set()
        return skip

    def skip(self, question_id: str) -> bool:
        """Press "Skip thinking" for ``question_id``; False if it is not thinking."""
        skip = self._skips.get(question_id)
        if skip is None:
            return False
        skip.set()
        return True

    def forget(self, question_id: str) -> None:
        self._skips.pop(question_id, None)

    async def pause(self, seconds: float, interrupt: asyncio.Event | None = None) -> bool:
        """The site's cadence: wait ``seconds`` unless ``interrupt`` (default: shutdown) is set
        first. Returns True if interrupted."""
        event = interrupt or self.closing
        if event.is_set():
            return True
        if seconds <= 0:
            await asyncio.sleep(0)  # a yield to other streams, not a wait
            return event.is_set()
        try:
            await asyncio.wait_for(event.wait(), seconds)
        except TimeoutError:
            return False
        return True
