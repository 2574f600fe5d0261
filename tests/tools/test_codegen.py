"""The pure core of --codegen python and the testing group: Python literals, the choice of
a locator from the page's facts and match counts, action lines, the test file."""

from __future__ import annotations

import ast

import pytest

from bridge.tools import codegen
from bridge.tools.codegen import CodeLog, Locator, LocatorSpec, Match, py_str


@pytest.mark.parametrize(
    "text",
    [
        "plain",
        'say "hi"',
        "it's",
        "back\\slash",
        "two\nlines\r\n",
        "tab\there",
        "end with backslash \\",
        '"""triple"""',
        "nul\x00bell\x07del\x7f",
        "sep\u2028para\u2029nel\x85",
        "ünïcödé 😀 日本",
        "{braces} %s",
    ],
)
def test_a_python_literal_reads_back_as_the_same_text(text: str) -> None:
    literal = py_str(text)
    assert literal.startswith('"') and literal.endswith('"')
    assert literal.isprintable()  # one line of code, no control or separator characters
    assert ast.literal_eval(literal) == text


def test_quotes_and_newlines_are_escaped_as_python_writes_them() -> None:
    assert py_str('a "b"\nc\\') == '"a \\"b\\"\\nc\\\\"'


def test_candidates_go_role_label_placeholder_text_test_id_then_css() -> None:
    facts = {
        "role": "textbox",
        "name": "Email",
        "label": "Email",
        "placeholder": "you@example.com",
        "text": "",
        "test_id": "email",
        "css": "#email",
    }
    specs = codegen.candidates(facts)
    assert [(s.kind, s.exact) for s in specs] == [
        ("role", False),
        ("role", True),
        ("label", False),
        ("label", True),
        ("placeholder", False),
        ("placeholder", True),
        ("test_id", False),
        ("css", False),
    ]


def test_long_or_missing_texts_are_not_used() -> None:
    specs = codegen.candidates({"role": "button", "name": "x" * 200, "text": "x" * 200, "css": "b"})
    assert [s.kind for s in specs] == ["css"]
    # A role without any name is a locator of its own (the only textbox of the page).
    assert codegen.candidates({"role": "textbox", "name": ""})[0] == LocatorSpec("role", "textbox")


def test_the_first_candidate_finding_exactly_the_element_wins() -> None:
    specs = codegen.candidates({"role": "button", "name": "Save", "text": "Save", "css": "#b2"})
    # "Save" also matches "Save draft" loosely; exact finds only this one.
    matches = [Match(2, 1), Match(1, 0), Match(2, 1), Match(1, 0), Match(1, 0)]
    chosen = codegen.choose(specs, matches)
    assert chosen == Locator(LocatorSpec("role", "button", "Save", True))
    assert chosen.code() == 'page.get_by_role("button", name="Save", exact=True)'


def test_two_elements_alike_fall_back_to_css_then_nth() -> None:
    specs = codegen.candidates({"role": "button", "name": "Save", "css": "#second"})
    same = [Match(2, 1), Match(2, 1)]
    assert codegen.choose(specs, [*same, Match(1, 0)]).code() == 'page.locator("#second")'
    # A CSS path that is not unique either (inside shadow roots): the element's place.
    nth = codegen.choose(specs, [*same, Match(2, 1)])
    assert nth.code() == 'page.get_by_role("button", name="Save").nth(1)'
    assert not nth.unique
    first = codegen.choose(specs, [Match(2, 0), Match(2, 0), Match(3, 0)])
    assert first.code() == 'page.get_by_role("button", name="Save").first'
    with pytest.raises(ValueError, match="left the page"):
        codegen.choose(specs, [Match(0, -1)] * 3)


def test_hostile_page_texts_stay_inside_their_literals() -> None:
    name = 'x") ; import os; os.system("id") #\n'
    code = Locator(LocatorSpec("role", "button", name)).code()
    call = ast.parse(code, mode="eval").body
    assert isinstance(call, ast.Call)  # one call expression, nothing else
    assert ast.literal_eval(call.keywords[0].value) == name


