"""The jobs of one state directory, on disk (docs/flows.md#jobs-file).

Two processes at once corrupt nothing, and no process-wide lock is needed:

- one file per job, each write atomic (bridge.store.state's seam: temporary file, fsync,
  rename): a reader always sees a whole record, and processes writing different jobs never
  touch the same file;
- one writer per job: the process running a job holds an exclusive lock
  (bridge.store.locks: ``flock``, ``LockFileEx`` on Windows) on ``<id>.lock`` for as long
  as it runs it. The OS drops the lock when that process dies, however it dies, so a free
  lock on a "running" record means nobody is on it, and taking the lock without blocking
  is how a process claims a job to resume it: two processes can never both win. Waiting
  for another process's job is waiting for its lock (bridge.app.jobs.watch): it ends when
  that job ends or its process dies, with no polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

from bridge.app.jobs.record import JOB_ID, Job, JobNotFound, JobUnreadable
from bridge.app.jobs.watch import lock_watch
from bridge.store import locks
from bridge.store.state import open_private, read_state_text, write_atomically

__all__ = ["KEEP_FINISHED_S", "JobLock", "JobStore"]

#: Finished jobs older than this are removed when a new job starts (a week: long enough to
#: come back to an answer, short enough that the directory never grows without bound).
KEEP_FINISHED_S = 7 * 24 * 3600.0


class JobLock:
    """The exclusive lock on a job's lock file: held while a process runs the job."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self.path = path

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                locks.release(fd)
            os.close(fd)

    def release_and_remove(self) -> None:
        """Remove the lock file and let go (bridge.store.locks.remove_held_lock_file: never
        pulled from under another process that has it open)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            locks.remove_held_lock_file(self.path, fd)


class JobStore:
    """The jobs of one state directory (``<root>/jobs``)."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "jobs"

    def path(self, job_id: str) -> Path:
        if not JOB_ID.match(job_id):  # also keeps a caller's id from naming another file
            raise JobNotFound(job_id, self.dir)
        return self.dir / f"{job_id}.json"

    def _lock_path(self, job_id: str) -> Path:
        return self.path(job_id).with_suffix(".lock")

    # -- records --

    def create(self, job: Job) -> JobLock:
        """Write a new job, its lock taken first (no other process can claim it between the
        two); the caller runs the job and releases the lock when it has ended."""
        self.dir.mkdir(parents=True, exist_ok=True)
        lock = self.try_lock(job.id)
        if lock is None:  # ten random hex digits: only a bug gets here
            raise RuntimeError(f"job {job.id} exists already")
        try:
            self.save(job)
        except BaseException:
            lock.release()
            raise
        return lock

    def save(self, job: Job) -> None:
        write_atomically(self.path(job.id), job.to_text())

    def load(self, job_id: str) -> Job:
        path = self.path(job_id)
        try:
            text = read_state_text(path)
        except FileNotFoundError:
            raise JobNotFound(job_id, self.dir) from None
        except UnicodeDecodeError:
            raise JobUnreadable(path, "not UTF-8 text") from None
        return Job.from_text(text, path)

    def scan(self) -> tuple[list[Job], list[JobUnreadable]]:
        """Every job, newest first, and the files that are not readable jobs."""
        jobs: list[Job] = []
        unreadable: list[JobUnreadable] = []
        try:
            names = sorted(p.name for p in self.dir.iterdir())
        except FileNotFoundError:
            return [], []
        for name in names:
            if name.startswith(".") or not name.endswith(".json"):
                continue  # temporary files of writes in progress, lock files
            try:
                jobs.append(self.load(name.removesuffix(".json")))
            except JobNotFound:  # removed meanwhile, or a name that is no job id
                if not JOB_ID.match(name.removesuffix(".json")):
                    unreadable.append(JobUnreadable(self.dir / name, "not a job file name"))
            except JobUnreadable as exc:
                unreadable.append(exc)
        jobs.sort(key=lambda j: (j.created_at, j.id), reverse=True)
        return jobs, unreadable

    def prune(self, older_than_s: float = KEEP_FINISHED_S) -> int:
        """Remove finished jobs last changed more than ``older_than_s`` ago; returns how many.
        Running jobs stay whatever their age: their answer may still be collected."""
        removed = 0
        cutoff = time.time() - older_than_s
        for job in self._older_than(cutoff):
            if job.status == "running" or job.updated_at > cutoff:
                continue
            lock = self.try_lock(job.id)
            if lock is None:
                continue
            try:
                self.path(job.id).unlink(missing_ok=True)
                removed += 1
            finally:
                lock.release_and_remove()
        return removed

    def _older_than(self, cutoff: float) -> list[Job]:
        """The jobs whose file was last written before ``cutoff``: only they can be old
        enough to prune. Every job starts an ask, and reading every record each time would
        cost each ask in proportion to the jobs kept (a file's time is enough to pass over
        the recent ones; a record saved later has a later time)."""
        jobs: list[Job] = []
        try:
            entries = list(os.scandir(self.dir))
        except FileNotFoundError:
            return jobs
        for entry in entries:
            name = entry.name
            if name.startswith(".") or not name.endswith(".json"):
                continue
            try:
                if entry.stat().st_mtime > cutoff:
                    continue
                jobs.append(self.load(name.removesuffix(".json")))
            except (OSError, JobNotFound, JobUnreadable):  # gone meanwhile, or not a job
                continue
        return jobs

    # -- ownership --

    def try_lock(self, job_id: str) -> JobLock | None:
        """The job's lock if no process holds it (this one included), else None."""
        path = self._lock_path(job_id)
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = locks.open_lock_file(path, open_private)
        try:
            if not locks.acquire(fd, blocking=False):
                os.close(fd)
                return None
        except BaseException:
            os.close(fd)
            raise
        return JobLock(fd, path)

    async def wait_unlocked(self, job_id: str, timeout: float) -> bool:
        """Wait until no process holds the job's lock (its job ended, or its process died),
        at most ``timeout`` seconds; True if it was let go."""
        return await lock_watch.released(self._lock_path(job_id), timeout)

    # -- off the event loop (fsync and locks wait for the disk or for others) --

    async def create_async(self, job: Job) -> JobLock:
        return await asyncio.to_thread(self.create, job)

    async def save_async(self, job: Job) -> None:
        await asyncio.to_thread(self.save, job)

    async def load_async(self, job_id: str) -> Job:
        return await asyncio.to_thread(self.load, job_id)

    async def scan_async(self) -> tuple[list[Job], list[JobUnreadable]]:
        return await asyncio.to_thread(self.scan)

    async def try_lock_async(self, job_id: str) -> JobLock | None:
        return await asyncio.to_thread(self.try_lock, job_id)
