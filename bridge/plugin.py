"""The bridge pytest plugin (registered through the ``pytest11`` entry point).

Fixtures open the relay, the extension link and tabs, exactly as the MCP server does:
- ``relay`` (session): the loopback relay;
- ``extension_link`` (session): a ``Browser`` whose extension is connected — a Chromium
  launched for the session (temporary profile, fake ChatGPT/Gemini mapped in), or with
  ``--live`` the person's own Chrome, which must connect by itself;
- ``tab`` / ``new_tab`` (function): fresh attached tabs, closed afterwards;
- ``fake_sites`` (session) / ``fakes`` (function, reset): the fake provider sites.

Under pytest-xdist each worker is its own process: its own relay port, its own browser.
"""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest
import pytest_asyncio

from bridge.browser import Browser
from bridge.cdp import CdpSession
from bridge.core import Bridge
from bridge.errors import BridgeError
from bridge.launcher import LaunchedBrowser, LaunchOptions, find_browser
from bridge.relay import Relay
from bridge.waiting import scaled

if TYPE_CHECKING:
    from bridge.fakes import FakeSites

__all__ = ["BridgeOptions"]

NewTab = Callable[..., Awaitable[CdpSession]]


@dataclass(frozen=True)
class BridgeOptions:
    live: bool = False
    headed: bool = False
    browser_path: str | None = None
    chrome_args: tuple[str, ...] = field(default_factory=tuple)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bridge", "bridge: real Chrome through the relay and the extension")
    group.addoption(
        "--live",
        action="store_true",
        help="use your running Chrome with the bridge extension (wait for it; never launch one)",
    )
    group.addoption("--headed", action="store_true", help="launch the test browser with a window")
    group.addoption("--browser-path", default=None, help="Chromium/Chrome executable to launch")
    group.addoption(
        "--bridge-reports",
        default=None,
        metavar="DIR",
        help="where scenario run reports go (default: <rootdir>/reports, or $BRIDGE_REPORTS_DIR)",
    )
    group.addoption(
        "--chrome-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra argument for the launched browser (repeatable)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "e2e: runs in a real browser through the relay and the bridge extension"
    )
    # Scenario files (scenarios/*.json) as tests: a plugin of its own, same fixtures.
    from bridge.scenarios import plugin as scenario_plugin

    if not config.pluginmanager.has_plugin("bridge-scenarios"):
        config.pluginmanager.register(scenario_plugin, "bridge-scenarios")


def pytest_report_header(config: pytest.Config) -> str:
    if config.getoption("--live"):
        return "bridge: live mode (your Chrome with the bridge extension)"
    try:
        exe = str(find_browser(config.getoption("--browser-path")))
    except BridgeError as exc:
        exe = f"none found ({exc.__class__.__name__})"
    mode = "headed" if config.getoption("--headed") else "headless"
    return f"bridge: launched browser {exe} ({mode}), fake ChatGPT/Gemini"


