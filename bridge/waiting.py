"""Waiting without races: the one idiom for "the event, or the end of its subject, or a deadline".

Following playwright's ``_waiter``: a wait is registered *before* the action that causes
its event, and whatever ends its subject (tab closed, debugger detached, link lost, page
crashed) rejects it at once instead of letting it run into its deadline.

- ``Waiter``: one outcome (``resolve`` / ``reject``), awaited with a deadline.
- ``EventStream``: every matching event in order (``next(timeout)`` gives the next one or
  None when the time is up), rejected the same way.
- ``wait_for``: any awaitable under a deadline that raises ``BridgeTimeout`` naming it.

Owners (``CdpSession``) keep their open waits and reject them all when they end; a wait
that finishes removes itself through its ``on_close`` callback.
"""

from __future__ import annotations

import asyncio
import collections
import os
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from bridge.errors import BridgeTimeout

__all__ = ["EventStream", "Waiter", "scaled", "timeout_factor", "wait_for"]

T = TypeVar("T")


def timeout_factor() -> float:
    """One knob for every default deadline (slow CI machines set BRIDGE_TIMEOUT_FACTOR=3)."""
    try:
        return max(0.1, float(os.environ.get("BRIDGE_TIMEOUT_FACTOR", "1")))
    except ValueError:
        return 1.0


def scaled(seconds: float) -> float:
    return seconds * timeout_factor()


async def wait_for(aw: Awaitable[T], timeout: float | None, what: str) -> T:
    """Await ``aw`` for at most ``timeout`` seconds; BridgeTimeout names what was awaited."""
    if timeout is None:
        return await aw
    cm = asyncio.timeout(timeout)
    try:
        async with cm:
            return await aw
    except TimeoutError:
        if cm.expired():  # ours; a TimeoutError raised by ``aw`` itself passes through
            raise BridgeTimeout(what, timeout) from None
        raise


class Waiter(Generic[T]):
    """One outcome: resolved with a value, rejected with an error, or timed out waiting."""

    def __init__(self, what: str, on_close: Callable[[Waiter[T]], None] | None = None) -> None:
        self.what = what
        self._on_close = on_close
        self.future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        # An outcome nobody awaits any more must not be reported as "never retrieved".
        self.future.add_done_callback(_retrieve)

    @property
    def done(self) -> bool:
        return self.future.done()

    def resolve(self, value: T) -> None:
        if not self.future.done():
            self.future.set_result(value)

    def reject(self, error: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(error)

    async def wait(self, timeout: float | None) -> T:
        """The outcome; BridgeTimeout after ``timeout`` s. The wait is closed either way."""
        try:
            return await wait_for(asyncio.shield(self.future), timeout, self.what)
        finally:
            self.close()

    def close(self) -> None:
        """Stop waiting (idempotent): the owner forgets this wait."""
        if not self.future.done():
            self.future.cancel()
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close(self)


class EventStream(Generic[T]):
    """Events in arrival order until closed; a rejection is raised by the next ``next()``."""

    def __init__(self, what: str, on_close: Callable[[EventStream[T]], None] | None = None) -> None:
        self.what = what
        self._on_close = on_close
        self._items: collections.deque[T] = collections.deque()
        self._error: BaseException | None = None
        self._wakeup: asyncio.Future[None] | None = None

    def push(self, item: T) -> None:
        if self._error is None:
            self._items.append(item)
            self._wake()

    def reject(self, error: BaseException) -> None:
        if self._error is None:
            self._error = error
            self._wake()

    def _wake(self) -> None:
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)

    async def next(self, timeout: float | None) -> T | None:
        """The next event, or None when ``timeout`` s pass first; raises a rejection at once."""
        if not self._items and self._error is None:
            self._wakeup = asyncio.get_running_loop().create_future()
            try:
                await asyncio.wait({self._wakeup}, timeout=timeout)
            finally:
                self._wakeup.cancel()
                self._wakeup = None
        if self._items:
            return self._items.popleft()
        if self._error is not None:
            raise self._error
        return None

    def close(self) -> None:
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close(self)

    def __enter__(self) -> EventStream[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _retrieve(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()
