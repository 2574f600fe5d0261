"""Lean snapshots' pure core: depth limits, diffs, and search over rendered snapshot lines."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.tools.snapshot_lean import (
    FindPatternError,
    apply_diff,
    compile_find,
    diff_snapshot,
    find_lines,
    find_report,
    level_of,
    limit_depth,
    ref_of,
)

PAGE = [
    '- banner [ref=e1]:',
    '  - link "Home" [ref=e2]',
    '- main [ref=e3]:',
    '  - list [ref=e4]:',
    '    - listitem [ref=e5]: First',
    '    - listitem [ref=e6]:',
    '      - button "Buy" [ref=e7]',
    '  - paragraph: Some text',
    '- contentinfo: Footer',
]  # fmt: skip


def test_level_and_ref_of_a_line() -> None:
    assert level_of("    - listitem [ref=e5]: First") == 2
    assert ref_of("    - listitem [ref=e5]: First") == "e5"
    assert ref_of("- iframe [ref=f1e12]:") == "f1e12"
    assert ref_of("- text: [ref=nope]") is None
    assert ref_of('- heading "Orders" [level=1] [ref=e1]') == "e1"
    assert ref_of('- link "Docs" [ref=e2] [url=https://x.test/[ref=e9]]') == "e2"


def test_a_page_cannot_spell_a_ref_into_a_line() -> None:
    """A hostile page's text or name that reads like a ref is not the line's ref: a depth
    marker must never send the agent to an element the page chose."""
    assert ref_of("- text: see [ref=e9]") is None
    assert ref_of('- button "Buy [ref=e9] \\" [ref=e8]" [ref=e3]') == "e3"
    assert ref_of("- paragraph: [ref=e9]") is None
    page = ['- button "x [ref=e9]" [ref=e3]:', "  - text: a"]
    assert limit_depth(page, 0)[-1] == "  - … (1 more: browser_snapshot target=e3)"


# --- depth


def test_depth_keeps_the_top_levels_and_says_how_to_see_the_rest() -> None:
    assert limit_depth(PAGE, 0) == [
        '- banner [ref=e1]:',
        '  - … (1 more: browser_snapshot target=e1)',
        '- main [ref=e3]:',
        '  - … (5 more: browser_snapshot target=e3)',
        '- contentinfo: Footer',
    ]  # fmt: skip
    assert limit_depth(PAGE, 1) == [
        *PAGE[:3],
        '  - list [ref=e4]:',
        '    - … (3 more: browser_snapshot target=e4)',
        '  - paragraph: Some text',
        '- contentinfo: Footer',
    ]  # fmt: skip
    assert limit_depth(PAGE, 3) == PAGE


def test_depth_under_a_line_without_ref_names_the_nearest_ancestor_with_one() -> None:
    page = ["- main [ref=e1]:", "  - paragraph:", "    - text: a", "    - text: b"]
    assert limit_depth(page, 1)[-1] == "    - … (2 more: browser_snapshot target=e1)"
    top = ["- paragraph:", "  - text: a"]
    assert limit_depth(top, 0) == [
        "- paragraph:",
        "  - … (1 more: browser_snapshot depth=1 or more)",
    ]


def test_negative_depth_is_refused() -> None:
    with pytest.raises(ValueError, match="depth"):
        limit_depth(PAGE, -1)


def test_a_whole_page_counts_its_unprinted_root_as_level_zero() -> None:
    """playwright-mcp's depth: levels below the root; a page's root (the document) is not a
    line, so depth 1 is the page's top-level lines, while a target's depth 0 is itself."""
    assert limit_depth(PAGE, 1, root_printed=False) == limit_depth(PAGE, 0)
    assert limit_depth(["- p:", "  - text: a"], 1, root_printed=False)[-1] == (
        "  - … (1 more: browser_snapshot depth=2 or more)"
    )
    with pytest.raises(ValueError, match="1 or more for a whole page"):
        limit_depth(PAGE, 0, root_printed=False)


@st.composite
def trees(draw: st.DrawFn) -> list[str]:
    """Rendered-like lines: each line at most one level deeper than the one before."""
    count = draw(st.integers(0, 40))
    out: list[str] = []
    level = 0
    for i in range(count):
        level = draw(st.integers(0, level + 1)) if out else 0
        ref = f" [ref=e{i + 1}]" if draw(st.booleans()) else ""
        out.append(f"{'  ' * level}- item {i}{ref}")
    return out


@settings(max_examples=200, deadline=None)
@given(trees(), st.integers(0, 6))
def test_depth_never_shows_a_deeper_line_and_hides_none_silently(
    page: list[str], depth: int
) -> None:
    out = limit_depth(page, depth)
    kept = [line for line in out if "- … (" not in line]
    assert all(level_of(line) <= depth for line in kept)
    assert kept == [line for line in page if level_of(line) <= depth]
    markers = [line for line in out if "- … (" in line]
    assert all(level_of(line) == depth + 1 for line in markers)
    hidden = sum(int(line.split("(")[1].split()[0]) for line in markers)
    assert hidden + len(kept) == len(page)


# --- diff


def test_a_small_change_is_a_unified_diff_of_the_changed_lines() -> None:
    new = [*PAGE]
    new[4] = "    - listitem [ref=e5]: First (sold out)"
    change = diff_snapshot(PAGE, new)
    assert not change.whole and change.changed == 2
    assert change.text.splitlines() == [
        "@@ -4,3 +4,3 @@",
        '   - list [ref=e4]:',
        '-    - listitem [ref=e5]: First',
        '+    - listitem [ref=e5]: First (sold out)',
        '     - listitem [ref=e6]:',
    ]  # fmt: skip
    assert apply_diff(PAGE, change.text) == new


def test_no_change_and_most_changed() -> None:
    assert diff_snapshot(PAGE, list(PAGE)).same
    other = [f"- row {i} [ref=e{100 + i}]" for i in range(8)] + PAGE[:2]
    change = diff_snapshot(PAGE, other)
    assert change.whole and change.text == "\n".join(other)


def test_a_diff_that_does_not_fit_is_refused() -> None:
    new = [*PAGE[:4], *PAGE[5:]]
    text = diff_snapshot(PAGE, new).text
    with pytest.raises(ValueError, match="does not fit"):
        apply_diff(["something else"] * len(PAGE), text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([*PAGE, "- a", "- b", "  - c"]), max_size=30),
    st.lists(st.sampled_from([*PAGE, "- a", "- b", "  - c"]), max_size=30),
)
def test_a_diff_applied_to_the_old_snapshot_gives_the_new(old: list[str], new: list[str]) -> None:
    change = diff_snapshot(old, new)
    if change.whole:
        assert change.text == "\n".join(new)
        assert 2 * (max(len(old), len(new)) - change.unchanged) > max(len(old), len(new))
    else:
        assert apply_diff(old, change.text) == new


# --- find


def test_find_shows_matches_under_their_path_once() -> None:
    query, matches = compile_find("buy", None)
    found = find_lines(PAGE, matches, limit=10)
    assert query == '"buy"'
    assert (found.total, found.shown) == (1, 1)
    assert found.lines == [
        '- main [ref=e3]:',
        '  - list [ref=e4]:',
        '    - listitem [ref=e6]:',
        '      - button "Buy" [ref=e7]',
    ]  # fmt: skip


def test_find_shares_ancestors_and_bounds_the_count() -> None:
    _, matches = compile_find(None, r"listitem|paragraph")
    found = find_lines(PAGE, matches, limit=2)
    assert (found.total, found.shown) == (3, 2)
    assert found.lines == PAGE[2:6]
    report = find_report("/listitem|paragraph/", found)
    assert report[0] == "Found 3 match(es) for /listitem|paragraph/:"
    assert report[-1].startswith("- … (1 more matches")
    assert find_report('"x"', find_lines(PAGE, lambda _: False, limit=3)) == ['No matches for "x".']


def test_find_regex_flags_and_bad_input() -> None:
    _, sensitive = compile_find(None, "HOME")
    _, insensitive = compile_find(None, "/HOME/i")
    assert not sensitive(PAGE[1]) and insensitive(PAGE[1])
    with pytest.raises(FindPatternError, match="not a valid regular expression"):
        compile_find(None, "(")
    with pytest.raises(FindPatternError, match="flag"):
        compile_find(None, "/x/q")
    with pytest.raises(FindPatternError, match="either text or regex"):
        compile_find("a", "b")
    with pytest.raises(FindPatternError, match="either text or regex"):
        compile_find(None, None)
    with pytest.raises(ValueError, match="1 or more"):
        find_lines(PAGE, sensitive, limit=0)


@settings(max_examples=200, deadline=None)
@given(trees(), st.integers(1, 5))
def test_find_keeps_tree_order_and_every_line_is_a_match_or_an_ancestor(
    page: list[str], limit: int
) -> None:
    found = find_lines(page, lambda line: "7" in line or "3" in line, limit=limit)
    indices = [page.index(line) for line in found.lines]
    assert indices == sorted(indices)  # document order, each line once
    assert found.shown == min(limit, found.total)
    assert sum(1 for line in found.lines if "7" in line or "3" in line) >= found.shown
