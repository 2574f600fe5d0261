"""Long asks as jobs: one record per ask in ``<state dir>/jobs/<id>.json`` that outlives the
process that asked (docs/flows.md#jobs).

Thinking and Pro answers take 10 to 40 minutes, and many MCP clients cut a tool call at
60 s. So an ask is a *job*: the ask tool waits ``max_wait`` seconds, then returns the job's
id and its progress, and ``get_answer`` collects the answer later. A job is a file rather
than a process's memory because the process may be gone by then (an MCP client restarts
its server, a terminal is closed), while the answer is not: the sites finish an answer on
their servers, and the job says where to read it (conversation URL, tab), so another
bridge process can pick it up there (``bridge.providers.resume``).

Two processes at once corrupt nothing, and no process-wide lock is needed:

- one file per job, each write atomic (temporary file, fsync, rename): a reader always sees
  a whole record, and processes writing different jobs never touch the same file;
- one writer per job: the process running a job holds an exclusive ``flock`` on
  ``<id>.lock`` for as long as it runs it. The kernel drops the lock when that process
  dies, however it dies, so a free lock on a "running" record means nobody is on it, and
  taking the lock without blocking is how a process claims a job to resume it: two
  processes can never both win. Waiting for another process's job is waiting for its lock
  (a thread blocked in ``flock``): it ends when that job ends or its process dies, with
  no polling.
- the owner's pid (with its start time, so a pid the system reused is not taken for it) is
  recorded for people and for ``list_jobs`` (``owner_alive``); the lock is what decides.

Progress is written at most every ``PROGRESS_WRITE_S`` (a fsync per streamed chunk would
cost more than the answer); the conversation URL, the tab and the status are written as soon
as they change, since a process killed a second later must leave them behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import fcntl
import json
import logging
import os
import re
import secrets
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

from bridge.errors import BridgeError
from bridge.providers.results import PROVIDERS, Provider
from bridge.store.state import open_private, read_state_text, write_atomically

__all__ = [
    "KEEP_FINISHED_S",
    "PROGRESS_WRITE_S",
    "Job",
    "JobLock",
    "JobNotFound",
    "JobRecorder",
    "JobStatus",
    "JobStore",
    "JobUnreadable",
    "owner_alive",
    "process_start",
]

log = logging.getLogger(__name__)

JobStatus = Literal["running", "done", "failed"]
_STATUSES: tuple[JobStatus, ...] = ("running", "done", "failed")
#: The most often routine progress reaches the disk (status, URL and tab go at once).
PROGRESS_WRITE_S = 2.0
#: Finished jobs older than this are removed when a new job starts (a week: long enough to
#: come back to an answer, short enough that the directory never grows without bound).
KEEP_FINISHED_S = 7 * 24 * 3600.0
_FORMAT = 1
_ID = re.compile(r"^[a-z]+-[0-9a-f]{10}$")


def _iso(epoch: float) -> str:
    stamp = datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


class JobNotFound(BridgeError):
    code = "job_not_found"

    def __init__(self, job_id: str, where: Path) -> None:
        shape = "" if _ID.match(job_id) else " (job ids look like 'chatgpt-0123456789')"
        super().__init__(
            f"no job {job_id!r} in {where}{shape}: list_jobs shows the jobs of this state "
            "directory (a server started with another --state-dir or $BRIDGE_STATE_DIR keeps its "
            "own)."
        )
        self.job_id = job_id


class JobUnreadable(BridgeError):
    """A job file that is not a job record: bridge writes them atomically, so something else
    wrote or truncated it."""

    code = "job_unreadable"

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(
            f"the job file {path} cannot be read ({why}); bridge writes job files whole, so "
            "something else changed it. Delete the file; if its answer matters, look for it "
            "in the provider's conversation history, or ask again."
        )
        self.path = path
        self.why = why


# -- who owns a job ------------------------------------------------------------------------


def process_start(pid: int) -> int | None:
    """When the process started (clock ticks since boot, ``/proc/<pid>/stat`` field 22), or
    None where that cannot be read (no ``/proc``, the process is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].startswith("Z")


