"""Installing bridge must not change anyone else's test run (pytester, in-process, no browser).

A project of a user's own, with JSON files under ``scenarios/`` that are not bridge's, and
fixtures that happen to be called ``tab`` and ``relay``, runs exactly as it would without
bridge: no scenario items, no collection errors, and its async tests on the event loop its
pytest-asyncio settings give them. Bridge's own scenario files and fixtures still work.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

pytest_plugins = ["pytester"]

INI = """
[pytest]
asyncio_mode = {mode}
asyncio_default_fixture_loop_scope = function
asyncio_default_test_loop_scope = function
filterwarnings =
    error
    # pytester runs in this process, where bridge (an entry-point plugin) is already imported
    ignore:Module already imported so cannot be rewritten:pytest.PytestAssertRewriteWarning
addopts = -p no:cacheprovider --strict-markers
{extra}
"""

# JSON files of other tools (or none at all) where bridge looks for scenario files.
FOREIGN_JSON = {
    "scenarios/data.json": '{"rows": [1, 2]}',
    "scenarios/list.json": "[1, 2, 3]",
    "scenarios/name.json": '{"name": "x"}',
    "scenarios/empty.json": "",
    "scenarios/notes.json": "not JSON at all {",
    "scenarios/load-test.json": '{"scenarios": [{"name": "checkout", "flow": []}]}',
    "fixtures/test-scenarios.json": '{"scenarios": [{"name": "login", "steps": ["open"]}]}',
    "fixtures/more-scenarios.json": '{"config": {}, "scenarios": []}',
}

USER_CONFTEST = """
import asyncio

import pytest
import pytest_asyncio


@pytest_asyncio.fixture
async def tab():
    return asyncio.get_running_loop()


@pytest.fixture
def relay():
    return "the user's relay"


@pytest_asyncio.fixture
async def loop_probe():
    return asyncio.get_running_loop()
"""

USER_TESTS = """
import asyncio

import pytest

LOOPS = []


{mark}
async def test_own_async_tab_shares_the_test_s_loop(tab):
    assert tab is asyncio.get_running_loop()


{mark}
async def test_own_sync_relay_keeps_the_function_loop(relay, loop_probe):
    assert relay == "the user's relay"
    assert loop_probe is asyncio.get_running_loop()


{mark}
async def test_first_loop(relay, tab):
    LOOPS.append(asyncio.get_running_loop())


{mark}
async def test_second_loop_is_a_new_one(relay, tab):
    LOOPS.append(asyncio.get_running_loop())
    assert len(LOOPS) == 2 and LOOPS[0] is not LOOPS[1]


def test_sync_with_relay(relay):
    assert relay == "the user's relay"
