"""Scenario checks (docs/flows.md#scenario-assertions, docs/flows.md#relevance-check and
``expect``), and the failure message. Pure.

Every check records its actual and expected value, passing or not, so a failure message and
the report show the whole picture, not only the first thing that went wrong.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from bridge.providers.results import Provider
from bridge.testing.scenarios.model import Assertions, Expect, Scenario, render_question
from bridge.testing.scenarios.outcome import ProviderOutcome, ScenarioOutcome

__all__ = [
    "Check",
    "evaluate",
    "extract_keywords",
    "failure_message",
    "js_length",
    "relevance",
    "stripped_markdown_length",
]

# The upstream suite's `extractKeywords` (docs/flows.md#relevance-check): English technical
# terms (dotted names kept whole) and katakana words, each at least two characters, lower-cased,
# without repeats.
_ENGLISH_TERM = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)*")
_KATAKANA_WORD = re.compile(r"[ァ-ヶー]+")
# noEmptyMarkdown (docs/flows.md#scenario-assertions): what is left once markdown punctuation
# is gone.
_MARKDOWN_NOISE = re.compile(r"[#*`\-_\[\]()>\n\s]")
_FENCED_BLOCK = re.compile(r"^```[^\n]*\n.*?^```", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Check:
    """One assertion of a scenario: its name, whether it passed, what was seen and expected."""

    name: str
    passed: bool
    actual: Any
    expected: Any
    provider: Provider | None = None

    @property
    def label(self) -> str:
        return f"{self.name}[{self.provider}]" if self.provider else self.name

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "provider": self.provider,
            "passed": self.passed,
            "actual": self.actual,
            "expected": self.expected,
        }


def extract_keywords(question: str) -> list[str]:
    found = [t.lower() for t in _ENGLISH_TERM.findall(question) if len(t) >= 2]
    found += [t for t in _KATAKANA_WORD.findall(question) if len(t) >= 2]
    return list(dict.fromkeys(found))


def relevance(question: str, answer: str) -> float:
    """The upstream suite's `calculateRelevance` (docs/flows.md#relevance-check): the share of the
    question's keywords found in the answer."""
    keywords = extract_keywords(question)
    if not keywords:
        return 1.0
    lowered = answer.lower()
    return sum(1 for k in keywords if k.lower() in lowered) / len(keywords)


def js_length(text: str) -> int:
    """``String.length`` in JavaScript (UTF-16 units), so thresholds written for the upstream
    suite mean the same here."""
    return len(text.encode("utf-16-le")) // 2


def stripped_markdown_length(answer: str) -> int:
    return len(_MARKDOWN_NOISE.sub("", answer))


def evaluate(scenario: Scenario, outcome: ScenarioOutcome) -> list[Check]:
    """Every check the scenario asks for, against what the run produced, in a stable order."""
    live = outcome.live
    assertions = scenario.assertions_for(live=live)
    expect = scenario.expect_for(live=live)
    # Template variables are uniqueness nonces (an ID the answer has no reason to repeat), so
    # relevance is measured against the question's own words; this can only raise the score.
    keyword_text = render_question(scenario.template, {})
    checks: list[Check] = []
    for provider, primed in outcome.primer.items():
        if not primed.answered:
            checks.append(
                Check("primer", False, _error_text(primed), "an answer (opens the chat)", provider)
            )
    if assertions.both_must_succeed:
        actual = {p: bool(o.answer) for p, o in outcome.providers.items()}
        checks.append(
            Check("bothMustSucceed", all(actual.values()), actual, dict.fromkeys(actual, True))
        )
    for provider, result in outcome.providers.items():
        expected_error = expect.errors.get(provider)
        if expected_error is not None:
            checks.extend(_error_checks(provider, result, expected_error, expect))
        elif not result.answered:
            checks.append(Check("ask", False, _error_text(result), "an answer", provider))
        else:
            checks.extend(_answer_checks(provider, result, assertions, keyword_text))
            checks.extend(_expect_checks(provider, result, expect, outcome))
            if result.fake is not None:
                checks.extend(_fake_checks(provider, result))
        if result.capture is not None:
            # docs/captures.md: bridge reads the page as the capture shows it.
            failed = [f.line() for f in result.capture_findings if not f.ok]
            seen = failed or "every check passed"
            checks.append(Check("capture", not failed, seen, "every check passed", provider))
    return checks


def _error_text(outcome: ProviderOutcome) -> str:
    if outcome.answered:
        return "answered"
    return f"{outcome.error_code}: {outcome.error_message}"


def _error_checks(
    provider: Provider, outcome: ProviderOutcome, code: str, expect: Expect
) -> list[Check]:
    actual = outcome.error_code if not outcome.answered else "answered"
    checks = [Check("expect.error", actual == code, actual, code, provider)]
    message = (outcome.error_message or "").lower()
    for text in expect.error_message:
        checks.append(
            Check(
                "expect.errorMessage",
                text.lower() in message,
                outcome.error_message,
                f"contains {text!r}",
                provider,
            )
        )
    return checks


