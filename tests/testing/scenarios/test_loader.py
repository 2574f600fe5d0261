"""Loading scenario files (loader.py into model.py): the chrome-ai-bridge spec's
test-scenarios.json format (docs/flows.md#scenario-format), our optional fields, and one
precise error each."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from bridge.fakes.behaviour import Behaviour
from bridge.providers.completion import CompletionTimings
from bridge.testing.scenarios.loader import ScenarioFileError, parse_scenario_file
from bridge.testing.scenarios.model import Assertions, Expect, render_question, template_variables

# Upstream chrome-ai-bridge's scripts/test-scenarios.json as published, byte for byte in shape:
# the chrome-ai-bridge spec's test-scenarios.json format (docs/flows.md#scenario-format).
UPSTREAM_FILE = """{
  "version": "1.0.0",
  "scenarios": [
    {"id": "chatgpt-new-chat", "name": "ChatGPT 新規チャット", "provider": "chatgpt",
     "tags": ["smoke", "chatgpt"],
     "question": {"template": "JavaScriptのconstとletの違いを1文で。ID:{{timestamp}}"},
     "assertions": {"minAnswerLength": 20, "relevanceThreshold": 0.2, "maxTotalMs": 60000}},
    {"id": "chatgpt-existing-chat", "name": "ChatGPT 既存チャット再接続", "provider": "chatgpt",
     "tags": ["regression", "chatgpt"],
     "setup": {"requireExistingTab": true, "instruction": "ChatGPTで会話を開いた状態で実行"},
     "question": {"template": "Pythonのリスト内包表記を1文で。ID:{{timestamp}}"},
     "assertions": {"minAnswerLength": 20, "relevanceThreshold": 0.2, "noFallback": true}},
    {"id": "chatgpt-thinking-mode", "name": "ChatGPT Thinkingモード", "provider": "chatgpt",
     "tags": ["regression", "chatgpt", "thinking"],
     "question": {"template": "このコードのバグを見つけて: function f(x) { if(x = 5) return true; } ID:{{timestamp}}"},
     "assertions": {"minAnswerLength": 50, "relevanceThreshold": 0.15, "noEmptyMarkdown": true}},
    {"id": "gemini-new-chat", "name": "Gemini 新規チャット", "provider": "gemini",
     "tags": ["smoke", "gemini"],
     "question": {"template": "TypeScriptのジェネリクスを1文で。ID:{{timestamp}}"},
     "assertions": {"minAnswerLength": 20, "relevanceThreshold": 0.2}},
    {"id": "parallel-query", "name": "ChatGPT+Gemini 並列クエリ", "provider": "both",
     "tags": ["smoke", "parallel"],
     "question": {"template": "HTTPステータスコード404の意味を1文で。ID:{{timestamp}}"},
     "assertions": {"bothMustSucceed": true, "minAnswerLength": 10}}
  ]
}"""

QUESTION = {"template": "How do I read files asynchronously in Python? ID:{{timestamp}}"}


def one(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "s", "name": "S", "provider": "chatgpt", "question": QUESTION}
    base.update(fields)
    return {key: value for key, value in base.items() if value is not None}


def parse(*scenarios: dict[str, Any]) -> Any:
    return parse_scenario_file(json.dumps({"scenarios": list(scenarios)}), "t.json")


def test_the_upstream_published_file_loads_unchanged() -> None:
    loaded = parse_scenario_file(UPSTREAM_FILE, "test-scenarios.json")
    assert loaded.version == "1.0.0"
    assert [s.id for s in loaded.scenarios] == [
        "chatgpt-new-chat",
        "chatgpt-existing-chat",
        "chatgpt-thinking-mode",
        "gemini-new-chat",
        "parallel-query",
    ]
    existing = loaded.scenarios[1]
    assert existing.setup.require_existing_tab
    assert existing.setup.instruction == "ChatGPTで会話を開いた状態で実行"
    assert existing.assertions == Assertions(
        min_answer_length=20, relevance_threshold=0.2, no_fallback=True
    )
    parallel = loaded.scenarios[4]
    assert parallel.providers == ("chatgpt", "gemini")
    assert parallel.assertions.both_must_succeed
    # Where its id is, for pytest's report locations.
    lines = UPSTREAM_FILE.splitlines()
    assert parallel.line == 1 + next(i for i, t in enumerate(lines) if '"parallel-query"' in t)


def test_the_optional_fields_load_typed() -> None:
    scenario = parse(
        one(
            provider="gemini",
            tags=["regression", "gemini", "team-x"],
            description="why it exists",
            setup={"requireExistingTab": True, "primer": "Explain Rust traits. ID:{{id}}"},
            expect={"tab": "session", "sameConversation": True},
            ask={"timeoutMs": 30000},
            fake={
                "gemini": {"locale": "ja", "queue": [{"state": "stuck"}, {"thinking_ms": 5}]},
                "completionTimings": {"gemini_stuck_s": 1.0},
                "expect": {"retries": 1, "sameConversation": False},
                "assertions": {"minAnswerLength": 500},
            },
            liveOnly=None,
        )
    ).scenarios[0]
    assert scenario.tags == ("regression", "gemini", "team-x")
    site = scenario.fake.sites["gemini"]
    assert site.default == Behaviour(locale="ja")
    assert site.queue == (Behaviour(state="stuck"), Behaviour(thinking_ms=5))
    assert scenario.fake.completion_timings == CompletionTimings(gemini_stuck_s=1.0)
    assert scenario.ask.timeout_ms == 30000
    # Live runs ignore everything under "fake"; fake runs apply its overrides.
    assert scenario.expect_for(live=True).same_conversation is True
    assert scenario.expect_for(live=True).retries is None
    fake_expect = scenario.expect_for(live=False)
    assert fake_expect.same_conversation is False and fake_expect.retries == 1
    assert fake_expect.tab == "session"
    assert scenario.assertions_for(live=False).min_answer_length == 500
    assert scenario.assertions_for(live=True).min_answer_length is None


def test_an_error_code_for_all_providers_or_per_provider() -> None:
    both = parse(one(provider="both", expect={"error": "login_required"})).scenarios[0]
    assert both.expect.errors == {"chatgpt": "login_required", "gemini": "login_required"}
    one_side = parse(one(provider="both", expect={"error": {"gemini": "rate_limited"}}))
    assert one_side.scenarios[0].expect.errors == {"gemini": "rate_limited"}
    assert parse(one()).scenarios[0].expect == Expect()


INVALID: list[tuple[Any, str, str]] = [
    # (scenario or whole-file text, field, message fragment)
    ("[1, 2]", "", "t.json: must be a JSON object, not a list"),
    ('{"scenarios": []}', "scenarios", "must be a non-empty list of scenarios"),
    ('{"scenarios": [], "extra": 1}', "extra", "unknown field 'extra'"),
    (one(id=None), "id", "is required (a non-empty string)"),
    (one(id="has space"), "id", "must be letters, digits"),
    (one(provider=None), "provider", "is required: chatgpt, gemini or both"),
    (one(question=None), "question", "is required"),
    (one(question={"template": ""}), "question.template", "must be a non-empty string"),
    (one(question={"template": "Tell me {{time}}"}), "question.template", "unknown variable"),
    (
        one(question={"template": "OK"}),
        "question.template",
        "docs/flows.md#forbidden-questions forbids",
    ),
    (one(question={"text": "x"}), "question.text", "unknown field 'text'"),
    (one(tags="smoke"), "tags", "must be a list of strings"),
    (one(tags=["skip"]), "tags[0]", "'skip' cannot be a pytest marker"),
    (one(tags=["ok", "two words"]), "tags[1]", "cannot be a pytest marker"),
    (one(assertions={"minAnswerLength": "20"}), "assertions.minAnswerLength", "whole number"),
    (one(assertions={"minAnswerLength": -1}), "assertions.minAnswerLength", ">= 0"),
    (one(assertions={"relevanceThreshold": 1.5}), "assertions.relevanceThreshold", "<= 1"),
    (one(assertions={"noFallback": 1}), "assertions.noFallback", "must be true or false"),
    (one(assertions={"bothMustSucceed": True}), "assertions.bothMustSucceed", "needs"),
    (one(expect={"error": "exploded"}), "expect.error", "unknown error code 'exploded'"),
    (one(expect={"error": {"gemini": "timeout"}}), "expect.error.gemini", "is not asked"),
    (one(expect={"tab": "mine"}), "expect.tab", "one of session, open_tab, new_tab"),
    (one(expect={"sameConversation": True}), "expect.sameConversation", "requireExistingTab"),
    (one(ask={"skipThinking": True}, provider="gemini"), "ask.skipThinking", "chatgpt"),
    (one(fake={"gemini": {}}), "fake.gemini", "'gemini' is not asked in this scenario"),
    (one(fake={"chatgpt": {"thinking": 5}}), "fake.chatgpt.thinking", "unknown field"),
    (one(fake={"chatgpt": {"thinking_ms": "5"}}), "fake.chatgpt.thinking_ms", "whole number"),
    (one(fake={"chatgpt": {"chunk_chars": 0}}), "fake.chatgpt.chunk_chars", "at least 1"),
    (one(fake={"chatgpt": {"queue": {}}}), "fake.chatgpt.queue", "must be a list"),
    (
        one(fake={"chatgpt": {"queue": [{"state": "gone"}]}}),
        "fake.chatgpt.queue[0].state",
        "state must be one of",
    ),
    (
        one(fake={"completionTimings": {"gemini_stuck_s": -1}}),
        "fake.completionTimings.gemini_stuck_s",
        "finite number >= 0",
    ),
    (one(fakeOnly="x", liveOnly="y"), "liveOnly", "both fakeOnly and liveOnly"),
    (one(setup={"extensionConnected": "no"}), "setup.extensionConnected", "true or false"),
]


@pytest.mark.parametrize(("content", "field", "fragment"), INVALID)
def test_every_invalid_file_names_the_file_the_scenario_and_the_field(
    content: Any, field: str, fragment: str
) -> None:
    text = content if isinstance(content, str) else json.dumps({"scenarios": [content]})
    with pytest.raises(ScenarioFileError) as info:
        parse_scenario_file(text, "t.json")
    error = info.value
    assert error.source == "t.json"
    assert (error.field or "") == field
    assert fragment in str(error)
    if isinstance(content, dict):
        assert error.scenario is not None and "scenarios[0]" in error.scenario
        assert str(error).startswith(f"t.json: scenario {error.scenario}: field '{field}': ")


def test_bad_json_says_where() -> None:
    with pytest.raises(ScenarioFileError, match=r"t.json: not valid JSON: .*line 1 column"):
        parse_scenario_file('{"scenarios": [', "t.json")


def test_a_duplicate_id_names_the_second_one() -> None:
    with pytest.raises(ScenarioFileError) as info:
        parse(one(id="twice"), one(id="twice", provider="gemini"))
    assert str(info.value) == (
        "t.json: scenario 'twice' (scenarios[1]): field 'id': duplicate id 'twice': every "
        "scenario id must be unique"
    )


def test_timestamp_is_the_upstream_suite_s_base36_milliseconds() -> None:
    now = datetime(2026, 1, 30, 10, 30, tzinfo=UTC)
    variables = template_variables(now, "chatgpt-new-chat")
    assert int(variables["timestamp"], 36) == int(now.timestamp() * 1000)
    assert variables["date"] == "2026-01-30"
    rendered = render_question("Q {{timestamp}} {{ id }} {{timestamp}}", variables)
    assert rendered == f"Q {variables['timestamp']} chatgpt-new-chat {variables['timestamp']}"


@pytest.mark.parametrize(
    ("template", "forbidden"),
    [
        ("Hello", True),
        ("hello!", True),
        ("OK ID:{{timestamp}}", True),
        ("What's 1+1?", True),
        ("Connection test.", True),
        ("Hello world in Rust: how do I print it?", False),
        ("What is 1+1 in binary arithmetic, step by step?", False),
    ],
)
def test_forbidden_questions_are_refused(template: str, forbidden: bool) -> None:
    if forbidden:
        with pytest.raises(ScenarioFileError, match=r"docs/flows\.md#forbidden-questions"):
            parse(one(question={"template": template}))
    else:
        parse(one(question={"template": template}))
