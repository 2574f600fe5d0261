"""Playwright-for-Python code for what a client did (``--codegen python``, the testing group).

Pure: no page, no I/O. ``bridge.tools.locating`` gathers an element's facts and the match
counts of candidate locators in the page; this module decides the locator from them
(``candidates`` then ``choose``), renders each action as its line of Playwright code, keeps a
client's lines per tab (``CodeLog``), and renders them as a pytest-playwright test file.

Why a locator is verified in the page rather than trusted: a test written from an agent's
session must act on the same element the agent did. Playwright's locators are strict (one
that matches two elements fails the test), and ``get_by_role(name=...)`` matches substrings,
so "Save" also finds "Save draft". The first candidate that resolves to exactly the element
wins; when none does, a CSS path, and as a last resort ``.nth(i)`` of the best candidate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "CodeLog",
    "Locator",
    "LocatorSpec",
    "Match",
    "aria_role",
    "candidates",
    "choose",
    "choose_visible",
    "function_name",
    "py_list",
    "py_str",
    "render_test",
]

Kind = Literal["role", "label", "placeholder", "text", "test_id", "css"]

#: Texts longer than this make brittle locators (and may have been cut by the page script).
MAX_TEXT = 80

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def py_str(value: str) -> str:
    """``value`` as a Python string literal in double quotes (what Playwright's own Python
    codegen writes): backslash, quote and line breaks escaped, other control characters
    (and the line and paragraph separators, which editors break lines at) as ``\\x``/``\\u``
    escapes; everything else kept as is, so the line reads like the page's text."""
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif ch in "\u2028\u2029\x85":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@dataclass(frozen=True)
class LocatorSpec:
    """One way to find an element: ``get_by_role(value, name=name)``, ``get_by_label(value)``
    and so on, ``locator(value)`` for CSS. ``exact`` as Playwright's option."""

    kind: Kind
    value: str
    name: str | None = None
    exact: bool = False

    def to_js(self) -> dict[str, Any]:
        """What the page script's ``locatorElements`` takes."""
        return {"kind": self.kind, "value": self.value, "name": self.name, "exact": self.exact}

    def render(self) -> str:
        exact = ", exact=True" if self.exact else ""
        if self.kind == "role":
            name = "" if self.name is None else f", name={py_str(self.name)}"
            return f"get_by_role({py_str(self.value)}{name}{exact})"
        if self.kind == "css":
            return f"locator({py_str(self.value)})"
        if self.kind == "test_id":
            return f"get_by_test_id({py_str(self.value)})"
        return f"get_by_{self.kind}({py_str(self.value)}{exact})"


@dataclass(frozen=True)
class Match:
    """How many elements a spec matched in the page, and the element's place among them."""

    count: int
    index: int  # -1: the element is not among them


@dataclass(frozen=True)
class Locator:
    """The chosen locator: a spec, and which of its matches when it matched several."""

    spec: LocatorSpec
    nth: int | None = None

    @property
    def unique(self) -> bool:
        return self.nth is None

    def code(self, root: str = "page") -> str:
        """``page.get_by_role("button", name="Save")``, with ``.first``/``.nth(i)`` if needed."""
        tail = "" if self.nth is None else ".first" if self.nth == 0 else f".nth({self.nth})"
        return f"{root}.{self.spec.render()}{tail}"


#: Chrome's accessibility roles (what browser_snapshot shows) where ARIA's, which Playwright's
#: get_by_role takes, differ.
_CHROME_ROLES = {"image": "img"}


def aria_role(role: str) -> str:
    """The ARIA role for a role as the snapshot shows it (``image`` -> ``img``)."""
    role = role.strip().lower()
    return _CHROME_ROLES.get(role, role)


def _usable(text: Any) -> str:
    text = " ".join(str(text or "").split())
    return text if 0 < len(text) <= MAX_TEXT else ""


def candidates(facts: Mapping[str, Any]) -> list[LocatorSpec]:
    """The locators to try for an element, best first (the order of Playwright's own
    advice: role and name, label, placeholder, text, test id), each loose then exact; the
    CSS path last. ``facts`` is what the page script's ``locatorFacts`` returns."""
    specs: list[LocatorSpec] = []
    role, name = str(facts.get("role") or ""), _usable(facts.get("name"))
    if role:
        if name:
            specs += [LocatorSpec("role", role, name), LocatorSpec("role", role, name, True)]
        elif not str(facts.get("name") or "").strip():
            specs.append(LocatorSpec("role", role))
    for kind in ("label", "placeholder", "text"):
        text = _usable(facts.get(kind))
        if text:
            specs += [LocatorSpec(kind, text), LocatorSpec(kind, text, exact=True)]
    test_id = str(facts.get("test_id") or "")
    if test_id:
        specs.append(LocatorSpec("test_id", test_id))
    css = str(facts.get("css") or "")
    if css:
        specs.append(LocatorSpec("css", css))
    return specs


