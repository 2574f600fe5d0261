"""One snapshot path for both tool groups: the ask tools' outline (``take_cdp_snapshot``) is
the browser tools' snapshot (``browser_snapshot``) without refs, from the same frame walk."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bridge.tools.browsing import BrowserTools
from bridge.tools.outline import accessibility_outline
from bridge.tools.snapshot import take_snapshot, take_subtree

_REF = re.compile(r" \[ref=(?:f[1-9][0-9]*)?e[0-9]+\]")


async def test_the_outline_is_the_snapshot_without_refs(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/form")
    state = await tools.hub.state(tools.current or 0)
    snapshot = await take_snapshot(state)
    outline = await accessibility_outline(state.tab)
    assert "[ref=" in snapshot and "[ref=" not in outline
    assert outline == _REF.sub("", snapshot)
    assert '- textbox "Name"' in outline and '- button "Create account"' in outline


async def test_the_outline_includes_same_process_frames(tools: BrowserTools, site: str) -> None:
    """An iframe in the page's own process shows its content in the outline too; one out of
    process would need the browser tools' child session (the snapshot has both)."""
    await tools.navigate(f"{site}/frames")
    state = await tools.hub.state(tools.current or 0)
    outline = await accessibility_outline(state.tab)
    snapshot = await take_snapshot(state)
    assert outline.count('button "Press me"') == 1, outline
    assert snapshot.count('button "Press me"') == 2, snapshot


async def test_the_outline_is_cut_to_its_size(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/form")
    state = await tools.hub.state(tools.current or 0)
    outline = await accessibility_outline(state.tab, max_chars=120)
    assert len(outline) <= 120 and outline.endswith(
        "more lines not shown; use a selector-based tool or scroll)"
    )


async def _root_of(tools: BrowserTools, selector: str) -> tuple[str, int]:
    state = await tools.hub.state(tools.current or 0)
    element = await tools.element(selector)
    described = await state.tab.send("DOM.describeNode", {"objectId": element.object_id})
    return "", int(described["node"]["backendNodeId"])


async def test_a_subtree_fetched_alone_is_the_whole_walks_subtree(
    tools: BrowserTools, site: str
) -> None:
    """take_subtree (Accessibility.queryAXTree on the node) prints exactly what the whole
    frame walk prints for that node, refs included; with an iframe inside it takes the walk."""
    for page, selectors in (
        ("lean", ("#items", "#shop", "nav", "main", "#apple")),
        ("form", ("form", "#country", "label")),
        ("frames", ("body",)),
    ):
        await tools.navigate(f"{site}/{page}")
        state = await tools.hub.state(tools.current or 0)
        await take_snapshot(state)
        for selector in selectors:
            root = await _root_of(tools, selector)
            alone = await take_subtree(state, root)
            assert alone == await take_snapshot(state, root=root), (page, selector)
            assert alone.strip(), (page, selector)
    assert 'button "Press me"' in alone  # the iframes' content: the walk was taken


async def test_a_subtree_without_iframes_does_not_fetch_the_whole_tree(
    tools: BrowserTools, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await tools.navigate(f"{site}/lean")
    state = await tools.hub.state(tools.current or 0)
    await take_snapshot(state)
    root = await _root_of(tools, "#items")
    sent: list[str] = []
    original = state.tab.send

    async def spy(method: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(method)
        return await original(method, *args, **kwargs)

    monkeypatch.setattr(state.tab, "send", spy)
    assert 'button "Buy apple"' in await take_subtree(state, root)
    assert sent == ["Accessibility.queryAXTree"]