# The plugin's async fixtures live on the session event loop (one browser per session).
_SESSION_LOOP_FIXTURES = frozenset(
    {"relay", "extension_link", "tab", "new_tab", "bridge", "chatgpt_tab", "gemini_tab"}
)
# Fixtures defined in bridge's own modules (this one, bridge.scenarios.plugin, any module the
# fixtures may move to) are bridge's; the same names in a user's conftest are not.
_BRIDGE_PACKAGE = __name__.partition(".")[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run async tests that use bridge's fixtures on the session loop, where those live.

    Without this, a project whose pytest-asyncio default is a per-test loop would drive a
    relay from a foreign loop. An explicit ``loop_scope`` on the test wins. A test whose
    ``tab`` or ``relay`` is the user's own fixture of that name is left alone.
    """
    for item in items:
        if not isinstance(item, pytest.Function) or not inspect.iscoroutinefunction(item.obj):
            continue
        if not _uses_bridge_session_fixture(item):
            continue
        marker = item.get_closest_marker("asyncio")  # set by pytest-asyncio's auto mode too
        if marker is not None and "loop_scope" not in marker.kwargs:
            item.add_marker(pytest.mark.asyncio(loop_scope="session"), append=False)


def _uses_bridge_session_fixture(item: pytest.Function) -> bool:
    """Does the test's fixture closure use one of bridge's own session-loop fixtures?

    The loop must be chosen at collection (pytest-asyncio reads the marker), and pytest 9 has
    no public API for "which definition of fixture X does this item get": ``item.fixturenames``
    has names only, and ``FixtureRequest`` exists only during setup. So this reads
    ``item._fixtureinfo.name2fixturedefs`` (name -> visible ``pytest.FixtureDef``s, farthest
    first, the last one in use), as pytest-asyncio itself does in its
    ``pytest_pyfunc_call``, and tells bridge's definitions by their function's module
    (``FixtureDef.func`` and ``argnames`` are attributes of the public ``pytest.FixtureDef``).
    If that private mapping ever goes away, nothing is moved: a user's run is never changed,
    and bridge's own tests (tests/test_plugin.py) would fail loudly with "session loop".
    """
    name2fixturedefs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", None)
    if not isinstance(name2fixturedefs, dict):
        return False
    for name in _SESSION_LOOP_FIXTURES.intersection(item.fixturenames):
        # fixturenames is the whole closure, so a user fixture that requests bridge's
        # new_tab brings it in; a user's ``tab`` that requests ``tab`` uses bridge's below it.
        for fixturedef in reversed(name2fixturedefs.get(name, ())):
            if _is_bridge_fixture(fixturedef):
                return True
            if name not in fixturedef.argnames:
                break  # overrides the outer definitions without using them
    return False


def _is_bridge_fixture(fixturedef: pytest.FixtureDef[object]) -> bool:
    module = getattr(fixturedef.func, "__module__", None) or ""
    return module == _BRIDGE_PACKAGE or module.startswith(_BRIDGE_PACKAGE + ".")


@pytest.fixture(scope="session")
def bridge_options(pytestconfig: pytest.Config) -> BridgeOptions:
    return BridgeOptions(
        live=bool(pytestconfig.getoption("--live")),
        headed=bool(pytestconfig.getoption("--headed")),
        browser_path=pytestconfig.getoption("--browser-path"),
        chrome_args=tuple(pytestconfig.getoption("--chrome-arg")),
    )


@pytest.fixture(scope="session")
def fake_sites(bridge_options: BridgeOptions) -> Iterator[FakeSites]:
    """The fake ChatGPT and Gemini sites (not used against a live browser)."""
    if bridge_options.live:
        pytest.skip("needs the fake ChatGPT/Gemini sites; --live talks to the real ones")
    from bridge.fakes import FakeSites

    sites = FakeSites()
    sites.start()
    try:
        yield sites
    finally:
        sites.stop()


@pytest.fixture
def fakes(fake_sites: FakeSites) -> FakeSites:
    """The fake sites, reset to their defaults for this test."""
    fake_sites.chatgpt.reset()
    fake_sites.gemini.reset()
    return fake_sites


@pytest.fixture(scope="session")
def launched_browser(
    bridge_options: BridgeOptions, request: pytest.FixtureRequest
) -> LaunchedBrowser | None:
    """The browser this session will launch (not started yet), or None with ``--live``."""
    if bridge_options.live:
        return None
    if bridge_options.headed and not os.environ.get("DISPLAY"):
        raise pytest.UsageError("--headed needs a display: run under `xvfb-run -a pytest ...`")
    sites: FakeSites = request.getfixturevalue("fake_sites")
    return LaunchedBrowser(
        LaunchOptions(
            browser_path=bridge_options.browser_path,
            headless=not bridge_options.headed,
            isolated=True,
            remote_debugging=True,  # lets tests compare with, and poke at, the browser directly
            extra_args=[*sites.chromium_args(), *bridge_options.chrome_args],
        )
    )


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def relay(launched_browser: LaunchedBrowser | None) -> AsyncIterator[Relay]:
    # A launched browser is recognised by its start page; live mode takes any extension.
    relay = Relay(matcher=launched_browser.is_mine) if launched_browser else Relay()
    await relay.start()
    try:
        yield relay
    finally:
        await relay.stop()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def extension_link(
    relay: Relay, launched_browser: LaunchedBrowser | None
) -> AsyncIterator[Browser]:
    """A Browser whose extension is connected to ``relay``."""
    browser = Browser(relay)
    if launched_browser is not None:
        await launched_browser.start()
    try:
        try:
            await relay.wait_for_link(scaled(60.0 if launched_browser is None else 30.0))
        except BridgeError as exc:
            detail = f"\n{launched_browser.stderr_tail()}" if launched_browser else ""
            pytest.fail(f"{exc}{detail}", pytrace=False)
        yield browser
    finally:
        await browser.detach_all()
        if launched_browser is not None:
            await launched_browser.stop()


@pytest_asyncio.fixture(loop_scope="session")
async def new_tab(extension_link: Browser) -> AsyncIterator[NewTab]:
    """Factory: ``await new_tab(url, active=False)`` -> attached CdpSession, closed afterwards."""
    opened: list[CdpSession] = []

    async def open_tab(url: str = "about:blank", *, active: bool = False) -> CdpSession:
        session = await extension_link.new_tab(url, active=active)
        opened.append(session)
        return session

    yield open_tab
    for session in opened:
        if session.ended is None:
            with contextlib.suppress(BridgeError):
                await extension_link.close_tab(session.tab_id)


@pytest_asyncio.fixture(loop_scope="session")
async def bridge(
    extension_link: Browser,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> AsyncIterator[Bridge]:
    """The facade the MCP server uses, with a fresh state directory; its tabs close afterwards."""
    before = set(extension_link.sessions)
    state = tmp_path_factory.mktemp("bridge-state")
    yield Bridge(extension_link, state_dir=state, session_key=f"test-{request.node.name}"[:80])
    for tab_id in set(extension_link.sessions) - before:
        with contextlib.suppress(BridgeError):
            await extension_link.close_tab(tab_id)


@pytest_asyncio.fixture(loop_scope="session")
async def chatgpt_tab(bridge: Bridge) -> CdpSession:
    """The ChatGPT tab an ask would use, connected (fake site unless --live)."""
    return await bridge.provider_tab("chatgpt")


@pytest_asyncio.fixture(loop_scope="session")
async def gemini_tab(bridge: Bridge) -> CdpSession:
    """The Gemini tab an ask would use, connected (fake site unless --live)."""
    return await bridge.provider_tab("gemini")


@pytest_asyncio.fixture(loop_scope="session")
async def tab(new_tab: NewTab) -> CdpSession:
    """A fresh tab at about:blank, attached, closed after the test."""
    return await new_tab()
