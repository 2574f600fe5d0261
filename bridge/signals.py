"""Stop signals for an asyncio program, on every OS: the one way bridge's commands hear them.

``loop.add_signal_handler`` is the right tool where it exists: the handler runs in the loop,
between callbacks, never in the middle of one. Windows' event loops do not have it (it
raises ``NotImplementedError``), so a ``bridge relay`` or ``bridge-mcp`` there would not
start at all. There, :class:`StopSignals` sets a plain ``signal.signal`` handler that only
hands the callback to the loop (``call_soon_threadsafe``: the Python-level handler runs in
the main thread between bytecodes, maybe in the middle of a loop callback, so it must do
nothing else; the loop's self-pipe wakes it up).

Either way the handlers are undone when the block ends (the loop's removed, the previous
``signal.signal`` handlers put back), so a test or a caller that runs a command in-process
keeps the signal handling it had.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterable
from types import FrameType, TracebackType
from typing import Any

__all__ = ["STOP_SIGNALS", "StopSignals"]

#: SIGINT (Ctrl+C) and SIGTERM (what a supervisor sends), and on Windows SIGBREAK too
#: (Ctrl+Break, and a console window closing), which would otherwise kill the process
#: without any clean-up.
_SIGBREAK: signal.Signals | None = getattr(signal, "SIGBREAK", None)
STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM) + (
    (_SIGBREAK,) if _SIGBREAK is not None else ()
)


class StopSignals:
    """Call ``on_signal`` in the running loop when one of ``signals`` arrives, for the length
    of a ``with`` block (or from :meth:`install` to :meth:`undo`).

    ``loop_handlers=False`` skips ``add_signal_handler`` and takes the path Windows takes
    (tests run it on Linux); ``how`` says which path was taken."""

    def __init__(
        self,
        on_signal: Callable[[], object],
        signals: Iterable[signal.Signals] = STOP_SIGNALS,
        *,
        loop_handlers: bool = True,
    ) -> None:
        self._on_signal = on_signal
        self._signals = tuple(signals)
        self._loop_handlers = loop_handlers
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: dict[signal.Signals, Any] = {}
        #: "loop" (``add_signal_handler``), "signal" (``signal.signal``), or "" (not installed).
        self.how = ""

    def install(self) -> StopSignals:
        """Set the handlers (call it in the loop's thread, the main thread: both ways need
        it). Returns self."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        if self._loop_handlers:
            try:
                for sig in self._signals:
                    loop.add_signal_handler(sig, self._on_signal)
            except NotImplementedError:  # Windows' loops (on the first signal: none added)
                pass
            else:
                self.how = "loop"
                return self
        for sig in self._signals:
            self._previous[sig] = signal.signal(sig, self._from_signal)
        self.how = "signal"
        return self

    def _from_signal(self, signum: int, frame: FrameType | None) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._on_signal)

    def undo(self) -> None:
        """Put the signal handling back as it was before :meth:`install` (idempotent)."""
        how, self.how = self.how, ""
        if how == "loop" and self._loop is not None and not self._loop.is_closed():
            for sig in self._signals:
                self._loop.remove_signal_handler(sig)
        elif how == "signal":
            previous, self._previous = self._previous, {}
            for sig, handler in previous.items():
                # None: a handler set outside Python; the default is the nearest we can put.
                signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        self._loop = None

    def __enter__(self) -> StopSignals:
        return self.install()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.undo()
