"""The scenarios this project ships: the nine of docs/flows.md#scenario-catalogue, and one per
docs/flows.md#known-problems entry.

``scenarios/*.json`` themselves run against the fakes as part of the suite (testpaths); this
pins what they must contain, so a scenario is never dropped or retagged by accident.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bridge.testing.scenarios.loader import parse_scenario_file
from bridge.testing.scenarios.model import Scenario

SCENARIO_DIR = Path(__file__).resolve().parents[3] / "scenarios"

# docs/flows.md#scenario-catalogue: id -> (provider, tags it must carry)
CATALOGUE_SCENARIOS = {
    "chatgpt-new-chat": ("chatgpt", {"smoke", "chatgpt"}),
    "chatgpt-existing-chat": ("chatgpt", {"regression", "chatgpt"}),
    "chatgpt-thinking-mode": ("chatgpt", {"regression", "chatgpt", "thinking"}),
    "chatgpt-code-block": ("chatgpt", {"smoke", "chatgpt", "code"}),
    "chatgpt-long-response": ("chatgpt", {"chatgpt"}),
    "gemini-new-chat": ("gemini", {"smoke", "gemini"}),
    "gemini-existing-chat": ("gemini", {"regression", "gemini"}),
    "gemini-code-block": ("gemini", {"smoke", "gemini", "code"}),
    "parallel-query": ("both", {"smoke", "parallel"}),
}


@pytest.fixture(scope="module")
def shipped() -> dict[str, Scenario]:
    found: dict[str, Scenario] = {}
    for path in sorted(SCENARIO_DIR.glob("*.json")):
        for scenario in parse_scenario_file(path.read_text(encoding="utf-8"), path.name).scenarios:
            assert scenario.id not in found, f"{scenario.id} is defined twice"
            found[scenario.id] = scenario
    return found


def test_the_files_are_by_purpose() -> None:
    names = {p.stem for p in SCENARIO_DIR.glob("*.json")}
    assert {"smoke", "regression", "thinking", "parallel", "code", "long"} <= names


@pytest.mark.parametrize("scenario_id", list(CATALOGUE_SCENARIOS))
def test_catalogue_scenario_exists_with_its_tags(
    shipped: dict[str, Scenario], scenario_id: str
) -> None:
    provider, tags = CATALOGUE_SCENARIOS[scenario_id]
    scenario = shipped[scenario_id]
    assert scenario.provider == provider
    assert tags <= set(scenario.tags)


@pytest.mark.parametrize("problem", range(1, 7))
def test_each_troubleshooting_problem_has_a_regression_scenario(
    shipped: dict[str, Scenario], problem: int
) -> None:
    cites = re.compile(rf"flows\.md#known-problem-{problem}\b")
    guards = [s for s in shipped.values() if cites.search(s.description or "")]
    assert guards, f"no scenario guards docs/flows.md#known-problem-{problem}"
    assert all("regression" in s.tags for s in guards)


def test_fake_only_scenarios_say_why_and_nothing_is_live_only(
    shipped: dict[str, Scenario],
) -> None:
    # Every shipped scenario runs against the fakes in CI; the ones that cannot run live
    # say why in their skip reason.
    assert not [s.id for s in shipped.values() if s.live_only]
    for scenario in shipped.values():
        if scenario.fake_only:
            assert len(scenario.fake_only) > 20
