"""Lean snapshots: less text for the same page, so an agent's context stays small.

Pure functions over the lines ``snapshot_render.render`` prints (one node per line, two
spaces of indent per level, ``[ref=…]`` on each element), used by ``browser_snapshot``'s
``depth`` and ``diff`` and by ``browser_find``:

- :func:`limit_depth` keeps the lines up to N levels below the root and puts, under each
  line whose children it hid, one marker line saying how many lines it hid and how to see
  them (``browser_snapshot target=e34``), so nothing is hidden without a way back;
- :func:`diff_snapshot` says what changed since an earlier snapshot as a unified diff of
  lines, or the whole new snapshot when most of it changed (a diff would be longer than the
  page and harder to read); :func:`apply_diff` is its inverse, what a client (or a test)
  does to rebuild the new snapshot from the old one;
- :func:`find_lines` keeps only the lines that match, each under the path of its ancestors
  (printed once, shared by neighbouring matches), at most N matches and a count of the rest.

Refs are never made or renamed here: they come from the ``RefTable`` of the tab, which keeps
a node's ref for as long as the node lives, so a ref from an earlier snapshot that a diff
does not repeat still names the same element.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "DIFF_WHOLE_ABOVE",
    "FindResult",
    "SnapshotDiff",
    "apply_diff",
    "compile_find",
    "diff_snapshot",
    "find_lines",
    "find_report",
    "level_of",
    "limit_depth",
    "ref_of",
]

#: Above this share of changed lines a diff gives way to the whole snapshot.
DIFF_WHOLE_ABOVE = 0.5
#: Unchanged lines shown around each change in a diff: enough to see where it is.
DIFF_CONTEXT = 1

# The ref of a line is among the brackets right after its role and quoted name: a page's
# text ("- text: [ref=e9]") or a name ('- button "[ref=e9]"') that spells one is not it.
_REF_IN_LINE = re.compile(
    r'^ *- (?!text:)[^ ":]+(?: "(?:[^"\\]|\\.)*")?(?: \[[a-z]+(?:=[^\]\s]*)?\])*?'
    r" \[ref=((?:f[1-9][0-9]*)?e[0-9]+)\]"
)
_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def level_of(line: str) -> int:
    """The nesting level of a rendered line (two spaces per level)."""
    return (len(line) - len(line.lstrip(" "))) // 2


def ref_of(line: str) -> str | None:
    """The ref a line carries (``e12``, ``f1e4``), if any."""
    match = _REF_IN_LINE.match(line)
    return match.group(1) if match else None


def _marker(level: int, hidden: int, ref: str | None, depth: int) -> str:
    if ref is not None:
        how = f"browser_snapshot target={ref}"
    else:  # a node without a backend id: only a deeper snapshot shows what is under it
        how = f"browser_snapshot depth={depth + 1} or more"
    return f"{'  ' * level}- … ({hidden} more: {how})"


def limit_depth(lines: list[str], depth: int, *, root_printed: bool = True) -> list[str]:
    """The lines down to ``depth`` levels below the root; under each kept line whose
    descendants are dropped, one marker line (one level deeper) with their count and the
    call that shows them.

    As in playwright-mcp, the root is level 0 and ``depth`` levels below it are shown: with
    ``root_printed`` (a target's subtree) the first line is the root, so levels 0..depth;
    a whole page's root (the document) is not printed, so its lines at levels 0..depth-1.
    Every line deeper than that in the result is such a marker."""
    deepest = depth if root_printed else depth - 1
    if deepest < 0:
        raise ValueError(
            f"depth must be {0 if root_printed else 1} or more"
            + ("" if root_printed else " for a whole page (0 would show nothing)")
            + f", got {depth}"
        )
    out: list[str] = []
    ancestors: list[str | None] = []  # refs of the kept lines on the path to this one
    i = 0
    while i < len(lines):
        line = lines[i]
        level = level_of(line)
        del ancestors[level:]
        ancestors.extend([None] * (level - len(ancestors)))
        ancestors.append(ref_of(line))
        out.append(line)
        i += 1
        if level < deepest:
            continue
        hidden = 0
        while i < len(lines) and level_of(lines[i]) > level:
            hidden += 1
            i += 1
        if hidden:
            ref = next((r for r in reversed(ancestors) if r is not None), None)
            out.append(_marker(level + 1, hidden, ref, depth))
    return out


@dataclass(frozen=True)
class SnapshotDiff:
    """What changed between two snapshots: ``text`` is a unified diff of lines (without the
    file header), or the whole new snapshot when ``whole``."""

    text: str
    whole: bool
    changed: int  # lines removed plus lines added
    unchanged: int

    @property
    def same(self) -> bool:
        return self.changed == 0


def diff_snapshot(old: list[str], new: list[str], *, context: int = DIFF_CONTEXT) -> SnapshotDiff:
    """``new`` against ``old``: a unified diff (``@@`` hunks, `` ``/``-``/``+`` lines) when at
    most half of the lines changed, else the whole of ``new`` (``whole``)."""
    matcher = difflib.SequenceMatcher(None, old, new)
    unchanged = sum(block.size for block in matcher.get_matching_blocks())
    changed = (len(old) - unchanged) + (len(new) - unchanged)
    longest = max(len(old), len(new))
    if changed == 0:
        return SnapshotDiff("", False, 0, unchanged)
    if longest - unchanged > DIFF_WHOLE_ABOVE * longest:
        return SnapshotDiff("\n".join(new), True, changed, unchanged)
    hunks = list(difflib.unified_diff(old, new, lineterm="", n=context))[2:]  # no ---/+++
    return SnapshotDiff("\n".join(hunks), False, changed, unchanged)


def apply_diff(old: list[str], diff: str) -> list[str]:
    """The new lines from the old ones and a diff of :func:`diff_snapshot` (not ``whole``).

    A diff that does not fit ``old`` (a context or removed line differs) is a ValueError."""
    out: list[str] = []
    at = 0  # next line of old not yet copied
    lines = diff.split("\n") if diff else []
    i = 0
    while i < len(lines):
        match = _HUNK.match(lines[i])
        if match is None:
            raise ValueError(f"expected a hunk header, got {lines[i]!r}")
        start = int(match.group(1))
        count = int(match.group(2)) if match.group(2) is not None else 1
        begin = start - 1 if count else start  # an empty old range names the line before
        out.extend(old[at:begin])
        at = begin
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            kind, text = lines[i][:1], lines[i][1:]
            if kind in (" ", "-"):
                if at >= len(old) or old[at] != text:
                    raise ValueError(f"the diff does not fit: line {at + 1} is not {text!r}")
                at += 1
            if kind in (" ", "+"):
                out.append(text)
            i += 1
    out.extend(old[at:])
    return out


class FindPatternError(ValueError):
    """The text or regular expression of a search cannot be used."""


def compile_find(text: str | None, regex: str | None) -> tuple[str, Callable[[str], bool]]:
    """What to search for, said for the result (``"Save"`` or ``/sa.e/i``), and the test of
    one line: ``text`` is a case-insensitive substring, ``regex`` a Python regular expression,
    case-sensitive unless written ``/pattern/i`` (flags i, m, s), as playwright-mcp takes it."""
    if (text is None or text == "") == (regex is None or regex == ""):
        raise FindPatternError("give either text or regex (one of them, not both)")
    if text:
        needle = text.casefold()
        return json_quote(text), lambda line: needle in line.casefold()
    assert regex is not None
    literal = re.fullmatch(r"/(.*)/([a-z]*)", regex, re.S)
    pattern, letters = (literal.group(1), literal.group(2)) if literal else (regex, "")
    flags = 0
    for letter in letters.replace("g", ""):
        if letter not in "ims":
            raise FindPatternError(f"unknown regex flag {letter!r} in {regex!r}: use i, m or s")
        flags |= {"i": re.I, "m": re.M, "s": re.S}[letter]
    try:
        compiled = re.compile(pattern, flags)
    except re.error as exc:
        raise FindPatternError(f"{regex!r} is not a valid regular expression: {exc}") from exc
    return f"/{pattern}/{letters}", lambda line: compiled.search(line) is not None


def json_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class FindResult:
    """The matching lines under their ancestors' path; ``total`` matches, ``shown`` of them."""

    lines: list[str]
    total: int
    shown: int


def find_lines(lines: list[str], matches: Callable[[str], bool], *, limit: int) -> FindResult:
    """The first ``limit`` lines that match, each preceded by those of its ancestors not
    printed yet (the path from the root, compact: nothing between), indentation kept."""
    if limit < 1:
        raise ValueError(f"the number of results must be 1 or more, got {limit}")
    hits = [i for i, line in enumerate(lines) if matches(line)]
    shown = hits[:limit]
    wanted = set(shown)
    printed: set[int] = set()
    out: list[str] = []
    path: list[int] = []  # indices of the lines on the path to the current line (-1: none)
    for i in range(shown[-1] + 1 if shown else 0):
        level = level_of(lines[i])
        del path[level:]
        if i in wanted:
            for ancestor in path:
                if ancestor >= 0 and ancestor not in printed:
                    printed.add(ancestor)
                    out.append(lines[ancestor])
            printed.add(i)
            out.append(lines[i])
        path.extend([-1] * (level - len(path)))
        path.append(i)
    return FindResult(out, len(hits), len(shown))


def find_report(query: str, found: FindResult) -> list[str]:
    """What ``browser_find`` says: the count, the lines, and how many matches it left out."""
    if not found.total:
        return [f"No matches for {query}."]
    out = [f"Found {found.total} match(es) for {query}:", *found.lines]
    if found.total > found.shown:
        out.append(
            f"- … ({found.total - found.shown} more matches: raise max_results or narrow "
            "the search)"
        )
    return out
