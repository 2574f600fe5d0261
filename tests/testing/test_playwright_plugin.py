"""pytest-playwright suites run unchanged through bridge (``--bridge-playwright``).

Each test is a user's project in a pytester subprocess with pytest-playwright loaded, as
installed. No Playwright browser is downloaded on this machine, so a suite that passed
here cannot have used a browser Playwright launched itself: every page came through the
DevTools endpoint and the extension.
"""

from __future__ import annotations

import asyncio

import pytest

pytest_plugins = ["pytester"]

USER_SUITE = """
import json
import urllib.request

from playwright.sync_api import Page, expect


def test_click_then_text(page: Page):
    page.set_content('<button onclick="this.textContent = `clicked`">go</button>')
    page.get_by_role("button").click()
    expect(page.get_by_role("button")).to_have_text("clicked")


def test_fill_and_evaluate(page: Page):
    page.set_content("<input id=q>")
    page.fill("#q", "bridge")
    assert page.evaluate("document.querySelector('#q').value") == "bridge"


def test_each_new_context_is_its_own_group_of_tabs(new_context):
    first, second = new_context(), new_context()
    a, b = first.new_page(), second.new_page()
    assert first.pages == [a] and second.pages == [b]


def test_the_page_is_a_tab_of_the_bridge_endpoint(page: Page, bridge_playwright_endpoint: str):
    page.set_content("<title>through-bridge</title>")
    base, _, token = bridge_playwright_endpoint.partition("/cdp?token=")
    request = urllib.request.Request(
        base.replace("ws://", "http://") + "/json/list",
        headers={"Authorization": "Bearer " + token},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        titles = [target["title"] for target in json.load(response)]
    assert "through-bridge" in titles
"""


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_user_suite=USER_SUITE)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


@pytest.mark.e2e
def test_a_suite_runs_against_a_browser_bridge_launches(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "--bridge-playwright")
    result.assert_outcomes(passed=4)


@pytest.mark.e2e
async def test_a_suite_runs_against_a_running_endpoint(
    pytester: pytest.Pytester, bridge_cdp_url: str
) -> None:
    # This session's relay answers on this loop while the suite runs in its own process.
    result = await asyncio.to_thread(_run, pytester, "--bridge-cdp-url", bridge_cdp_url)
    result.assert_outcomes(passed=4)


def test_without_pytest_playwright_the_option_says_what_to_install(
    pytester: pytest.Pytester,
) -> None:
    result = _run(pytester, "-p", "no:playwright", "--bridge-playwright")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*needs pytest-playwright*pip install*"])


def test_headed_is_one_option_shared_with_pytest_playwright(pytester: pytest.Pytester) -> None:
    with_playwright = pytester.runpytest_subprocess("--help")
    without = pytester.runpytest_subprocess("-p", "no:playwright", "--help")
    assert with_playwright.ret == without.ret == 0
    for result in (with_playwright, without):
        assert sum("--headed " in line for line in result.stdout.lines) == 1
