"""What bridge outputs: every key of a result, a history line or a report is snake_case."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from bridge.errors import RateLimited
from bridge.providers.results import AskResult, BothResult, Timings, Used
from bridge.testing.scenarios.checks import Check
from bridge.testing.scenarios.model import Scenario
from bridge.testing.scenarios.outcome import ProviderOutcome, ScenarioOutcome, StepMark
from bridge.testing.scenarios.report import scenario_record, summarize

SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")


def keys(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every dict key anywhere in ``value``, with where it was found."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield f"{path}.{key}", key
            yield from keys(inner, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for index, inner in enumerate(value):
            yield from keys(inner, f"{path}[{index}]")


def not_snake(value: Any) -> list[str]:
    return [where for where, key in keys(value) if not SNAKE.fullmatch(str(key))]


def ask_result(provider: Any = "chatgpt") -> AskResult:
    return AskResult(
        provider=provider,
        question="How do I read files asynchronously in Python?",
        answer="Use aiofiles.",
        url="https://chatgpt.com/c/1",
        timings=Timings(1, 2, 3, 4, 5, 15),
        used=Used(
            tab="new_tab",
            input_phase=1,
            send_method="js_click",
            completion="stop_gone_send_enabled",
            extraction="markdown",
            fallbacks=["input_phase_2"],
            thinking=True,
            skipped_thinking=True,
            retries=1,
            focus_emulated=True,
            brought_to_front=True,
        ),
        session_key="project",
        suspicious=True,
    )


def test_the_walk_finds_camel_case_keys_however_deep() -> None:
    assert not_snake({"a": [{"b": {"waitMs": 1}}], "ok_key": 1}) == [".a[0].b.waitMs"]


def test_every_key_of_an_ask_result_is_snake_case() -> None:
    data = ask_result().to_dict()
    assert not_snake(data) == []
    assert data["session_key"] == "project"
    assert set(data["timings"]) == {
        "connect_ms",
        "wait_input_ms",
        "input_ms",
        "send_ms",
        "wait_response_ms",
        "total_ms",
    }


def test_every_key_of_a_both_result_is_snake_case_answers_and_errors_alike() -> None:
    both = BothResult(
        {"chatgpt": ask_result()}, {"gemini": RateLimited("gemini", "slow down")}, 21.5
    )
    data = both.to_dict()
    assert not_snake(data) == []
    assert data["wall_ms"] == 21.5 and data["gemini"]["error"]["code"] == "rate_limited"


def test_every_key_of_a_scenario_report_entry_is_snake_case() -> None:
    scenario = Scenario(
        id="s",
        name="S",
        provider="both",
        question={"template": "How do I read files asynchronously in Python?"},
    )
    answered = ProviderOutcome(
        "chatgpt", ask_result(), steps=[StepMark("connect", 0.0), StepMark("done", 0.2)]
    )
    outcome = ScenarioOutcome(
        "s",
        "How do I read files asynchronously in Python?",
        live=False,
        started_at="2026-01-01T00:00:00.000Z",
        providers={"chatgpt": answered, "gemini": ProviderOutcome("gemini", None, "x", "y")},
        primer={"chatgpt": answered},
    )
    record = scenario_record(
        nodeid="scenarios/x.json::s",
        source="scenarios/x.json",
        scenario=scenario,
        outcome="passed",
        duration_s=0.5,
        result=outcome,
        checks=[Check("expect.sameConversation", True, {"same_url": True}, {"same_url": True})],
    )
    assert not_snake(record) == []
    assert not_snake(summarize([record], planned=2)) == []


@pytest.mark.parametrize("name", ["maxTotalMs", "expect.sameConversation"])
def test_check_names_keep_the_scenario_format_s_field_names(name: str) -> None:
    # A check is named after the scenario file's field (upstream scenario format,
    # docs/flows.md#scenario-format, an input): a value, not a key.
    assert Check(name, True, 1, 1).to_dict()["name"] == name
