"""Fixtures for the browser tools' tests: the local site, a hub, one client per test."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from bridge.browser import Browser
from bridge.errors import BridgeError
from bridge.tools.browsing import BrowserTools, ToolHub
from tests.tools.site import serve


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    yield from serve()


@pytest_asyncio.fixture(loop_scope="session")
async def hub(extension_link: Browser) -> AsyncIterator[ToolHub]:
    """A tool hub whose tabs are closed after the test."""
    hub = ToolHub(extension_link)
    before = {t.tab_id for t in await extension_link.list_tabs()}
    yield hub
    for info in await extension_link.list_tabs():
        if info.tab_id not in before:
            with contextlib.suppress(BridgeError):  # closed by the test itself already
                await extension_link.close_tab(info.tab_id)


@pytest.fixture
def tools(hub: ToolHub, request: pytest.FixtureRequest) -> BrowserTools:
    return hub.client(request.node.name)
