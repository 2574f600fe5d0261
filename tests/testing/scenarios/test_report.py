"""The run report file: named by UTC time, always valid JSON, summarised; its HTML page beside
it, rendered from it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bridge.providers.results import AskResult, Timings, Used
from bridge.testing.scenarios import report as report_module
from bridge.testing.scenarios.html_report import render_html
from bridge.testing.scenarios.loader import parse_scenario_file
from bridge.testing.scenarios.outcome import ProviderOutcome, ScenarioOutcome
from bridge.testing.scenarios.report import (
    RunReport,
    reserve_report_path,
    scenario_record,
    summarize,
)


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


def test_the_page_beside_the_report_shares_its_name_and_says_what_the_file_says(
    tmp_path: Path,
) -> None:
    now = datetime(2026, 1, 30, 10, 30, 5, tzinfo=UTC)
    reserve_report_path(tmp_path, now)  # another run's, started in the same second
    path = reserve_report_path(tmp_path, now)
    report = RunReport(path, {"mode": "fake"})
    assert report.html_path == tmp_path / "20260130T103005Z-2.html"
    report.add(entry("a.json::one", "passed"))
    page = report.html_path.read_text(encoding="utf-8")
    assert page == render_html(json.loads(path.read_text(encoding="utf-8")))
    assert 'id="one"' in page
    assert not (tmp_path / "20260130T103005Z.html").exists()  # the other run's name is its own


def test_a_page_that_cannot_be_rendered_raises_but_the_report_is_written_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = reserve_report_path(tmp_path, datetime.now(UTC))
    report = RunReport(path, {"mode": "fake"})

    def broken(_: dict[str, Any]) -> str:
        raise RuntimeError("a bug in the page")

    monkeypatch.setattr(report_module, "render_html", broken)
    with pytest.raises(RuntimeError, match="a bug in the page"):
        report.add(entry("a.json::one", "passed"))
    assert [r["id"] for r in json.loads(path.read_text())["results"]] == ["one"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [report.html_path.name, path.name]


def test_an_entry_holds_each_provider_s_whole_answer_beside_its_preview() -> None:
    raw = {"id": "s", "name": "S", "provider": "chatgpt", "question": {"template": "Q?"}}
    scenario = parse_scenario_file(json.dumps({"scenarios": [raw]}), "t.json").scenarios[0]
    answer = "word " * 500
    result = AskResult("chatgpt", "Q?", answer, "u", Timings(), Used(), "key")
    outcome = ScenarioOutcome("s", "Q?", live=False, started_at="2026-01-30T10:30:05.000Z")
    outcome.providers["chatgpt"] = ProviderOutcome("chatgpt", result=result)
    outcome.providers["gemini"] = ProviderOutcome("gemini", error_code="stuck", error_message="x")
    record = scenario_record(
        nodeid="t.json::s",
        source="t.json",
        scenario=scenario,
        outcome="passed",
        duration_s=1.0,
        result=outcome,
    )
    chatgpt = record["providers"]["chatgpt"]
    assert chatgpt["answer"] == answer and chatgpt["answer_length"] == len(answer)
    assert answer.startswith(chatgpt["answer_preview"]) and len(chatgpt["answer_preview"]) < 600
    assert "answer" not in record["providers"]["gemini"]  # no answer came
    assert json.loads(json.dumps(record)) == record
