"""Waiting without races: one future per wait, ended by the event, an error, or a deadline.

Following playwright's ``_waiter``: a wait is registered *before* the action that causes
its event, and whatever ends its subject (tab closed, debugger detached, link lost)
rejects it at once instead of letting it run into its timeout.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable
from typing import TypeVar

from bridge.errors import BridgeTimeout

__all__ = ["scaled", "timeout_factor", "wait_for"]

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
