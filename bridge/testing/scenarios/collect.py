"""pytest glue for scenario files: each scenario a test, tags as markers, a run report.

``bridge.testing.plugin`` registers this module as "bridge-scenarios". A JSON file is a scenario
file when it is named on the command line or lies under a path of the ``bridge_scenario_paths`` ini
option; or when it lives in a ``scenarios/`` directory or is named ``*scenarios.json`` AND has
bridge's shape (``_bridge_shaped``), so other tools' JSON files there are left alone. Each
scenario becomes a ``pytest.Function`` named by its id, so ``-k``,
``-m``, fixtures, xdist and JUnit XML work as for any test. Its body runs on the session's
event loop, where the bridge fixtures live, through the same ``Bridge`` the MCP server uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import pytest_asyncio

from bridge.app.captures import write_capture
from bridge.testing.captures import capture_shaped
from bridge.testing.scenarios.allure_results import allure_enabled, attach_evidence, record
from bridge.testing.scenarios.checks import Check, evaluate, failure_message
from bridge.testing.scenarios.evidence import Evidence, capture_evidence
from bridge.testing.scenarios.loader import ScenarioFileError, parse_scenario_file
from bridge.testing.scenarios.model import Scenario
from bridge.testing.scenarios.outcome import ScenarioOutcome
from bridge.testing.scenarios.report_keeper import ReportKeeper, build_record, reports_dir
from bridge.testing.scenarios.runner import run_scenario
from bridge.testing.session_loop import run_on

__all__ = ["ScenarioFile", "ScenarioItem", "bridge_scenario_loop"]

T = TypeVar("T")

SCENARIO = pytest.StashKey[Scenario]()
SOURCE = pytest.StashKey[str]()
RESULT = pytest.StashKey[tuple[ScenarioOutcome, list[Check]]]()
EVIDENCE = pytest.StashKey[list[Evidence]]()
LOGGED_OUT = pytest.StashKey[dict[str, str]]()
SCENARIO_IDS = pytest.StashKey[dict[str, str]]()
SCENARIO_PATHS = pytest.StashKey[tuple[Path, ...]]()
SCENARIO_PATHS_INI = "bridge_scenario_paths"

# The tags of docs/flows.md#scenario-tags, plus the ones this suite adds; any other tag is
# registered as found.
KNOWN_TAGS = {
    "scenario": "a scenario from a scenario JSON file (bridge.testing.scenarios)",
    "smoke": "basic operation check: new chat, parallel query, code block "
    "(docs/flows.md#scenario-tags)",
    "regression": "checks that past problems (docs/flows.md#known-problems) have not come back",
    "chatgpt": "asks ChatGPT",
    "gemini": "asks Gemini",
    "thinking": "ChatGPT Thinking mode",
    "parallel": "asks ChatGPT and Gemini at once",
    "code": "answers with code blocks",
    "long": "long answers",
    "session": "reusing the recorded tab and conversation (docs/flows.md#session-key, "
    "docs/flows.md#known-problem-3)",
    "extension": "the extension's connection to the relay (docs/flows.md#known-problem-6)",
    "japanese": "Japanese UI or questions (docs/sites.md#language-independent-selectors)",
}


def pytest_configure(config: pytest.Config) -> None:
    for tag, text in KNOWN_TAGS.items():
        config.addinivalue_line("markers", f"{tag}: {text}")
    config.stash[LOGGED_OUT] = {}
    config.stash[SCENARIO_IDS] = {}
    if not hasattr(config, "workerinput"):  # xdist workers send reports; one process writes
        config.pluginmanager.register(ReportKeeper(config), "bridge-scenarios-report")


def pytest_addoption(parser: pytest.Parser) -> None:
    # pytest_addoption is a historic hook, so this runs although bridge.testing.plugin registers
    # this module from its pytest_configure; pytest validates ini keys only after collection.
    parser.addini(
        SCENARIO_PATHS_INI,
        type="paths",
        default=[],
        help="bridge: files and directories (relative to the ini file) whose *.json files are "
        "all scenario files, whatever their name or shape; an invalid one fails collection",
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ScenarioFile | None:
    if file_path.suffix != ".json":
        return None
    if capture_shaped(file_path):  # a capture, even when named: bridge.testing.captures's
        return None
    # Asked for by name or by configuration: a scenario file, and if it is wrong, say so.
    if parent.session.isinitpath(file_path) or _in_configured_paths(parent.config, file_path):
        return ScenarioFile.from_parent(parent, path=file_path)
    # Found by convention: only when it is bridge's, so other tools' JSON files stay theirs.
    conventional = file_path.parent.name == "scenarios" or file_path.name.endswith("scenarios.json")
    if conventional and _bridge_shaped(file_path):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


def _in_configured_paths(config: pytest.Config, file_path: Path) -> bool:
    roots = config.stash.get(SCENARIO_PATHS, None)
    if roots is None:  # read once, lazily: the ini option exists once this plugin is registered
        roots = tuple(Path(p).resolve() for p in config.getini(SCENARIO_PATHS_INI))
        config.stash[SCENARIO_PATHS] = roots
    if not roots:
        return False
    resolved = file_path.resolve()
    return any(resolved.is_relative_to(root) for root in roots)


# A top-level "scenarios" list: the cheap first test, and all a half-written file can show.
_SCENARIO_LIST = re.compile(r'"scenarios"\s*:\s*\[')
# Keys that a bridge scenario requires and that mark it as bridge's ("id" alone is too common).
_SCENARIO_SIGNATURE = ("provider", "question")


def _bridge_shaped(path: Path) -> bool:
    """Is this JSON file meant for bridge (then any mistake in it must fail loudly)?

    Bridge-shaped: a top-level object whose "scenarios" list holds at least one object with a
    "provider" or "question" key, the keys every bridge scenario needs (upstream
    chrome-ai-bridge's ``test-scenarios.json`` included, docs/flows.md#scenario-format). One
    such entry is enough, so a typo elsewhere in the file is still reported precisely. Text
    that is not valid JSON counts when it shows a ``"scenarios": [`` list: a half-written
    scenario file gets its parse error. Anything else (a list, ``{"name": "x"}``, another
    tool's ``scenarios`` of other keys, binary data, an empty scenarios list) is not bridge's
    and is ignored.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if _SCENARIO_LIST.search(text) is None:
        return False
    try:
        data = json.loads(text)
    except ValueError:  # json.JSONDecodeError
        return True
    except RecursionError:
        return False
    entries = data.get("scenarios") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return False
    return any(
        isinstance(entry, dict) and any(key in entry for key in _SCENARIO_SIGNATURE)
        for entry in entries
    )


class ScenarioFile(pytest.File):
    """One scenario JSON file; an invalid one fails collection with one precise line."""

    def collect(self) -> Iterator[ScenarioItem]:
        source = _display_path(self.config, self.path)
        try:
            text = self.path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ScenarioFileError(source, f"not UTF-8 text ({exc.reason})") from None
        parsed = parse_scenario_file(text, source)
        # Ids are how people select (-k) and read reports, so they are unique across files.
        known = self.config.stash[SCENARIO_IDS]
        for index, scenario in enumerate(parsed.scenarios):
            other = known.setdefault(scenario.id, source)
            if other != source:
                raise ScenarioFileError(
                    source,
                    f"duplicate id '{scenario.id}': {other} defines it too",
                    scenario=f"'{scenario.id}' (scenarios[{index}])",
                    field="id",
                )
        live = bool(self.config.getoption("--live", False))
        for scenario in parsed.scenarios:
            item = ScenarioItem.from_parent(self, name=scenario.id, callobj=_scenario_test)
            item.stash[SCENARIO] = scenario
            item.stash[SOURCE] = source
            for marker in _markers(scenario):
                _register_marker(self.config, marker, source)
                item.add_marker(marker)
            skip = _mode_skip(scenario, live=live)
            if skip is not None:
                item.add_marker(pytest.mark.skip(reason=skip))
            yield item

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ScenarioFileError):
            return str(excinfo.value)  # one line naming file, scenario and field; no traceback
        return super().repr_failure(excinfo)


class ScenarioItem(pytest.Function):
    """A scenario as a test function: fixtures, markers and hooks work as for any test."""

    def reportinfo(self) -> tuple[os.PathLike[str] | str, int | None, str]:
        return self.path, self.stash[SCENARIO].line - 1, f"scenario {self.name}"


def _markers(scenario: Scenario) -> list[str]:
    """The tags, plus what a scenario touches: its providers, and a real browser."""
    markers = ["scenario", *scenario.tags, *scenario.providers]
    if scenario.setup.extension_connected:
        markers.append("e2e")
    return list(dict.fromkeys(markers))


def _register_marker(config: pytest.Config, name: str, source: str) -> None:
    # --strict-markers accepts only declared markers; a team's own tag declares itself here.
    declared = {line.split(":")[0].split("(")[0].strip() for line in config.getini("markers")}
    if name not in declared:
        config.addinivalue_line("markers", f"{name}: scenario tag (from {source})")


def _mode_skip(scenario: Scenario, *, live: bool) -> str | None:
    if live and scenario.fake_only:
        return f"fake sites only: {scenario.fake_only}"
    if not live and scenario.live_only:
        return f"live only (run with --live): {scenario.live_only}"
    return None


def _display_path(config: pytest.Config, path: Path) -> str:
    for base in (config.invocation_params.dir, config.rootpath):
        with contextlib.suppress(ValueError):
            return str(path.relative_to(base))
    return str(path)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def bridge_scenario_loop() -> asyncio.AbstractEventLoop:
    """The session's event loop: the bridge fixtures live on it, so scenarios run on it."""
    return asyncio.get_running_loop()


def _scenario_test(
    request: pytest.FixtureRequest, bridge_scenario_loop: asyncio.AbstractEventLoop
) -> None:
    """The body of every scenario test (sync, driving the session loop between fixtures)."""
    item = request.node
    config = request.config
    scenario = item.stash[SCENARIO]
    live = bool(config.getoption("--live", False))
    logged_out = config.stash[LOGGED_OUT]
    for provider in scenario.providers:
        if provider in logged_out:
            pytest.skip(logged_out[provider])
    bridge = fakes = None
    if scenario.setup.extension_connected:
        # Fixtures are taken here, not from the signature: an unconnected scenario needs no
        # browser, and a live one no fake sites.
        fakes = None if live else request.getfixturevalue("fakes")
        bridge = request.getfixturevalue("bridge")
    loop = bridge_scenario_loop
    try:
        outcome = run_on(loop, run_scenario(scenario, bridge, fakes, live=live))
    except Exception:
        # A bug in bridge rather than an answer that failed its checks: the tabs show it too.
        if bridge is not None:
            item.stash[EVIDENCE] = run_on(loop, capture_evidence(bridge, scenario.providers))
        raise
    for provider, result in outcome.providers.items():
        if result.capture is not None:  # docs/captures.md: kept for comparing later runs
            folder = reports_dir(config) / "captures"
            write_capture(folder, result.capture, name=f"{scenario.id}-{provider}")
    checks = evaluate(scenario, outcome)
    item.stash[RESULT] = (outcome, checks)
    passed = all(c.passed for c in checks)
    if not passed and bridge is not None:
        # Captured once, for the report (its HTML page shows it) and Allure alike; only a
        # failure pays for it.
        item.stash[EVIDENCE] = run_on(loop, capture_evidence(bridge, scenario.providers))
    if allure_enabled(config):
        record(scenario, outcome, checks)
        attach_evidence(item.stash.get(EVIDENCE, []))
    if live:
        _skip_when_logged_out(scenario, outcome, logged_out)
    if not passed:
        pytest.fail(failure_message(scenario, outcome, checks), pytrace=False)


def _skip_when_logged_out(
    scenario: Scenario, outcome: ScenarioOutcome, logged_out: dict[str, str]
) -> None:
    """Live: a missing login is the person's to fix, once per provider, not a failure storm."""
    expected = scenario.expect_for(live=True).errors
    reasons: list[str] = []
    for asked in (outcome.primer, outcome.providers):
        for provider, result in asked.items():
            if result.error_code == "login_required" and expected.get(provider) != "login_required":
                reason = (
                    f"not logged in to {provider}: {result.error_message} Then run pytest "
                    f"--live again; {provider}'s other scenarios are skipped for this reason."
                )
                logged_out.setdefault(provider, reason)
                reasons.append(reason)
    if reasons:
        pytest.skip(" ".join(dict.fromkeys(reasons)))


def _evidence_of(item: pytest.Item) -> list[Evidence]:
    return item.stash.get(EVIDENCE, [])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the scenario's report entry to the test report (it travels to xdist's controller)."""
    report = yield
    scenario = item.stash.get(SCENARIO, None)
    if scenario is None:
        return report
    final = (
        report.when == "call"
        or (report.when == "setup" and not report.passed)
        or (report.when == "teardown" and report.failed)
    )
    if final:
        outcome, checks = item.stash.get(RESULT, (None, []))
        report.bridge_scenario = build_record(  # type: ignore[attr-defined]
            report, scenario, item.stash[SOURCE], outcome, checks, _evidence_of(item)
        )
    return report