"""
USER_IDS = [
    "test_user.py::test_own_async_tab_shares_the_test_s_loop",
    "test_user.py::test_own_sync_relay_keeps_the_function_loop",
    "test_user.py::test_first_loop",
    "test_user.py::test_second_loop_is_a_new_one",
    "test_user.py::test_sync_with_relay",
]

QUESTION = "How do I read files asynchronously in Python? ID:{{timestamp}}"


def bridge_file(*ids: str, **fields: Any) -> str:
    scenarios = [
        {"id": i, "provider": "chatgpt", "question": {"template": QUESTION}, **fields} for i in ids
    ]
    return json.dumps({"version": "1.0.0", "scenarios": scenarios})


def make_project(pytester: pytest.Pytester, mode: str = "auto", extra: str = "") -> None:
    pytester.makeini(INI.format(mode=mode, extra=extra))
    for relative, text in FOREIGN_JSON.items():
        path = pytester.path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (pytester.path / "scenarios" / "binary.json").write_bytes(b"\xff\xfe\x00junk")


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stdout.lines if "::" in line]


@pytest.mark.parametrize("mode", ["strict", "auto"])
def test_a_user_project_runs_as_without_bridge(pytester: pytest.Pytester, mode: str) -> None:
    make_project(pytester, mode)
    pytester.makeconftest(USER_CONFTEST)
    mark = "@pytest.mark.asyncio" if mode == "strict" else ""
    pytester.makepyfile(test_user=USER_TESTS.format(mark=mark))

    listing = pytester.runpytest("--collect-only", "-q")
    assert listing.ret == pytest.ExitCode.OK, listing.stdout.str()
    assert collected(listing) == USER_IDS

    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=len(USER_IDS))
    assert result.ret == pytest.ExitCode.OK
    assert "scenario" not in result.stdout.str().lower()


def test_a_bridge_shaped_file_is_collected_beside_foreign_ones(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    (pytester.path / "scenarios" / "smoke.json").write_text(bridge_file("alpha", "beta"))
    (pytester.path / "team").mkdir()
    (pytester.path / "team" / "team-scenarios.json").write_text(bridge_file("gamma"))
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert collected(result) == [
        "scenarios/smoke.json::alpha",
        "scenarios/smoke.json::beta",
        "team/team-scenarios.json::gamma",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"version": "1", "scenarios": [{"id": "x", "provider": "claude"}]}',
            "scenarios/broken.json: scenario 'x' (scenarios[0]): field 'provider': must be one "
            'of chatgpt, gemini, both, not a string "claude"',
        ),
        (
            '{"scenarios": [{"id": "x", "provider": "chatgpt", "question": {"template": "Why '
            'do Python decorators exist?"}}], "verison": "1"}',
            "scenarios/broken.json: field 'verison': unknown field 'verison'",
        ),
        ('{"scenarios": [{"id": "x",', "scenarios/broken.json: not valid JSON"),
    ],
    ids=["bad provider", "top-level typo", "half-written"],
)
def test_a_bridge_shaped_but_invalid_file_still_fails_collection_precisely(
    pytester: pytest.Pytester, text: str, message: str
) -> None:
    make_project(pytester)
    (pytester.path / "scenarios" / "broken.json").write_text(text)
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ERROR collecting scenarios/broken.json*"])
    assert message in result.stdout.str()
    # Only the bridge-shaped file fails; the foreign ones stay silent.
    assert re.findall(r"ERROR collecting (\S+)", result.stdout.str()) == ["scenarios/broken.json"]


def test_configured_paths_hold_scenario_files_whatever_their_name_or_shape(
    pytester: pytest.Pytester,
) -> None:
    make_project(pytester, extra="bridge_scenario_paths = checks extra/one.json")
    (pytester.path / "checks" / "nested").mkdir(parents=True)
    (pytester.path / "checks" / "team.json").write_text(bridge_file("team-check"))
    (pytester.path / "checks" / "nested" / "more.json").write_text(bridge_file("nested-check"))
    (pytester.path / "extra").mkdir()
    (pytester.path / "extra" / "one.json").write_text(bridge_file("one-check"))
    (pytester.path / "extra" / "two.json").write_text(bridge_file("not-configured"))
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert sorted(collected(result)) == [
        "checks/nested/more.json::nested-check",
        "checks/team.json::team-check",
        "extra/one.json::one-check",
    ]

    # Under a configured path every JSON file is meant as a scenario file: a wrong one says so.
    (pytester.path / "checks" / "odd.json").write_text('{"rows": [1, 2]}')
    failed = pytester.runpytest("--collect-only", "-q")
    assert failed.ret == pytest.ExitCode.INTERRUPTED
    assert "checks/odd.json: field 'rows': unknown field 'rows'" in failed.stdout.str()


def test_configured_paths_from_pyproject_toml(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml(
        """
        [tool.pytest.ini_options]
        asyncio_default_fixture_loop_scope = "function"
        filterwarnings = [
            "error",
            "ignore:Module already imported so cannot be rewritten:pytest.PytestAssertRewriteWarning",
        ]
        addopts = "-p no:cacheprovider --strict-markers"
        bridge_scenario_paths = ["team checks"]
        """
    )
    (pytester.path / "team checks").mkdir()
    (pytester.path / "team checks" / "nightly.json").write_text(bridge_file("nightly"))
    (pytester.path / "team checks" / "data.json").write_text("[1, 2, 3]")
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert collected(result) == ["team checks/nightly.json::nightly"]
    assert "team checks/data.json: must be a JSON object, not a list" in result.stdout.str()


def test_the_ini_option_is_documented_in_help(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI.format(mode="auto", extra=""))
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*bridge_scenario_paths*"])


# -- which tests bridge moves onto its session loop --------------------------------------------

SHOW_LOOP_SCOPES = """
import pytest

def pytest_collection_finish(session):
    for item in session.items:
        marker = item.get_closest_marker("asyncio")
        scope = None if marker is None else marker.kwargs.get("loop_scope", "default")
        print(f"LOOP {item.nodeid} {scope}")
