"""The side of a job that runs it: the record in memory, on disk when it matters.

Progress is written at most every ``PROGRESS_WRITE_S`` (a fsync per streamed chunk would
cost more than the answer); the conversation URL, the tab and the status are written as soon
as they change, since a process killed a second later must leave them behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from bridge.app.jobs.record import Job, JobStatus
from bridge.app.jobs.store import JobLock, JobStore

__all__ = ["PROGRESS_WRITE_S", "JobRecorder"]

log = logging.getLogger(__name__)

#: The most often routine progress reaches the disk (status, URL and tab go at once).
PROGRESS_WRITE_S = 2.0


class JobRecorder:
    """The side of one job that runs it: the record in memory, written when it matters and
    otherwise at most every ``PROGRESS_WRITE_S``, and the lock, held until the final record
    is on disk (a process waiting for the lock then reads the end, not a "running" left
    behind)."""

    def __init__(self, store: JobStore, job: Job, lock: JobLock | None) -> None:
        self.store = store
        self.job = job
        self._lock = lock
        self._last_write = time.monotonic()
        self._dirty = False
        self._writing: asyncio.Future[None] | None = None
        self._ended = False
        self._fault_logged = False

    def snapshot(self) -> Job:
        return self.job.copy_now()

    def progress(
        self, phase: str, chars: int, *, url: str | None = None, tab_id: int | None = None
    ) -> None:
        """Note how far the answer got; written at once when the URL or tab is new."""
        if self._ended:
            return
        job = self.job
        where_changed = (url is not None and url != job.url) or (
            tab_id is not None and tab_id != job.tab_id
        )
        job.url = url if url is not None else job.url
        job.tab_id = tab_id if tab_id is not None else job.tab_id
        job.phase = phase
        job.chars = chars or job.chars
        job.updated_at = time.time()
        if where_changed or time.monotonic() - self._last_write >= PROGRESS_WRITE_S:
            self._kick()

    async def flush(self) -> None:
        """Write what is noted now (an ask tool returning a job leaves it on disk)."""
        if self._ended:
            return
        self._kick()
        if self._writing is not None:
            await asyncio.shield(self._writing)

    async def finish(self, result: dict[str, Any]) -> None:
        self.job.result = result
        self.job.chars = len(str(result.get("answer", ""))) or self.job.chars
        await self._end("done", "done")

    async def fail(self, code: str, message: str) -> None:
        self.job.error = {"code": code, "message": message}
        await self._end("failed", self.job.phase)

    def abandon(self) -> None:
        """Let go without a final record (the process is stopping): the record still says
        "running" and the free lock lets the next process resume it."""
        self._ended = True
        if self._lock is not None:
            self._lock.release()

    async def _end(self, status: JobStatus, phase: str) -> None:
        if self._ended:
            return
        self._ended = True
        job = self.job
        job.status, job.phase, job.updated_at = status, phase, time.time()
        try:
            if self._writing is not None:  # an older progress write must not land last
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._writing)
            await self.store.save_async(job.copy_now())
        except OSError as exc:
            # The record stays "running" with a free lock: the next get_answer resumes it
            # from the conversation, so the answer is still not lost.
            log.warning("could not record the end of job %s: %s", job.id, exc)
        finally:
            if self._lock is not None:
                self._lock.release()

    def _kick(self) -> None:
        self._dirty = True
        if self._writing is None or self._writing.done():
            self._writing = asyncio.ensure_future(self._write_while_dirty())

    async def _write_while_dirty(self) -> None:
        while self._dirty and not self._ended:
            self._dirty = False
            self._last_write = time.monotonic()
            try:
                await self.store.save_async(self.job.copy_now())
            except OSError as exc:  # progress is a convenience; the ask goes on
                if not self._fault_logged:
                    self._fault_logged = True
                    log.warning("could not record the progress of job %s: %s", self.job.id, exc)
