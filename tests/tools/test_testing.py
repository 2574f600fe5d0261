"""The testing family in real Chromium with the extension: verifications that pass and fail
saying what the page shows, locators that find exactly the element, every action recorded
as Playwright code (--codegen python), and the test file written only where allowed."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from bridge.errors import NothingRecorded, PathNotAllowed, VerificationFailed
from bridge.policy.files import FilePolicy
from bridge.tools.browsing import BrowserTools, ToolSettings
from tests.local_http import HTML, serve_files

pytestmark = pytest.mark.e2e

NOTES = """<!doctype html><title>Notes</title>
<h1>Notes</h1>
<label>Title <input id=title></label>
<input id=search placeholder="Search notes">
<label><input type=checkbox id=pin onchange="showReason(this)"> Pin it</label>
<script>
// A field that exists only once the box is checked, as forms that grow as they are filled.
function showReason(box) {
  if (!box.checked || document.getElementById('reason')) return;
  const input = document.createElement('input');
  input.id = 'reason';
  input.setAttribute('aria-label', 'Reason');
  box.parentElement.after(input);
}
</script>
<select id=color aria-label=Color><option value=red>Red</option><option value=blue>Blue</option></select>
<button id=save onclick="out.textContent = 'Saved ' + document.getElementById('title').value">Save</button>
<button id=draft>Save draft</button>
<div id=a><button>Delete</button></div>
<div><button data-testid=del-b>Delete</button></div>
<section><button>Remove</button></section><section><button>Remove</button></section>
<button id=alert onclick="alert('Sure?'); out.textContent = 'alerted'">Warn me</button>
<button id=odd>Say "hi"\\ now</button>
<input type=file id=file aria-label=Attachment>
<p id=out></p>
<p hidden>Secret text</p>
<ul id=list><li>Apples</li><li>Pears</li></ul>
"""


@pytest.fixture(scope="module")
def notes() -> Iterator[str]:
    for url in serve_files(lambda _: (NOTES.encode(), HTML)):
        yield f"{url}/notes"


@pytest.fixture
def recording(tools: BrowserTools, tmp_path: Path) -> BrowserTools:
    """This test's client with --codegen python, writing tests under tmp_path only."""
    tools.hub.settings = ToolSettings(codegen="python")
    tools.hub.files = FilePolicy.create(cwd=tmp_path)
    return tools


async def test_verify_element_visible_passes_and_fails_with_what_it_saw(
    recording: BrowserTools, notes: str
) -> None:
    await recording.navigate(notes)
    passed = await recording.verify_element_visible("button", "Save")
    # "Save" alone would also find "Save draft": the assertion names exactly one element.
    assert passed["code"] == (
        'expect(page.get_by_role("button", name="Save", exact=True)).to_be_visible()'
    )
    with pytest.raises(VerificationFailed, match="no visible button named 'Publish'") as failed:
        await recording.verify_element_visible("button", "Publish")
    assert "'Save', 'Save draft'" in str(failed.value)  # what it saw instead
    with pytest.raises(VerificationFailed, match="no visible heading named 'Secret'"):
        await recording.verify_element_visible("heading", "Secret")


async def test_verify_text_visible_passes_and_fails(recording: BrowserTools, notes: str) -> None:
    await recording.navigate(notes)
    await recording.type("#title", "Hello")
    await recording.click("#save")
    passed = await recording.verify_text_visible("Saved Hello")
    assert passed["code"] == 'expect(page.get_by_text("Saved Hello")).to_be_visible()'
    with pytest.raises(VerificationFailed, match=r"1 time\(s\) but hidden"):
        await recording.verify_text_visible("Secret text")
    with pytest.raises(VerificationFailed, match="not on the page"):
        await recording.verify_text_visible("Nowhere")


async def test_verify_value_and_list(recording: BrowserTools, notes: str) -> None:
    await recording.navigate(notes)
    await recording.type("#title", "Hello")
    passed = await recording.verify_value("textbox", "#title", "Hello")
    assert (
        passed["code"] == 'expect(page.get_by_role("textbox", name="Title")).to_have_value("Hello")'
    )
    with pytest.raises(VerificationFailed, match="have the value 'Bye', but it has 'Hello'"):
        await recording.verify_value("textbox", "#title", "Bye")
    with pytest.raises(VerificationFailed, match="to be checked, but it is not checked"):
        await recording.verify_value("checkbox", "#pin", "true")
    unchecked = await recording.verify_value("checkbox", "#pin", "false")
    assert unchecked["code"].endswith(".not_to_be_checked()")
    assert (await recording.verify_value("combobox", "#color", "red"))["passed"]
    listed = await recording.verify_list_visible("#list", ["Apples", "Pears"])
    assert 'to_contain_text("Pears")' in listed["code"]
    with pytest.raises(VerificationFailed, match="does not show 'Plums'"):
        await recording.verify_list_visible("#list", ["Apples", "Plums"])


