"""bridge.tasks: background tasks kept, their failures logged, all stopped together; one task
cancelled and awaited (cancel_and_wait)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bridge.tasks import TaskSet, cancel_and_wait


async def test_a_task_that_raises_is_logged_and_the_others_go_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tasks = TaskSet("the test owner", logging.getLogger("tests.owner"))
    release = asyncio.Event()

    async def fails() -> None:
        raise RuntimeError("the send broke")

    async def waits() -> str:
        await release.wait()
        return "done"

    other = tasks.spawn(waits())
    with caplog.at_level(logging.ERROR, logger="tests.owner"):
        failing = tasks.spawn(fails())
        await asyncio.wait({failing})  # returns after the set's own done callback ran
    (record,) = [r for r in caplog.records if r.name == "tests.owner"]
    assert record.levelno == logging.ERROR and "the test owner" in record.getMessage()
    assert record.exc_info is not None and str(record.exc_info[1]) == "the send broke"
    assert not other.done() and len(tasks) == 1  # the failure stopped nothing else
    release.set()
    assert await other == "done"
    assert len(tasks) == 0  # a task that ended is not kept


async def test_an_ended_task_leaves_the_set_and_its_callback_hears_of_it() -> None:
    tasks = TaskSet("owner")
    heard: list[asyncio.Task[object]] = []

    async def quick() -> int:
        return 7

    task = tasks.spawn(quick(), on_done=heard.append)
    assert list(tasks) == [task]
    assert await task == 7
    assert heard == [task] and len(tasks) == 0


async def test_stop_cancels_every_task_and_awaits_its_cleanup() -> None:
    tasks = TaskSet("owner")
    started = [asyncio.Event() for _ in range(3)]
    cleaned: list[int] = []

    async def forever(i: int) -> None:
        started[i].set()
        try:
            await asyncio.Event().wait()
        finally:
            # Cleanup that itself awaits something: stop waits for it too.
            await asyncio.to_thread(cleaned.append, i)

    spawned = [tasks.spawn(forever(i)) for i in range(3)]
    for event in started:
        await event.wait()
    await asyncio.wait_for(tasks.stop(), 10)
    assert all(t.cancelled() for t in spawned)
    assert sorted(cleaned) == [0, 1, 2]  # done before stop returned, not some time later
    assert len(tasks) == 0


async def test_stop_also_stops_a_task_started_while_stopping() -> None:
    tasks = TaskSet("owner")
    started = asyncio.Event()
    late: list[asyncio.Task[None]] = []

    async def hangs() -> None:
        await asyncio.Event().wait()

    async def spawns_on_the_way_out() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            late.append(tasks.spawn(hangs()))  # e.g. a goodbye frame to send

    tasks.spawn(spawns_on_the_way_out())
    await started.wait()
    await asyncio.wait_for(tasks.stop(), 10)
    assert late and late[0].cancelled() and len(tasks) == 0


async def test_a_task_of_the_set_may_stop_it_without_waiting_for_itself() -> None:
    tasks = TaskSet("owner")
    other_started = asyncio.Event()

    async def other() -> None:
        other_started.set()
        await asyncio.Event().wait()

    async def stopper() -> str:
        await other_started.wait()
        await tasks.stop()
        return "stopped"

    sibling = tasks.spawn(other())
    me = tasks.spawn(stopper())
    assert await asyncio.wait_for(me, 10) == "stopped"
    assert sibling.cancelled()


async def test_cancel_cancels_without_waiting() -> None:
    tasks = TaskSet("owner")
    started = asyncio.Event()

    async def forever() -> None:
        started.set()
        await asyncio.Event().wait()

    task = tasks.spawn(forever())
    await started.wait()
    tasks.cancel()
    assert not task.done()  # cancelling is asked for, not awaited
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_cancel_and_wait_ends_a_reader_and_says_what_it_raised_at_debug_level(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("tests.reader")
    started = asyncio.Event()

    async def reads_forever() -> None:
        started.set()
        await asyncio.Event().wait()

    reader = asyncio.ensure_future(reads_forever())
    await started.wait()
    await cancel_and_wait(reader, log, "reader")
    assert reader.cancelled()

    inside = asyncio.Event()

    async def breaks_when_cancelled() -> None:
        inside.set()
        try:
            await asyncio.Event().wait()
        finally:
            raise OSError("the pipe broke")  # what a reader's clean-up may do

    broken = asyncio.ensure_future(breaks_when_cancelled())
    await inside.wait()  # so the cancellation lands inside it
    with caplog.at_level(logging.DEBUG, logger="tests.reader"):
        await cancel_and_wait(broken, log, "reader")  # not raised here
    assert broken.done() and not broken.cancelled()
    assert any("reader ended with OSError" in r.getMessage() for r in caplog.records)
