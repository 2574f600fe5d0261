"""The run report file: named by UTC time, always valid JSON, summarised."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from bridge.scenarios.report import RunReport, reserve_report_path, summarize


def entry(nodeid: str, outcome: str) -> dict[str, object]:
    return {"nodeid": nodeid, "id": nodeid.split("::")[-1], "outcome": outcome}


def test_report_names_are_utc_timestamps_never_reused(tmp_path: Path) -> None:
    now = datetime(2026, 1, 30, 10, 30, 5, tzinfo=UTC)
    first = reserve_report_path(tmp_path / "reports", now)
    second = reserve_report_path(tmp_path / "reports", now)
    assert first.name == "20260130T103005Z.json"
    assert second.name == "20260130T103005Z-2.json"


def test_the_file_is_whole_after_every_scenario_and_says_how_the_run_ended(
    tmp_path: Path,
) -> None:
    path = reserve_report_path(tmp_path, datetime.now(UTC))
    report = RunReport(path, {"mode": "fake"})
    report.planned = 3
    assert json.loads(path.read_text())["status"] == "running"
    report.add(entry("a.json::one", "passed"))
    on_disk = json.loads(path.read_text())
    assert [r["id"] for r in on_disk["results"]] == ["one"]
    assert on_disk["summary"]["not_run"] == 2
    report.add(entry("a.json::two", "failed"))
    report.add(entry("a.json::two", "error"))  # a teardown error replaces the entry
    report.finish("interrupted")
    final = json.loads(path.read_text())
    assert final["status"] == "interrupted" and final["finished_at"]
    assert final["mode"] == "fake" and final["format"] == 2
    assert final["summary"] == {
        "total": 2,
        "passed": 1,
        "failed": 0,
        "skipped": 0,
        "error": 1,
        "planned": 3,
        "not_run": 1,
    }
    # No temporary files left: the report and its page.
    assert sorted(p.name for p in tmp_path.iterdir()) == [report.html_path.name, path.name]


def test_summary_without_a_plan() -> None:
    summary = summarize([entry("x::a", "passed"), entry("x::b", "skipped")])
    assert summary == {"total": 2, "passed": 1, "failed": 0, "skipped": 1, "error": 0}
