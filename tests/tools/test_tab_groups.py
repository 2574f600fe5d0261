"""Each client's tabs in a Chrome tab group of its own (ToolClient._group, the extension's
groupTab command), read back from the extension's own chrome.tabs in real Chromium."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bridge.cdp.direct import DirectCdp
from bridge.mcp.__main__ import parse_args
from bridge.tools.browsing import ToolHub, ToolSettings
from bridge.tools.tab_groups import GROUP_COLORS, group_color, group_title
from tests.extension_worker import in_worker

pytestmark = pytest.mark.e2e


async def _group_of(cdp: DirectCdp, tab_id: int) -> dict[str, Any] | None:
    """The tab's group as Chrome has it ({id, title, color, windowId}), None if ungrouped."""
    found: dict[str, Any] | None = await in_worker(
        cdp,
        f"chrome.tabs.get({tab_id}).then(async (t) => {{ if (t.groupId === -1) return null; "
        "const g = await chrome.tabGroups.get(t.groupId); "
        "return { id: g.id, title: g.title, color: g.color, windowId: g.windowId, "
        "tabWindowId: t.windowId }; })",
    )
    return found


async def test_two_clients_tabs_end_in_two_groups_named_after_them(
    hub: ToolHub, site: str, direct_cdp: DirectCdp
) -> None:
    one = hub.client("client:agent-one@1.2.3")
    two = hub.client("header:agent-two")
    await one.navigate(site + "/popup")
    await two.navigate(site + "/form")
    assert one.current is not None and two.current is not None
    first = await _group_of(direct_cdp, one.current)
    other = await _group_of(direct_cdp, two.current)
    assert first is not None and other is not None
    assert (first["title"], first["color"]) == ("agent-one", group_color("agent-one"))
    assert (other["title"], other["color"]) == ("agent-two", group_color("agent-two"))
    assert first["id"] != other["id"]
    # A tab the client's page opens (same window) joins the same group.
    report = await one.click("#blank")
    opened = next(t["tab"] for t in report.new_tabs if "tab" in t)
    joined = await _group_of(direct_cdp, opened)
    assert joined is not None and joined["id"] == first["id"]
    # Leaving leaves the groups to the person: nothing is closed or ungrouped.
    tab_one = one.current
    await hub.leave("client:agent-one@1.2.3")
    after = await _group_of(direct_cdp, tab_one)
    assert after is not None and after["id"] == first["id"]


async def test_a_tab_in_the_persons_own_group_stays_there(
    hub: ToolHub, site: str, direct_cdp: DirectCdp
) -> None:
    made = await in_worker(
        direct_cdp,
        f"chrome.tabs.create({{ url: {json.dumps(site + '/form')}, active: false }})"
        ".then(async (t) => { const g = await chrome.tabs.group({ tabIds: [t.id] }); "
        "await chrome.tabGroups.update(g, { title: 'mine', color: 'red' }); "
        "return { tab: t.id, group: g }; })",
    )
    try:
        client = hub.client("client:agent-three@1")
        await client.tabs("select", tab=made["tab"])
        await client.snapshot()
        group = await _group_of(direct_cdp, made["tab"])
        assert group is not None
        assert (group["id"], group["title"], group["color"]) == (made["group"], "mine", "red")
    finally:
        await hub.browser.close_tab(made["tab"])


async def test_provider_tabs_are_not_grouped(
    hub: ToolHub, site: str, direct_cdp: DirectCdp
) -> None:
    client = hub.client("client:agent-four@1")
    session = await hub.browser.new_tab(site + "/form", own_window=True)
    hub.browser.claims[session.tab_id] = "some-ask"  # an ask's provider tab
    try:
        await client.tabs("select", tab=session.tab_id)
        assert await _group_of(direct_cdp, session.tab_id) is None
    finally:
        hub.browser.claims.pop(session.tab_id, None)


async def test_no_groups_when_the_person_turned_them_off(
    hub: ToolHub, site: str, direct_cdp: DirectCdp
) -> None:
    assert parse_args(["--no-tab-groups"]).no_tab_groups
    assert not parse_args([]).no_tab_groups
    hub.settings = ToolSettings(tab_groups=False)  # what --no-tab-groups sets
    client = hub.client("client:agent-five@1")
    await client.navigate(site + "/form")
    assert client.current is not None
    assert await _group_of(direct_cdp, client.current) is None


@pytest.mark.parametrize(
    ("client", "title"),
    [
        ("client:claude-code@1.0.3", "claude-code"),
        ("client:cursor@", "cursor"),
        ("client:my@app@2", "my@app"),
        ("header:ci-runner-7", "ci-runner-7"),
        ("local", "bridge"),
        ("default", "bridge"),
        ("header:\x1b[31mred\x07", "[31mred"),  # a client's name is its own text: no controls
        ("header:" + "x" * 100, "x" * 32),
        ("test_something", "test_something"),
    ],
)
def test_a_group_is_named_after_the_client_app(client: str, title: str) -> None:
    assert group_title(client) == title


def test_a_group_colour_is_stable_and_one_of_chromes() -> None:
    assert group_color("claude-code") == group_color("claude-code")
    assert {group_color(f"app-{i}") for i in range(100)} == set(GROUP_COLORS)
