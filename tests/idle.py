"""Browsers left idle from the start of the session, for the tests that need a long idle
time (reliability case 10: the link survives MV3's 30 s idle stop and five minutes more).

Waiting five minutes inside one test holds a pytest-xdist worker for five minutes. Instead,
``tests/conftest.py`` starts these browsers when a session that collected such a test
begins, and the test waits (for keepalive events, bounded) only for the idle time that has
not yet passed while other tests ran. Each case has its own browser, relay and tab, touched
by nothing between the tab's first load and the test's one command.

They run in a process of their own (``python -m tests.idle <pages URL>``): the session's
event loop stands still between async tests (a stretch of plain tests can outlast the
extension's 45 s silence limit), and a thread of the test process would share its global
``random`` with Hypothesis, which takes any change of it during a draw for a strategy's.
The process answers one JSON line per ``check <case>|<pings>`` line on its stdin and stops
its browsers when stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from bridge.app.runtime import Runtime, RuntimeOptions
from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError
from bridge.waiting import scaled

__all__ = ["IDLE_TEST", "IdleBrowsers", "IdleCheck"]

#: The test whose collection starts the idle browsers, and its cases.
IDLE_TEST = "test_after_idling_the_next_command_answers_on_the_same_link"
CASES = ("35 s", "5 min")
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class IdleCheck:
    """What the one command after the idle time found (``error``: why there was none)."""

    title: str = ""
    same_link: bool = False
    rounds: int = 0
    error: str = ""


class IdleBrowsers:
    """The test process's side: the idle process, started at once, asked once per case."""

    def __init__(self, pages: str) -> None:
        self._pages = pages
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.idle", self._pages],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )

    async def check(self, case: str, pings: int) -> IdleCheck:
        """Once ``pings`` keepalive rounds have passed since the case's browser went idle,
        one command on its tab, bounded by 2 s (no reconnection, no delay)."""
        return await asyncio.to_thread(self._ask, f"check {case}|{pings}")

    def _ask(self, line: str) -> IdleCheck:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        with self._lock:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            reply = proc.stdout.readline()
        if not reply:
            return IdleCheck(error=f"the idle browsers' process ended (exit {proc.poll()})")
        return IdleCheck(**json.loads(reply))

    def stop(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=scaled(60.0))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        finally:
            if proc.stdout is not None:
                proc.stdout.close()


# -- the idle process ------------------------------------------------------------------------


@dataclass
class _Idle:
    runtime: Runtime
    tab: CdpSession
    link: object
    rounds_at_idle: int


async def _keep(case: str, pages: str, ready: asyncio.Future[_Idle], stop: asyncio.Event) -> None:
    try:
        async with Runtime(RuntimeOptions(launch=True, headless=True, isolated=True)) as rt:
            await rt.connected(scaled(30.0))
            tab = await rt.browser.new_tab(f"{pages}/")
            relay = rt.relay
            ready.set_result(_Idle(rt, tab, relay.link, relay.stats.keepalive_rounds))
            await stop.wait()
    except (BridgeError, OSError, TimeoutError) as exc:  # reported by the case's check
        if not ready.done():
            ready.set_exception(exc)


async def _check(ready: asyncio.Future[_Idle], pings: int) -> IdleCheck:
    try:
        idle = await asyncio.wait_for(asyncio.shield(ready), scaled(60.0))
        relay = idle.runtime.relay
        target = idle.rounds_at_idle + pings
        await relay.wait_until(
            lambda: relay.stats.keepalive_rounds >= target, scaled(15.0 * pings + 30.0)
        )
        async with asyncio.timeout(scaled(2.0)):
            title = str(await idle.tab.evaluate("document.title"))
        return IdleCheck(title, relay.link is idle.link, relay.stats.keepalive_rounds)
    except (BridgeError, OSError, TimeoutError) as exc:
        return IdleCheck(error=repr(exc))


async def _main(pages: str) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    ready: dict[str, asyncio.Future[_Idle]] = {case: loop.create_future() for case in CASES}
    keepers = [asyncio.ensure_future(_keep(c, pages, ready[c], stop)) for c in CASES]
    while line := await asyncio.to_thread(sys.stdin.readline):
        case, _, pings = line.removeprefix("check ").strip().partition("|")
        if case in ready:
            found = await _check(ready[case], int(pings))
        else:
            found = IdleCheck(error=f"no idle case {case!r}")
        print(json.dumps(found.__dict__), flush=True)
    stop.set()
    await asyncio.gather(*keepers)


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1]))
