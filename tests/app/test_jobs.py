"""The job store (docs/flows.md#jobs): whole records, one writer per job, owners that die.

No browser: files, locks and processes only.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import bridge.store.state
from bridge.app.jobs import (
    Job,
    JobNotFound,
    JobRecorder,
    JobStore,
    JobUnreadable,
    owner_alive,
    process_start,
)


def _job(question: str = "How do I read files asynchronously in Python?", **more: object) -> Job:
    job = Job.new("chatgpt", question, "proj", 480.0)
    for name, value in more.items():
        setattr(job, name, value)
    return job


def test_a_job_round_trips_through_its_file(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    job = _job(url="https://chatgpt.com/c/0a1b", tab_id=7, phase="streaming", chars=120)
    store.create(job).release()
    back = store.load(job.id)
    assert back == job
    record = json.loads(store.path(job.id).read_text())
    # Outputs are snake_case (bridge/providers/results.py); times for people and for code.
    assert record["owner"] == {"pid": os.getpid(), "start": process_start(os.getpid())}
    assert record["created"].endswith("Z") and record["created_at"] == job.created_at
    assert all(key == key.lower() for key in record)


def test_writes_are_atomic_a_failed_write_keeps_the_old_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = JobStore(tmp_path)
    job = _job()
    store.create(job).release()
    job.phase, job.chars = "streaming", 5000
    job.question = "x" * 100_000  # a record written in several write() calls

    def disk_full_halfway(fd: int, data: bytes | memoryview) -> int:
        if len(data) > 10_000:
            return os.write(fd, bytes(data[:4096]))  # then the disk is full
        return 0

    monkeypatch.setattr(bridge.store.state, "_write", disk_full_halfway)
    with pytest.raises(OSError):
        store.save(job)
    monkeypatch.undo()
    assert store.load(job.id).phase == "queued"  # the previous record, whole
    assert sorted(p.name for p in store.dir.iterdir()) == [f"{job.id}.json", f"{job.id}.lock"]


def _write_jobs(root: str, tag: str, n: int) -> None:
    """One process's share: n jobs, each created, updated a few times and ended."""
    store = JobStore(Path(root))
    for i in range(n):
        job = _job(f"{tag} question {i} " + "y" * 3000)
        lock = store.create(job)
        for chars in (100, 2000, 9000):
            job.phase, job.chars = "streaming", chars
            store.save(job)
        job.status, job.result = "done", {"answer": f"{tag} answer {i}"}
        store.save(job)
        lock.release()


def test_two_processes_writing_different_jobs_lose_nothing(tmp_path: Path) -> None:
    n = 30
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write_jobs, args=(str(tmp_path), tag, n)) for tag in "ab"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    jobs, unreadable = JobStore(tmp_path).scan()
    assert unreadable == []  # every file whole
    assert len(jobs) == 2 * n
    for tag in "ab":
        answers = sorted(
            j.result["answer"] for j in jobs if j.question.startswith(tag) and j.result
        )
        assert answers == sorted(f"{tag} answer {i}" for i in range(n))
    assert not [p for p in (tmp_path / "jobs").iterdir() if p.name.endswith(".tmp")]


