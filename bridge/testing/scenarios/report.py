"""The run report, ``reports/<UTC timestamp>.json``: every scenario's outcome, and a summary;
beside it ``<same stem>.html``, the same report as a page to open (:mod:`.html_report`).

The file is rewritten whole and atomically (temporary file, then rename) after every scenario,
so at any moment, also after Ctrl-C or a kill, it is valid JSON holding what finished;
``status`` says ``running`` until the session ends as ``finished`` or ``interrupted``.
One process writes it: the only process, or pytest-xdist's controller (workers' results
reach it as test reports), so parallel runs never clobber each other.

The HTML file is for a person: open it in any browser, from disk or from a CI artifact; it
fetches nothing (inline CSS, screenshots as ``data:`` URIs, no script). It is rewritten with
the JSON, so during a run it shows what has finished so far. Failed and erroring scenarios
come first, each with its checks, answers, timings, the failure message, and a screenshot
and DOM excerpt of each provider tab (:mod:`.evidence`); the JSON stays the source of truth
for tools, and the page is only ever rendered from it (:func:`.html_report.render_html`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bridge.store.state import write_atomically
from bridge.testing.scenarios.checks import Check
from bridge.testing.scenarios.html_report import render_html
from bridge.testing.scenarios.model import Scenario
from bridge.testing.scenarios.outcome import ScenarioOutcome

__all__ = ["REPORT_FORMAT", "RunReport", "reserve_report_path", "scenario_record", "summarize"]

REPORT_FORMAT = 2  # 2: snake_case keys (bridge.providers.results explains the rule)
_OUTCOMES = ("passed", "failed", "skipped", "error")


def utc_now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def reserve_report_path(directory: Path, now: datetime) -> Path:
    """``<dir>/<YYYYmmddTHHMMSSZ>.json``, suffixed ``-2``, ``-3`` when runs start together."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    for attempt in range(1, 1000):
        path = directory / (f"{stem}.json" if attempt == 1 else f"{stem}-{attempt}.json")
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free report name for {stem} in {directory}")


def scenario_record(
    *,
    nodeid: str,
    source: str,
    scenario: Scenario,
    outcome: str,
    duration_s: float,
    result: ScenarioOutcome | None = None,
    checks: Iterable[Check] = (),
    message: str | None = None,
    worker: str | None = None,
    evidence: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One scenario's entry: built where the test ran, so it is plain JSON-able data."""
    record: dict[str, Any] = {
        "id": scenario.id,
        "name": scenario.name,
        "nodeid": nodeid,
        "file": source,
        "provider": scenario.provider,
        "tags": list(scenario.tags),
        "outcome": outcome,
        "duration_ms": round(duration_s * 1000, 1),
        "checks": [c.to_dict() for c in checks],
    }
    if result is not None:
        record.update(result.to_dict())
        # The whole answer too (the preview stays, for readers of the format): the page
        # shows it, and a check that failed on an answer is judged by reading all of it.
        for provider, asked in result.providers.items():
            if asked.result is not None:
                record["providers"][provider]["answer"] = asked.answer
    if message:
        record["message"] = message
    if worker:
        record["worker"] = worker
    if evidence:
        record["evidence"] = evidence
    return record


def summarize(records: Iterable[dict[str, Any]], planned: int | None = None) -> dict[str, Any]:
    counts = dict.fromkeys(_OUTCOMES, 0)
    total = 0
    for record in records:
        total += 1
        counts[record["outcome"]] = counts.get(record["outcome"], 0) + 1
    summary: dict[str, Any] = {"total": total, **counts}
    if planned is not None:
        summary["planned"] = planned
        summary["not_run"] = max(0, planned - total)
    return summary


class RunReport:
    """The report of one pytest run, kept on disk as it grows."""

    def __init__(self, path: Path, meta: dict[str, Any]) -> None:
        self.path = path
        self.meta = meta
        self.started_at = utc_now_iso()
        self.finished_at: str | None = None
        self.status = "running"
        self.planned: int | None = None
        self._records: dict[str, dict[str, Any]] = {}  # by nodeid, in the order they ran
        self.write()

    @property
    def records(self) -> list[dict[str, Any]]:
        return list(self._records.values())

    def add(self, record: dict[str, Any]) -> None:
        """Add or replace (a teardown error after a pass) one scenario's entry, then save."""
        self._records[record["nodeid"]] = record
        self.write()

    def finish(self, status: str) -> None:
        self.status = status
        self.finished_at = utc_now_iso()
        self.write()

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": REPORT_FORMAT,
            "status": self.status,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            **self.meta,
            "summary": summarize(self._records.values(), self.planned),
            "results": self.records,
        }

    @property
    def html_path(self) -> Path:
        """The page beside the JSON (same stem, ``-2`` suffixes included)."""
        return self.path.with_suffix(".html")

    def write(self) -> None:
        """Both files, each replaced whole: the JSON, then the page rendered from it.

        The JSON goes first, so a page that cannot be rendered (a bug, and it raises) never
        costs the report itself."""
        text = json.dumps(self.to_dict(), indent=2, ensure_ascii=False, default=str) + "\n"
        write_atomically(self.path, text)
        # Rendered from what the file says (default=str applied), as a reader of it sees it.
        write_atomically(self.html_path, render_html(json.loads(text)))