"""

SUBCLASS_CONFTEST = """
import pytest_asyncio

@pytest_asyncio.fixture
async def tab(tab):  # wraps bridge's own tab: bridge's fixture is still in use
    return tab

@pytest_asyncio.fixture
async def helper(new_tab):  # bridge's new_tab, through a fixture of the user's
    return new_tab
"""

OWN_CONFTEST = """
import pytest, pytest_asyncio

@pytest_asyncio.fixture
async def tab():
    return "own"

@pytest.fixture
def relay():
    return "own"
"""


def test_only_tests_using_bridge_s_own_fixtures_move_to_the_session_loop(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(INI.format(mode="auto", extra=""))
    pytester.makeconftest(SHOW_LOOP_SCOPES)
    pytester.makepyfile(
        **{
            "uses_bridge/test_b.py": (
                "async def test_bridge_tab(tab): pass\n"
                "async def test_bridge_relay(relay): pass\n"
                "async def test_nothing_of_bridge(): pass\n"
            ),
            "wraps/conftest.py": SUBCLASS_CONFTEST,
            "wraps/test_w.py": (
                "async def test_wrapped_tab(tab): pass\n"
                "async def test_through_helper(helper): pass\n"
            ),
            "own/conftest.py": OWN_CONFTEST,
            "own/test_o.py": (
                "async def test_own_tab(tab): pass\n"
                "async def test_own_relay(relay): pass\n"
                "import pytest\n"
                "@pytest.mark.asyncio(loop_scope='module')\n"
                "async def test_explicit_scope(tab): pass\n"
            ),
        }
    )
    # --collect-only: nothing is set up, so no browser starts.
    result = pytester.runpytest("--collect-only", "-q", "-s")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    scopes = dict(line.split()[1:] for line in result.stdout.lines if line.startswith("LOOP "))
    assert scopes == {
        "uses_bridge/test_b.py::test_bridge_tab": "session",
        "uses_bridge/test_b.py::test_bridge_relay": "session",
        "uses_bridge/test_b.py::test_nothing_of_bridge": "default",
        "wraps/test_w.py::test_wrapped_tab": "session",
        "wraps/test_w.py::test_through_helper": "session",
        "own/test_o.py::test_own_tab": "default",
        "own/test_o.py::test_own_relay": "default",
        "own/test_o.py::test_explicit_scope": "module",
    }


# -- a project that set nothing up --------------------------------------------------------------

BARE_TESTS = """
import asyncio

import pytest
import pytest_asyncio


@pytest_asyncio.fixture(scope="module")
async def module_loop():
    return asyncio.get_running_loop()


@pytest.mark.asyncio(loop_scope="module")
async def test_module_fixture_runs_on_its_scope_s_loop(module_loop):
    assert module_loop is asyncio.get_running_loop()
"""


def test_a_project_with_no_asyncio_settings_runs_without_warnings(
    pytester: pytest.Pytester,
) -> None:
    """pytest-asyncio comes with bridge; in a project that never configured it, it would warn
    (PytestDeprecationWarning) at every run. Bridge keeps pytest-asyncio's own behaviour for
    an unset default (each fixture's loop is its scope's), without the warning."""
    pytester.makeini(
        "[pytest]\nfilterwarnings =\n    error\n    ignore:Module already imported"
        ":pytest.PytestAssertRewriteWarning\naddopts = -p no:cacheprovider\n"
    )
    pytester.makepyfile(test_bare=BARE_TESTS)
    result = pytester.runpytest_subprocess("-W", "error::pytest.PytestDeprecationWarning", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*asyncio_default_fixture_loop_scope=fixture-scope*"])
    assert "Warning" not in result.stdout.str() + result.stderr.str()
    help_text = pytester.runpytest_subprocess("--help")
    assert help_text.ret == pytest.ExitCode.OK
    assert "DeprecationWarning" not in help_text.stdout.str() + help_text.stderr.str()
    help_text.stdout.fnmatch_lines(["*--bridge-reports*"])


def test_a_project_s_own_loop_scope_setting_wins(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\naddopts = -p no:cacheprovider\n"
    )
    pytester.makepyfile(test_bare=BARE_TESTS.replace('scope="module"', 'scope="function"'))
    result = pytester.runpytest_subprocess("-v")
    result.stdout.fnmatch_lines(["*asyncio_default_fixture_loop_scope=function*"])
    result.assert_outcomes(passed=1)
