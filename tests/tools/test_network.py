"""Routes and offline (the network family) in real Chromium through the extension: a page's
own fetch() is mocked, aborted, restored; only the client's tabs are touched, and leaving
takes everything back."""

from __future__ import annotations

import pytest

from bridge.policy.routing import Route
from bridge.tools.browsing import BrowserTools, ToolHub

pytestmark = pytest.mark.e2e

FETCH = """() => fetch('/api/data?x=1').then(r => r.text().then(t => r.status + ' ' + t),
  e => 'failed: ' + e.message)"""


async def fetched(tools: BrowserTools) -> str:
    return str(await tools.evaluate(FETCH))


async def test_a_route_mocks_the_pages_fetch_and_unroute_restores(
    tools: BrowserTools, site: str
) -> None:
    await tools.navigate(f"{site}/fetch")
    assert await fetched(tools) == '200 {"answer": 42}'
    await tools.route(Route("**/api/*", status=201, body="mocked", content_type="text/plain"))
    assert await fetched(tools) == "201 mocked"
    await tools.click("#go")  # the page's own button: its fetch is the route's too
    assert await tools.evaluate("() => document.getElementById('r').textContent") == ""
    assert [r.pattern for r in tools.route_list()] == ["**/api/*"]
    assert await tools.unroute("**/other") == 0
    assert await tools.unroute("**/api/*") == 1
    assert await fetched(tools) == '200 {"answer": 42}'
    assert not tools.hub.browser.intercepting(tools.current or 0)  # Fetch let go of


async def test_abort_fails_the_request_and_unrouting_all_restores(
    tools: BrowserTools, site: str
) -> None:
    await tools.navigate(f"{site}/fetch")
    await tools.route(Route("**/api/*", abort=True))
    assert (await fetched(tools)).startswith("failed:")
    await tools.unroute()
    assert await fetched(tools) == '200 {"answer": 42}'


async def test_offline_fails_fetch_and_online_restores(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/fetch")
    await tools.set_network_state("offline")
    assert (await fetched(tools)).startswith("failed:")
    await tools.set_network_state("online")
    assert await fetched(tools) == '200 {"answer": 42}'


async def test_another_clients_tab_is_untouched_and_leaving_takes_the_routes_back(
    hub: ToolHub, site: str
) -> None:
    mine, theirs = hub.client("mine"), hub.client("theirs")
    await mine.navigate(f"{site}/fetch")
    await theirs.navigate(f"{site}/fetch")
    await mine.route(Route("**/api/*", body="mocked"))
    await mine.set_network_state("offline")
    assert await fetched(theirs) == '200 {"answer": 42}'
    assert await fetched(mine) == "200 mocked"  # a route answers before any network
    assert (await mine.evaluate(FETCH.replace("/api/data", "/form"))).startswith("failed:")
    tab = mine.current
    await hub.leave("mine")
    again = hub.client("mine")
    assert again.route_list() == []
    assert await again.evaluate(FETCH, tab=tab) == '200 {"answer": 42}'  # online, unrouted


async def test_a_tab_the_client_acts_on_later_gets_its_routes(
    tools: BrowserTools, hub: ToolHub, site: str
) -> None:
    await tools.route(Route("**/api/*", body="mocked"))  # no tab yet: applies when it has one
    await tools.navigate(f"{site}/fetch")
    assert await fetched(tools) == "200 mocked"
    other = await hub.browser.new_tab(f"{site}/fetch")
    assert await tools.evaluate(FETCH, tab=other.tab_id) == "200 mocked"


async def test_a_closed_tab_leaves_nothing_behind(
    tools: BrowserTools, hub: ToolHub, site: str
) -> None:
    await tools.navigate(f"{site}/fetch")
    await tools.route(Route("**/api/*", body="mocked"))
    tab = tools.current or 0
    assert hub.browser.intercepting(tab)
    interception = hub.browser.interceptions[tab]
    await hub.browser.close_tab(tab)
    assert tab not in hub.browser.interceptions and not interception.enabled
    assert len(interception._tasks) == 0  # nothing left answering for the closed tab
    tools.current = None
    await tools.navigate(f"{site}/fetch")  # a new tab: the client's route is there too
    assert await fetched(tools) == "200 mocked"
