"""The scenario plugin, black-box: pytest runs inside pytest on scenario files we write.

The inner runs use ``stub_conftest.py`` (a bridge that answers at once, no browser), so these
tests pin the plugin's own behaviour: collection, markers, messages, errors, reports, Allure,
the live login skip. ``scenarios/`` itself runs the same plugin against the real fakes.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]

STUB_CONFTEST = Path(__file__).with_name("stub_conftest.py")
INI = """
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = session
asyncio_default_test_loop_scope = session
filterwarnings =
    error
    # pytester runs in this process, where bridge (an entry-point plugin) is already imported
    ignore:Module already imported so cannot be rewritten:pytest.PytestAssertRewriteWarning
addopts = -p no:cacheprovider --strict-markers
"""
QUESTION = "How do I read files asynchronously in Python? ID:{{timestamp}}"


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("BRIDGE_REPORTS_DIR", raising=False)
    monkeypatch.delenv("STUB_LOGGED_OUT", raising=False)
    pytester.makeini(INI)
    pytester.makeconftest(STUB_CONFTEST.read_text(encoding="utf-8"))
    return pytester


def scenario(scenario_id: str, provider: str = "chatgpt", **fields: Any) -> dict[str, Any]:
    return {
        "id": scenario_id,
        "name": scenario_id.replace("-", " ").title(),
        "provider": provider,
        "tags": fields.pop("tags", []),
        "question": {"template": fields.pop("question", QUESTION)},
        **fields,
    }


def write(pytester: pytest.Pytester, relative: str, *scenarios: dict[str, Any]) -> Path:
    path = pytester.path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": "1.0.0", "scenarios": list(scenarios)}, indent=2))
    return path


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stdout.lines if "::" in line]


def only_report(pytester: pytest.Pytester) -> dict[str, Any]:
    reports = sorted((pytester.path / "reports").glob("*.json"))
    assert len(reports) == 1, reports
    data: dict[str, Any] = json.loads(reports[0].read_text(encoding="utf-8"))
    return data


def by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in report["results"]}


# -- collection -------------------------------------------------------------------------------


def test_each_scenario_is_a_test_named_by_its_id(project: pytest.Pytester) -> None:
    write(project, "scenarios/smoke.json", scenario("alpha"), scenario("beta"))
    write(project, "team/nested/team-scenarios.json", scenario("gamma", "gemini"))
    (project.path / "data").mkdir()
    (project.path / "data" / "settings.json").write_text('{"not": "scenarios"}')
    result = project.runpytest("--collect-only", "-q")
    assert collected(result) == [
        "scenarios/smoke.json::alpha",
        "scenarios/smoke.json::beta",
        "team/nested/team-scenarios.json::gamma",
    ]


def test_one_file_runs_alone_and_a_file_elsewhere_runs_from_any_directory(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, "scenarios/smoke.json", scenario("alpha"), scenario("beta"))
    team = write(project, "shared/checks.json", scenario("team-check", "gemini"))
    project.runpytest("scenarios/smoke.json").assert_outcomes(passed=2)
    elsewhere = project.mkdir("somewhere-else")
    monkeypatch.chdir(elsewhere)
    # Named explicitly, any JSON file is a scenario file, whatever its name.
    result = project.runpytest(str(team), "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*checks.json::team-check PASSED*"])


def test_tags_are_markers_for_m_and_k_and_providers_mark_themselves(
    project: pytest.Pytester,
) -> None:
    write(
        project,
        "scenarios/mixed.json",
        scenario("chatgpt-basic", tags=["smoke", "chatgpt"]),
        scenario("gemini-basic", "gemini", tags=["smoke", "gemini"]),
        scenario("gemini-thinking", "gemini", tags=["regression", "thinking"]),
        scenario("both-at-once", "both", tags=["parallel"]),
        scenario("team-only", tags=["team-nightly"]),
        scenario("no-extension", setup={"extensionConnected": False}),
    )

    def selected(*args: str) -> list[str]:
        result = project.runpytest("--collect-only", "-q", *args)
        assert result.ret == 0, result.stdout.str()
        return [line.split("::")[1] for line in collected(result)]

    assert selected("-m", "smoke") == ["chatgpt-basic", "gemini-basic"]
    # A parallel scenario asks Gemini too, so it is selected by the provider marker.
    assert selected("-m", "gemini and not thinking") == ["gemini-basic", "both-at-once"]
    assert selected("-k", "gemini-thinking") == ["gemini-thinking"]
    # --strict-markers is on: a team's own tag registers itself.
    assert selected("-m", "team-nightly") == ["team-only"]
    # Scenarios that drive a browser are e2e tests, like the rest of the suite's.
    assert selected("-m", "scenario and not e2e") == ["no-extension"]


def test_the_upstream_scenario_file_runs_unchanged(project: pytest.Pytester) -> None:
    # Upstream chrome-ai-bridge's scripts/test-scenarios.json, verbatim in shape and fields: the
    # chrome-ai-bridge spec's test-scenarios.json format (docs/flows.md#scenario-format).
    upstream = {
        "version": "1.0.0",
        "scenarios": [
            {
                "id": "chatgpt-existing-chat",
                "name": "ChatGPT 既存チャット再接続",
                "provider": "chatgpt",
                "tags": ["regression", "chatgpt"],
                "setup": {
                    "requireExistingTab": True,
                    "instruction": "ChatGPTで会話を開いた状態で実行",
                },
                "question": {"template": "Pythonのリスト内包表記を1文で。ID:{{timestamp}}"},
                "assertions": {
                    "minAnswerLength": 20,
                    "relevanceThreshold": 0.2,
                    "noFallback": True,
                },
            },
            {
                "id": "parallel-query",
                "name": "ChatGPT+Gemini 並列クエリ",
                "provider": "both",
                "tags": ["smoke", "parallel"],
                "question": {"template": "HTTPステータスコード404の意味を1文で。ID:{{timestamp}}"},
                "assertions": {"bothMustSucceed": True, "minAnswerLength": 10},
            },
        ],
    }
    (project.path / "test-scenarios.json").write_text(json.dumps(upstream, ensure_ascii=False))
    project.runpytest().assert_outcomes(passed=2)


# -- failures and invalid files ---------------------------------------------------------------


def test_a_failing_scenario_lists_every_check_and_the_answer_s_first_lines(
    project: pytest.Pytester,
) -> None:
    answer = "ok\n\nsecond line\nthird line"
    write(
        project,
        "scenarios/short.json",
        scenario(
            "short-answer",
            assertions={"minAnswerLength": 200, "relevanceThreshold": 0.9},
            fake={"chatgpt": {"answer": answer}},
        ),
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "scenario short-answer (Short Answer) failed 2 of 4 checks" in out
    assert "FAIL minAnswerLength[chatgpt]: actual 26, expected >= 200" in out
    assert "FAIL relevanceThreshold[chatgpt]: actual 0.12, expected >= 0.9" in out
    assert "ok   fake.received[chatgpt]: actual true, expected true" in out
    assert "ok   fake.answer[chatgpt]: actual identical" in out
    assert "question: How do I read files asynchronously in Python? ID:" in out
    assert "chatgpt answer, 26 chars:" in out
    assert "    | ok\n    | \n    | second line\n    | third line" in out
    assert "Traceback" not in out and "def _scenario_test" not in out  # the message only


def test_the_relevance_check_catches_an_off_topic_answer_and_nothing_else_does(
    project: pytest.Pytester,
) -> None:
    """A scenario can ask the fake for a fluent answer about something else (``off_topic``):
    only its relevance check fails; the same scenario answered on topic passes."""
    checks = {"minAnswerLength": 20, "relevanceThreshold": 0.3, "noEmptyMarkdown": True}
    write(
        project,
        "scenarios/topic.json",
        scenario("on-topic", assertions=checks),
        scenario("off-topic", assertions=checks, fake={"chatgpt": {"off_topic": True}}),
        scenario(
            "off-topic-queued",
            assertions=checks,
            fake={"chatgpt": {"queue": [{"off_topic": True}]}},
        ),
    )
    result = project.runpytest()
    result.assert_outcomes(passed=1, failed=2)
    records = by_id(only_report(project))
    assert records["on-topic"]["outcome"] == "passed"
    for name in ("off-topic", "off-topic-queued"):
        failed = [c for c in records[name]["checks"] if not c["passed"]]
        assert [(c["name"], c["provider"]) for c in failed] == [("relevanceThreshold", "chatgpt")]
        on_topic = next(c for c in records["on-topic"]["checks"] if c["name"] == failed[0]["name"])
        assert failed[0]["actual"] < 0.3 <= on_topic["actual"]
        assert {c["name"] for c in records[name]["checks"]} >= {"fake.answer", "minAnswerLength"}
    result.stdout.fnmatch_lines(
        ["*FAIL relevanceThreshold[[]chatgpt[]]: actual 0.*, expected >= 0.3"]
    )


def test_an_unexpected_error_is_a_failed_check_with_the_typed_error(
    project: pytest.Pytester,
) -> None:
    write(
        project,
        "scenarios/limited.json",
        scenario("limited", fake={"chatgpt": {"queue": [{"state": "rate_limited"}]}}),
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*FAIL ask?chatgpt?: actual rate_limited: chatgpt is rate limiting*, expected an answer"]
    )


INVALID = {
    "bad JSON": ('{"scenarios": [', "scenarios/bad.json: not valid JSON: Expecting value"),
    "unknown provider": (
        scenario("x", provider="claude"),
        "scenarios/bad.json: scenario 'x' (scenarios[0]): field 'provider': must be one of "
        'chatgpt, gemini, both, not a string "claude"',
    ),
    "unknown assertion": (
        scenario("x", assertions={"minLength": 3}),
        "scenarios/bad.json: scenario 'x' (scenarios[0]): field 'assertions.minLength': unknown "
        "assertion 'minLength'; known: bothMustSucceed, minAnswerLength, relevanceThreshold, "
        "maxTotalMs, noFallback, noEmptyMarkdown",
    ),
    "duplicate id": (
        [scenario("same"), scenario("same", "gemini")],
        "scenarios/bad.json: scenario 'same' (scenarios[1]): field 'id': duplicate id 'same'",
    ),
    "bad fake setting": (
        scenario("x", fake={"chatgpt": {"state": "asleep"}}),
        "scenario 'x' (scenarios[0]): field 'fake.chatgpt.state': state must be one of ok, "
        "logged_out, rate_limited, error_turn, stuck, challenge, no_request, rollback, "
        "not 'asleep'",
    ),
    "forbidden question": (
        scenario("x", question="Hello"),
        "field 'question.template': is a question docs/flows.md#forbidden-questions forbids",
    ),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_an_invalid_file_fails_collection_naming_file_scenario_and_field(
    project: pytest.Pytester, case: str
) -> None:
    content, message = INVALID[case]
    path = project.path / "scenarios" / "bad.json"
    path.parent.mkdir()
    if isinstance(content, str):
        path.write_text(content)
    else:
        items = content if isinstance(content, list) else [content]
        path.write_text(json.dumps({"version": "1", "scenarios": items}))
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ERROR collecting scenarios/bad.json*"])
    assert message in result.stdout.str()
    assert "Traceback" not in result.stdout.str()


def test_ids_are_unique_across_files(project: pytest.Pytester) -> None:
    write(project, "scenarios/a.json", scenario("shared-id"))
    write(project, "scenarios/b.json", scenario("shared-id", "gemini"))
    result = project.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert (
        "scenarios/b.json: scenario 'shared-id' (scenarios[0]): field 'id': duplicate id "
        "'shared-id': scenarios/a.json defines it too" in result.stdout.str()
    )


# -- expectations and modes -------------------------------------------------------------------


def test_expected_errors_and_mode_only_scenarios(project: pytest.Pytester) -> None:
    write(
        project,
        "scenarios/modes.json",
        scenario(
            "login-wall",
            fakeOnly="needs a logged-out site",
            expect={"error": "login_required", "errorMessage": "log in"},
            fake={"chatgpt": {"state": "logged_out"}},
        ),
        scenario("real-only", liveOnly="needs the real site's model picker"),
    )
    result = project.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED*live only (run with --live): needs the real site's model picker"]
    )
    live = project.runpytest("--live", "-rs")
    live.assert_outcomes(passed=1, skipped=1)
    live.stdout.fnmatch_lines(["SKIPPED*fake sites only: needs a logged-out site"])


def test_live_missing_login_skips_that_provider_once_with_how_to_fix(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_LOGGED_OUT", "chatgpt")
    write(
        project,
        "scenarios/live.json",
        scenario("chatgpt-one"),
        scenario("chatgpt-two"),
        scenario("gemini-one", "gemini"),
        scenario("both-one", "both"),
    )
    result = project.runpytest("--live", "-rs")
    result.assert_outcomes(passed=1, skipped=3)
    assert "failed" not in result.stdout.lines[-1]
    result.stdout.fnmatch_lines(
        ["SKIPPED*not logged in to chatgpt: ChatGPT (chatgpt.com) shows its login page: log in*"]
    )
    records = by_id(only_report(project))
    assert records["chatgpt-one"]["providers"]["chatgpt"]["error"]["code"] == "login_required"
    for later in ("chatgpt-two", "both-one"):  # skipped before asking: one attempt only
        assert records[later]["outcome"] == "skipped" and "providers" not in records[later]
    assert records["gemini-one"]["outcome"] == "passed"


# -- reports ----------------------------------------------------------------------------------


def test_the_report_holds_each_outcome_with_checks_timings_answer_and_summary(
    project: pytest.Pytester,
) -> None:
    write(
        project,
        "scenarios/report.json",
        scenario("passes", assertions={"minAnswerLength": 20}),
        scenario("fails", "gemini", assertions={"minAnswerLength": 100000}),
        scenario("skipped", liveOnly="real sites only"),
    )
    result = project.runpytest()
    result.assert_outcomes(passed=1, failed=1, skipped=1)
    report = only_report(project)
    result.stdout.fnmatch_lines(["bridge scenarios: report */reports/*.json"])
    assert report["format"] == 2 and report["status"] == "finished" and report["mode"] == "fake"
    assert report["summary"] == {
        "total": 3,
        "passed": 1,
        "failed": 1,
        "skipped": 1,
        "error": 0,
        "planned": 3,
        "not_run": 0,
    }
    records = by_id(report)
    passed = records["passes"]
    assert passed["nodeid"] == "scenarios/report.json::passes"
    assert passed["file"] == "scenarios/report.json"
    assert passed["question"].startswith("How do I read files asynchronously in Python? ID:")
    chatgpt = passed["providers"]["chatgpt"]
    assert chatgpt["answer_preview"].startswith("Python's built-in file API is blocking")
    assert set(chatgpt["timings"]) == {
        "connect_ms",
        "wait_input_ms",
        "input_ms",
        "send_ms",
        "wait_response_ms",
        "total_ms",
    }
    assert [s["step"] for s in chatgpt["steps"]] == ["connect", "input", "send", "wait", "extract"]
    assert passed["checks"][0] == {
        "name": "minAnswerLength",
        "provider": "chatgpt",
        "passed": True,
        "actual": chatgpt["answer_length"],
        "expected": ">= 20",
    }
    failed = records["fails"]
    assert failed["outcome"] == "failed"
    assert "FAIL minAnswerLength[gemini]" in failed["message"]
    assert records["skipped"]["message"] == "live only (run with --live): real sites only"


def test_an_interrupted_run_leaves_a_valid_report_of_what_finished(
    project: pytest.Pytester,
) -> None:
    write(
        project,
        "scenarios/stop.json",
        scenario("first"),
        scenario("stopped-here", question="Explain INTERRUPT handling in Python. ID:{{timestamp}}"),
        scenario("never-run"),
    )
    result = project.runpytest(no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    report = only_report(project)
    assert report["status"] == "interrupted"
    assert [r["id"] for r in report["results"]] == ["first"]
    assert report["summary"]["planned"] == 3 and report["summary"]["not_run"] == 2


def test_under_xdist_one_report_holds_every_worker_s_results(project: pytest.Pytester) -> None:
    write(project, "scenarios/a.json", *(scenario(f"a-{i}") for i in range(3)))
    write(project, "scenarios/b.json", *(scenario(f"b-{i}", "gemini") for i in range(3)))
    result = project.runpytest_subprocess("-n", "2")
    result.assert_outcomes(passed=6)
    report = only_report(project)
    assert report["status"] == "finished" and report["summary"]["passed"] == 6
    assert {r["worker"] for r in report["results"]} <= {"gw0", "gw1"}
    assert len({r["nodeid"] for r in report["results"]}) == 6


def test_junit_xml_names_each_scenario(project: pytest.Pytester) -> None:
    write(
        project,
        "scenarios/j.json",
        scenario("good"),
        scenario("bad", assertions={"minAnswerLength": 100000}),
    )
    project.runpytest("--junitxml=junit.xml")
    cases = ET.parse(project.path / "junit.xml").getroot().iter("testcase")
    outcomes = {c.get("name"): [child.tag for child in c] for c in cases}
    assert outcomes == {"good": [], "bad": ["failure"]}


def test_allure_results_have_steps_attachments_and_failure_evidence(
    project: pytest.Pytester,
) -> None:
    write(
        project,
        "scenarios/allure.json",
        scenario("both-ok", "both", description="Both providers answer."),
        scenario("chatgpt-broken", fake={"chatgpt": {"queue": [{"state": "error_turn"}]}}),
    )
    project.runpytest("--alluredir=allure").assert_outcomes(passed=1, failed=1)
    results = {
        r["name"]: r
        for r in (
            json.loads(p.read_text()) for p in (project.path / "allure").glob("*-result.json")
        )
    }
    ok = results["Both Ok [both-ok]"]
    assert ok["description"] == "Both providers answer."
    assert [s["name"] for s in ok["steps"]] == ["chatgpt", "gemini", "checks: 4 of 4 passed"]
    steps = [s["name"].split(" ")[0] for s in ok["steps"][0]["steps"]]
    assert steps == ["connect", "input", "send", "wait", "extract"]
    names = {a["name"] for a in ok["attachments"]}
    assert {"question", "chatgpt answer", "chatgpt timings", "gemini answer", "checks"} <= names
    broken = results["Chatgpt Broken [chatgpt-broken]"]
    assert broken["status"] == "failed"
    provider_step = broken["steps"][0]
    assert provider_step["status"] == "failed"
    assert provider_step["steps"][-1]["status"] == "failed"
    assert "error_turn" in provider_step["steps"][-1]["statusDetails"]["message"]
    assert broken["steps"][-1]["name"] == "checks: 0 of 1 passed"
    assert broken["steps"][-1]["status"] == "failed"
    kinds = {a["name"]: a["type"] for a in broken["attachments"]}
    assert kinds["chatgpt tab 1 screenshot"] == "image/png"
    assert kinds["chatgpt tab 1 DOM"] == "text/html"


def test_bridge_reports_option_chooses_the_report_directory(project: pytest.Pytester) -> None:
    write(project, "scenarios/one.json", scenario("only"))
    result = project.runpytest("--bridge-reports", "elsewhere")
    result.assert_outcomes(passed=1)
    reports = list((project.path / "elsewhere").glob("*.json"))
    assert len(reports) == 1
    assert json.loads(reports[0].read_text())["summary"]["passed"] == 1
    assert not list((project.path / "reports").glob("*.json"))