def test_jobs_are_listed_newest_first(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    made = []
    for i, created in enumerate([1000.0, 3000.0, 2000.0]):
        job = _job(f"question {i}", created_at=created, updated_at=created)
        store.create(job).release()
        made.append(job)
    jobs, _ = store.scan()
    assert [j.question for j in jobs] == ["question 1", "question 2", "question 0"]


def test_a_corrupt_job_file_is_reported_clearly(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    good = _job()
    store.create(good).release()
    broken = _job()
    store.create(broken).release()
    store.path(broken.id).write_text('{"id": "half a rec')
    with pytest.raises(JobUnreadable) as caught:
        store.load(broken.id)
    message = str(caught.value)
    assert str(store.path(broken.id)) in message and "not JSON" in message
    assert "Delete the file" in message and caught.value.code == "job_unreadable"
    # A record of the wrong shape says which field.
    record = json.loads(good.to_text())
    store.path(broken.id).write_text(json.dumps({**record, "id": broken.id, "status": 3}))
    with pytest.raises(JobUnreadable, match="status"):
        store.load(broken.id)
    jobs, unreadable = store.scan()
    assert [j.id for j in jobs] == [good.id]  # the others still list
    assert [u.path for u in unreadable] == [store.path(broken.id)]


def test_unknown_and_malformed_job_ids(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    with pytest.raises(JobNotFound, match="list_jobs"):
        store.load("chatgpt-0123456789")
    with pytest.raises(JobNotFound, match="job ids look like"):
        store.load("../sessions")  # never names a file outside the jobs directory


def test_the_owner_alive_check(tmp_path: Path) -> None:
    me = os.getpid()
    assert owner_alive(me, process_start(me))
    assert not owner_alive(me, (process_start(me) or 0) + 1)  # the pid, reused by another
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not owner_alive(child.pid, None)  # exited and reaped
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped yet
    try:
        assert not owner_alive(zombie.pid, None)
    finally:
        zombie.wait()
    assert not owner_alive(0, None)


_HOLDER = """
import sys
from pathlib import Path
from bridge.app.jobs import Job, JobStore
store = JobStore(Path(sys.argv[1]))
job = Job.new("gemini", "held", "proj", 480.0)
lock = store.create(job)
print(job.id, flush=True)
sys.stdin.readline()  # holds the job until told, or until killed
"""


def _holder(root: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


async def test_a_job_is_claimed_only_once_its_process_is_gone(tmp_path: Path) -> None:
    proc, job_id = _holder(tmp_path)
    store = JobStore(tmp_path)
    try:
        job = store.load(job_id)
        assert job.owner.pid == proc.pid and owner_alive(job.owner.pid, job.owner.start)
        assert store.try_lock(job_id) is None  # its process runs it
        assert not await store.wait_unlocked(job_id, 0.2)
        waiting = asyncio.ensure_future(store.wait_unlocked(job_id, 30))
        proc.kill()  # however it ends, the kernel lets go of its lock
        assert await waiting
    finally:
        proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
    job = store.load(job_id)
    assert job.status == "running" and not owner_alive(job.owner.pid, job.owner.start)
    first = store.try_lock(job_id)
    assert first is not None
    try:
        assert store.try_lock(job_id) is None  # a second claimant loses, even in-process
    finally:
        first.release()


async def test_progress_is_written_at_most_every_two_seconds_but_the_url_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = JobStore(tmp_path)
    job = _job()
    recorder = JobRecorder(store, job, store.create(job))
    saves: list[Job] = []
    save = store.save
    monkeypatch.setattr(store, "save", lambda j: (saves.append(j), save(j))[1])
    for chars in range(0, 5000, 50):  # a hundred observations within a moment
        recorder.progress("streaming", chars)
    await asyncio.sleep(0)
    assert saves == []
    recorder.progress("streaming", 5000, url="https://chatgpt.com/c/0a1b", tab_id=3)
    await recorder.flush()
    assert [(s.url, s.tab_id, s.chars) for s in saves] == [("https://chatgpt.com/c/0a1b", 3, 5000)]
    assert store.try_lock(job.id) is None  # held while it runs
    await recorder.finish({"answer": "the answer"})
    done = store.load(job.id)
    assert (done.status, done.phase, done.result) == ("done", "done", {"answer": "the answer"})
    lock = store.try_lock(job.id)  # let go once the end is on disk
    assert lock is not None
    lock.release()


def test_old_finished_jobs_are_pruned_running_ones_kept(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    old = time.time() - 30 * 24 * 3600
    finished = _job(status="done", result={"answer": "a"}, created_at=old, updated_at=old)
    running = _job(created_at=old, updated_at=old)
    recent = _job(status="failed", error={"code": "x", "message": "y"})
    for job in (finished, running, recent):
        store.create(job).release()
    for job in (finished, running):  # written when they last changed, as a real run does
        os.utime(store.path(job.id), (old, old))
    loaded: list[str] = []
    load = store.load
    store.load = lambda job_id: loaded.append(job_id) or load(job_id)  # type: ignore[method-assign]
    assert store.prune() == 1
    # Only records whose file is old enough were read: a recent one cannot be pruned.
    assert sorted(loaded) == sorted([finished.id, running.id])
    assert sorted(j.id for j in store.scan()[0]) == sorted([running.id, recent.id])
    assert not store.path(finished.id).with_suffix(".lock").exists()
