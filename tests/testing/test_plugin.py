"""The pytest plugin as a user's project sees it (pytester, in a subprocess: its own browser)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def this_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's pytest (a subprocess in a folder of its own) imports this checkout's bridge,
    not whichever one the environment installed (a worktree's changes are what is tested)."""
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))


USER_TESTS = """
import pytest

@pytest.mark.asyncio
async def test_marked_without_a_loop_scope(tab):
    assert await tab.evaluate("1 + 1") == 2

@pytest.mark.asyncio
async def test_second_test_same_browser(tab, extension_link):
    assert await tab.evaluate("2 + 2") == 4
    assert any(t.tab_id == tab.tab_id for t in await extension_link.list_tabs())

@pytest.mark.asyncio(loop_scope="function")
async def test_explicit_foreign_loop_gets_a_clear_error(tab):
    with pytest.raises(RuntimeError, match="session loop"):
        await tab.evaluate("1")
"""


def test_fixtures_work_in_a_project_without_asyncio_settings(pytester: pytest.Pytester) -> None:
    # Only "-p no:cacheprovider": no asyncio ini, as in a fresh project of a user.
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning"
    )
    result.assert_outcomes(passed=3)


def test_options_are_listed_in_help(pytester: pytest.Pytester) -> None:
    # Without pytest-playwright, which otherwise owns --headed (tests/testing/test_playwright_plugin.py).
    result = pytester.runpytest_subprocess("-p", "no:playwright", "--help")
    for option in (
        "--live",
        "--headed",
        "--browser-path",
        "--chrome-arg",
        "--bridge-reports",
        "--bridge-playwright",
        "--bridge-cdp-url",
        "--bridge-allow-path",
        "--bridge-channel",
        "--bridge-load-extension",
        "--bridge-capture",
    ):
        result.stdout.fnmatch_lines(["bridge: real Chrome*", f"*{option}*"])


ALLOW_TESTS = """
import pytest
from pathlib import Path
from bridge.errors import PathNotAllowed

@pytest.mark.asyncio
async def test_the_bridge_fixture_gives_pages_only_allowed_files(bridge):
    policy = bridge.file_policy
    assert policy.check("notes.txt") == Path.cwd().resolve() / "notes.txt"
    assert policy.check("INI/a.pdf") and policy.check("CLI/b.pdf")
    with pytest.raises(PathNotAllowed, match="restart bridge with --bridge-allow-path "):
        policy.check("OUT/c.pdf")
    with pytest.raises(PathNotAllowed, match="hidden"):
        policy.check(".env")
"""


def test_allowed_paths_come_from_the_ini_and_the_option(pytester: pytest.Pytester) -> None:
    ini, cli = pytester.path / "from-ini", pytester.path.parent / "from-cli"
    out = pytester.path.parent / "elsewhere"
    pytester.makeini("[pytest]\nbridge_allow_paths =\n    from-ini\n")
    tests = ALLOW_TESTS.replace("INI", str(ini)).replace("CLI", str(cli))
    pytester.makepyfile(test_user=tests.replace("OUT", str(out)))
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning",
        f"--bridge-allow-path={cli}",
    )  # fmt: skip
    result.assert_outcomes(passed=1)


MARKER = Path(__file__).resolve().parents[1] / "extensions" / "marker"

# The README's example ("Test your own extension with bridge's fixtures"), as a user runs it.
OWN_EXTENSION_TESTS = '''
import pytest

MARKED = """new Promise((resolve) => {
  const root = document.documentElement;
  const done = () => root.dataset.marker && (resolve(root.dataset.marker), true);
  if (!done()) new MutationObserver(done).observe(root, { attributes: true });
})"""

@pytest.mark.asyncio
async def test_my_extension_marks_pages(new_tab, extension_link):
    tab = await new_tab("URL")
    mark = await tab.evaluate(MARKED, await_promise=True, timeout=20)
    assert mark.startswith("worker ")
    assert any(t.tab_id == tab.tab_id for t in await extension_link.list_tabs())
'''


def test_a_project_tests_its_own_extension_next_to_bridge_s(
    pytester: pytest.Pytester, pages: str
) -> None:
    pytester.makepyfile(test_user=OWN_EXTENSION_TESTS.replace("URL", f"{pages}/"))
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning",
        f"--bridge-load-extension={MARKER}",
    )  # fmt: skip
    result.assert_outcomes(passed=1)


def test_browser_choices_that_cannot_work_stop_the_run_at_once(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(test_user="def test_never_runs():\n    raise AssertionError\n")
    result = pytester.runpytest_subprocess(f"--bridge-load-extension={tmp_path}")
    result.stderr.fnmatch_lines([f"*--bridge-load-extension {tmp_path}: no manifest.json in it*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result = pytester.runpytest_subprocess("--bridge-channel=beta", "--browser-path=/x/chrome")
    result.stderr.fnmatch_lines(["*--bridge-channel and --browser-path both choose*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