def owner_alive(pid: int, start: int | None) -> bool:
    """Whether the process that owns a job still runs: ``os.kill(pid, 0)`` says whether the
    pid exists; its start time (where known) tells it from a later process given the same
    pid, and a zombie (killed, not yet reaped by its parent) counts as gone."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, as another user's process
    if _zombie(pid):
        return False
    if start is not None:
        now = process_start(pid)
        if now is not None and now != start:
            return False
    return True


# -- the record ----------------------------------------------------------------------------


@dataclass
class Job:
    """One ask as a job: what was asked, where its answer lives, how far it got, and how it
    ended. ``result`` is the ask's result (``AskResult.to_dict()``), ``error`` the typed
    error's ``code`` and ``message``."""

    id: str
    provider: Provider
    question: str
    session_key: str
    created_at: float  # epoch seconds
    timeout_s: float
    new_chat: bool = False
    mode: str | None = None  # the site mode asked for (docs/sites.md#modes)
    status: JobStatus = "running"
    updated_at: float = 0.0
    owner_pid: int = 0
    owner_start: int | None = None
    url: str | None = None  # the conversation's URL, once known
    tab_id: int | None = None
    phase: str = "queued"  # the ask's progress phase (docs/flows.md#ask-steps)
    chars: int = 0  # characters of the answer so far
    result: dict[str, Any] | None = None
    error: dict[str, str] | None = None
    resumed: int = 0  # how many times another process picked it up

    @classmethod
    def new(
        cls,
        provider: Provider,
        question: str,
        session_key: str,
        timeout_s: float,
        *,
        new_chat: bool = False,
        mode: str | None = None,
    ) -> Job:
        now = time.time()
        pid = os.getpid()
        return cls(
            id=f"{provider}-{secrets.token_hex(5)}",
            provider=provider,
            question=question,
            session_key=session_key,
            created_at=now,
            updated_at=now,
            timeout_s=timeout_s,
            new_chat=new_chat,
            mode=mode,
            owner_pid=pid,
            owner_start=process_start(pid),
        )

    def copy(self) -> Job:
        return dataclasses.replace(self)

    @property
    def deadline(self) -> float:
        """When the ask's timeout runs out (epoch seconds)."""
        return self.created_at + self.timeout_s

    def elapsed_s(self, now: float | None = None) -> float:
        """Seconds since the job started: up to now while it runs, up to its end after."""
        end = (now or time.time()) if self.status == "running" else self.updated_at
        return round(max(0.0, end - self.created_at), 1)

    def owned_by_me(self) -> bool:
        return self.owner_pid == os.getpid()

    def to_record(self) -> dict[str, Any]:
        """The file's content (docs/flows.md#jobs-file): snake_case, times both as ISO text
        for people and as epoch seconds for code."""
        return {
            "format": _FORMAT,
            "id": self.id,
            "provider": self.provider,
            "question": self.question,
            "session_key": self.session_key,
            "status": self.status,
            "created": _iso(self.created_at),
            "updated": _iso(self.updated_at),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "timeout_s": self.timeout_s,
            "new_chat": self.new_chat,
            "mode": self.mode,
            "owner": {"pid": self.owner_pid, "start": self.owner_start},
            "url": self.url,
            "tab_id": self.tab_id,
            "phase": self.phase,
            "chars": self.chars,
            "resumed": self.resumed,
            "result": self.result,
            "error": self.error,
        }

    @classmethod
    def from_record(cls, data: Any, path: Path) -> Job:
        """A record read back; ``JobUnreadable`` saying what is wrong with it otherwise."""
        if not isinstance(data, dict):
            raise JobUnreadable(path, "not a JSON object")
        try:
            owner = data["owner"]
            job = cls(
                id=_typed(data, "id", str),
                provider=cast(Provider, _typed(data, "provider", str)),
                question=_typed(data, "question", str),
                session_key=_typed(data, "session_key", str),
                created_at=float(_typed(data, "created_at", (int, float))),
                updated_at=float(_typed(data, "updated_at", (int, float))),
                timeout_s=float(_typed(data, "timeout_s", (int, float))),
                new_chat=bool(data.get("new_chat", False)),
                mode=data.get("mode") if isinstance(data.get("mode"), str) else None,
                status=cast(JobStatus, _typed(data, "status", str)),
                owner_pid=int(owner["pid"]),
                owner_start=None if owner.get("start") is None else int(owner["start"]),
                url=data.get("url") if isinstance(data.get("url"), str) else None,
                tab_id=data.get("tab_id") if isinstance(data.get("tab_id"), int) else None,
                phase=str(data.get("phase", "")),
                chars=int(data.get("chars", 0)),
                result=data.get("result") if isinstance(data.get("result"), dict) else None,
                error=data.get("error") if isinstance(data.get("error"), dict) else None,
                resumed=int(data.get("resumed", 0)),
            )
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise JobUnreadable(path, f"missing or wrong field: {exc}") from None
        if job.provider not in PROVIDERS:
            raise JobUnreadable(path, f"unknown provider {job.provider!r}")
        if job.status not in _STATUSES:
            raise JobUnreadable(path, f"unknown status {job.status!r}")
        if job.status == "done" and job.result is None:
            raise JobUnreadable(path, "done, but no result")
        if job.id != path.stem:
            raise JobUnreadable(path, f"it names job {job.id!r}")
        return job

    def progress(self) -> dict[str, Any]:
        """How far the job got, as tools show it (``job`` is its id, as in every result
        about a job)."""
        return {
            "job": self.id,
            "provider": self.provider,
            "status": self.status,
            "phase": self.phase,
            "elapsed_s": self.elapsed_s(),
            "chars": self.chars,
            "url": self.url,
            "created": _iso(self.created_at),
            "updated": _iso(self.updated_at),
        }

    def summary(self) -> dict[str, Any]:
        """One line of ``list_jobs``: the question's start, status and where it lives."""
        question = " ".join(self.question.split())
        return {
            "id": self.id,
            "provider": self.provider,
            "question": question if len(question) <= 80 else question[:79] + "…",
            "status": self.status,
            "phase": self.phase,
            "url": self.url,
            "created": _iso(self.created_at),
            "updated": _iso(self.updated_at),
            "elapsed_s": self.elapsed_s(),
            "chars": self.chars,
            "owner_pid": self.owner_pid,
            "owner_alive": self.status == "running"
            and owner_alive(self.owner_pid, self.owner_start),
            **({"error": self.error} if self.error else {}),
        }


