"""The chart writer (pure): valid SVG, one polyline per series, scales, files."""

from __future__ import annotations

import itertools
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from bridge.bench.charts import Curve, format_number, render_svg, scale_for, write_charts

SVG = "{http://www.w3.org/2000/svg}"


def _curve(xs: list[float], series: dict[str, list[float]], **kw: object) -> Curve:
    curve = Curve("demo", "Demo curve", "answer", "characters", "extraction", "ms", **kw)  # type: ignore[arg-type]
    for name, ys in series.items():
        line = curve.line(name, reference=name.startswith("ref"))
        for x, y in zip(xs, ys, strict=True):
            line.add(x, y, note=f"at {x}")
    return curve


def _parse(curve: Curve) -> ET.Element:
    return ET.fromstring(render_svg(curve))


def _polylines(root: ET.Element) -> list[list[tuple[float, float]]]:
    out = []
    for poly in root.iter(f"{SVG}polyline"):
        pairs = [p.split(",") for p in (poly.get("points") or "").split()]
        out.append([(float(x), float(y)) for x, y in pairs])
    return out


def _ticks(root: ET.Element, axis: str) -> list[tuple[float, float, str]]:
    """(value, position, label) of one axis's tick labels."""
    group = next(g for g in root.iter(f"{SVG}g") if g.get("class") == f"axis {axis}")
    coord = "x" if axis == "x" else "y"
    return [
        (float(t.get("data-value", "nan")), float(t.get(coord, "nan")), t.text or "")
        for t in group.iter(f"{SVG}text")
        if t.get("class") == "tick"
    ]


def test_the_svg_is_valid_xml_with_a_title_naming_the_units() -> None:
    root = _parse(_curve([1e3, 1e4, 1e5], {"p50": [1, 2, 3]}))
    assert root.tag == f"{SVG}svg"
    title = root.find(f"{SVG}title")
    assert title is not None and "ms" in (title.text or "") and "characters" in (title.text or "")
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "Demo curve" in texts
    assert any(t and t.startswith("extraction (ms)") for t in texts)  # the y axis label


def test_one_polyline_and_one_legend_entry_per_series() -> None:
    curve = _curve([1, 2, 5, 10], {"p50": [1, 2, 3, 4], "p95": [2, 3, 4, 8], "ref": [1, 1, 1, 1]})
    root = _parse(curve)
    lines = _polylines(root)
    assert len(lines) == 3
    assert all(len(line) == 4 for line in lines)
    groups = [g.get("data-name") for g in root.iter(f"{SVG}g") if g.get("class") == "series"]
    assert groups == ["p50", "p95", "ref"]
    legend = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "legend")
    assert [t.text for t in legend.iter(f"{SVG}text")] == ["p50", "p95", "ref"]
    dashed = [p.get("stroke-dasharray") for p in root.iter(f"{SVG}polyline")]
    assert dashed[:2] == [None, None] and dashed[2]  # a reference is drawn dashed
    assert len(list(root.iter(f"{SVG}circle"))) == 12 + 3  # markers, legend markers


def test_points_are_drawn_in_x_order_and_higher_values_higher() -> None:
    curve = _curve([10, 1, 5, 2], {"p50": [40, 10, 30, 20]})  # measured out of order
    (line,) = _polylines(_parse(curve))
    xs = [x for x, _ in line]
    ys = [y for _, y in line]
    assert xs == sorted(xs) and len(set(xs)) == 4
    assert ys == sorted(ys, reverse=True)  # SVG's y grows downwards


