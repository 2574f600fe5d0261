"""Curves and their pictures (pure): a measured quantity against a varied one, as JSON and
as one self-contained SVG per curve, so a person sees its shape at a glance.

A :class:`Curve` holds one or more :class:`Series` (e.g. p50 and p95, or bridge and a
reference), each a list of :class:`Point` (``x``, ``y`` and whatever else was noted there).
:func:`render_svg` draws one (axes with ticks and labels, log scale where the values span
decades, a polyline and markers per series, a legend, a title with the units);
:func:`write_charts` writes ``<stem>-<curve>.svg`` files. No dependency beyond the
standard library.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

__all__ = [
    "Curve",
    "Point",
    "Scale",
    "Series",
    "format_number",
    "render_svg",
    "scale_for",
    "write_charts",
]

#: x values spanning at least this ratio (max ÷ min) get a log scale, unless the curve says.
LOG_X_SPAN = 20.0
#: y values the same, at two decades: a linear y axis keeps small differences visible.
LOG_Y_SPAN = 100.0

WIDTH, HEIGHT = 820, 510
LEFT, RIGHT, TOP, BOTTOM = 78, 600, 62, 400  # the plot area
LEGEND_X = 618
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")


@dataclass
class Point:
    """One measured point of a chart: x, y and what else was noted there."""

    x: float
    y: float
    #: Anything else noted at this point (raw samples, which answer source won, …).
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"x": self.x, "y": self.y, **self.extra}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Point:
        extra = {k: v for k, v in raw.items() if k not in ("x", "y")}
        return cls(float(raw["x"]), float(raw["y"]), extra)


@dataclass
class Series:
    """A named line of points on a chart; a reference line is drawn dashed."""

    name: str
    points: list[Point] = field(default_factory=list)
    #: A reference (direct CDP, an ideal, the page's own size) rather than bridge's own
    #: figure: drawn dashed, with hollow markers.
    reference: bool = False

    def add(self, x: float, y: float, **extra: Any) -> Point:
        point = Point(float(x), float(y), extra)
        self.points.append(point)
        return point

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "reference": self.reference,
            "points": [p.to_dict() for p in self.points],
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Series:
        return cls(
            str(raw["name"]),
            [Point.from_dict(p) for p in raw.get("points", ())],
            bool(raw.get("reference", False)),
        )


@dataclass
class Curve:
    """One measured quantity (y) against the one varied (x), in one or more series."""

    name: str  # a short slug: the JSON key and the file name (``<stem>-<name>.svg``)
    title: str
    x_label: str
    x_unit: str
    y_label: str
    y_unit: str
    series: list[Series] = field(default_factory=list)
    note: str = ""  # what a reader should know (what limits it, what the reference is)
    x_log: bool | None = None  # None: log when the x values span decades (LOG_X_SPAN)
    y_log: bool | None = None  # None: log when the y values span decades (LOG_Y_SPAN)

    def line(self, name: str, *, reference: bool = False) -> Series:
        """The series called ``name``, added (empty) if there is none yet."""
        for s in self.series:
            if s.name == name:
                return s
        s = Series(name, reference=reference)
        self.series.append(s)
        return s

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "x": {"label": self.x_label, "unit": self.x_unit, "log": self.x_log},
            "y": {"label": self.y_label, "unit": self.y_unit, "log": self.y_log},
            "series": [s.to_dict() for s in self.series],
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Curve:
        return cls(
            name=str(raw["name"]),
            title=str(raw["title"]),
            x_label=str(raw["x"]["label"]),
            x_unit=str(raw["x"]["unit"]),
            y_label=str(raw["y"]["label"]),
            y_unit=str(raw["y"]["unit"]),
            series=[Series.from_dict(s) for s in raw.get("series", ())],
            note=str(raw.get("note", "")),
            x_log=raw["x"].get("log"),
            y_log=raw["y"].get("log"),
        )


# -- scales ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scale:
    """An axis: its domain, whether it is logarithmic, and where its ticks go."""

    lo: float
    hi: float
    log: bool
    ticks: tuple[float, ...]

    def fraction(self, value: float) -> float:
        """Where ``value`` lies along the axis, 0 at ``lo`` and 1 at ``hi``."""
        if self.log:
            lo, hi, v = math.log10(self.lo), math.log10(self.hi), math.log10(value)
        else:
            lo, hi, v = self.lo, self.hi, value
        return 0.5 if hi == lo else (v - lo) / (hi - lo)


def _nice_step(span: float, count: int) -> float:
    raw = span / max(1, count)
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude


def _linear(lo: float, hi: float, *, from_zero: bool, count: int = 5) -> Scale:
    if from_zero and lo >= 0:
        lo = 0.0
    if hi == lo:
        pad = abs(hi) or 1.0
        lo, hi = (0.0, 2 * hi) if from_zero and hi > 0 else (lo - pad, hi + pad)
    step = _nice_step(hi - lo, count)
    start = math.floor(lo / step + 1e-9) * step
    end = math.ceil(hi / step - 1e-9) * step
    n = round((end - start) / step)
    ticks = tuple(_clean(start + i * step) for i in range(n + 1))
    return Scale(start, end, False, ticks)


def _logarithmic(lo: float, hi: float) -> Scale:
    first = math.floor(math.log10(lo) + 1e-9)
    last = math.ceil(math.log10(hi) - 1e-9)
    if last == first:
        last += 1
    decades = last - first
    factors = (1, 2, 5) if decades <= 2 else (1,)
    ticks = tuple(
        _clean(f * 10.0**e) for e in range(first, last + 1) for f in factors if e < last or f == 1
    )
    return Scale(10.0**first, 10.0**last, True, ticks)


def _clean(value: float) -> float:
    """Round away float noise (0.30000000000000004 → 0.3)."""
    return float(f"{value:.12g}")


def scale_for(values: Sequence[float], *, log: bool | None, span: float, from_zero: bool) -> Scale:
    """The axis for ``values``: logarithmic when asked, or (``log=None``) when all are
    positive and max ÷ min reaches ``span``; otherwise linear (from zero if ``from_zero``
    and no value is negative)."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return _linear(0.0, 1.0, from_zero=True)
    lo, hi = min(finite), max(finite)
    if log is None:
        log = lo > 0 and hi / lo >= span
    if log and lo > 0:
        return _logarithmic(lo, hi)
    return _linear(lo, hi, from_zero=from_zero)