def _answer_checks(
    provider: Provider, outcome: ProviderOutcome, assertions: Assertions, keyword_text: str
) -> list[Check]:
    result = outcome.result
    assert result is not None
    answer = result.answer
    checks: list[Check] = []
    if assertions.min_answer_length is not None:
        length = js_length(answer)
        need = assertions.min_answer_length
        checks.append(Check("minAnswerLength", length >= need, length, f">= {need}", provider))
    if assertions.relevance_threshold is not None:
        score = round(relevance(keyword_text, answer), 2)
        need_score = assertions.relevance_threshold
        checks.append(
            Check("relevanceThreshold", score >= need_score, score, f">= {need_score}", provider)
        )
    if assertions.max_total_ms is not None:
        total = round(result.timings.total_ms, 1)
        limit = assertions.max_total_ms
        checks.append(Check("maxTotalMs", total <= limit, total, f"<= {limit:g}", provider))
    if assertions.no_fallback:
        used = list(result.used.fallbacks)
        checks.append(Check("noFallback", not used, used, [], provider))
    if assertions.no_empty_markdown:
        left = stripped_markdown_length(answer)
        checks.append(Check("noEmptyMarkdown", left > 10, left, "> 10", provider))
    return checks


def _expect_checks(
    provider: Provider, outcome: ProviderOutcome, expect: Expect, run: ScenarioOutcome
) -> list[Check]:
    result = outcome.result
    assert result is not None
    used = result.used
    checks: list[Check] = []
    wanted: list[tuple[str, Any, Any]] = [
        ("tab", expect.tab, used.tab),
        ("thinking", expect.thinking, used.thinking),
        ("skippedThinking", expect.skipped_thinking, used.skipped_thinking),
        ("retries", expect.retries, used.retries),
        ("broughtToFront", expect.brought_to_front, used.brought_to_front),
        ("focusEmulated", expect.focus_emulated, used.focus_emulated),
        ("inputPhase", expect.input_phase, used.input_phase),
        ("completion", expect.completion, used.completion),
    ]
    for name, expected, actual in wanted:
        if expected is not None:
            checks.append(Check(f"expect.{name}", actual == expected, actual, expected, provider))
    for kind, wanted_count in (("image", expect.images), ("file", expect.files)):
        if wanted_count is not None:  # docs/sites.md#outputs: what came back, saved
            count = sum(1 for o in used.outputs if o.get("kind") == kind)
            name = f"expect.{kind}s"
            checks.append(Check(name, count == wanted_count, count, wanted_count, provider))
    if expect.code_block:
        has_block = _FENCED_BLOCK.search(result.answer) is not None
        checks.append(Check("expect.codeBlock", has_block, has_block, True, provider))
    if expect.research_sources is not None:
        research = used.research
        found = len(research.get("sources") or []) if research.get("state") == "done" else 0
        need = expect.research_sources
        checks.append(Check("expect.researchSources", found >= need, found, f">= {need}", provider))
    if expect.same_conversation:
        primed = run.primer.get(provider)
        before = primed.result if primed is not None else None
        actual_same = {
            "same_url": before is not None and before.url == result.url,
            "new_answer": before is not None and before.answer != result.answer,
        }
        checks.append(
            Check(
                "expect.sameConversation",
                all(actual_same.values()),
                actual_same,
                {"same_url": True, "new_answer": True},
                provider,
            )
        )
    return checks


def _fake_checks(provider: Provider, outcome: ProviderOutcome) -> list[Check]:
    """The fake site's own record against what bridge returned: nothing lost or stale."""
    from bridge.fakes.behaviour import answer_lines  # only fake runs have evidence

    evidence = outcome.fake
    assert evidence is not None
    checks = [Check("fake.received", evidence.received, evidence.received, True, provider)]
    if evidence.sent_answer is not None:
        sent = answer_lines(evidence.sent_answer)
        got = answer_lines(outcome.answer)
        same = got == sent
        actual: Any = "identical" if same else _first_difference(got, sent)
        checks.append(Check("fake.answer", same, actual, "the lines the site sent", provider))
    return checks


def _first_difference(got: list[str], sent: list[str]) -> str:
    for index, (a, b) in enumerate(zip(got, sent, strict=False)):
        if a != b:
            return f"line {index + 1}: got {a[:60]!r}, the site sent {b[:60]!r}"
    return f"{len(got)} lines, the site sent {len(sent)}"


def failure_message(
    scenario: Scenario,
    outcome: ScenarioOutcome,
    checks: list[Check],
    *,
    answer_lines_shown: int = 6,
) -> str:
    """Readable on its own: every check with actual and expected, then each answer's start."""
    failed = [c for c in checks if not c.passed]
    lines = [
        f"scenario {scenario.id} ({scenario.name}) failed {len(failed)} of {len(checks)} checks",
        f"  question: {outcome.question}",
    ]
    for check in checks:
        mark = "ok  " if check.passed else "FAIL"
        lines.append(
            f"  {mark} {check.label}: actual {_show(check.actual)}, "
            f"expected {_show(check.expected)}"
        )
    for provider, result in outcome.providers.items():
        if not result.answered:
            continue
        body = result.answer.splitlines() or [""]
        shown = body[:answer_lines_shown]
        more = f" (first {len(shown)} of {len(body)} lines)" if len(body) > len(shown) else ""
        lines.append(f"  {provider} answer, {js_length(result.answer)} chars{more}:")
        lines.extend(f"    | {line[:160]}" for line in shown)
    if scenario.setup.instruction and outcome.live:
        lines.append(f"  setup: {scenario.setup.instruction}")
    return "\n".join(lines)


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value if len(value) <= 200 else value[:197] + "..."
    return json.dumps(value, ensure_ascii=False, default=str)
