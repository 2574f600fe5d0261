"""Checks of provider-pack values that no type can say (docs/sites.md#provider-packs): a
plausible CSS selector, a regular expression both Python and JavaScript read alike, and the
words messages use for JSON values and unknown names. Pure: no pydantic, no I/O."""

from __future__ import annotations

import difflib
import re

__all__ = ["compile_flags", "css_problem", "nearest", "regex_problem", "type_name"]


def css_problem(selector: object) -> str | None:
    """Why ``selector`` is not one plausible CSS selector (None when it is).

    Not a CSS parser: it catches what a hand-edited pack gets wrong (empty strings, a rule
    instead of a selector, unbalanced brackets or quotes, dangling combinators, a list).
    The page script checks each selector with the browser's own parser as well.
    """
    if not isinstance(selector, str):
        return f"must be a string, not {type_name(selector)}"
    s = selector.strip()
    if not s:
        return "is empty"
    if any(c in s for c in "{};"):
        return "contains '{', '}' or ';': write a selector, not a CSS rule"
    depth: list[str] = []
    quote = ""
    pairs = {"]": "[", ")": "("}
    top_level_comma = False
    i = 0
    while i < len(s):
        c = s[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c == "\\":
            i += 1
        elif c in "'\"":
            quote = c
        elif c in "[(":
            depth.append(c)
        elif c in "])":
            if not depth or depth[-1] != pairs[c]:
                return f"has an unmatched {c!r}"
            depth.pop()
        elif c == "," and not depth:
            top_level_comma = True
        i += 1
    if quote:
        return f"has an unclosed {quote} quote"
    if depth:
        return f"has an unclosed {depth[-1]!r}"
    if top_level_comma:
        return "is a selector list: put each selector in its own list item"
    if s[0] in ">+~" or s[-1] in ">+~":
        return "starts or ends with a combinator (>, + or ~)"
    return None


_PYTHON_ONLY = (
    (re.compile(r"\(\?P[<=]"), "named groups (?P<…>) are Python-only: use (?:…)"),
    (re.compile(r"\(\?#"), "comments (?#…) are Python-only"),
    (re.compile(r"\(\?>"), "atomic groups (?>…) are Python-only"),
    (re.compile(r"\(\?[aiLmsux]+\)"), 'inline flags like (?i) are Python-only: use "flags"'),
    (re.compile(r"(?<!\\)\\[AZ]"), "\\A and \\Z are Python-only: use ^ and $"),
)
_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


def regex_problem(pattern: object, flags: object = "") -> str | None:
    """Why ``pattern`` is no usable regular expression for both Python and the page's
    JavaScript (an approximation: it must compile in Python and avoid Python-only syntax)."""
    if not isinstance(pattern, str):
        return f"must be a string, not {type_name(pattern)}"
    if not pattern:
        return "is empty (it would match everything)"
    if not isinstance(flags, str) or any(f not in _FLAGS for f in flags):
        return f"flags {flags!r} must be letters from 'ims'"
    for syntax, why in _PYTHON_ONLY:
        if syntax.search(pattern):
            return why
    try:
        re.compile(pattern, compile_flags(flags))
    except re.error as exc:
        return f"does not compile: {exc}"
    return None


def compile_flags(flags: str) -> int:
    """``re`` flags for a pack's ``flags`` letters."""
    value = 0
    for f in flags:
        value |= _FLAGS[f]
    return value


def type_name(value: object) -> str:
    """A JSON value's kind as a person reads it in a message."""
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def nearest(name: str, valid: tuple[str, ...] | list[str]) -> str:
    """The hint after an unknown name: the closest valid one, else all of them."""
    close = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.5)
    if close:
        return f"did you mean {close[0]!r}?"
    return "valid names: " + ", ".join(valid)
