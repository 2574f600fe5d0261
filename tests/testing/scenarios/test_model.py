"""The scenario file format (bridge.testing.scenarios.model): the rules tests/testing/scenarios/
test_loader.py does not cover, any valid scenario file round-trips through JSON, and the
published JSON Schema (docs/schemas/scenario.schema.json) is the model's and takes every
scenario file of the repository."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.testing.scenarios.loader import ScenarioFileError, parse_scenario_file
from bridge.testing.scenarios.model import ScenarioFile, scenario_json_schema

ROOT = Path(__file__).resolve().parents[3]
PUBLISHED = ROOT / "docs" / "schemas" / "scenario.schema.json"
QUESTION = {"template": "How do I read files asynchronously in Python? ID:{{timestamp}}"}


def _problem(**fields: Any) -> str:
    scenario = {"id": "s", "provider": "chatgpt", "question": QUESTION, **fields}
    with pytest.raises(ScenarioFileError) as caught:
        parse_scenario_file(json.dumps({"scenarios": [scenario]}), "t.json")
    return re.sub(r"^t\.json: scenario [^:]*: ", "", str(caught.value))


# (fields of one scenario, the problem: field and message)
RULES: list[tuple[dict[str, Any], str]] = [
    ({"id": 5}, "field 'id': must be a non-empty string, not a number 5"),
    ({"name": ""}, "field 'name': must be a non-empty string, not a string \"\""),
    (
        {"provider": "claude"},
        "field 'provider': must be one of chatgpt, gemini, both, not a string \"claude\"",
    ),
    ({"question": "x"}, "field 'question': must be a JSON object, not a string"),
    (
        {"setup": {"primer": "Hello"}},
        "field 'setup.primer': is a question docs/flows.md#forbidden-questions forbids",
    ),
    (
        {"assertions": {"minLength": 1}},
        "field 'assertions.minLength': unknown assertion 'minLength'; known: bothMustSucceed",
    ),
    (
        {"assertions": {"maxTotalMs": -1}},
        "field 'assertions.maxTotalMs': must be a number >= 0, not a number -1",
    ),
    (
        {"expect": {"inputPhase": 0}},
        "field 'expect.inputPhase': must be a whole number >= 1, not a number 0",
    ),
    (
        {"expect": {"retries": True}},
        "field 'expect.retries': must be a whole number >= 0, not a boolean true",
    ),
    (
        {"expect": {"error": 5}},
        "field 'expect.error': must be an error code, or an object of provider -> error code",
    ),
    (
        {"expect": {"errorMessage": 5}},
        "field 'expect.errorMessage': must be a string or a list of non-empty strings",
    ),
    ({"ask": {"timeoutMs": 0}}, "field 'ask.timeoutMs': must be a number >= 1, not a number 0"),
    (
        {"fake": {"completionTimings": {"x": 1}}},
        "field 'fake.completionTimings.x': unknown field 'x'; known: chatgpt_fallback_s",
    ),
    (
        {"fake": {"completionTimings": {"new_turn_s": "1"}}},
        "field 'fake.completionTimings.new_turn_s': must be a number, not a string \"1\"",
    ),
    (
        {"fake": {"chatgpt": {"mode_sticks": 1}}},
        "field 'fake.chatgpt.mode_sticks': must be true or false, not a number 1",
    ),
    (
        {"fake": {"chatgpt": {"upload_ms": -1}}},
        "field 'fake.chatgpt.upload_ms': upload_ms must not be negative, not -1",
    ),
    (
        {"fake": {"chatgpt": {"queue": [5]}}},
        "field 'fake.chatgpt.queue[0]': must be a JSON object, not a number",
    ),
    (
        {"fake": {"expect": {"error": {"gemini": "timeout"}}}},
        "field 'fake.expect.error.gemini': 'gemini' is not asked in this scenario",
    ),
    (
        {"expect": {"error": "login_required"}, "fake": {"expect": {"error": "nope"}}},
        "field 'fake.expect.error': unknown error code 'nope'",
    ),
]


@pytest.mark.parametrize(("fields", "problem"), RULES)
def test_each_rule_names_its_field_and_says_what_is_wrong(
    fields: dict[str, Any], problem: str
) -> None:
    assert _problem(**fields).startswith(problem)


def test_an_unknown_key_is_named_before_what_it_causes() -> None:
    """A misspelt required key is reported as the typo, not as the key missing."""
    text = json.dumps({"scenarios": [{"id": "s", "provider": "chatgpt", "questoin": QUESTION}]})
    with pytest.raises(ScenarioFileError, match="field 'questoin': unknown field 'questoin'"):
        parse_scenario_file(text, "t.json")


def test_fake_settings_are_the_fakes_own_and_a_number_is_no_string() -> None:
    from bridge.fakes.behaviour import Behaviour

    loaded = parse_scenario_file(
        json.dumps({"scenarios": [{"id": "s", "provider": "both", "question": QUESTION,
                                   "expect": {"error": "rate_limited"},
                                   "fake": {"gemini": {"locale": "de", "queue": [{"length": "long"}]}}}]}),
        "t.json",
    )  # fmt: skip
    scenario = loaded.scenarios[0]
    assert scenario.fake.sites["gemini"].default == Behaviour(locale="de")
    assert scenario.fake.sites["gemini"].queue == (Behaviour(length="long"),)
    assert scenario.expect.errors == {"chatgpt": "rate_limited", "gemini": "rate_limited"}
    assert loaded.source == "t.json" and scenario.line == 1 and scenario.name == "s"


# -- any valid scenario file round-trips through JSON ------------------------------------------

_text = st.from_regex(r"[A-Za-z][A-Za-z0-9 ,.-]{2,30}", fullmatch=True)
_template = st.builds("How do I {} in Python? ID:{{{{timestamp}}}}".format, _text)
_flag = st.booleans()
_assertions = st.fixed_dictionaries(
    {},
    optional={
        "minAnswerLength": st.integers(0, 10_000),
        "relevanceThreshold": st.floats(0, 1),
        "maxTotalMs": st.floats(0, 1e7),
        "noFallback": _flag,
        "noEmptyMarkdown": _flag,
    },
)
_expect = st.fixed_dictionaries(
    {},
    optional={
        "errorMessage": st.lists(_text, min_size=1, max_size=2),
        "tab": st.sampled_from(["session", "open_tab", "new_tab"]),
        "thinking": _flag,
        "retries": st.integers(0, 5),
        "inputPhase": st.integers(1, 3),
        "completion": _text,
        "codeBlock": _flag,
    },
)
_behaviour = st.fixed_dictionaries(
    {},
    optional={
        "locale": st.sampled_from(["en", "ja", "de"]),
        "chunk_chars": st.integers(1, 100),
        "thinking_ms": st.integers(0, 5000),
        "state": st.sampled_from(["ok", "stuck", "rate_limited"]),
        "answer": _text,
    },
)
_scenario = st.fixed_dictionaries(
    {
        "id": st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True),
        "provider": st.just("gemini"),
        "question": st.fixed_dictionaries({"template": _template}),
    },
    optional={
        "name": _text,
        "description": _text,
        "tags": st.lists(st.sampled_from(["smoke", "regression", "gemini", "team-x"]), unique=True),
        "setup": st.fixed_dictionaries(
            {}, optional={"instruction": _text, "extensionConnected": _flag}
        ),
        "assertions": _assertions,
        "expect": _expect,
        "ask": st.fixed_dictionaries({}, optional={"timeoutMs": st.floats(1, 1e6)}),
        "fake": st.fixed_dictionaries(
            {},
            optional={
                "gemini": st.tuples(_behaviour, st.lists(_behaviour, max_size=2)).map(
                    lambda p: {**p[0], **({"queue": p[1]} if p[1] else {})}
                ),
                "completionTimings": st.fixed_dictionaries(
                    {}, optional={"gemini_stuck_s": st.floats(0, 60)}
                ),
                "assertions": _assertions,
            },
        ),
        "liveOnly": _text,
    },
)
_file = st.fixed_dictionaries(
    {"scenarios": st.lists(_scenario, min_size=1, max_size=3, unique_by=lambda s: s["id"])},
    optional={"version": st.just("1.0.0"), "description": _text},
)


@settings(max_examples=40, deadline=None)
@given(_file)
def test_any_valid_scenario_file_round_trips_through_json(document: dict[str, Any]) -> None:
    loaded = parse_scenario_file(json.dumps(document), "t.json")
    dumped = loaded.model_dump_json(by_alias=True, exclude_unset=True)
    again = parse_scenario_file(dumped, "t.json")
    assert again == loaded
    assert [s.model_dump() for s in again.scenarios] == [s.model_dump() for s in loaded.scenarios]


# -- the published JSON Schema -----------------------------------------------------------------


def test_the_published_schema_is_the_models() -> None:
    """docs/schemas/scenario.schema.json never drifts from the model (BRIDGE_WRITE_SCHEMAS=1
    rewrites it)."""
    schema = json.dumps(scenario_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("BRIDGE_WRITE_SCHEMAS"):
        PUBLISHED.write_text(schema, encoding="utf-8")
    assert PUBLISHED.read_text(encoding="utf-8") == schema, (
        "the scenario model changed: run BRIDGE_WRITE_SCHEMAS=1 pytest "
        "tests/testing/scenarios/test_model.py"
    )


@pytest.mark.parametrize("path", sorted((ROOT / "scenarios").glob("*.json")), ids=lambda p: p.name)
def test_the_schema_takes_every_scenario_file_of_the_repository(path: Path) -> None:
    checker = jsonschema.Draft202012Validator(json.loads(PUBLISHED.read_text(encoding="utf-8")))
    assert list(checker.iter_errors(json.loads(path.read_text(encoding="utf-8")))) == []


@pytest.mark.parametrize(
    "scenario",
    [
        {"id": "s", "provider": "claude", "question": QUESTION},
        {"id": "s", "provider": "chatgpt", "question": QUESTION, "assertions": {"minLength": 1}},
        {
            "id": "s",
            "provider": "chatgpt",
            "question": QUESTION,
            "fake": {"chatgpt": {"thinking": 1}},
        },
        {
            "id": "s",
            "provider": "chatgpt",
            "question": QUESTION,
            "fake": {"chatgpt": {"state": "gone"}},
        },
        {"id": "has space", "provider": "chatgpt", "question": QUESTION},
        {"provider": "chatgpt", "question": QUESTION},
    ],
)
def test_the_schema_refuses_what_the_model_refuses(scenario: dict[str, Any]) -> None:
    document = {"scenarios": [scenario]}
    checker = jsonschema.Draft202012Validator(json.loads(PUBLISHED.read_text(encoding="utf-8")))
    assert list(checker.iter_errors(document)) != []
    with pytest.raises(ScenarioFileError):
        parse_scenario_file(json.dumps(document), "t.json")
    assert ScenarioFile  # the model the schema is generated from
