"""Running a coroutine on the session's event loop from a synchronous test body (scenarios'
and captures' tests: their fixtures live on that loop)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_on"]

T = TypeVar("T")


def run_on(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the (idle) session loop; on Ctrl-C, cancel it and let it clean up."""
    task = loop.create_task(coro)
    try:
        return loop.run_until_complete(task)
    except BaseException:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                loop.run_until_complete(task)
        raise
