"""The pytest plugin as a user's project sees it (pytester, in a subprocess: its own browser)."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e

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
    # Without pytest-playwright, which otherwise owns --headed (tests/test_playwright_plugin.py).
    result = pytester.runpytest_subprocess("-p", "no:playwright", "--help")
    for option in (
        "--live",
        "--headed",
        "--browser-path",
        "--chrome-arg",
        "--bridge-reports",
        "--bridge-playwright",
        "--bridge-cdp-url",
    ):
        result.stdout.fnmatch_lines(["bridge: real Chrome*", f"*{option}*"])
