"""``bridge ask`` on a terminal: which provider is in which phase, characters so far, elapsed
time, one line per provider redrawn in place; each answer printed above the lines the moment
it is complete.

Two parts, so the drawing is testable without a terminal: :class:`ProgressBoard` (pure: what
each provider is doing, rendered to lines that fit the width) and :class:`LiveBlock` (turns a
list of lines into ANSI redraws on a stream, and prints text above the block without tearing
it). :class:`TerminalProgress` ties them to an ask: the ``on_progress``/``on_done``
callbacks, and a display refresh so elapsed time moves between events. The command uses it
only when stdout is a terminal and ``--json`` is off; otherwise nothing of it is written.

When the ask ends the block stays as a summary, one line per provider ("chatgpt  done
1 234 chars  4.2 s"): the person sees at the end how each side did.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TextIO

from bridge.providers.results import Progress

__all__ = ["REFRESH_S", "LiveBlock", "ProgressBoard", "TerminalProgress"]

#: How often the elapsed time is redrawn between progress events (a display cadence).
REFRESH_S = 0.1
_ERASE_LINE = "\x1b[2K"
_ERASE_BELOW = "\x1b[J"


def _up(lines: int) -> str:
    """To the start of the line ``lines`` above (nothing for 0)."""
    return f"\x1b[{lines}F" if lines else "\r"


@dataclass
class _Line:
    phase: str = "starting"
    chars: int = 0
    ended_at: float | None = None
    outcome: str | None = None  # "done" or "error [code]" once the side has ended


class ProgressBoard:
    """What each provider is doing. ``render(now, width)`` is a pure function of the events
    fed in and the clock given."""

    def __init__(self, providers: Iterable[str], started: float) -> None:
        self.started = started
        self.lines: dict[str, _Line] = {p: _Line() for p in providers}

    def update(self, progress: Progress) -> None:
        line = self.lines.setdefault(progress.provider, _Line())
        if line.outcome is None:  # a late event does not undo the end
            line.phase = progress.phase
            line.chars = max(line.chars, progress.chars)

    def end(self, provider: str, now: float, *, chars: int | None = None, error: str = "") -> None:
        line = self.lines.setdefault(provider, _Line())
        line.ended_at = now
        line.outcome = f"error [{error}]" if error else "done"
        line.phase = line.outcome
        if chars is not None:
            line.chars = chars

    def render(self, now: float, width: int) -> list[str]:
        name_width = max((len(p) for p in self.lines), default=0)
        out = []
        for provider, line in self.lines.items():
            elapsed = (line.ended_at if line.ended_at is not None else now) - self.started
            chars = f"{line.chars:,}".replace(",", " ")  # 1 234: thousands, in any locale
            text = (
                f"{provider:<{name_width}}  {line.phase:<10}  {chars:>7} chars  "
                f"{max(0.0, elapsed):5.1f} s"
            )
            out.append(_fit(text, width))
        return out


def _fit(text: str, width: int) -> str:
    """At most ``width - 1`` characters: a line that fills the last column makes some
    terminals wrap, and the cursor arithmetic of the redraw would be off by a line."""
    limit = max(1, width - 1)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LiveBlock:
    """A block of lines at the bottom of a terminal, redrawn in place.

    It remembers how many lines it drew, so a redraw goes back exactly that far; text printed
    with :meth:`print_above` goes where the block was, and the block is drawn again below.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.drawn = 0

    def draw(self, lines: list[str]) -> None:
        out = [_up(self.drawn)]
        out += [f"{_ERASE_LINE}{line}\n" for line in lines]
        out.append(_ERASE_BELOW)
        self.stream.write("".join(out))
        self.stream.flush()
        self.drawn = len(lines)

    def print_above(self, text: str, lines: list[str]) -> None:
        self.stream.write(
            _up(self.drawn) + _ERASE_BELOW + text + ("" if text.endswith("\n") else "\n")
        )
        self.drawn = 0
        self.draw(lines)

    def leave(self, lines: list[str]) -> None:
        """Draw the last state and leave it on screen; later output goes below it."""
        self.draw(lines)
        self.drawn = 0


class TerminalProgress:
    """The live display of one ``bridge ask``: feed it ``on_progress`` and ``on_done``; it
    redraws on each event and every :data:`REFRESH_S` until :meth:`close`."""

    def __init__(
        self,
        providers: Iterable[str],
        stream: TextIO,
        width: Callable[[], int],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock
        self.width = width
        self.board = ProgressBoard(providers, clock())
        self.block = LiveBlock(stream)
        self._closed = asyncio.Event()
        self._ticker: asyncio.Task[None] | None = None

    def _lines(self) -> list[str]:
        return self.board.render(self.clock(), self.width())

    def start(self) -> None:
        self.block.draw(self._lines())
        self._ticker = asyncio.ensure_future(self._tick())

    async def _tick(self) -> None:
        while not self._closed.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closed.wait(), REFRESH_S)
            if not self._closed.is_set():
                self.block.draw(self._lines())

    def on_progress(self, progress: Progress) -> None:
        self.board.update(progress)
        if not self._closed.is_set():
            self.block.draw(self._lines())

    def answer(
        self, provider: str, text: str, *, chars: int | None = None, error: str = ""
    ) -> None:
        """A side ended: its text goes above the block, its line says how it ended."""
        self.board.end(provider, self.clock(), chars=chars, error=error)
        self.block.print_above(text, self._lines())

    async def close(self) -> None:
        """Stop refreshing and leave each provider's last line as the summary."""
        self._closed.set()
        if self._ticker is not None:
            await self._ticker
        self.block.leave(self._lines())
