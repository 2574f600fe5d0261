"""The live lines of ``bridge ask``: the board (pure), the block's ANSI redraws on a stream."""

from __future__ import annotations

import asyncio
import io
import re

from hypothesis import given
from hypothesis import strategies as st

from bridge.cli.progress import LiveBlock, ProgressBoard, TerminalProgress
from bridge.providers.results import Progress

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
PHASES = ["connect", "input", "send", "waiting", "thinking", "streaming", "extracting", "done"]


def _progress(provider: str, phase: str, chars: int = 0) -> Progress:
    return Progress(provider=provider, phase=phase, elapsed_s=0.0, chars=chars)  # type: ignore[arg-type]


def test_the_board_shows_phase_chars_and_elapsed_per_provider() -> None:
    board = ProgressBoard(["chatgpt", "gemini"], started=100.0)
    board.update(_progress("chatgpt", "streaming", 1234))
    board.update(_progress("gemini", "thinking"))
    assert board.render(now=104.25, width=80) == [
        "chatgpt  streaming     1 234 chars    4.2 s",
        "gemini   thinking          0 chars    4.2 s",
    ]


def test_an_ended_side_keeps_its_time_and_says_how_it_ended() -> None:
    board = ProgressBoard(["chatgpt", "gemini"], started=0.0)
    board.end("chatgpt", 3.0, chars=42)
    board.end("gemini", 5.0, error="timeout")
    board.update(_progress("chatgpt", "streaming", 10))  # a late event changes nothing
    lines = board.render(now=60.0, width=80)
    assert lines[0].split() == ["chatgpt", "done", "42", "chars", "3.0", "s"]
    assert lines[1].split()[:3] == ["gemini", "error", "[timeout]"]
    assert lines[1].endswith("5.0 s")


def test_a_narrow_terminal_gets_lines_shorter_than_its_width() -> None:
    board = ProgressBoard(["chatgpt"], started=0.0)
    board.update(_progress("chatgpt", "streaming", 10**6))
    (line,) = board.render(now=1.0, width=20)
    assert len(line) == 19 and line.endswith("…")


def test_a_redraw_goes_back_exactly_the_lines_it_drew() -> None:
    out = io.StringIO()
    block = LiveBlock(out)
    block.draw(["a", "b"])
    block.draw(["c", "d"])
    assert out.getvalue() == "\r\x1b[2Ka\n\x1b[2Kb\n\x1b[J\x1b[2F\x1b[2Kc\n\x1b[2Kd\n\x1b[J"


def test_text_printed_above_stays_whole_and_the_block_follows_it() -> None:
    out = io.StringIO()
    block = LiveBlock(out)
    block.draw(["one", "two"])
    block.print_above("## chatgpt\n\nanswer\n", ["one done", "two"])
    block.leave(["one done", "two done"])
    screen = _screen(out.getvalue())
    assert screen == ["## chatgpt", "", "answer", "one done", "two done"]
    assert block.drawn == 0  # what comes next goes below


def _screen(raw: str) -> list[str]:
    """A tiny terminal: the lines on screen after ``raw`` (cursor moves, erases, text)."""
    lines: list[str] = [""]
    row = 0
    for token in re.split(r"(\x1b\[[0-9;]*[A-Za-z]|\n|\r)", raw):
        if not token:
            continue
        if token == "\n":
            row += 1
            if row == len(lines):
                lines.append("")
        elif token == "\r":
            pass  # every write here starts at column 0 or appends
        elif token.endswith("F"):
            row -= int(token[2:-1] or 1)
            assert row >= 0, "moved above the block"
        elif token == "\x1b[2K":
            lines[row] = ""
        elif token == "\x1b[J":
            del lines[row + 1 :]
            lines[row] = ""
        else:
            lines[row] += token
    return lines[:-1] if lines and lines[-1] == "" else lines


@given(
    events=st.lists(
        st.tuples(
            st.sampled_from(["chatgpt", "gemini"]),
            st.sampled_from(PHASES),
            st.integers(min_value=0, max_value=10**9),
            st.booleans(),
        ),
        max_size=40,
    ),
    width=st.integers(min_value=2, max_value=200),
)
def test_any_events_and_width_keep_lines_short_and_the_screen_consistent(
    events: list[tuple[str, str, int, bool]], width: int
) -> None:
    out = io.StringIO()
    block = LiveBlock(out)
    board = ProgressBoard(["chatgpt", "gemini"], started=0.0)
    printed: list[str] = []
    for step, (provider, phase, chars, answer) in enumerate(events):
        board.update(_progress(provider, phase, chars))
        lines = board.render(now=float(step), width=width)
        assert all(len(line) < width or len(line) == 1 for line in lines)
        if answer:
            printed.append(f"answer {step}")
            block.print_above(printed[-1], lines)
        else:
            block.draw(lines)
    final = board.render(now=99.0, width=width)
    block.leave(final)
    assert _screen(out.getvalue()) == [*printed, *final]


async def test_the_display_ticks_between_events_and_stops_when_closed() -> None:
    out = io.StringIO()
    clock = iter(float(n) for n in range(10_000))
    live = TerminalProgress(["chatgpt"], out, width=lambda: 80, clock=lambda: next(clock))
    live.start()
    ticked = asyncio.Event()
    original = live.block.draw

    def draw(lines: list[str]) -> None:
        original(lines)
        if out.getvalue().count("\x1b[2F") + out.getvalue().count("\x1b[1F") >= 2:
            ticked.set()

    live.block.draw = draw  # type: ignore[method-assign]
    await asyncio.wait_for(ticked.wait(), 10)  # redrawn with no event at all
    await live.close()  # returns once the refresh has stopped
    drawn = out.getvalue()
    live.on_progress(_progress("chatgpt", "streaming", 5))
    assert out.getvalue() == drawn  # nothing is drawn after close
    assert ANSI.sub("", drawn.rsplit("\x1b[1F", 1)[-1]).strip().startswith("chatgpt  starting")
