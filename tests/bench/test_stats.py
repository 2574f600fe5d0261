"""The benchmark's arithmetic and table (pure)."""

from __future__ import annotations

import math

from bridge.bench.stats import Figure, compare, median, p95, render_table


def test_median_and_p95() -> None:
    values = [float(v) for v in range(1, 101)]
    assert median(values) == 50.5
    assert p95(values) == 95.0
    assert math.isnan(median([])) and math.isnan(p95([]))


def test_ratio_and_target_for_latency() -> None:
    f = Figure("rtt", "ms", 1.2, 1.0, "direct", 1.25)
    assert f.ratio is not None and abs(f.ratio - 1.2) < 1e-9
    assert f.met is True
    assert Figure("rtt", "ms", 1.3, 1.0, "direct", 1.25).met is False


def test_throughput_target_points_up() -> None:
    assert Figure("thr", "calls/s", 900, 1000, "direct", 0.8, higher_is_better=True).met is True
    assert Figure("thr", "calls/s", 700, 1000, "direct", 0.8, higher_is_better=True).met is False


def test_absolute_target_without_reference() -> None:
    f = Figure("noticing", "ms", 40, None, "", 100)
    assert f.ratio is None and f.met is True


def test_table_shows_every_figure_and_verdict() -> None:
    table = render_table(
        [Figure("a", "ms", 2, 1, "ref", 1.25), Figure("b", "ms", 50, None, "", 100)]
    )
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["figure", "bridge", "reference"]
    assert "NO" in lines[2] and "yes" in lines[3]
    assert "2×" in lines[2]


def _report(*figures: Figure) -> list[dict[str, object]]:
    return [f.to_dict() for f in figures]


def test_compare_calls_a_regression_worse_in_the_right_direction() -> None:
    old = _report(
        Figure("rtt", "ms", 1.0, 1.0, "direct", 1.25),
        Figure("thr", "calls/s", 900, 1000, "direct", 0.8, higher_is_better=True),
        Figure("noticing", "ms", 40, None, "", 100),
        Figure("gone one", "ms", 1, None, "", None),
    )
    new = _report(
        Figure("rtt", "ms", 1.5, 1.0, "direct", 1.25),  # latency up 50%: worse
        Figure("thr", "calls/s", 1200, 1000, "direct", 0.8, higher_is_better=True),  # better
        Figure("noticing", "ms", 41, None, "", 100),  # within the noise
        Figure("brand new", "ms", 3, None, "", None),
    )
    rows = {line.split("  ")[0]: line for line in compare(old, new).splitlines()}
    assert rows["rtt"].rstrip().endswith("WORSE") and "+50%" in rows["rtt"]
    assert rows["thr"].rstrip().endswith("better")
    assert rows["noticing"].rstrip().endswith("same")
    assert rows["brand new"].rstrip().endswith("new")
    assert rows["gone one"].rstrip().endswith("gone")
    assert compare(old, new).splitlines()[-1] == "1 figure(s) worse by more than 10%"


def test_the_ratio_decides_when_both_reports_have_one() -> None:
    """Both paths got slower on a busier machine, bridge less: the ratio improved."""
    old = _report(Figure("rtt", "ms", 1.0, 0.5, "direct", 1.25))
    new = _report(Figure("rtt", "ms", 1.4, 1.0, "direct", 1.25))
    assert compare(old, new).splitlines()[2].rstrip().endswith("better")
