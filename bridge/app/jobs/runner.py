"""Running asks as jobs (docs/flows.md#jobs): what ``Bridge``'s job methods delegate to.

A job is started here and run as a task of this process; waiting for one waits for that
task, or for another process's lock; a job whose process is gone is claimed and its answer
collected from its conversation (bridge.providers.resume). The asking itself stays with
the facade (its per-tab locks, its history): the runner reaches it through ``JobHost``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from bridge.app.jobs.record import Job, JobUnreadable, Owner
from bridge.app.jobs.recorder import JobRecorder
from bridge.app.jobs.store import JobLock, JobStore
from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError
from bridge.providers.attachments import Attachments
from bridge.providers.results import AskResult, Progress, Provider
from bridge.providers.resume import is_conversation_url
from bridge.providers.specs import ProgressCallback, ProviderSpec, provider_spec
from bridge.store.state import StateStore
from bridge.waiting import scaled

__all__ = ["JobHost", "JobRunner"]

log = logging.getLogger(__name__)


class JobHost(Protocol):
    """What a job needs of the facade: to ask, to collect an answer from its conversation,
    and the tab an ask is using."""

    @property
    def store(self) -> StateStore: ...

    async def ask(
        self,
        provider: Provider,
        question: str,
        *,
        new_chat: bool = ...,
        timeout: float | None = ...,
        session_key: str | None = ...,
        on_progress: ProgressCallback | None = ...,
        files: Attachments = ...,
        mode: str | None = ...,
        conversation: str | None = ...,
        project: str | None = ...,
        gpt: str | None = ...,
        gem: str | None = ...,
        temporary: bool = ...,
        effort: str | None = ...,
        deep_think: bool = ...,
        outputs_dir: str | None = ...,
        outputs_id: str | None = ...,
        research: bool = ...,
        research_answers: str | None = ...,
    ) -> AskResult: ...

    async def collect_answer(
        self,
        job: Job,
        *,
        on_progress: ProgressCallback,
        on_tab: Callable[[CdpSession], None],
    ) -> AskResult: ...

    def asking_tab(self, session_key: str, provider: Provider) -> CdpSession | None: ...


@dataclass
class _RunningJob:
    """A job this process runs: its recorder and task, and who listens to its progress."""

    recorder: JobRecorder
    spec: ProviderSpec
    task: asyncio.Task[None] | None = None
    listeners: list[ProgressCallback] = field(default_factory=list)
    tab: CdpSession | None = None  # the tab a resumed job reads (an ask's is the host's)
    url_probed: bool = False


class JobRunner:
    """The jobs of one state directory as this process runs and waits for them."""

    def __init__(self, host: JobHost, store: JobStore) -> None:
        self.host = host
        self.store = store
        self._running: dict[str, _RunningJob] = {}

    def _spec(self, provider: Provider) -> ProviderSpec:
        return provider_spec(provider, self.host.store.root)

    async def start(self, job: Job, attachments: Attachments) -> Job:
        """Record ``job`` and run it as a task of this process; the job as started."""
        lock: JobLock | None = None
        try:
            with contextlib.suppress(OSError):  # old records are tidied when it can be done
                await asyncio.to_thread(self.store.prune)
            lock = await self.store.create_async(job)
        except OSError as exc:
            # The answer still comes to this process; what is lost is the record that would
            # let another process collect it.
            self.host.store.report_fault("record the job in", self.store.dir, exc)
        running = _RunningJob(JobRecorder(self.store, job, lock), self._spec(job.provider))
        self._running[job.id] = running
        running.task = asyncio.create_task(self._run(running, attachments), name=job.id)
        return job.copy_now()

    async def wait(
        self, job_id: str, wait: float = 0.0, *, on_progress: ProgressCallback | None = None
    ) -> Job:
        """See ``Bridge.wait_job``."""
        deadline = time.monotonic() + max(0.0, wait)
        while True:
            running = self._running.get(job_id)
            if running is not None:
                return await self._wait_running(running, deadline, on_progress)
            job = await self.store.load_async(job_id)
            if job.status != "running":
                return job
            lock = await self.store.try_lock_async(job_id)
            if lock is not None:  # nobody runs it: its process ended without an end record
                try:
                    job = await self.store.load_async(job_id)  # it may have ended meanwhile
                except BaseException:
                    lock.release()
                    raise
                if job.status != "running":
                    lock.release()
                    return job
                self._resume(job, lock)
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return job
            await self.store.wait_unlocked(job_id, remaining)

    async def snapshot(self, job_id: str) -> Job:
        """See ``Bridge.read_job``."""
        running = self._running.get(job_id)
        if running is not None:
            return running.recorder.snapshot()
        return await self.store.load_async(job_id)

    def cancel(self, job_id: str) -> bool:
        """See ``Bridge.cancel_job``."""
        running = self._running.get(job_id)
        if running is None or running.task is None or running.task.done():
            return False
        running.task.cancel()
        return True

    async def list(self, limit: int = 20) -> tuple[list[Job], list[JobUnreadable]]:
        """See ``Bridge.list_jobs``."""
        jobs, unreadable = await self.store.scan_async()
        fresh = [
            self._running[j.id].recorder.snapshot() if j.id in self._running else j for j in jobs
        ]
        return fresh[: max(0, limit)], unreadable

    def abandon(self) -> None:
        """See ``Bridge.abandon_jobs``."""
        for running in list(self._running.values()):
            running.recorder.abandon()

    async def _wait_running(
        self, running: _RunningJob, deadline: float, on_progress: ProgressCallback | None
    ) -> Job:
        task = running.task
        if on_progress is not None:
            running.listeners.append(on_progress)
        try:
            remaining = deadline - time.monotonic()
            if task is not None and not task.done() and remaining > 0:
                await asyncio.wait({task}, timeout=remaining)
        finally:
            if on_progress is not None and on_progress in running.listeners:
                running.listeners.remove(on_progress)
        if task is not None and not task.done():
            # Returned with the job: the record on disk is as far as we know, the
            # conversation URL included (the next process finds the answer by it).
            await self._note_where(running, probe=True)
            await running.recorder.flush()
        return running.recorder.snapshot()

    async def _run(self, running: _RunningJob, attachments: Attachments) -> None:
        job = running.recorder.job
        try:
            result = await self.host.ask(
                job.provider,
                job.question,
                new_chat=job.new_chat,
                timeout=job.timeout_s,
                session_key=job.session_key,
                on_progress=lambda progress: self._progress(running, progress),
                files=attachments,
                mode=job.mode,
                conversation=job.conversation,
                project=job.project,
                gpt=job.gpt,
                gem=job.gem,
                temporary=job.temporary,
                effort=job.effort,
                deep_think=job.deep_think,
                outputs_dir=job.outputs_dir,
                outputs_id=job.id,
                research=job.research,
                research_answers=job.research_answers,
            )
        except BridgeError as exc:
            await running.recorder.fail(exc.code, str(exc))
        except asyncio.CancelledError:
            await running.recorder.fail(
                "cancelled",
                "the call that started this ask was cancelled, and the answer was stopped "
                "in the page: ask again for an answer.",
            )
            raise
        except Exception as exc:  # a bug: the job must still end, and say where to look
            log.exception("job %s failed", job.id)
            await running.recorder.fail(
                "internal_error", f"bridge failed unexpectedly ({exc!r}); its log has details"
            )
        else:
            await running.recorder.finish(result.to_dict())
        finally:
            self._running.pop(job.id, None)

    def _resume(self, job: Job, lock: JobLock) -> None:
        """Run a job whose process is gone, from its conversation (this process owns it now)."""
        previous = job.owner.pid
        job.owner = Owner.me()
        job.resumed += 1
        job.phase = "resuming"
        running = _RunningJob(JobRecorder(self.store, job, lock), self._spec(job.provider))
        self._running[job.id] = running
        running.task = asyncio.create_task(self._run_resume(running, previous), name=job.id)

    async def _run_resume(self, running: _RunningJob, previous_owner: int) -> None:
        recorder = running.recorder
        job = recorder.job
        try:
            await recorder.flush()  # the new owner, on disk before anything else
            result = await self.host.collect_answer(
                job,
                on_progress=lambda progress: self._progress(running, progress),
                on_tab=lambda tab: setattr(running, "tab", tab),
            )
        except BridgeError as exc:
            await recorder.fail(exc.code, str(exc))
        except asyncio.CancelledError:
            await recorder.fail("cancelled", "collecting this answer was cancelled; ask again.")
            raise
        except Exception as exc:
            log.exception("resuming job %s failed", job.id)
            await recorder.fail(
                "internal_error", f"bridge failed unexpectedly ({exc!r}); its log has details"
            )
        else:
            result.notes.append(
                f"collected by bridge process {job.owner.pid} from the conversation page: the "
                f"process that asked ({previous_owner}) had ended"
            )
            await recorder.finish(result.to_dict())
        finally:
            self._running.pop(job.id, None)

    async def _note_where(self, running: _RunningJob, *, probe: bool = False) -> None:
        """The job's tab and conversation URL into its record, the URL as soon as the tab
        shows one (the tab's own URL events keep ``tab.url`` current at no cost; a reused tab
        whose URL has not changed since it was attached is asked once, and ``probe`` asks
        it when returning a job, so the caller gets the URL as it is at that moment)."""
        job = running.recorder.job
        tab = running.tab or self.host.asking_tab(job.session_key, job.provider)
        if tab is None:
            return
        current = tab.url
        first = not current and not running.url_probed
        if (first or (probe and not is_conversation_url(running.spec, current))) and (
            tab.ended is None
        ):
            running.url_probed = True
            with contextlib.suppress(BridgeError):
                current = str(await tab.evaluate("location.href", timeout=scaled(2.0)))
        url = current if is_conversation_url(running.spec, current) else None
        running.recorder.progress(job.phase, job.chars, url=url, tab_id=tab.tab_id)

    async def _progress(self, running: _RunningJob, progress: Progress) -> None:
        """A job's progress: into its record (where it lives too), and to whoever waits."""
        job = running.recorder.job
        await self._note_where(running)
        running.recorder.progress(progress.phase, progress.chars)
        for listener in list(running.listeners):
            try:
                outcome: Awaitable[None] | None = listener(progress)
                if outcome is not None:
                    await outcome
            except Exception as exc:  # a waiter that went away must not break the answer
                log.debug("progress listener of job %s failed: %r", job.id, exc)
