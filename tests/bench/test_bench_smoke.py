"""``python -m bridge.bench --quick`` runs and writes valid JSON (never its figures)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


async def test_quick_benchmark_writes_a_complete_report(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge.bench",
        "--quick",
        "--calls",
        "100",
        "--out",
        str(tmp_path),
        cwd=str(ROOT),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 240)
    assert proc.returncode == 0, err.decode()[-3000:]
    reports = list(tmp_path.glob("bench-*.json"))
    assert len(reports) == 1
    report = json.loads(reports[0].read_text())
    assert report["machine"]["cores"] >= 1 and report["machine"]["browser"]
    names = [f["name"] for f in report["figures"]]
    for expected in (
        "CDP round trip, median",
        "CDP throughput, 50 in flight",
        "CDP round trip vs floor",
        "ask_both wall time (0.2 s answers)",
        "ask_both wall time (2 s answers)",
        "relay start → extension connected",
        "MCP server spawn → first tool list",
        "MCP server peak RSS over asks",
        "MCP server RSS, 3 attached tabs",
        "MCP server RSS growth per ask",
        "extension SW heap after 6 asks",
        "chatgpt: ask with a capture riding along",
        "gemini: ask with a capture riding along",
    ):
        assert expected in names
    assert any("noticing vs spec 1 s polling" in n for n in names)
    assert any("noticing vs an ideal 1 s poll" in n for n in names)
    assert any("bridge's page CPU per chunk" in n for n in names)
    # The scaling curves: in the JSON, and each drawn next to it.
    curves = report["curves"]
    assert set(curves) >= {
        "tabs_attached",
        "concurrent_asks",
        "answer_size",
        "memory_tabs",
        "memory_asks",
    }
    for name in curves:
        drawn = tmp_path / f"{reports[0].stem}-{name}.svg"
        assert drawn.read_text().lstrip().startswith(("<?xml", "<svg")), name
    assert report["profile"]["peers"] == {"skipped": "--quick"}
    memory = report["profile"]["memory"]
    assert [row["tabs"] for row in memory["tabs"]] == [1, 3]
    assert memory["asks"][-1]["asks"] == 6 and memory["asks"][-1]["rss_mb"] > 0
    for figure in report["figures"]:
        assert set(figure) >= {"bridge", "reference", "ratio", "target", "met", "unit"}
    assert "figure" in out.decode() and str(reports[0].name) in out.decode()