def format_number(value: float) -> str:
    """A tick label: 1k, 250k, 1M, 0.5, 12."""
    magnitude = abs(value)
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= size:
            return f"{value / size:.3g}{suffix}"
    if magnitude == 0:
        return "0"
    return f"{value:.3g}"


# -- drawing --------------------------------------------------------------------------------


def _plottable(curve: Curve, x_log: bool, y_log: bool) -> list[list[Point]]:
    """Each series' points that can be drawn, in x order."""
    out = []
    for s in curve.series:
        pts = [
            p
            for p in s.points
            if math.isfinite(p.x)
            and math.isfinite(p.y)
            and (p.x > 0 or not x_log)
            and (p.y > 0 or not y_log)
        ]
        out.append(sorted(pts, key=lambda p: p.x))
    return out


def _axis_label(label: str, unit: str, log: bool) -> str:
    text = f"{label} ({unit})" if unit else label
    return text + (", log scale" if log else "")


def _text(x: float, y: float, body: str, **attrs: str) -> str:
    extra = "".join(f" {k.rstrip('_').replace('_', '-')}={quoteattr(v)}" for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{escape(body)}</text>'


def render_svg(curve: Curve) -> str:
    """The curve as a self-contained SVG document."""
    xs = [p.x for s in curve.series for p in s.points]
    ys = [p.y for s in curve.series for p in s.points]
    xscale = scale_for(xs, log=curve.x_log, span=LOG_X_SPAN, from_zero=False)
    yscale = scale_for(ys, log=curve.y_log, span=LOG_Y_SPAN, from_zero=True)
    series_points = _plottable(curve, xscale.log, yscale.log)

    def px(v: float) -> float:
        return LEFT + xscale.fraction(v) * (RIGHT - LEFT)

    def py(v: float) -> float:
        return BOTTOM - yscale.fraction(v) * (BOTTOM - TOP)

    # Wide enough for the longest legend entry (about 7 px a character).
    width = max(WIDTH, LEGEND_X + 46 + 7 * max((len(s.name) for s in curve.series), default=0))
    y_title = f"{curve.y_label} ({curve.y_unit})" if curve.y_unit else curve.y_label
    x_title = f"{curve.x_label} ({curve.x_unit})" if curve.x_unit else curve.x_label
    heading = f"{curve.title}: {y_title} vs {x_title}"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" '
        f'viewBox="0 0 {width} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f"<title>{escape(heading)}</title>",
        f'<rect width="{width}" height="{HEIGHT}" fill="white"/>',
        _text(LEFT, 24, curve.title, class_="title", font_size="16", font_weight="bold"),
        _text(LEFT, 44, f"{y_title} vs {x_title}", class_="subtitle", fill="#444"),
    ]
    # Grid and ticks.
    out.append('<g class="axis x">')
    for t in xscale.ticks:
        x = px(t)
        out.append(
            f'<line class="grid" x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{BOTTOM}" '
            'stroke="#e5e5e5"/>'
        )
        out.append(
            f'<line x1="{x:.1f}" y1="{BOTTOM}" x2="{x:.1f}" y2="{BOTTOM + 5}" stroke="#333"/>'
        )
        out.append(
            _text(
                x,
                BOTTOM + 19,
                format_number(t),
                class_="tick",
                text_anchor="middle",
                data_value=repr(t),
            )
        )
    out.append(
        f'<line x1="{LEFT}" y1="{BOTTOM}" x2="{RIGHT}" y2="{BOTTOM}" stroke="#333"/>'
        + _text(
            (LEFT + RIGHT) / 2,
            BOTTOM + 42,
            _axis_label(curve.x_label, curve.x_unit, xscale.log),
            class_="label",
            text_anchor="middle",
        )
    )
    out.append("</g>")
    out.append('<g class="axis y">')
    for t in yscale.ticks:
        y = py(t)
        out.append(
            f'<line class="grid" x1="{LEFT}" y1="{y:.1f}" x2="{RIGHT}" y2="{y:.1f}" '
            'stroke="#e5e5e5"/>'
        )
        out.append(f'<line x1="{LEFT - 5}" y1="{y:.1f}" x2="{LEFT}" y2="{y:.1f}" stroke="#333"/>')
        out.append(
            _text(
                LEFT - 8,
                y + 4,
                format_number(t),
                class_="tick",
                text_anchor="end",
                data_value=repr(t),
            )
        )
    middle = (TOP + BOTTOM) / 2
    out.append(
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{BOTTOM}" stroke="#333"/>'
        + _text(
            18,
            middle,
            _axis_label(curve.y_label, curve.y_unit, yscale.log),
            class_="label",
            text_anchor="middle",
            transform=f"rotate(-90 18 {middle:.1f})",
        )
    )
    out.append("</g>")
    # The series, then the legend.
    legend = ['<g class="legend">']
    for i, (s, pts) in enumerate(zip(curve.series, series_points, strict=True)):
        colour = COLOURS[i % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if s.reference else ""
        fill = "white" if s.reference else colour
        coords = " ".join(f"{px(p.x):.1f},{py(p.y):.1f}" for p in pts)
        out.append(f'<g class="series" data-name={quoteattr(s.name)}>')
        out.append(
            f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
        )
        for p in pts:
            tip = f"{s.name}: {format_number(p.x)} {curve.x_unit} → {p.y:.4g} {curve.y_unit}"
            out.append(
                f'<circle cx="{px(p.x):.1f}" cy="{py(p.y):.1f}" r="4" fill="{fill}" '
                f'stroke="{colour}" stroke-width="2"><title>{escape(tip)}</title></circle>'
            )
        out.append("</g>")
        ly = TOP + 8 + i * 22
        legend.append(
            f'<line x1="{LEGEND_X}" y1="{ly}" x2="{LEGEND_X + 28}" y2="{ly}" stroke="{colour}" '
            f'stroke-width="2"{dash}/>'
            f'<circle cx="{LEGEND_X + 14}" cy="{ly}" r="4" fill="{fill}" stroke="{colour}" '
            'stroke-width="2"/>' + _text(LEGEND_X + 36, ly + 4, s.name, class_="legend-name")
        )
    legend.append("</g>")
    out += legend
    if curve.note:
        lines = _wrap(curve.note, 120)[:3]
        for k, line in enumerate(lines):
            y = HEIGHT - 12 - 15 * (len(lines) - 1 - k)
            out.append(_text(LEFT, y, line, class_="note", fill="#555"))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "curve"


def write_charts(
    curves: Mapping[str, Curve] | Iterable[Curve], out_dir: Path, stem: str
) -> list[Path]:
    """One ``<stem>-<curve name>.svg`` per curve in ``out_dir`` (created if need be); the
    paths written, in order."""
    items = list(curves.values()) if isinstance(curves, Mapping) else list(curves)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for curve in items:
        path = out_dir / f"{stem}-{_slug(curve.name)}.svg"
        path.write_text(render_svg(curve), encoding="utf-8")
        paths.append(path)
    return paths
