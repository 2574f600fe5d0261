"""A capture rebuilt as a document in the test browser (bridge.providers.capture.matching):
the browser's own CSS engine matches against it, and a capture file written by an attacker
can neither run script nor make the browser fetch anything."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from bridge.app.facade import Bridge
from bridge.providers.capture.matching import call_capture, capture_matcher
from tests.local_http import serve_files

pytestmark = pytest.mark.e2e


def _node(i: int, p: int, tag: str, attrs: dict[str, str]) -> dict[str, Any]:
    return {"i": i, "p": p, "tag": tag, "attrs": attrs, "text": [1]}


async def test_selectors_match_the_captured_elements_by_index(bridge: Bridge) -> None:
    nodes = [
        _node(0, -1, "body", {}),
        _node(1, 0, "form", {"data-type": "unified-composer"}),
        _node(2, 1, "button", {"data-testid": "send-button", "aria-label": "Send prompt"}),
        _node(3, 0, "message-content", {"class": "markdown prose"}),
    ]
    async with capture_matcher(bridge.browser) as matcher:
        found = await matcher.match(
            nodes,
            [
                'form[data-type="unified-composer"] button[data-testid="send-button"]',
                "message-content.markdown",
                "button:not([aria-label])",
                "::nope",
            ],
        )
    assert found['form[data-type="unified-composer"] button[data-testid="send-button"]'] == [2]
    assert found["message-content.markdown"] == [3]
    assert found["button:not([aria-label])"] == []
    assert isinstance(found["::nope"], str) and "valid selector" in found["::nope"]


@pytest.fixture
def server() -> Iterator[tuple[str, list[str], dict[str, Any]]]:
    """A loopback server that records every path asked of it; ``/control`` sets an event."""
    hits: list[str] = []
    control: dict[str, Any] = {}

    def files(path: str) -> tuple[bytes, str]:
        hits.append(path)
        if path == "/control" and "event" in control:
            control["loop"].call_soon_threadsafe(control["event"].set)
        return b"GIF89a", "image/gif"

    serving = serve_files(files)
    base = next(serving)
    yield base, hits, control
    serving.close()


async def test_a_hostile_capture_runs_nothing_and_loads_nothing(
    bridge: Bridge, server: tuple[str, list[str], dict[str, Any]]
) -> None:
    base, hits, control = server
    control["loop"] = asyncio.get_running_loop()
    control["event"] = asyncio.Event()
    hostile = [
        _node(0, -1, "body", {"onload": f"fetch('{base}/onload')"}),
        _node(1, 0, "img", {"src": f"{base}/img", "onerror": f"fetch('{base}/onerror')"}),
        _node(2, 0, "div", {"style": f"background-image: url({base}/background)"}),
        _node(3, 0, "input", {"type": "image", "src": f"{base}/input"}),
        _node(4, 0, "video", {"poster": f"{base}/poster"}),
        _node(5, 0, "iframe", {"src": f"{base}/frame"}),
        _node(6, 0, "script", {"src": f"{base}/script"}),
        _node(7, 0, "link", {"rel": "stylesheet", "href": f"{base}/style"}),
        _node(8, 0, "meta", {"http-equiv": "refresh", "content": f"0;url={base}/refresh"}),
    ]
    async with capture_matcher(bridge.browser) as matcher:
        found = await matcher.match(hostile, ["img", "script", "iframe"])
        assert found == {"img": [1], "script": [], "iframe": []}
    # The control: a tab of its own, a document without the capture's policy, loads an
    # image. Loads start as a document is parsed, so once the control's has come, the hostile
    # document's (parsed before) would have come before it.
    tab = await bridge.browser.new_tab()
    try:
        tree = await tab.send("Page.getFrameTree")
        frame = tree["frameTree"]["frame"]["id"]
        html = f'<img src="{base}/control">'
        await tab.send("Page.setDocumentContent", {"frameId": frame, "html": html})
        await asyncio.wait_for(control["event"].wait(), 30)
    finally:
        await bridge.browser.close_tab(tab.tab_id)
    assert hits == ["/control"]


async def test_a_world_kept_between_reads_is_made_again_after_a_new_document(
    bridge: Bridge, server: tuple[str, list[str], dict[str, Any]]
) -> None:
    base, _, _ = server
    tab = await bridge.browser.new_tab(f"{base}/one")
    try:
        worlds: dict[int, int] = {}
        first = await call_capture(tab, "capture", ["body"], worlds=worlds)
        kept = worlds[tab.tab_id]
        again = await call_capture(tab, "capture", ["body"], worlds=worlds)
        assert worlds[tab.tab_id] == kept and again["matches"] == first["matches"] == {"body": [0]}
        await tab.navigate(f"{base}/two")  # a new document: the kept world went with the old
        after = await call_capture(tab, "capture", ["body"], worlds=worlds)
        assert after["matches"] == {"body": [0]} and worlds[tab.tab_id] != kept
    finally:
        await bridge.browser.close_tab(tab.tab_id)
