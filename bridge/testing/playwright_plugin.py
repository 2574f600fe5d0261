"""pytest-playwright through bridge (``pytest --bridge-playwright``).

Registered by ``bridge.testing.plugin`` only when the option is given, after every installed plugin,
so its ``launch_browser`` replaces pytest-playwright's: the ``browser`` fixture then comes
from ``connect_over_cdp`` to bridge's DevTools endpoint instead of a browser Playwright
launches. Everything else of pytest-playwright stays as it is (``context`` per test as a
virtual browser context — a group of tabs closed afterwards —, ``page``, ``new_context``,
``--slowmo``, screenshots), so an existing suite runs unchanged against the
extension-driven browser.

Which browser: an endpoint already running (``--bridge-cdp-url`` or ``$BRIDGE_CDP_URL``,
as printed by ``python -m bridge cdp`` or the MCP server); else the person's own Chrome with
``--live`` (its extension connects to a relay started here); else a Chromium launched with the
extension for the session (a temporary profile; headless unless ``--headed``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from bridge.app.background import BackgroundRuntime
from bridge.app.runtime import RuntimeOptions, display_available
from bridge.errors import BridgeError
from bridge.waiting import scaled

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserType

ENV_URL = "BRIDGE_CDP_URL"


@pytest.fixture(scope="session")
def bridge_playwright_endpoint(
    pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The DevTools endpoint pytest-playwright's browser connects to (``ws://…/cdp?token=…``)."""
    url = pytestconfig.getoption("--bridge-cdp-url") or os.environ.get(ENV_URL)
    if url:
        yield url
        return
    live = bool(pytestconfig.getoption("--live"))
    headed = bool(pytestconfig.getoption("headed", default=False))
    if headed and not live and not display_available():
        raise pytest.UsageError("--headed needs a display: run under `xvfb-run -a pytest ...`")
    background = BackgroundRuntime(
        RuntimeOptions(
            launch=not live,
            headless=not headed,
            isolated=True,
            browser_path=pytestconfig.getoption("--browser-path"),
            channel=pytestconfig.getoption("--bridge-channel"),
            load_extensions=tuple(pytestconfig.getoption("--bridge-load-extension")),
            chrome_args=tuple(pytestconfig.getoption("--chrome-arg")),
            cdp=True,
            state_dir=tmp_path_factory.mktemp("bridge-playwright"),
        )
    )
    try:
        background.start(connect_timeout=scaled(60.0 if live else 30.0))
    except BridgeError as exc:
        tail = background.stderr_tail()
        pytest.fail(f"bridge: {exc}" + (f"\n{tail}" if tail else ""), pytrace=False)
    try:
        yield background.cdp_url
    finally:
        background.stop()


@pytest.fixture(scope="session")
def launch_browser(
    browser_type: BrowserType,
    browser_type_launch_args: dict[str, Any],
    bridge_playwright_endpoint: str,
) -> Callable[..., Browser]:
    """pytest-playwright's browser factory, connecting through bridge instead of launching.

    Launch options describe a browser Playwright would start; here bridge owns the browser,
    so only ``slow_mo`` (``--slowmo``) still applies. ``browser.close()`` at the end of the
    session disconnects; the browser keeps running.
    """
    if browser_type.name != "chromium":
        raise pytest.UsageError(
            f"--bridge-playwright drives Chrome/Chromium; drop --browser {browser_type.name}"
        )

    def connect(**kwargs: Any) -> Browser:
        options = {**browser_type_launch_args, **kwargs}
        return browser_type.connect_over_cdp(
            bridge_playwright_endpoint, slow_mo=options.get("slow_mo") or None
        )

    return connect
