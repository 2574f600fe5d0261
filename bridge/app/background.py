"""A ``Runtime`` served from a thread of its own, for synchronous callers.

The relay must answer the extension and CDP clients while the caller's thread is busy:
pytest-playwright's fixtures and tests are synchronous and block their thread for as long as
a Playwright call waits, so a relay on that thread's (idle) event loop would never answer the
calls Playwright is waiting for. This gives the whole stack an event loop on a daemon thread;
the caller talks to it only through ``start``/``stop``/``cdp_url``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from bridge.app.runtime import Runtime, RuntimeOptions

__all__ = ["BackgroundRuntime"]

T = TypeVar("T")


class BackgroundRuntime:
    """``start()`` brings up relay, browser (with ``launch``) and link; ``stop()`` ends all."""

    def __init__(self, options: RuntimeOptions) -> None:
        self.runtime = Runtime(options)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="bridge-runtime", daemon=True
        )
        self._started = False

    def start(self, connect_timeout: float) -> BackgroundRuntime:
        """Start the stack and wait (at most ``connect_timeout``) for the extension's link.

        Raises what the start raised (ExtensionNotConnected with advice, a launch failure),
        with the stack already stopped again.
        """
        self._thread.start()
        self._started = True
        try:
            self._run(self._start(connect_timeout))
        except BaseException:
            self.stop()
            raise
        return self

    async def _start(self, connect_timeout: float) -> None:
        await self.runtime.start()
        await self.runtime.connected(connect_timeout)

    @property
    def cdp_url(self) -> str:
        return self.runtime.cdp_url

    def stderr_tail(self) -> str:
        """The launched browser's last stderr lines (empty without one): for failure reports."""
        launched = self.runtime.launched
        return launched.stderr_tail() if launched is not None else ""

    def stop(self) -> None:
        """Stop the stack, then the loop and its thread. Idempotent."""
        if not self._started:
            return
        self._started = False
        try:
            self._run(self.runtime.stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the runtime's loop and wait for it; its own deadlines bound it."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()