async def test_a_locator_finds_exactly_the_element(tools: BrowserTools, notes: str) -> None:
    await tools.navigate(notes)

    async def locator(target: str) -> str:
        return str((await tools.generate_locator(target))["locator"])

    assert await locator("#title") == 'page.get_by_role("textbox", name="Title")'
    assert await locator("#search") == 'page.get_by_role("textbox", name="Search notes")'
    assert await locator("#pin") == 'page.get_by_role("checkbox", name="Pin it")'
    assert await locator("#draft") == 'page.get_by_role("button", name="Save draft")'
    assert await locator("h1") == 'page.get_by_role("heading", name="Notes")'
    # Two buttons named "Delete": a test id for one, the CSS path of the other.
    assert await locator("[data-testid=del-b]") == 'page.get_by_test_id("del-b")'
    assert await locator("#a button") == 'page.locator("#a > button")'
    assert await locator("section:nth-of-type(2) button") == (
        'page.locator("section:nth-of-type(2) > button")'
    )
    # The page's own quotes and backslashes stay inside the literal.
    odd = await locator("#odd")
    call = ast.parse(odd, mode="eval").body
    assert isinstance(call, ast.Call)
    assert ast.literal_eval(call.keywords[0].value) == 'Say "hi"\\ now'


async def test_each_action_carries_its_playwright_line(
    recording: BrowserTools, notes: str, tmp_path: Path
) -> None:
    report = await recording.navigate(notes)
    assert report.code == [f'page.goto("{notes}")']
    assert "- Playwright code:" in report.to_text() and report.to_dict()["code"] == report.code
    typed = await recording.type("#title", "Hi", submit=False)
    assert typed.code == ['page.get_by_role("textbox", name="Title").fill("Hi")']
    # #reason shows only once #pin is checked: each field is found when its turn comes.
    await recording.fill_form(
        [
            {"target": "#pin", "value": True},
            {"target": "#reason", "value": "top"},
            {"target": "#color", "value": "blue"},
        ]
    )
    await recording.click("#save")
    await recording.press_key("Tab")
    await recording.click("#alert")
    await recording.handle_dialog(True)
    await recording.hover("h1")
    (tmp_path / "a.txt").write_text("a")
    await recording.file_upload("#file", [str(tmp_path / "a.txt")])
    await recording.navigate(notes + "?again")
    await recording.go_back()
    await recording.go_forward()
    assert recording.code_log.lines(recording.current or 0) == [
        f'page.goto("{notes}")',
        'page.get_by_role("textbox", name="Title").fill("Hi")',
        'page.get_by_role("checkbox", name="Pin it").check()',
        'page.get_by_role("textbox", name="Reason").fill("top")',
        'page.get_by_role("combobox", name="Color").select_option("blue")',
        'page.get_by_role("button", name="Save", exact=True).click()',
        'page.keyboard.press("Tab")',
        # Playwright answers a dialog with a handler set before the action that opens it.
        'page.once("dialog", lambda dialog: dialog.accept())',
        'page.get_by_role("button", name="Warn me").click()',
        'page.get_by_role("heading", name="Notes").hover()',
        f'page.get_by_role("button", name="Attachment").set_input_files(["{tmp_path}/a.txt"])',
        f'page.goto("{notes}?again")',
        "page.go_back()",
        "page.go_forward()",
    ]


async def test_without_codegen_nothing_is_recorded_or_shown(
    tools: BrowserTools, notes: str
) -> None:
    report = await tools.navigate(notes)
    assert report.code == [] and "code" not in report.to_dict()
    with pytest.raises(NothingRecorded, match="nothing was recorded"):
        await tools.generate_test()


async def test_the_test_file_goes_only_under_an_allowed_folder(
    recording: BrowserTools, notes: str, tmp_path: Path
) -> None:
    await recording.navigate(notes)
    written = await recording.generate_test("test_notes.py")
    assert written["path"] == str(tmp_path / "test_notes.py")
    assert Path(written["path"]).read_text() == written["content"]
    ast.parse(written["content"])
    again = await recording.generate_test("test_notes.py")  # never over an existing file
    assert again["path"] == str(tmp_path / "test_notes (1).py")
    named = await recording.generate_test("sub/notes.py")  # a test module's name
    assert named["path"] == str(tmp_path / "sub" / "test_notes.py")
    # A page (or a prompt) talking the agent into writing elsewhere is refused.
    for hostile in ("../test_escape.py", "/etc/test_x.py", ".git/hooks/test_x.py"):
        with pytest.raises(PathNotAllowed):
            await recording.generate_test(hostile)
    # What the page chose (its URL, its texts) cannot become code of the test.
    await recording.navigate(notes + '?q="""%0Aimport os;os.system("id")#')
    await recording.click("#odd")
    hostile = await recording.generate_test("test_hostile.py")
    tree = ast.parse(hostile["content"])
    assert [type(n).__name__ for n in tree.body] == ["Expr", "ImportFrom", "FunctionDef"]
    body = cast(ast.FunctionDef, tree.body[2]).body
    assert all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) for s in body)
    assert not any(isinstance(n, ast.Import) for n in ast.walk(tree))  # only inert text
    with pytest.raises(ValueError, match=r"ends with \.py"):
        await recording.generate_test("test_x.sh")
    assert not (tmp_path.parent / "test_escape.py").exists()


async def test_each_client_keeps_its_own_session(recording: BrowserTools, notes: str) -> None:
    other = recording.hub.client("another agent")
    await recording.navigate(notes)
    await other.navigate(notes + "?other")
    await other.click("#save")
    mine = recording.code_log.tabs
    theirs = other.code_log.tabs
    assert list(mine.values()) == [[f'page.goto("{notes}")']]
    assert list(theirs.values()) == [
        [
            f'page.goto("{notes}?other")',
            'page.get_by_role("button", name="Save", exact=True).click()',
        ]
    ]
    assert set(mine).isdisjoint(theirs)  # each in its own tab
