"""Reading a child process's next line with a deadline: a child that hangs before printing
fails the test at once instead of hanging it (the caller kills the child, which ends the read)."""

from __future__ import annotations

import queue
import threading
from typing import IO


def read_line(stream: IO[str], timeout: float) -> str:
    """The next line of ``stream``; AssertionError when none arrives within ``timeout``."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(f"the child printed no line within {timeout:.0f} s") from None