def _typed(data: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"{key} is {value!r}")
    return value


# -- the store -----------------------------------------------------------------------------


class JobLock:
    """The exclusive ``flock`` on a job's lock file: held while a process runs the job."""

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
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


class JobStore:
    """The jobs of one state directory (``<root>/jobs``)."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "jobs"

    def path(self, job_id: str) -> Path:
        if not _ID.match(job_id):  # also keeps a caller's id from naming another file
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
        text = json.dumps(job.to_record(), indent=2, ensure_ascii=False) + "\n"
        write_atomically(self.path(job.id), text)

    def load(self, job_id: str) -> Job:
        path = self.path(job_id)
        try:
            text = read_state_text(path)
        except FileNotFoundError:
            raise JobNotFound(job_id, self.dir) from None
        except UnicodeDecodeError:
            raise JobUnreadable(path, "not UTF-8 text") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise JobUnreadable(path, f"not JSON: {exc}") from None
        return Job.from_record(data, path)

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
                if not _ID.match(name.removesuffix(".json")):
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
        for job in self.scan()[0]:
            if job.status == "running" or job.updated_at > cutoff:
                continue
            lock = self.try_lock(job.id)
            if lock is None:
                continue
            try:
                self.path(job.id).unlink(missing_ok=True)
                self._lock_path(job.id).unlink(missing_ok=True)
                removed += 1
            finally:
                lock.release()
        return removed

    # -- ownership --

    def try_lock(self, job_id: str) -> JobLock | None:
        """The job's lock if no process holds it (this one included), else None."""
        path = self._lock_path(job_id)
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = open_private(path, os.O_CREAT | os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return None
            raise
        return JobLock(fd, path)

    async def wait_unlocked(self, job_id: str, timeout: float) -> bool:
        """Wait until no process holds the job's lock (its job ended, or its process died),
        at most ``timeout`` seconds; True if it was let go."""
        return await _release_watch(self._lock_path(job_id), timeout)

    # -- off the event loop (fsync and flock wait for the disk or for others) --

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


# One thread per lock file waited on in this process, blocked in flock(LOCK_SH) until the
# holder lets go; every coroutine waiting on that file hears of it through its own loop.
# A dedicated thread, not the default executor: it may block for the whole length of an
# answer, and the executor's few workers carry every state write.
_watch_lock = threading.Lock()
_watchers: dict[Path, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}


async def _release_watch(path: Path, timeout: float) -> bool:
    loop = asyncio.get_running_loop()
    released: asyncio.Future[None] = loop.create_future()
    entry = (loop, released)
    with _watch_lock:
        waiters = _watchers.get(path)
        if waiters is None:
            waiters = _watchers[path] = []
            threading.Thread(
                target=_watch_thread, args=(path,), name=f"job-lock {path.stem}", daemon=True
            ).start()
        waiters.append(entry)
    try:
        await asyncio.wait_for(asyncio.shield(released), max(0.0, timeout))
        return True
    except TimeoutError:
        return False
    finally:
        with _watch_lock:
            waiting = _watchers.get(path)
            if waiting is not None and entry in waiting:
                waiting.remove(entry)


def _watch_thread(path: Path) -> None:
    try:
        fd = open_private(path, os.O_CREAT | os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
    except OSError as exc:  # the waiters re-read the record and decide again
        log.debug("waiting for %s: %s", path, exc)
    finally:
        with _watch_lock:
            waiters = _watchers.pop(path, [])
        for loop, released in waiters:
            with contextlib.suppress(RuntimeError):  # that loop has closed meanwhile
                loop.call_soon_threadsafe(_resolve, released)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


# -- the running side ----------------------------------------------------------------------


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
        return self.job.copy()

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
            await self.store.save_async(job.copy())
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
                await self.store.save_async(self.job.copy())
            except OSError as exc:  # progress is a convenience; the ask goes on
                if not self._fault_logged:
                    self._fault_logged = True
                    log.warning("could not record the progress of job %s: %s", self.job.id, exc)
