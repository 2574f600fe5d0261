"""Background tasks an owner starts and never awaits one by one: the one helper for them.

The relay, the DevTools endpoint's clients, the native host, the relay registry and the
request watch each start small tasks (a frame to send, a connection to hold, an event to
announce) whose outcome nobody awaits. Each kept its own ``set[asyncio.Task]``: the loop
holds only weak references to tasks, so an owner must keep them, and stop them when it
stops. A task that raised was then only reported, if at all, as "Task exception was never
retrieved" when it was garbage-collected. ``TaskSet`` is that idiom once:

- ``spawn`` starts a task and keeps it until it ends; an exception it ends with is logged
  on the owner's logger at once (never lost, never raised into someone else's code);
- ``stop`` cancels every task and awaits them all, so nothing an owner started outlives it;
  ``cancel`` is the same without the wait, for owners that stop synchronously.

Not ``asyncio.TaskGroup``: a TaskGroup cancels every task when one fails and re-raises the
failure at the end of its block; these owners live longer than any block, and one failed
background send must not stop the others.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

__all__ = ["TaskSet"]

_log = logging.getLogger(__name__)

DoneCallback = Callable[["asyncio.Task[Any]"], None]


class TaskSet:
    """The running background tasks of one owner (``what`` names it in log lines)."""

    def __init__(self, what: str, log: logging.Logger | None = None) -> None:
        self.what = what
        self._log = log or _log
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(
        self, coro: Coroutine[Any, Any, Any], *, on_done: DoneCallback | None = None
    ) -> asyncio.Task[Any]:
        """Run ``coro`` as a task kept here until it ends. ``on_done`` hears of its end
        (after it left the set), whatever the outcome."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(lambda t: self._done(t, on_done))
        return task

    def _done(self, task: asyncio.Task[Any], on_done: DoneCallback | None) -> None:
        self._tasks.discard(task)
        if on_done is not None:
            on_done(task)
        if task.cancelled():
            return
        error = task.exception()  # retrieved: asyncio reports nothing more at collection
        if error is not None:
            self._log.error(
                "%s: background task %s failed", self.what, task.get_name(), exc_info=error
            )

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Iterator[asyncio.Task[Any]]:
        return iter(list(self._tasks))

    def cancel(self) -> None:
        """Cancel every task without waiting for them to end."""
        for task in list(self._tasks):
            task.cancel()

    async def stop(self) -> None:
        """Cancel every task and wait until all have ended, including any a task started
        while it was being cancelled. Their exceptions are logged, never raised here. A
        task of this set that calls ``stop`` is left running: it would wait for itself."""
        me = asyncio.current_task()
        while pending := [t for t in self._tasks if t is not me]:
            for task in pending:
                task.cancel()
            await asyncio.wait(pending)


async def cancel_and_wait(task: asyncio.Future[Any], log: logging.Logger, what: str) -> None:
    """Cancel one background task (a reader of a pipe or a socket) and wait until it has ended.
    What it raised is only said at debug level: its output was diagnostics, and the owner is
    stopping anyway and goes on with its own clean-up."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass  # what was asked for
    except Exception as exc:
        log.debug("%s ended with %r", what, exc)
