"""The fake sites' own timing, on the server's event loop.

Streaming cadence and thinking time are behaviour of the simulated site, not waits of the code
under test, so they live here as *interruptible pauses*: each waits for an event (stop, skip,
server shutdown) with the site's cadence as the deadline. When the page aborts its request, the
server cancels the stream (Starlette listens for the disconnect), so no pause outlives its page.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

__all__ = ["Live", "chunks"]


def chunks(text: str, size: int) -> Iterator[str]:
    """``text`` in pieces of ``size`` characters: the site's "tokens"."""
    for start in range(0, len(text), size):
        yield text[start : start + size]


class Live:
    """State that exists only while the server runs: shutdown, and per-answer skip events.

    Lives on the server's loop; other threads reach it through ``loop.call_soon_threadsafe``.
    """

    def __init__(self) -> None:
        self.closing = asyncio.Event()
        self._skips: dict[str, asyncio.Event] = {}

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

    async def hold(self) -> None:
        """Hold a stream open until shutdown: the ``stuck`` state."""
        await self.closing.wait()
