"""The network group and --read-only over MCP (in process, real Chromium): playwright-mcp's
names and parameters, a page's own fetch mocked through them, and what --read-only serves."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from mcp_types import Implementation

from bridge.app.facade import Bridge
from bridge.mcp.guard_rails import READ_ONLY_EXTRAS, serve_reading_only
from bridge.mcp.server import build_server
from tests.tools.site import serve

pytestmark = pytest.mark.e2e

AGENT = Implementation(name="net-agent", version="1")


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    yield from serve()


def _text(result: Any) -> str:
    assert not result.is_error, result.content[0].text
    return str(result.content[0].text)


async def test_a_route_mocks_what_the_page_fetches_until_unrouted(
    bridge: Bridge, site: str
) -> None:
    server = build_server(lambda: bridge, groups=("browser", "network"))
    try:
        async with Client(server, client_info=AGENT) as client:
            call = client.call_tool
            await call("browser_navigate", {"url": f"{site}/fetch"})
            mock = {
                "pattern": "**/api/*",
                "body": '{"answer": "mocked"}',
                "contentType": "application/json",
                "headers": ["X-Mock: 1"],
            }
            assert _text(await call("browser_route", mock)) == "Route added for pattern: **/api/*"
            listed = _text(await call("browser_route_list", {}))
            assert listed.startswith("1. **/api/* (") and "contentType=application/json" in listed
            await call("browser_click", {"target": "#go"})
            await call("browser_wait", {"text": "mocked", "time": 10})
            bad = await call("browser_route", {"pattern": "**", "headers": ["X: 1\r\nY: 2"]})
            assert bad.is_error and "Name: Value" in bad.content[0].text
            removed = _text(await call("browser_unroute", {}))
            assert removed == "Removed all 1 route(s)"
            assert _text(await call("browser_route_list", {})) == "No active routes"
            await call("browser_click", {"target": "#go"})
            await call("browser_wait", {"text": "42", "time": 10})
            state = await call("browser_network_state_set", {"state": "offline"})
            assert _text(state) == "Network is now offline"
    finally:
        await bridge.tools.leave("client:net-agent@1")


async def test_read_only_serves_the_reading_tools_and_navigation_only(bridge: Bridge) -> None:
    server = build_server(lambda: bridge, groups=("browser", "dom", "network"))
    serve_reading_only(server)
    async with Client(server) as client:
        served = {t.name for t in (await client.list_tools()).tools}
        for tool in (await client.list_tools()).tools:
            hints = tool.annotations
            assert tool.name in READ_ONLY_EXTRAS or (hints and hints.read_only_hint), tool.name
        assert {"browser_snapshot", "browser_navigate", "browser_route_list"} <= served
        assert not served & {"browser_click", "browser_type", "browser_evaluate", "browser_route"}
        refused = await client.call_tool("browser_click", {"target": "#go"})
        assert refused.is_error
    server = build_server(lambda: bridge, groups=("browser",))
    serve_reading_only(server, navigation=False)  # no allowed list: it could go nowhere
    async with Client(server) as client:
        served = {t.name for t in (await client.list_tools()).tools}
        assert "browser_snapshot" in served and "browser_navigate" not in served