def choose(specs: Sequence[LocatorSpec], matches: Sequence[Match]) -> Locator:
    """The first spec that finds exactly the element; else ``.nth`` of the first that finds
    it among others. ValueError when none finds it (the element left the page meanwhile)."""
    pairs = list(zip(specs, matches, strict=True))
    for spec, match in pairs:
        if match.count == 1 and match.index == 0:
            return Locator(spec)
    for spec, match in pairs:
        if match.index >= 0:
            return Locator(spec, match.index)
    raise ValueError("no locator finds the element: it may have left the page")


def choose_visible(
    specs: Sequence[LocatorSpec], finds: Sequence[Mapping[str, Any]]
) -> Locator | None:
    """For an assertion of visibility: the first spec that matches one element, visible;
    else the first visible match of the first spec that has one (``.first``/``.nth``); None
    when nothing matching is visible. ``finds`` is what ``locatorFind`` returns per spec."""
    pairs = list(zip(specs, finds, strict=True))
    for spec, found in pairs:
        if found["count"] == 1 and found["visible"] == 0:
            return Locator(spec)
    for spec, found in pairs:
        if found["visible"] >= 0:
            return Locator(spec, int(found["visible"]))
    return None


# ---- lines -----------------------------------------------------------------------------------


def _kwargs(**options: Any) -> str:
    parts = []
    for key, value in options.items():
        if value is None or value is False or value == []:
            continue
        if isinstance(value, str):
            parts.append(f"{key}={py_str(value)}")
        elif isinstance(value, list):
            parts.append(f"{key}=[{', '.join(py_str(str(v)) for v in value)}]")
        else:
            parts.append(f"{key}={value!r}")
    return ", ".join(parts)


def py_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(py_str(v) for v in values) + "]"


def goto(url: str) -> str:
    return f"page.goto({py_str(url)})"


def click(
    locator: str, *, button: str = "left", double: bool = False, modifiers: Sequence[str] = ()
) -> str:
    verb = "dblclick" if double else "click"
    options = _kwargs(button=None if button == "left" else button, modifiers=list(modifiers))
    return f"{locator}.{verb}({options})"


def fill(locator: str, text: str, *, slowly: bool = False, submit: bool = False) -> list[str]:
    lines = (
        [f'{locator}.fill("")', f"{locator}.press_sequentially({py_str(text)})"]
        if slowly
        else [f"{locator}.fill({py_str(text)})"]
    )
    if submit:
        lines.append(f'{locator}.press("Enter")')
    return lines


def set_checked(locator: str, checked: bool) -> str:
    return f"{locator}.{'check' if checked else 'uncheck'}()"


def select_option(locator: str, values: Sequence[str]) -> str:
    if len(values) == 1:
        return f"{locator}.select_option({py_str(values[0])})"
    return f"{locator}.select_option({py_list(values)})"


def press_key(key: str) -> str:
    return f"page.keyboard.press({py_str(key)})"


def dialog_handler(accept: bool, prompt_text: str | None) -> str:
    """Playwright answers a dialog through a handler set BEFORE the action that opens it
    (``CodeLog.before_last`` puts it there); without one it dismisses every dialog."""
    if not accept:
        return 'page.once("dialog", lambda dialog: dialog.dismiss())'
    answer = "" if prompt_text is None else py_str(prompt_text)
    return f'page.once("dialog", lambda dialog: dialog.accept({answer}))'


def expect(locator: str, assertion: str) -> str:
    return f"expect({locator}).{assertion}"


# ---- a client's session ----------------------------------------------------------------------


@dataclass
class CodeLog:
    """One client's lines, per tab, in the order they ran."""

    tabs: dict[int, list[str]] = field(default_factory=dict)

    def add(self, tab: int, lines: Sequence[str]) -> None:
        self.tabs.setdefault(tab, []).extend(lines)

    def before_last(self, tab: int, line: str) -> None:
        """Insert ``line`` before the tab's last line (a dialog's handler before the action
        that opened the dialog)."""
        lines = self.tabs.setdefault(tab, [])
        lines.insert(max(len(lines) - 1, 0), line)

    def lines(self, tab: int) -> list[str]:
        return list(self.tabs.get(tab, []))


_NOT_IDENT = re.compile(r"[^0-9a-zA-Z_]+")


def function_name(title: str) -> str:
    """``test_<words of title>``: a valid Python function name pytest collects."""
    words = _NOT_IDENT.sub("_", title.lower()).strip("_")[:60].strip("_")
    return f"test_{words or 'session'}"


def render_test(name: str, lines: Sequence[str], *, source: str = "") -> str:
    """A pytest-playwright test module running ``lines`` in its ``page`` fixture; unchanged
    under ``pytest --bridge-playwright`` (a tab of bridge's DevTools endpoint) or plain
    pytest-playwright."""
    # The page's URL is the page's to choose: quoted as a literal, so it cannot end the
    # docstring and put code of its own into the test.
    header = '"""Generated by bridge (browser_generate_test)'
    header += f" from {py_str(source)}." if source else "."
    header += '"""\n\n'
    body = "\n".join(f"    {line}" for line in lines) if lines else "    pass"
    imports = "from playwright.sync_api import Page"
    if any(line.startswith("expect(") for line in lines):
        imports += ", expect"
    return f"{header}{imports}\n\n\ndef {name}(page: Page) -> None:\n{body}\n"
