"""Figures and their arithmetic (pure): medians, percentiles, ratios, the table."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Figure", "compare", "median", "p95", "render_table"]


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


# -- comparing two reports ----------------------------------------------------------------------

#: A change smaller than this (relative) is shown but not called better or worse: the noise
#: of one run on a shared machine.
NOISE = 0.10


def _judged(old: float | None, new: float | None, higher_is_better: bool) -> tuple[str, str]:
    """The relative change ``+12%`` and its verdict: better, worse, same, or "" when there
    is nothing to compare."""
    if old is None or new is None or old != old or new != new or old == 0:
        return "-", ""
    change = (new - old) / abs(old)
    if abs(change) < NOISE:
        return f"{change:+.0%}", "same"
    improved = change > 0 if higher_is_better else change < 0
    return f"{change:+.0%}", "better" if improved else "WORSE"


def compare(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> str:
    """Each figure of ``new`` (report dicts, as written) against the same-named one of
    ``old``: bridge's value and the ratio, with their change; figures in only one report
    are listed as new or gone. A regression reads WORSE at a glance."""
    before = {f["name"]: f for f in old}
    rows = [("figure", "before", "now", "change", "ratio before", "ratio now", "verdict")]
    for f in new:
        was = before.pop(f["name"], None)
        hib = bool(f.get("higher_is_better", False))
        unit = f.get("unit", "")
        if was is None:
            rows.append((f["name"], "-", f"{_fmt(f['bridge'])} {unit}", "-", "-", "-", "new"))
            continue
        change, verdict = _judged(was.get("bridge"), f.get("bridge"), hib)
        # The ratio is what the target is about: when both reports have one, it decides.
        if f.get("ratio") is not None and was.get("ratio") is not None:
            _, verdict = _judged(was["ratio"], f["ratio"], hib)
        rows.append(
            (
                f["name"],
                f"{_fmt(was.get('bridge'))} {unit}",
                f"{_fmt(f.get('bridge'))} {unit}",
                change,
                _fmt(was.get("ratio")),
                _fmt(f.get("ratio")),
                verdict,
            )
        )
    for name, was in before.items():
        rows.append(
            (name, f"{_fmt(was.get('bridge'))} {was.get('unit', '')}", "-", "-", "-", "-", "gone")
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    worse = sum(r[6] == "WORSE" for r in rows[1:])
    lines.append("")
    lines.append(f"{worse} figure(s) worse by more than {NOISE:.0%}" if worse else "none worse")
    return "\n".join(lines)
