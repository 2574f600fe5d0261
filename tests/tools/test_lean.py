"""Lean snapshots in real Chromium (bridge/tools/operations/lean.py): target and depth,
diffs that keep refs, a snapshot saved under the allowed folders, and browser_find."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bridge.errors import PathNotAllowed
from bridge.policy.files import FilePolicy
from bridge.tools.browsing import BrowserTools
from bridge.tools.targets import TargetNotFound

pytestmark = pytest.mark.e2e


def _ref(text: str, pattern: str) -> str:
    line = next(line for line in text.splitlines() if re.search(pattern, line))
    match = re.search(r"\[ref=(\w+)\]", line)
    assert match, line
    return match.group(1)


async def test_target_and_depth_shrink_the_snapshot_and_its_refs_still_act(
    tools: BrowserTools, site: str
) -> None:
    await tools.navigate(f"{site}/lean")
    whole = (await tools.lean_snapshot()).text
    part = await tools.lean_snapshot(target="#items", depth=1)
    assert len(part.text) < len(whole) / 2, part.text
    assert "Menu" not in part.text and "Footer" not in part.text
    assert 'button "Buy apple"' not in part.text  # two levels down: hidden
    markers = [line for line in part.text.splitlines() if "- … (" in line]
    assert len(markers) == 3 and all("browser_snapshot target=" in m for m in markers), markers
    # The marker's call shows what it hid, and the refs in it are the page's.
    item = re.search(r"target=(\w+)", markers[0])
    assert item is not None
    apple = (await tools.lean_snapshot(target=item.group(1))).text
    assert 'button "Buy apple"' in apple and "Pear" not in apple
    assert _ref(apple, "Buy apple") == _ref(whole, "Buy apple")
    # A whole page's depth counts from the document: depth 1 is its top-level lines.
    top = (await tools.lean_snapshot(depth=1)).text.splitlines()[1:]
    assert [line for line in top if not line.startswith("  - … (")] == [
        f'- navigation "Menu" [ref={_ref(whole, "navigation")}]:',
        f"- main [ref={_ref(whole, '- main')}]:",
    ], top
    await tools.click(_ref(apple, "Buy apple"))
    assert await tools.evaluate("() => document.getElementById('apple').textContent") == (
        "Bought apple"
    )


async def test_target_that_names_nothing_is_a_clear_error(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/lean")
    with pytest.raises(TargetNotFound, match="take a new snapshot"):
        await tools.lean_snapshot(target="e99999")
    with pytest.raises(ValueError, match="depth"):
        await tools.lean_snapshot(depth=-1)
    with pytest.raises(ValueError, match="would show nothing"):
        await tools.lean_snapshot(depth=0)


async def test_a_diff_shows_only_what_changed_and_old_refs_still_click(
    tools: BrowserTools, site: str
) -> None:
    await tools.navigate(f"{site}/lean")
    first = await tools.lean_snapshot(diff=True)
    assert first.data["diff"] == "first" and 'button "Buy pear"' in first.text
    pear, plum = _ref(first.text, "Buy pear"), _ref(first.text, "Buy plum")
    await tools.click(pear)
    second = await tools.lean_snapshot(diff=True)
    assert second.data["diff"] == "diff", second.text
    changed = [line[0] + line[1:].strip() for line in second.text.splitlines() if line[:1] in "+-"]
    assert changed == [
        f'-- button "Buy pear" [ref={pear}]',
        f'+- button "Bought pear" [ref={pear}]',
    ], second.text
    assert "Menu" not in second.text and "Footer" not in second.text
    # A ref from the first snapshot, not repeated by the diff, still clicks its element.
    await tools.click(plum)
    assert await tools.evaluate("() => document.getElementById('plum').textContent") == (
        "Bought plum"
    )
    third = await tools.lean_snapshot(diff=True)
    assert f'- button "Bought plum" [ref={plum}]' in third.text
    assert third.data["changed_lines"] == 2
    unchanged = await tools.lean_snapshot(diff=True)
    assert unchanged.data["diff"] == "unchanged"


async def test_a_diff_of_a_mostly_replaced_page_is_the_whole_snapshot(
    tools: BrowserTools, site: str
) -> None:
    await tools.navigate(f"{site}/lean")
    await tools.lean_snapshot(diff=True)
    await tools.click("#replace")
    after = await tools.lean_snapshot(diff=True)
    assert after.data["diff"] == "whole", after.text
    assert "most of the page changed" in after.text
    assert "New paragraph 29" in after.text and "@@" not in after.text


async def test_two_clients_diff_against_their_own_last_snapshot(
    hub: object, tools: BrowserTools, site: str
) -> None:
    await tools.navigate(f"{site}/lean")
    other = tools.hub.client("lean-other")
    other.current = tools.current
    await tools.lean_snapshot(diff=True)
    await tools.click("#apple")
    await tools.lean_snapshot(diff=True)  # this client has now seen the change
    assert (await other.lean_snapshot(diff=True)).data["diff"] == "first"
    await tools.hub.leave("lean-other")


async def test_filename_writes_under_the_allowed_folder_and_refuses_others(
    tools: BrowserTools, site: str, tmp_path: Path
) -> None:
    await tools.navigate(f"{site}/lean")
    allowed = tmp_path / "work"
    allowed.mkdir()
    saved_policy = tools.hub.files
    tools.hub.files = FilePolicy.create(cwd=allowed, home=tmp_path / "home")
    try:
        result = await tools.lean_snapshot(filename="snaps/lean.md")
        path = allowed / "snaps" / "lean.md"
        assert result.data["file"] == str(path)
        assert 'button "Buy apple"' in path.read_text() and "Buy apple" not in result.text
        assert str(path) in result.text
        again = await tools.lean_snapshot(filename="snaps/lean.md")  # never over a file
        assert again.data["file"] == str(allowed / "snaps" / "lean (1).md")
        for hostile in ("../escaped.md", str(tmp_path / "outside.md"), ".hidden/x.md"):
            with pytest.raises(PathNotAllowed, match="will not write"):
                await tools.lean_snapshot(filename=hostile)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
        assert not (allowed / ".hidden").exists()
    finally:
        tools.hub.files = saved_policy


async def test_find_by_text_and_regex(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/lean")
    found = await tools.find("buy")
    lines = found.text.splitlines()
    assert lines[1] == 'Found 3 match(es) for "buy":'
    assert sum('button "Buy' in line for line in lines) == 3
    assert any(re.match(r"\s*- region \"Shop\"", line) for line in lines), found.text
    assert sum("Shop" in line for line in lines) == 1
    assert "Menu" not in found.text and "Footer" not in found.text
    await tools.click(_ref(found.text, "Buy plum"))  # its refs act
    one = await tools.find(regex=r"/^\s*- link \"(ALPHA|BETA)\"/i", max_results=1)
    assert one.data == {"tab": tools.current, "total": 2, "shown": 1}
    assert "Alpha" in one.text and "Beta" not in one.text and "1 more matches" in one.text
    none = await tools.find("no such words")
    assert none.text.endswith('No matches for "no such words".')
    with pytest.raises(ValueError, match="regular expression"):
        await tools.find(regex="(unclosed")
