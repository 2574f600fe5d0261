"""Browsers left idle from the start of the session, for the tests that need a long idle
time (reliability case 10: the link survives MV3's 30 s idle stop and five minutes more).

Waiting five minutes inside one test holds a pytest-xdist worker for five minutes. Instead,
``tests/conftest.py`` starts these browsers when a session that collected such a test
begins, and the test waits (for keepalive events, bounded) only for the idle time that has
not yet passed while other tests ran. Each case has its own browser, relay and tab, touched
by nothing between the tab's first load and the test's one command.

They run on an event loop of their own, in a thread: the session's loop stands still
between async tests (a stretch of plain tests can outlast the extension's 45 s silence
limit), and a relay that stops pinging is not what case 10 is about.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from dataclasses import dataclass

from bridge.app.runtime import Runtime, RuntimeOptions
from bridge.cdp.session import CdpSession
from bridge.waiting import scaled

__all__ = ["IDLE_TEST", "IdleBrowsers", "IdleCheck"]

#: The test whose collection starts the idle browsers, and its cases.
IDLE_TEST = "test_after_idling_the_next_command_answers_on_the_same_link"
CASES = ("35 s", "5 min")


@dataclass
class _Idle:
    runtime: Runtime
    tab: CdpSession
    link: object
    rounds_at_idle: int


@dataclass(frozen=True)
class IdleCheck:
    """What the one command after the idle time found."""

    title: str
    same_link: bool
    rounds: int


class IdleBrowsers:
    """The idle browsers of one session, on their own loop in their own thread."""

    def __init__(self, pages: str) -> None:
        self._pages = pages
        self._loop = asyncio.new_event_loop()
        self._ready: dict[str, concurrent.futures.Future[_Idle]] = {
            case: concurrent.futures.Future() for case in CASES
        }
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, name="idle browsers", daemon=True)

    def start(self) -> None:
        self._thread.start()

    async def check(self, case: str, pings: int) -> IdleCheck:
        """Once ``pings`` keepalive rounds have passed since the case's browser went idle,
        one command on its tab (bounded by 2 s: no reconnection, no delay)."""
        ready = await asyncio.wrap_future(self._ready[case])
        done = asyncio.run_coroutine_threadsafe(self._check(ready, pings), self._loop)
        return await asyncio.wrap_future(done)

    @staticmethod
    async def _check(idle: _Idle, pings: int) -> IdleCheck:
        relay = idle.runtime.relay
        target = idle.rounds_at_idle + pings
        await relay.wait_until(
            lambda: relay.stats.keepalive_rounds >= target, scaled(15.0 * pings + 30.0)
        )
        async with asyncio.timeout(scaled(2.0)):
            title = str(await idle.tab.evaluate("document.title"))
        return IdleCheck(title, relay.link is idle.link, relay.stats.keepalive_rounds)

    def stop(self) -> None:
        if self._thread.is_alive() and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=scaled(60.0))

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._run_all())
        finally:
            self._loop.close()

    async def _run_all(self) -> None:
        self._stop = asyncio.Event()
        await asyncio.gather(*(self._run(case) for case in CASES))

    async def _run(self, case: str) -> None:
        ready = self._ready[case]
        assert self._stop is not None
        try:
            async with Runtime(RuntimeOptions(launch=True, headless=True, isolated=True)) as rt:
                await rt.connected(scaled(30.0))
                tab = await rt.browser.new_tab(f"{self._pages}/")
                relay = rt.relay
                ready.set_result(_Idle(rt, tab, relay.link, relay.stats.keepalive_rounds))
                await self._stop.wait()
        except BaseException as exc:
            if ready.done():  # after the browser was handed out: the thread reports it
                raise
            ready.set_exception(exc)  # before: the test that needs it reports it, whole
