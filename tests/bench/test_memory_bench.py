"""bridge.bench.memory_bench: the slope arithmetic (pure) and one tiny real measurement."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.bench.memory_bench import (
    GROWTH_BOUND_MB_PER_ASK,
    TREND_BOUND,
    growth_per_ask,
    measure_memory,
    memory_curves,
    scatter,
    slope,
    trend_over_noise,
)
from bridge.fakes import FakeSites


def test_slope_of_a_straight_line_is_its_gradient() -> None:
    assert slope([(0, 1.0), (10, 2.0), (20, 3.0)]) == pytest.approx(0.1)


def test_slope_of_scatter_around_a_flat_line_is_near_zero() -> None:
    # RSS jumping up and down by a MB between samples (the allocator), no trend.
    points = [(10 * i, 80.0 + (1.0 if i % 2 else -1.0)) for i in range(10)]
    assert abs(slope(points)) < GROWTH_BOUND_MB_PER_ASK


def test_slope_needs_two_distinct_x() -> None:
    with pytest.raises(ValueError, match="two or more"):
        slope([(10, 1.0), (10, 2.0)])
    with pytest.raises(ValueError):
        slope([])


def test_scatter_is_zero_on_a_line_and_the_noise_around_one() -> None:
    assert scatter([(0, 1.0), (10, 2.0), (20, 3.0)]) == pytest.approx(0.0)
    points = [(10 * i, 80.0 + 0.1 * i + (1.0 if i % 2 else -1.0)) for i in range(10)]
    assert scatter(points) == pytest.approx(1.0, rel=0.05)


def test_growth_ignores_the_warm_up() -> None:
    # The first 20 asks grow caches by 10 MB; after that the RSS is flat.
    samples = [(10, 80.0), (20, 90.0), (30, 90.0), (40, 90.1), (50, 90.0)]
    assert abs(growth_per_ask(samples, warmup=20)) < 0.01
    assert growth_per_ask(samples, warmup=0) > GROWTH_BOUND_MB_PER_ASK


def test_a_leak_reads_above_the_bound() -> None:
    samples = [(i, 90.0 + 0.1 * i) for i in range(20, 110, 10)]  # 100 KB per ask
    assert growth_per_ask(samples, warmup=20) == pytest.approx(0.1)
    assert growth_per_ask(samples, warmup=20) > GROWTH_BOUND_MB_PER_ASK


def test_a_small_steady_rise_is_a_trend_and_scatter_is_not() -> None:
    # 24 KB per ask, sampled every 10 asks with a 0.04 MB wobble: under the per-ask budget,
    # but a steady rise far beyond the noise (what a slow leak looks like).
    wobble = [0.04 if i % 2 else -0.04 for i in range(9)]
    steady = [(20 + 10 * i, 89.0 + 0.024 * 10 * i + w) for i, w in enumerate(wobble)]
    assert growth_per_ask(steady, warmup=20) < GROWTH_BOUND_MB_PER_ASK
    assert trend_over_noise(steady, warmup=20) > TREND_BOUND
    flat = [(20 + 10 * i, 89.0 + w) for i, w in enumerate(wobble)]
    assert trend_over_noise(flat, warmup=20) < TREND_BOUND
    # RSS is counted in pages: a perfectly flat run is no trend, not a division by zero.
    assert trend_over_noise([(20, 89.0), (30, 89.0), (40, 89.0)], warmup=20) == 0


def test_too_few_samples_after_warm_up_uses_the_last_two() -> None:
    assert growth_per_ask([(1, 80.0), (2, 80.5), (3, 81.0)], warmup=10) == pytest.approx(0.5)


def test_curves_draw_rss_by_tabs_and_over_asks_with_the_fit() -> None:
    heap = {"used_mb": 0.5, "total_mb": 1.5}
    raw = {
        "idle_rss_mb": 80.0,
        "warmup_asks": 20,
        "tabs": [{"tabs": n, "rss_mb": 80.0 + n / 10, "sw_heap": heap} for n in (1, 10, 50)],
        "asks": [{"asks": a, "rss_mb": 85.0 + a / 100, "sw_heap": heap} for a in (10, 20, 30)],
    }
    by_tabs, over_asks = memory_curves(raw)
    assert [p.x for p in by_tabs.series[0].points] == [1, 10, 50]
    assert [p.y for p in by_tabs.line("server after start").points] == [80.0] * 3
    assert by_tabs.series[0].points[0].extra == {"sw_heap_used_mb": 0.5}
    assert [p.x for p in over_asks.series[0].points] == [10, 20, 30]
    fit = over_asks.line("fitted line").points
    assert [p.x for p in fit] == [20, 30]  # after the warm-up only
    assert [p.y for p in fit] == pytest.approx([85.2, 85.3])


@pytest.mark.parametrize(
    ("tabs", "asks", "every"), [((1,), 10, 10), ((1,), 1, 1), ((0, 3), 10, 2), ((), 10, 2)]
)
async def test_settings_that_give_no_slope_are_refused_before_any_work(
    tmp_path: Path, tabs: tuple[int, ...], asks: int, every: int
) -> None:
    with pytest.raises(ValueError, match=r"slope|≥ 1"):
        await measure_memory([], tmp_path, tabs=tabs, asks=asks, sample_every=every)
    assert not (tmp_path / "stderr.log").exists()  # no server was started


@pytest.mark.e2e
async def test_tiny_measurement_reports_plausible_memory(tmp_path: Path) -> None:
    with FakeSites() as fakes:
        figures, raw = await measure_memory(
            fakes.chromium_args(), tmp_path / "mem", tabs=(1, 3), asks=3, sample_every=1, warmup=1
        )
    assert [row["tabs"] for row in raw["tabs"]] == [1, 3]
    assert [row["asks"] for row in raw["asks"]] == [1, 2, 3]
    for row in [*raw["tabs"], *raw["asks"]]:
        # A Python MCP server: tens of MB, not KB nor GB; a worker heap under a few MB.
        assert 20 < row["rss_mb"] < 2000
        assert 0 < row["sw_heap"]["used_mb"] <= row["sw_heap"]["total_mb"] < 200
    assert 20 < raw["idle_rss_mb"] < 2000
    names = {f.name: f for f in figures}
    for name in (
        "MCP server RSS, 1 attached tab",
        "MCP server RSS, 3 attached tabs",
        "extension SW heap, 1 attached tab",
        "extension SW heap, 3 attached tabs",
        "MCP server RSS after 3 asks",
        "MCP server RSS growth per ask",
        "MCP server RSS trend over asks ÷ its noise",
        "extension SW heap after 3 asks",
        "extension SW heap growth per ask",
    ):
        assert name in names, name
    growth = names["MCP server RSS growth per ask"]
    assert growth.target == GROWTH_BOUND_MB_PER_ASK and growth.met is not None
    assert growth.bridge == raw["rss_growth_mb_per_ask"]
    assert names["MCP server RSS, 3 attached tabs"].reference == raw["idle_rss_mb"]
    assert [c.name for c in memory_curves(raw)] == ["memory_tabs", "memory_asks"]
