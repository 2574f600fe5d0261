"""Waiting for processes to exit, whoever their parent is: a pidfd per process turns readable
when it exits (Linux 5.3+), so the wait is an event with a deadline, not a poll."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def all_exit(pids: Iterable[int], timeout: float) -> None:
    """Until every one of ``pids`` has exited: a pidfd per process turns readable when it
    does (an event, whoever its parent is); TimeoutError past ``timeout``."""
    loop = asyncio.get_running_loop()
    fds: list[int] = []
    exits: list[asyncio.Future[None]] = []
    try:
        for pid in pids:
            try:
                fd = os.pidfd_open(pid)
            except ProcessLookupError:
                continue  # gone already
            fds.append(fd)
            exited: asyncio.Future[None] = loop.create_future()
            loop.add_reader(fd, _settle, exited)
            exits.append(exited)
        async with asyncio.timeout(timeout):
            await asyncio.gather(*exits)
    finally:
        for fd in fds:
            loop.remove_reader(fd)
            os.close(fd)