def test_every_locator_kind_renders_as_playwright_python() -> None:
    def code(spec: LocatorSpec) -> str:
        return Locator(spec).code()

    assert code(LocatorSpec("label", "Email")) == 'page.get_by_label("Email")'
    assert code(LocatorSpec("placeholder", "Search", exact=True)) == (
        'page.get_by_placeholder("Search", exact=True)'
    )
    assert code(LocatorSpec("text", "Saved")) == 'page.get_by_text("Saved")'
    assert code(LocatorSpec("test_id", "go")) == 'page.get_by_test_id("go")'
    assert code(LocatorSpec("role", "heading")) == 'page.get_by_role("heading")'


def test_roles_as_the_snapshot_shows_them_become_aria_roles() -> None:
    assert codegen.aria_role(" Image ") == "img"
    assert codegen.aria_role("button") == "button"


def test_action_lines() -> None:
    loc = 'page.get_by_role("button", name="Go")'
    assert codegen.click(loc) == f"{loc}.click()"
    assert codegen.click(loc, button="right", double=True, modifiers=["Shift"]) == (
        f'{loc}.dblclick(button="right", modifiers=["Shift"])'
    )
    assert codegen.fill(loc, "a\nb", submit=True) == [
        f'{loc}.fill("a\\nb")',
        f'{loc}.press("Enter")',
    ]
    assert codegen.fill(loc, "ab", slowly=True) == [
        f'{loc}.fill("")',
        f'{loc}.press_sequentially("ab")',
    ]
    assert codegen.select_option(loc, ["de"]) == f'{loc}.select_option("de")'
    assert codegen.select_option(loc, ["de", "jp"]) == f'{loc}.select_option(["de", "jp"])'
    assert codegen.goto('http://x/?q="') == 'page.goto("http://x/?q=\\"")'
    assert codegen.dialog_handler(True, "Ann") == (
        'page.once("dialog", lambda dialog: dialog.accept("Ann"))'
    )
    assert codegen.expect(loc, "to_be_visible()") == f"expect({loc}).to_be_visible()"


def test_a_dialog_handler_goes_before_the_action_that_opened_it() -> None:
    log = CodeLog()
    log.add(1, ['page.goto("http://x/")', 'page.get_by_role("button", name="Alert").click()'])
    log.add(2, ['page.goto("http://other/")'])
    log.before_last(1, codegen.dialog_handler(True, None))
    assert log.lines(1) == [
        'page.goto("http://x/")',
        'page.once("dialog", lambda dialog: dialog.accept())',
        'page.get_by_role("button", name="Alert").click()',
    ]
    assert log.lines(2) == ['page.goto("http://other/")']
    assert log.lines(3) == []


def test_choose_visible_prefers_one_visible_match() -> None:
    specs = [LocatorSpec("text", "Saved"), LocatorSpec("text", "Saved", exact=True)]
    one = {"count": 1, "visible": 0, "seen": []}
    two = {"count": 2, "visible": 1, "seen": []}
    none = {"count": 1, "visible": -1, "seen": []}
    assert codegen.choose_visible(specs, [two, one]) == Locator(specs[1])
    assert codegen.choose_visible(specs, [two, two]) == Locator(specs[0], 1)
    assert codegen.choose_visible(specs, [none, none]) is None


def test_the_test_file_is_valid_python_whatever_the_page_said() -> None:
    lines = [
        codegen.goto("http://127.0.0.1/"),
        codegen.expect('page.get_by_text("x")', "to_be_visible()"),
    ]
    hostile = 'http://x/"""\nimport os\n"""'
    text = codegen.render_test(codegen.function_name("Sign up: now!"), lines, source=hostile)
    tree = ast.parse(text)
    assert [type(n).__name__ for n in tree.body] == ["Expr", "ImportFrom", "FunctionDef"]
    assert hostile in (ast.get_docstring(tree) or "")  # inert text of the docstring
    func = tree.body[2]
    assert isinstance(func, ast.FunctionDef) and func.name == "test_sign_up_now"
    assert "from playwright.sync_api import Page, expect" in text
    assert codegen.function_name("!!!") == "test_session"
