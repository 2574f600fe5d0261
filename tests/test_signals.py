"""bridge.signals.StopSignals: a real signal sent to a real process stops it, through the loop's
handlers and through the path Windows takes (``signal.signal``), forced here on Linux; the
handlers are undone at the end."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from bridge.waiting import scaled
from tests.lines import read_line

CHILD = textwrap.dedent(
    """
    import asyncio, signal, sys
    from bridge.signals import StopSignals

    async def main(loop_handlers: bool) -> None:
        stop = asyncio.Event()
        before = signal.getsignal(signal.SIGTERM)
        with StopSignals(stop.set, loop_handlers=loop_handlers) as signals:
            print("how", signals.how, flush=True)
            print("ready", flush=True)
            await asyncio.wait_for(stop.wait(), 60)  # the parent's deadline is shorter
            print("stopped", flush=True)
        print("restored", signal.getsignal(signal.SIGTERM) == before, flush=True)

    asyncio.run(main(sys.argv[1] == "loop"))
    """
)


@pytest.mark.parametrize(("mode", "how"), [("loop", "loop"), ("fallback", "signal")])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_loop_and_the_handlers_are_undone(
    mode: str, how: str, sig: signal.Signals
) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            assert child.stdout is not None
            assert read_line(child.stdout, scaled(20)).split() == ["how", how]
            assert read_line(child.stdout, scaled(20)).strip() == "ready"  # handlers in place
            os.kill(child.pid, sig)
            out, err = child.communicate(timeout=scaled(20))
        finally:
            if child.poll() is None:
                child.kill()
    assert child.returncode == 0, err
    assert out.split("\n")[:2] == ["stopped", "restored True"], out + err


def test_without_the_helper_the_same_signal_kills_the_child() -> None:
    """The check above can fail: a child that set no handler dies of SIGTERM."""
    code = "import sys, time; print('ready', flush=True); sys.stdin.read()"
    with subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as child:
        try:
            assert child.stdout is not None
            assert read_line(child.stdout, scaled(20)).strip() == "ready"
            os.kill(child.pid, signal.SIGTERM)
            assert child.wait(timeout=scaled(20)) == -signal.SIGTERM
        finally:
            if child.poll() is None:
                child.kill()
