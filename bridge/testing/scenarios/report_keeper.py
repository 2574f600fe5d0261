"""The pytest side of the run report: turn test reports into entries, keep the file current.

Entries are built where a scenario ran and ride on its ``TestReport`` (pytest-xdist carries a
report's attributes to the controller), and one ``ReportKeeper``, in the process that prints
the results, writes the file. The report goes to ``--bridge-reports DIR``, else
``$BRIDGE_REPORTS_DIR``, else ``reports/`` under the rootdir.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bridge.testing.captures import CAPTURE_ITEM
from bridge.testing.scenarios.checks import Check
from bridge.testing.scenarios.evidence import Evidence, evidence_record
from bridge.testing.scenarios.model import Scenario
from bridge.testing.scenarios.outcome import ScenarioOutcome
from bridge.testing.scenarios.report import RunReport, reserve_report_path, scenario_record

__all__ = ["ReportKeeper", "build_record"]

_MESSAGE_CHARS = 4000


def build_record(
    report: pytest.TestReport,
    scenario: Scenario,
    source: str,
    outcome: ScenarioOutcome | None,
    checks: list[Check],
    evidence: Sequence[Evidence] = (),
) -> dict[str, Any]:
    # A setup or teardown that broke is an error: the scenario itself decided nothing.
    status = "error" if report.when != "call" and not report.skipped else report.outcome
    return scenario_record(
        nodeid=report.nodeid,
        source=source,
        scenario=scenario,
        outcome=status,
        duration_s=report.duration,
        result=outcome,
        checks=checks,
        message=_message(report),
        worker=os.environ.get("PYTEST_XDIST_WORKER"),
        evidence=evidence_record(list(evidence)),
    )


def _message(report: pytest.TestReport) -> str | None:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    if report.failed:
        text = report.longreprtext
        return text if len(text) <= _MESSAGE_CHARS else "..." + text[-_MESSAGE_CHARS:]
    return None


def _is_scenario_nodeid(nodeid: str) -> bool:
    return ".json::" in nodeid and f"::{CAPTURE_ITEM}[" not in nodeid


def reports_dir(config: pytest.Config) -> Path:
    """Where this run's reports go: ``--bridge-reports``, ``$BRIDGE_REPORTS_DIR``, or
    ``reports/`` under the rootdir (captures of capture scenarios go in its ``captures/``)."""
    configured = config.getoption("--bridge-reports", None) or os.environ.get("BRIDGE_REPORTS_DIR")
    return Path(configured) if configured else config.rootpath / "reports"


class ReportKeeper:
    """Registered once per run, in the only process or in pytest-xdist's controller."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.report: RunReport | None = None
        self.planned: int | None = None

    def _ensure(self) -> RunReport:
        if self.report is None:
            path = reserve_report_path(reports_dir(self.config), datetime.now(UTC))
            self.report = RunReport(path, self._meta())
            self.report.planned = self.planned
        return self.report

    def _meta(self) -> dict[str, Any]:
        params = self.config.invocation_params
        return {
            "mode": "live" if self.config.getoption("--live", False) else "fake",
            "args": list(params.args),
            "cwd": str(params.dir),
            "rootdir": str(self.config.rootpath),
            "python": sys.version.split()[0],
            "pytest": pytest.__version__,
            "workers": self.config.getoption("numprocesses", None) or 0,
        }

    def _plan(self, count: int) -> None:
        self.planned = count
        if count and not self.config.option.collectonly:
            # A file from the start: a run stopped before its first result still leaves one.
            report = self._ensure()
            report.planned = count
            report.write()

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        count = sum(1 for item in session.items if _is_scenario_nodeid(item.nodeid))
        if count:  # under xdist the controller collects nothing; its workers say below
            self._plan(count)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        if self.planned is None:  # every worker collects the same tests
            self._plan(sum(1 for nodeid in ids if _is_scenario_nodeid(nodeid)))

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = getattr(report, "bridge_scenario", None)
        if isinstance(entry, dict):
            self._ensure().add(entry)

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.report is not None:
            interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
            self.report.finish("interrupted" if interrupted else "finished")

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is not None:
            terminalreporter.write_line(f"bridge scenarios: report {self.report.path}")
