"""What a check of a capture found: one line per thing checked, passed or not, with what to
do next (a failure proposes a fix where one can be derived from the capture)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Finding", "Part"]

#: Which part of bridge a finding is about.
Part = Literal["selectors", "stream", "signals", "diff"]


@dataclass(frozen=True)
class Finding:
    """One check's result. ``subject`` names what was checked as a person finds it again:
    ``selectors.send_button`` (a pack entry), ``stream event 5``, ``signal has_stop_button``.
    ``proposal`` is a fix the capture supports (e.g. an override fragment for the pack), or
    None."""

    part: Part
    subject: str
    ok: bool
    message: str
    proposal: dict[str, Any] | None = None

    def line(self) -> str:
        """One line for a terminal or a test failure."""
        mark = "ok  " if self.ok else "FAIL"
        return f"{mark}  {self.subject}: {self.message}"
