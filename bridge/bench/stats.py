"""Figures and their arithmetic (pure): medians, percentiles, ratios, the table."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Figure", "median", "p95", "render_table"]


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def p95(values: Sequence[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))])


@dataclass
class Figure:
    """One row: bridge's value, the reference's, their ratio, and the target for the ratio.

    ``higher_is_better`` says which way the target points (throughput vs latency).
    For figures with no reference (e.g. noticing latency, whose reference is zero), the
    target applies to the value itself and ``ratio`` is None.
    """

    name: str
    unit: str
    bridge: float
    reference: float | None
    reference_name: str
    target: float | None
    higher_is_better: bool = False
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.reference is None or self.reference == 0:
            return None
        return self.bridge / self.reference

    @property
    def met(self) -> bool | None:
        if self.target is None:
            return None
        value = self.ratio if self.ratio is not None else self.bridge
        return value >= self.target if self.higher_is_better else value <= self.target

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ratio"] = self.ratio
        out["met"] = self.met
        return out


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value != value:  # NaN
        return "n/a"
    return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"


def render_table(figures: Sequence[Figure]) -> str:
    rows = [("figure", "bridge", "reference", "ratio", "target", "met?")]
    for f in figures:
        target = "-"
        if f.target is not None:
            target = ("≥ " if f.higher_is_better else "≤ ") + _fmt(f.target)
            if f.ratio is None:
                target += f" {f.unit}"
            else:
                target += "×"
        ref = "-" if f.reference is None else f"{_fmt(f.reference)} {f.unit} ({f.reference_name})"
        met = {True: "yes", False: "NO", None: ""}[f.met]
        rows.append(
            (
                f.name,
                f"{_fmt(f.bridge)} {f.unit}",
                ref,
                _fmt(f.ratio) + ("×" if f.ratio else ""),
                target,
                met,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
