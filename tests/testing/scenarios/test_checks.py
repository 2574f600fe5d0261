"""Scenario checks (docs/flows.md#scenario-assertions, docs/flows.md#relevance-check, expect,
fake evidence) and the failure message."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.fakes.behaviour import Behaviour, answer_markdown
from bridge.providers.results import AskResult, Timings, Used
from bridge.testing.scenarios.checks import (
    Check,
    evaluate,
    extract_keywords,
    failure_message,
    js_length,
    relevance,
    stripped_markdown_length,
)
from bridge.testing.scenarios.loader import parse_scenario_file
from bridge.testing.scenarios.model import Scenario, render_question, template_variables
from bridge.testing.scenarios.outcome import (
    FakeEvidence,
    ProviderOutcome,
    ScenarioOutcome,
    StepMark,
    step_spans,
)

QUESTION = "How do I read files asynchronously in Python? ID:{{timestamp}}"
ANSWER = "Use **asyncio** with aiofiles to read files in Python.\n\n```python\nprint(1)\n```"


def make(**fields: Any) -> Scenario:
    raw = {"id": "s", "name": "S", "provider": "chatgpt", "question": {"template": QUESTION}}
    raw.update(fields)
    return parse_scenario_file(json.dumps({"scenarios": [raw]}), "t.json").scenarios[0]


def answered(
    provider: str = "chatgpt",
    answer: str = ANSWER,
    *,
    url: str = "https://chatgpt.com/c/1",
    total_ms: float = 1000.0,
    fake: FakeEvidence | None = None,
    **used: Any,
) -> ProviderOutcome:
    result = AskResult(
        provider,  # type: ignore[arg-type]
        "q",
        answer,
        url,
        Timings(total_ms=total_ms),
        Used(**used),
        "key",
    )
    return ProviderOutcome(provider, result=result, fake=fake)  # type: ignore[arg-type]


def failed(
    provider: str = "chatgpt", code: str = "rate_limited", message: str = "limit"
) -> ProviderOutcome:
    return ProviderOutcome(provider, error_code=code, error_message=message)  # type: ignore[arg-type]


def run(
    *providers: ProviderOutcome, live: bool = False, **primer: ProviderOutcome
) -> ScenarioOutcome:
    return ScenarioOutcome(
        "s",
        "How do I read files asynchronously in Python? ID:abc123",
        live,
        "2026-01-30T10:30:00.000Z",
        providers={p.provider: p for p in providers},
        primer=dict(primer),  # type: ignore[arg-type]
    )


def by_label(checks: list[Check]) -> dict[str, Check]:
    return {c.label: c for c in checks}


# -- relevance (docs/flows.md#relevance-check) ------------------------------------------------


def test_keywords_are_english_terms_and_katakana_words_like_the_upstream_suite_s() -> None:
    assert extract_keywords("JavaScriptのconstとletの違いを1文で。ID:") == [
        "javascript",
        "const",
        "let",
        "id",
    ]
    assert extract_keywords("TypeScriptのジェネリクスを1文で") == ["typescript", "ジェネリクス"]
    # Dotted names stay whole; one-letter terms and repeats drop out.
    assert extract_keywords("Use os.path.join or Node.js in a file; os.path.join again") == [
        "use",
        "os.path.join",
        "or",
        "node.js",
        "in",
        "file",
        "again",
    ]


def test_relevance_is_the_share_of_keywords_in_the_answer() -> None:
    assert relevance("Python asyncio files", "asyncio reads FILES") == 2 / 3
    assert relevance("Pythonでファイルを読む", "ファイルはpythonで") == 1.0
    assert relevance("日本語だけ", "anything") == 1.0  # no keywords: nothing to miss


@given(st.text(max_size=80), st.text(max_size=80))
def test_relevance_is_a_share(question: str, answer: str) -> None:
    assert 0.0 <= relevance(question, answer) <= 1.0
    assert relevance(question, question) == 1.0


def test_lengths_count_like_the_upstream_suite_s_javascript() -> None:
    assert js_length("日本") == 2
    assert js_length("𝄞") == 2  # UTF-16 surrogate pair, as String.length counts it
    assert stripped_markdown_length("# **_`-`_**\n> [x]( )") == 1
    assert stripped_markdown_length("- a\n- b") == 2


# -- assertions -------------------------------------------------------------------------------


def test_each_assertion_records_actual_and_expected() -> None:
    scenario = make(
        assertions={
            "minAnswerLength": 10,
            "relevanceThreshold": 0.5,
            "maxTotalMs": 500,
            "noFallback": True,
            "noEmptyMarkdown": True,
        }
    )
    checks = by_label(evaluate(scenario, run(answered(total_ms=900.0, fallbacks=["input:phase2"]))))
    assert checks["minAnswerLength[chatgpt]"] == Check(
        "minAnswerLength", True, js_length(ANSWER), ">= 10", "chatgpt"
    )
    # Keywords: how do read files asynchronously in python id (the nonce is not one).
    assert checks["relevanceThreshold[chatgpt]"].actual == 0.5  # read, files, in, python
    assert checks["maxTotalMs[chatgpt]"] == Check("maxTotalMs", False, 900.0, "<= 500", "chatgpt")
    assert checks["noFallback[chatgpt]"] == Check(
        "noFallback", False, ["input:phase2"], [], "chatgpt"
    )
    assert checks["noEmptyMarkdown[chatgpt]"].passed


def test_unset_assertions_are_not_checked() -> None:
    assert evaluate(make(), run(answered())) == []


def test_both_must_succeed_and_an_unexpected_error() -> None:
    scenario = make(provider="both", assertions={"bothMustSucceed": True, "minAnswerLength": 5})
    outcome = run(answered(), failed("gemini", "stuck", "gemini got stuck"))
    checks = by_label(evaluate(scenario, outcome))
    assert checks["bothMustSucceed"] == Check(
        "bothMustSucceed",
        False,
        {"chatgpt": True, "gemini": False},
        {"chatgpt": True, "gemini": True},
    )
    assert checks["ask[gemini]"] == Check(
        "ask", False, "stuck: gemini got stuck", "an answer", "gemini"
    )
    assert checks["minAnswerLength[chatgpt]"].passed
    assert "minAnswerLength[gemini]" not in checks  # nothing to measure


def test_an_expected_error_must_happen_with_its_message() -> None:
    scenario = make(expect={"error": "login_required", "errorMessage": ["log in", "Chrome"]})
    outcome = run(failed("chatgpt", "login_required", "Please log in to ChatGPT"))
    checks = evaluate(scenario, outcome)
    assert [(c.name, c.passed) for c in checks] == [
        ("expect.error", True),
        ("expect.errorMessage", True),
        ("expect.errorMessage", False),
    ]
    answered_instead = evaluate(scenario, run(answered()))
    assert answered_instead[0] == Check(
        "expect.error", False, "answered", "login_required", "chatgpt"
    )


def test_expectations_about_how_the_answer_was_obtained() -> None:
    scenario = make(
        setup={"requireExistingTab": True},
        expect={
            "tab": "session",
            "sameConversation": True,
            "inputPhase": 1,
            "codeBlock": True,
            "completion": "stop_gone_send_enabled",
        },
    )
    primer = answered(answer="Earlier answer.", url="https://chatgpt.com/c/1")
    outcome = run(
        answered(tab="session", input_phase=2, completion="stop_gone_send_enabled"),
        chatgpt=primer,
    )
    checks = by_label(evaluate(scenario, outcome))
    assert checks["expect.tab[chatgpt]"].passed
    assert checks["expect.inputPhase[chatgpt]"] == Check(
        "expect.inputPhase", False, 2, 1, "chatgpt"
    )
    assert checks["expect.codeBlock[chatgpt]"].passed
    assert checks["expect.completion[chatgpt]"].passed
    assert checks["expect.sameConversation[chatgpt]"].actual == {
        "same_url": True,
        "new_answer": True,
    }
    stale = run(answered(answer="Earlier answer.", tab="session"), chatgpt=primer)
    assert not by_label(evaluate(scenario, stale))["expect.sameConversation[chatgpt]"].passed


def test_a_failed_primer_is_reported_as_such() -> None:
    scenario = make(setup={"requireExistingTab": True})
    checks = evaluate(scenario, run(chatgpt=failed(code="login_required", message="log in")))
    assert checks == [
        Check("primer", False, "login_required: log in", "an answer (opens the chat)", "chatgpt")
    ]


def test_fake_evidence_compares_what_the_site_sent_line_by_line() -> None:
    sent = "Here is an answer.\n\n- **one**: first\n\nReference: fake-1"
    same = answered(
        answer="Here is an answer.\n\n- one: first\n\nReference: fake-1",
        fake=FakeEvidence(True, sent),
    )
    assert [c.passed for c in evaluate(make(), run(same))] == [True, True]
    stale = answered(answer="Here is an answer.\n\n- one: old", fake=FakeEvidence(True, sent))
    checks = by_label(evaluate(make(), run(stale)))
    assert checks["fake.answer[chatgpt]"].actual == (
        "line 2: got 'one: old', the site sent 'one: first'"
    )
    lost = answered(fake=FakeEvidence(False, None))
    assert by_label(evaluate(make(), run(lost)))["fake.received[chatgpt]"].passed is False


def test_live_runs_ignore_fake_expectations_and_assertions() -> None:
    scenario = make(
        assertions={"minAnswerLength": 10},
        fake={"expect": {"thinking": True}, "assertions": {"minAnswerLength": 100000}},
    )
    live = evaluate(scenario, run(answered(), live=True))
    assert [c.label for c in live] == ["minAnswerLength[chatgpt]"] and live[0].passed
    fake = by_label(evaluate(scenario, run(answered())))
    assert not fake["minAnswerLength[chatgpt]"].passed
    assert not fake["expect.thinking[chatgpt]"].passed


# -- the message --------------------------------------------------------------------------------


def test_the_failure_message_shows_every_check_and_the_answer_s_first_lines() -> None:
    scenario = make(name="Short one", assertions={"minAnswerLength": 500, "noFallback": True})
    long_answer = "\n".join(f"line {i}" for i in range(1, 11))
    outcome = run(answered(answer=long_answer))
    message = failure_message(scenario, outcome, evaluate(scenario, outcome))
    assert message.splitlines() == [
        "scenario s (Short one) failed 1 of 2 checks",
        "  question: How do I read files asynchronously in Python? ID:abc123",
        "  FAIL minAnswerLength[chatgpt]: actual 70, expected >= 500",
        "  ok   noFallback[chatgpt]: actual [], expected []",
        "  chatgpt answer, 70 chars (first 6 of 10 lines):",
        "    | line 1",
        "    | line 2",
        "    | line 3",
        "    | line 4",
        "    | line 5",
        "    | line 6",
    ]


def test_steps_fold_progress_phases_into_connect_input_send_wait_extract() -> None:
    marks = [
        StepMark("connect", 0.0),
        StepMark("input", 0.5),
        StepMark("send", 0.6),
        StepMark("waiting", 0.7),
        StepMark("thinking", 1.0),
        StepMark("streaming", 2.0, 10),
        StepMark("extracting", 3.0),
        StepMark("done", 3.25),
    ]
    spans = [(s.step, round(s.duration_ms)) for s in step_spans(marks)]
    assert spans == [
        ("connect", 500),
        ("input", 100),
        ("send", 100),
        ("wait", 2300),
        ("extract", 250),
    ]
    # An ask that failed while waiting ends its last step at the last mark it reported.
    assert [s.step for s in step_spans(marks[:5])] == ["connect", "input", "send", "wait"]


def test_a_retry_is_a_second_attempt_on_the_same_clock() -> None:
    stuck = [StepMark("connect", 0.0), StepMark("send", 0.2), StepMark("streaming", 0.3)]
    retry = [StepMark("connect", 1.5), StepMark("waiting", 1.7), StepMark("done", 2.0)]
    spans = step_spans(stuck + retry)
    assert [(s.step, s.attempt, round(s.duration_ms)) for s in spans] == [
        ("connect", 1, 200),
        ("send", 1, 100),
        ("wait", 1, 1200),  # the stuck wait lasts until the retry starts
        ("connect", 2, 200),
        ("wait", 2, 300),
    ]


# -- the relevance check against the fake sites' answers ----------------------------------------

CATALOGUE = Path(__file__).resolve().parents[3] / "scenarios"


def _relevance_scenarios() -> list[Any]:
    found = []
    for path in sorted(CATALOGUE.glob("*.json")):
        for scenario in parse_scenario_file(path.read_text(encoding="utf-8"), path.name).scenarios:
            threshold = scenario.assertions_for(live=False).relevance_threshold
            if threshold is not None:
                found.append(pytest.param(scenario, threshold, id=scenario.id))
    return found


@pytest.mark.parametrize(("scenario", "threshold"), _relevance_scenarios())
def test_each_catalogue_relevance_check_passes_the_fakes_answer_and_catches_an_off_topic_one(
    scenario: Scenario, threshold: float
) -> None:
    """The fakes answer with realistic texts chosen for the question, not the question's
    words handed back, so a relevance threshold means something against them: it passes the
    answer about the question and fails a fluent one about something else (what a site that
    misunderstood would say, ``Behaviour(off_topic=True)``)."""
    keyword_text = render_question(scenario.template, {})  # as evaluate() measures it
    for moment in (datetime(2026, 11, 23, tzinfo=UTC), datetime(2027, 2, 1, 8, 30, tzinfo=UTC)):
        asked = render_question(scenario.template, template_variables(moment, scenario.id))
        on_topic = relevance(keyword_text, answer_markdown(asked))
        off_topic = relevance(keyword_text, answer_markdown(asked, Behaviour(off_topic=True)))
        assert on_topic >= threshold > off_topic, (asked, on_topic, off_topic)