def test_an_x_range_spanning_decades_gets_log_ticks_evenly_spaced() -> None:
    root = _parse(_curve([1e3, 1e4, 1e5, 1e6], {"p50": [1, 2, 3, 4]}))
    ticks = _ticks(root, "x")
    assert [label for _, _, label in ticks] == ["1k", "10k", "100k", "1M"]
    positions = [pos for _, pos, _ in ticks]
    gaps = [b - a for a, b in itertools.pairwise(positions)]
    assert max(gaps) - min(gaps) < 0.5
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "label"]
    assert any("log scale" in (t or "") for t in labels)
    (line,) = _polylines(root)  # decades apart: evenly apart
    steps = [b[0] - a[0] for a, b in itertools.pairwise(line)]
    assert max(steps) - min(steps) < 0.5


def test_a_narrow_x_range_stays_linear() -> None:
    root = _parse(_curve([1, 2, 5, 10], {"ratio": [1, 1.1, 1.3, 2]}))
    values = [v for v, _, _ in _ticks(root, "x")]
    steps = {round(b - a, 9) for a, b in itertools.pairwise(values)}
    assert len(steps) == 1  # evenly stepped values: linear
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "label"]
    assert not any("log scale" in (t or "") for t in labels)


def test_scales() -> None:
    log = scale_for([1, 50], log=None, span=20, from_zero=False)
    assert log.log and log.lo == 1 and log.hi == 100
    assert log.ticks == (1, 2, 5, 10, 20, 50, 100)  # two decades: 2 and 5 too
    wide = scale_for([100, 1e6], log=None, span=20, from_zero=False)
    assert wide.ticks == (100, 1e3, 1e4, 1e5, 1e6)
    assert math.isclose(wide.fraction(1e4), 0.5)
    linear = scale_for([0.31, 0.74], log=None, span=100, from_zero=True)
    assert not linear.log and linear.lo == 0 and linear.hi >= 0.74
    assert all(b > a for a, b in zip(linear.ticks, linear.ticks[1:], strict=False))
    one = scale_for([3, 3], log=None, span=20, from_zero=False)  # one value: still a range
    assert one.lo < 3 < one.hi
    assert scale_for([3, 3], log=None, span=20, from_zero=True).lo == 0
    assert not scale_for([-1, 100], log=None, span=20, from_zero=False).log
    assert scale_for([2, 4], log=True, span=20, from_zero=False).log  # asked for


@pytest.mark.parametrize(
    ("value", "label"),
    [(0, "0"), (0.5, "0.5"), (12, "12"), (1000, "1k"), (250_000, "250k"), (1e6, "1M")],
)
def test_tick_labels(value: float, label: str) -> None:
    assert format_number(value) == label


def test_unplottable_points_are_left_out() -> None:
    curve = _curve([1, 10, 100], {"p50": [1.0, float("nan"), 3.0]})
    (line,) = _polylines(_parse(curve))
    assert len(line) == 2


def test_text_is_escaped() -> None:
    curve = _curve([1, 2], {"a <b> & 'c'": [1, 2]}, note='"quoted" <note> & more')
    root = _parse(curve)
    assert any(t.text == "a <b> & 'c'" for t in root.iter(f"{SVG}text"))


def test_write_charts_writes_one_file_per_curve(tmp_path: Path) -> None:
    a = _curve([1, 2], {"p50": [1, 2]})
    b = Curve("snapshot size", "Size", "elements", "", "snapshot", "characters")
    b.line("snapshot").add(100, 4_000)
    paths = write_charts({"a": a, "b": b}, tmp_path / "out", "scaling-x")
    assert [p.name for p in paths] == ["scaling-x-demo.svg", "scaling-x-snapshot_size.svg"]
    for path in paths:
        ET.parse(path)
    assert write_charts([a], tmp_path, "s") == [tmp_path / "s-demo.svg"]


def test_a_curve_survives_json() -> None:
    curve = _curve([1, 10], {"p50": [1, 2], "ref": [3, 4]}, note="n", x_log=True)
    again = Curve.from_dict(json.loads(json.dumps(curve.to_dict())))
    assert again == curve
    assert curve.to_dict()["series"][0]["points"][0] == {"x": 1.0, "y": 1.0, "note": "at 1"}
