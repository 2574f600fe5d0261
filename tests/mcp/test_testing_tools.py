"""The testing group over MCP (in-memory client, real Chromium with the extension): a
session driven with the tools becomes a pytest-playwright test that passes unchanged under
``pytest --bridge-cdp-url`` (the ``--bridge-playwright`` plugin, on this session's DevTools
endpoint), and fails once the page changes: the generated test really tests the page."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from mcp import Client

from bridge.app.facade import Bridge
from bridge.mcp.server import build_server
from bridge.policy.files import FilePolicy
from bridge.tools.browsing import ToolHub, ToolSettings
from bridge.waiting import scaled
from tests.local_http import HTML, serve_files

pytestmark = pytest.mark.e2e
pytest_plugins = ["pytester"]

PAGE = """<!doctype html><title>Notes</title><h1>Notes</h1>
<label>Title <input id=title></label>
<button id=save onclick="document.getElementById('out').textContent =
  'Saved ' + document.getElementById('title').value">{label}</button>
<button>{label} draft</button>
<p id=out></p>
<section><button onclick="this.textContent = 'Gone 1'">Remove</button></section>
<section><button onclick="this.textContent = 'Gone 2'">Remove</button></section>
<button id=ask onclick="document.getElementById('answer').textContent =
  'Answer: ' + (confirm('Sure?') ? 'yes' : 'no')">Ask</button><p id=answer></p>"""


#: The save button's label: what the test changes to make the generated test fail.
LABEL = {"now": "Save"}


@pytest.fixture(scope="module")
def notes() -> Iterator[str]:
    for url in serve_files(lambda _: (PAGE.replace("{label}", LABEL["now"]).encode(), HTML)):
        yield f"{url}/notes"


def _server(hub: ToolHub) -> Any:
    # The registrars only ask the facade for its tool hub: this test's, with its settings.
    return build_server(
        lambda: cast(Bridge, SimpleNamespace(tools=hub)), groups=("browser", "testing")
    )


def _text(result: Any) -> str:
    assert not result.is_error, result.content[0].text
    return str(result.content[0].text)


async def test_a_generated_test_passes_then_fails_when_the_page_changes(
    hub: ToolHub, notes: str, pytester: pytest.Pytester, bridge_cdp_url: str
) -> None:
    hub.settings = ToolSettings(record_code=True)  # as serving the testing group does
    hub.files = FilePolicy.create(cwd=pytester.path)
    async with Client(_server(hub)) as client:
        await client.call_tool("browser_navigate", {"url": notes})
        await client.call_tool("browser_type", {"target": "#title", "text": "Hello"})
        clicked = await client.call_tool("browser_click", {"target": "#save"})
        assert "Playwright code" not in _text(clicked)  # recorded, not shown without --codegen
        _text(await client.call_tool("browser_verify_text_visible", {"text": "Saved Hello"}))
        _text(
            await client.call_tool(
                "browser_verify_element_visible", {"role": "button", "accessible_name": "Save"}
            )
        )
        # Two buttons alike: the second one's locator (a CSS path) finds it under Playwright too.
        await client.call_tool("browser_click", {"target": "section:nth-of-type(2) button"})
        _text(await client.call_tool("browser_verify_text_visible", {"text": "Gone 2"}))
        # Playwright dismisses a dialog nobody handles: the test must accept it as we did.
        asked = await client.call_tool("browser_click", {"target": "#ask"})
        assert "dialog is open" in _text(asked)
        _text(await client.call_tool("browser_handle_dialog", {"accept": True}))
        _text(await client.call_tool("browser_verify_text_visible", {"text": "Answer: yes"}))
        failed = await client.call_tool("browser_verify_text_visible", {"text": "Deleted"})
        assert failed.is_error and "[verification_failed]" in failed.content[0].text
        written = await client.call_tool("browser_generate_test", {"filename": "test_notes.py"})
    result = cast(dict[str, Any], written.structured_content)
    path = Path(result["path"])
    assert path == pytester.path / "test_notes.py"
    assert result["content"].splitlines()[-10:] == [
        f'    page.goto("{notes}")',
        '    page.get_by_role("textbox", name="Title").fill("Hello")',
        '    page.get_by_role("button", name="Save", exact=True).click()',
        '    expect(page.get_by_text("Saved Hello")).to_be_visible()',
        '    expect(page.get_by_role("button", name="Save", exact=True)).to_be_visible()',
        '    page.locator("section:nth-of-type(2) > button").click()',
        '    expect(page.get_by_text("Gone 2")).to_be_visible()',
        '    page.once("dialog", lambda dialog: dialog.accept())',
        '    page.get_by_role("button", name="Ask").click()',
        '    expect(page.get_by_text("Answer: yes")).to_be_visible()',
    ]
    assert "Deleted" not in result["content"]  # a failed verification is not recorded

    def run() -> pytest.RunResult:
        # This session's relay answers on this loop while the test runs in its own process.
        return pytester.runpytest_subprocess(
            str(path),
            "-p",
            "no:cacheprovider",
            "--bridge-playwright",
            "--bridge-cdp-url",
            bridge_cdp_url,
        )

    (await asyncio.to_thread(run)).assert_outcomes(passed=1)
    LABEL["now"] = "Store"  # the button the session clicked is now named differently
    # The changed page is expected to fail at a locator that never appears, which waits out
    # Playwright's action timeout (30 s by default): shortened for this run only, in the test
    # project's conftest (the generated test itself is unchanged; page loads keep theirs).
    pytester.makeconftest(
        "import pytest\n\n"
        "@pytest.fixture(autouse=True)\n"
        "def _missing_fails_fast(page):\n"
        f"    page.set_default_timeout({scaled(3.0) * 1000:.0f})\n"
        f"    page.set_default_navigation_timeout({scaled(30.0) * 1000:.0f})\n"
    )
    try:
        changed = await asyncio.to_thread(run)
        changed.assert_outcomes(failed=1)
        # It failed waiting for the button the session clicked, not for anything else.
        assert 'waiting for get_by_role("button", name="Save", exact=True)' in changed.stdout.str()
    finally:
        LABEL["now"] = "Save"


async def test_with_codegen_python_each_result_carries_its_line(hub: ToolHub, notes: str) -> None:
    hub.settings = ToolSettings(codegen="python")
    async with Client(_server(hub)) as client:
        await client.call_tool("browser_navigate", {"url": notes})
        typed = await client.call_tool("browser_type", {"target": "#title", "text": 'a "b"'})
        locator = await client.call_tool("browser_generate_locator", {"target": "#save"})
    line = 'page.get_by_role("textbox", name="Title").fill("a \\"b\\"")'
    assert f"- Playwright code:\n  {line}" in _text(typed)
    assert cast(dict[str, Any], typed.structured_content)["code"] == [line]
    assert _text(locator) == 'page.get_by_role("button", name="Save", exact=True)'


def test_codegen_and_the_testing_group_turn_recording_on() -> None:
    from bridge.mcp.__main__ import parse_args, tool_settings

    plain = tool_settings(parse_args([]), ("ask", "browser"))
    assert (plain.codegen, plain.record_code) == ("none", False)
    shown = tool_settings(parse_args(["--codegen", "python"]), ("ask", "browser"))
    assert shown.codegen == "python"
    served = tool_settings(parse_args(["--caps", "testing"]), ("ask", "browser", "testing"))
    assert (served.codegen, served.record_code) == ("none", True)
    with pytest.raises(SystemExit):
        parse_args(["--codegen", "typescript"])  # bridge writes Python only
