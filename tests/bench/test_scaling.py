"""``python -m bridge.bench.scaling`` runs and writes its curves (never their values)."""

from __future__ import annotations

import asyncio
import json
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from bridge.bench.scaling import Settings, nodes_page, parse_args, settings_from_args, sized_answer

ROOT = Path(__file__).resolve().parents[2]
CURVES = {"tabs_attached", "concurrent_asks", "answer_size", "snapshot_time", "snapshot_size"}


@pytest.mark.parametrize("chars", [1_000, 1_234, 100_000])
def test_answers_are_exactly_as_long_as_asked(chars: int) -> None:
    text = sized_answer(chars)
    assert len(text) == chars
    assert "```python" in text and "## Part" in text and text.endswith(".")


def test_pages_have_about_as_many_elements_as_asked() -> None:
    page = nodes_page(1_000)
    assert page.count("<section>") == 100 and page.count("<input") == 100  # ten each


def test_command_line_settings() -> None:
    assert settings_from_args(parse_args([])) == Settings()
    quick = settings_from_args(parse_args(["--quick", "--tabs", "1,3", "--calls", "10"]))
    assert quick == replace(Settings.of(True), tabs=(1, 3), calls=10)
    with pytest.raises(SystemExit):
        parse_args(["--tabs", "0,2"])


@pytest.mark.e2e
async def test_the_smallest_run_writes_every_curve_and_chart(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge.bench.scaling",
        "--quick",
        *("--tabs", "1,2", "--concurrent", "2", "--sizes", "1000,5000"),
        *("--nodes", "20,100", "--calls", "20", "--answer-ms", "200"),
        *("--out", str(tmp_path)),
        cwd=str(ROOT),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 180)
    assert proc.returncode == 0, err.decode()[-3000:]
    (report_path,) = tmp_path.glob("scaling-*.json")
    report = json.loads(report_path.read_text())
    assert report["machine"]["browser"] and report["settings"]["tabs"] == [1, 2]
    curves = report["curves"]
    assert set(curves) == CURVES
    for name, curve in curves.items():
        assert curve["name"] == name and curve["title"]
        assert curve["x"]["label"] and curve["y"]["unit"]
        assert curve["series"], name
        for series in curve["series"]:
            xs = [p["x"] for p in series["points"]]
            assert xs == sorted(xs) and len(xs) >= 2, (name, series["name"])
            assert all(isinstance(p["y"], int | float) for p in series["points"])
    names = {s["name"] for s in curves["tabs_attached"]["series"]}
    assert {"bridge p50", "bridge p95", "direct CDP p50"} <= names
    asks = curves["concurrent_asks"]["series"][0]["points"]
    assert [p["x"] for p in asks] == [1, 2]  # one ask alone is always measured: the reference
    assert {"session"} == {tab for p in asks for tab in p["tabs"]}  # each in its own tab
    sizes = curves["answer_size"]["series"][0]["points"]
    assert all(p["source"] in ("network", "copy", "dom") and p["exact"] for p in sizes)
    sizes_chars = curves["snapshot_size"]["series"][0]["points"]
    assert all(p["elements"] > 0 for p in sizes_chars)
    charts = sorted(tmp_path.glob("scaling-*.svg"))
    stem = report_path.stem
    assert {c.name for c in charts} == {f"{stem}-{name}.svg" for name in CURVES}
    for chart in charts:
        root = ET.parse(chart).getroot()
        polylines = list(root.iter("{http://www.w3.org/2000/svg}polyline"))
        name = chart.stem.removeprefix(stem + "-")
        assert len(polylines) == len(curves[name]["series"])
    assert str(report_path) in out.decode()
