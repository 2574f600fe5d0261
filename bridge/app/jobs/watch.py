"""Waiting for another process to let go of a job's lock, without polling.

One thread per lock file waited on in this process, blocked in a shared lock
(bridge.store.locks: ``flock(LOCK_SH)``, ``LockFileEx`` on Windows) until the holder lets go
(its job ended, or its process died: the OS drops the lock however it dies); every
coroutine waiting on that file hears of it through its own event loop. A dedicated thread,
not the default executor: it may block for the whole length of an answer, and the
executor's few workers carry every state write.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from pathlib import Path

from bridge.store import locks
from bridge.store.state import open_private

__all__ = ["LockWatch", "lock_watch"]

log = logging.getLogger(__name__)

_Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]


class LockWatch:
    """The lock files this process waits on, each with its one thread and its waiters."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[Path, list[_Waiter]] = {}

    async def released(self, path: Path, timeout: float) -> bool:
        """Wait until no process holds the lock on ``path``, at most ``timeout`` seconds;
        True if it was let go."""
        loop = asyncio.get_running_loop()
        released: asyncio.Future[None] = loop.create_future()
        entry = (loop, released)
        with self._lock:
            waiters = self._waiters.get(path)
            if waiters is None:
                waiters = self._waiters[path] = []
                threading.Thread(
                    target=self._watch, args=(path,), name=f"job-lock {path.stem}", daemon=True
                ).start()
            waiters.append(entry)
        try:
            await asyncio.wait_for(asyncio.shield(released), max(0.0, timeout))
            return True
        except TimeoutError:
            return False
        finally:
            with self._lock:
                waiting = self._waiters.get(path)
                if waiting is not None and entry in waiting:
                    waiting.remove(entry)

    def _watch(self, path: Path) -> None:
        try:
            fd = locks.open_lock_file(path, open_private)
            try:
                locks.acquire(fd, shared=True)
                locks.release(fd)
            finally:
                os.close(fd)
        except OSError as exc:  # the waiters re-read the record and decide again
            log.debug("waiting for %s: %s", path, exc)
        finally:
            with self._lock:
                waiters = self._waiters.pop(path, [])
            for loop, released in waiters:
                with contextlib.suppress(RuntimeError):  # that loop has closed meanwhile
                    loop.call_soon_threadsafe(_resolve, released)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


#: The process's one watch: a lock file is watched by one thread, whoever waits on it.
lock_watch = LockWatch()
