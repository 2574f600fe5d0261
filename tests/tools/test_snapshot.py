"""One snapshot path for both tool groups: the ask tools' outline (``take_cdp_snapshot``) is
the browser tools' snapshot (``browser_snapshot``) without refs, from the same frame walk."""

from __future__ import annotations

import re

from bridge.tools.browsing import BrowserTools
from bridge.tools.outline import accessibility_outline
from bridge.tools.snapshot import take_snapshot

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
