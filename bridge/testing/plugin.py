"""The bridge pytest plugin (registered through the ``pytest11`` entry point).

Fixtures open the relay, the extension link and tabs, exactly as the MCP server does:
- ``bridge_runtime`` (session): the whole stack, wired by ``bridge.app.runtime.Runtime`` exactly
  as ``python -m bridge.mcp`` wires it — a Chromium launched for the session (temporary
  profile, fake ChatGPT/Gemini mapped in), or with ``--live`` the person's own Chrome;
- ``relay`` (session): its loopback relay; ``launched_browser``: the browser it launched;
- ``extension_link`` (session): its ``Browser``, once the extension has connected;
- ``tab`` / ``new_tab`` (function): fresh attached tabs, closed afterwards;
- ``fake_sites`` (session) / ``fakes`` (function, reset): the fake provider sites;
- ``claude_hub`` (session) / ``claude_tools`` (function): the browser tools over the Claude
  browser extension (docs/claude-extension.md): the extension's native host, started by the
  person's Chrome, links to this session; a test uses ``claude_tools`` as it would
  ``BrowserTools``.

Under pytest-xdist each worker is its own process: its own relay port, its own browser.
"""

from __future__ import annotations

import importlib.util
import inspect
import logging
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import pytest_asyncio

from bridge.app.facade import Bridge
from bridge.app.launcher import CHANNELS, LaunchedBrowser, find_browser, validate_extension_dir
from bridge.app.runtime import Runtime, RuntimeOptions
from bridge.cdp.browser import Browser
from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError
from bridge.link.registry import ENV_RUNTIME_DIR
from bridge.link.relay import Relay
from bridge.policy.files import FilePolicy
from bridge.tools.claude import ClaudeToolHub, ClaudeTools, claude_browser
from bridge.waiting import scaled

if TYPE_CHECKING:
    from bridge.fakes import FakeSites

__all__ = ["BridgeOptions"]

log = logging.getLogger(__name__)

NewTab = Callable[..., Awaitable[CdpSession]]


@dataclass(frozen=True)
class BridgeOptions:
    """The plugin's command-line options, read once per session (``--bridge-live``, …)."""

    live: bool = False
    headed: bool = False
    link: str = "websocket"
    browser_path: str | None = None
    #: A Chrome release channel to launch (``--bridge-channel``) instead of any Chromium.
    channel: str | None = None
    #: The project's own unpacked extensions, loaded next to bridge's
    #: (``--bridge-load-extension``), so its tests drive a browser that runs them.
    load_extensions: tuple[Path, ...] = field(default_factory=tuple)
    chrome_args: tuple[str, ...] = field(default_factory=tuple)
    #: Besides pytest's working directory, where files given to pages may come from
    #: (``--bridge-allow-path`` / ini ``bridge_allow_paths``; docs/flows.md#file-policy).
    allow_paths: tuple[Path, ...] = field(default_factory=tuple)


#: The option that allows more files, as refusals name it under pytest.
ALLOW_PATH_OPTION = "--bridge-allow-path"
#: ``--bridge-`` prefixed: pytest-playwright has ``--browser-channel`` (its own browsers'),
#: and a bare ``--channel`` or ``--load-extension`` would read as that plugin's or pytest's.
CHANNEL_OPTION = "--bridge-channel"
LOAD_EXTENSION_OPTION = "--bridge-load-extension"


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    group = parser.getgroup("bridge", "bridge: real Chrome through the relay and the extension")
    group.addoption(
        "--live",
        action="store_true",
        help="use your running Chrome with the bridge extension (wait for it; never launch one)",
    )
    if not _playwright_owns_headed(pluginmanager):
        group.addoption(
            "--headed", action="store_true", help="launch the test browser with a window"
        )
    group.addoption("--browser-path", default=None, help="Chromium/Chrome executable to launch")
    group.addoption(
        CHANNEL_OPTION,
        choices=CHANNELS,
        default=None,
        help="launch this Google Chrome channel instead of the first Chromium/Chrome found "
        "(not with --browser-path or $BRIDGE_BROWSER)",
    )
    group.addoption(
        LOAD_EXTENSION_OPTION,
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="also load this unpacked extension (the folder with its manifest.json) next to "
        "bridge's in the launched browser, e.g. your own under test; repeatable",
    )
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
    group.addoption(
        "--bridge-link",
        choices=("websocket", "native"),
        default="websocket",
        help="how the launched browser's extension links to the relay: a loopback WebSocket "
        "(default) or through the native host",
    )
    group.addoption(
        ALLOW_PATH_OPTION,
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="a folder (or file) whose files bridge may give to pages (uploads, files with a "
        "question) besides the working directory; repeatable (docs/flows.md#file-policy)",
    )
    parser.addini(
        "bridge_allow_paths",
        type="paths",
        default=[],
        help="like --bridge-allow-path, one per line, relative to the ini file",
    )
    group.addoption(
        "--bridge-capture",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="check bridge against the captures (docs/captures.md) in DIR, or one capture file: "
        "the packs' selectors, the stream parsers and the completion detectors, no network; "
        "without test paths only the captures run; repeatable",
    )
    group.addoption(
        "--bridge-playwright",
        action="store_true",
        help="pytest-playwright's browser/context/page fixtures connect through bridge "
        "(a Chromium launched with the extension; your Chrome with --live)",
    )
    group.addoption(
        "--bridge-cdp-url",
        default=None,
        metavar="URL",
        help="with pytest-playwright: connect to this running bridge DevTools endpoint "
        "(ws://127.0.0.1:<port>/cdp?token=…; or $BRIDGE_CDP_URL); implies --bridge-playwright",
    )


def _quiet_asyncio_default(config: pytest.Config) -> None:
    """bridge brings pytest-asyncio into every project that installs it, and pytest-asyncio
    warns (a PytestDeprecationWarning at every run) in a project that never chose a default
    fixture loop scope. In such a project only, say what pytest-asyncio does when unset
    ("fixture-scope"): the run is the same, without the warning. A project's own setting
    (ini file or ``-o``) is left alone. pytest has no public way for a plugin to give an ini
    value: this fills the value's cache, read by pytest-asyncio's configure after this one."""
    try:
        chosen = config.getini(_ASYNCIO_SCOPE_INI)
    except ValueError:  # pytest-asyncio is not loaded (-p no:asyncio)
        return
    cache = getattr(config, "_inicache", None)
    if not chosen and isinstance(cache, dict):
        cache[_ASYNCIO_SCOPE_INI] = _ASYNCIO_KEEP_FIXTURE_SCOPE


def _playwright_owns_headed(pluginmanager: pytest.PytestPluginManager) -> bool:
    """Will pytest-playwright define ``--headed`` (same meaning: a browser with a window)?

    Both plugins want the option, and pytest refuses a name added twice, in whichever plugin
    comes second (their order is not fixed). So bridge leaves it to pytest-playwright when
    that plugin is present or will be loaded, and reads the shared ``headed`` value.
    """
    if pluginmanager.has_plugin("playwright"):
        return True
    if pluginmanager.is_blocked("playwright") or os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    return importlib.util.find_spec("pytest_playwright") is not None


#: pytest-asyncio's own value for "each fixture's loop is its scope's" (its behaviour when unset).
_ASYNCIO_SCOPE_INI = "asyncio_default_fixture_loop_scope"
_ASYNCIO_KEEP_FIXTURE_SCOPE = "fixture-scope"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    _quiet_asyncio_default(config)
    config.addinivalue_line(
        "markers", "e2e: runs in a real browser through the relay and the bridge extension"
    )
    # Scenario files (scenarios/*.json) as tests: a plugin of its own, same fixtures.
    from bridge.testing.scenarios import collect as scenario_plugin

    if not config.pluginmanager.has_plugin("bridge-scenarios"):
        config.pluginmanager.register(scenario_plugin, "bridge-scenarios")
    # Captures of the sites (captures/*.json, --bridge-capture DIR) as tests.
    from bridge.testing import captures as capture_plugin

    if not config.pluginmanager.has_plugin("bridge-captures"):
        config.pluginmanager.register(capture_plugin, "bridge-captures")
    if config.getoption("--bridge-playwright") or config.getoption("--bridge-cdp-url"):
        _register_playwright_bridge(config)
    _check_browser_options(config)


def _check_browser_options(config: pytest.Config) -> None:
    """Refuse what would launch the wrong browser, or one without the extension under test,
    once at start-up with the reason (a failed fixture would repeat it for every test)."""
    channel = config.getoption(CHANNEL_OPTION, default=None)
    if channel and config.getoption("--browser-path", default=None):
        raise pytest.UsageError(
            f"{CHANNEL_OPTION} and --browser-path both choose the browser: keep one"
        )
    if channel and os.environ.get("BRIDGE_BROWSER"):
        raise pytest.UsageError(
            f"{CHANNEL_OPTION} {channel} and $BRIDGE_BROWSER both choose the browser: unset "
            f"BRIDGE_BROWSER, or drop {CHANNEL_OPTION}"
        )
    for folder in config.getoption(LOAD_EXTENSION_OPTION, default=None) or ():
        try:
            validate_extension_dir(folder)
        except BridgeError as exc:
            message = str(exc).replace("--load-extension", LOAD_EXTENSION_OPTION)
            raise pytest.UsageError(message) from None


def _register_playwright_bridge(config: pytest.Config) -> None:
    """Make pytest-playwright's ``browser`` come through bridge
    (``bridge.testing.playwright_plugin``).

    Registered now, after every installed plugin, so its fixtures win over pytest-playwright's.
    """
    if not config.pluginmanager.has_plugin("playwright"):
        raise pytest.UsageError(
            "--bridge-playwright needs pytest-playwright: pip install 'bridge[playwright]' "
            "(or pip install pytest-playwright), and do not disable it with -p no:playwright"
        )
    from bridge.testing import playwright_plugin

    if not config.pluginmanager.has_plugin("bridge-playwright"):
        config.pluginmanager.register(playwright_plugin, "bridge-playwright")


def pytest_report_header(config: pytest.Config) -> str:
    if config.getoption("--live"):
        return "bridge: live mode (your Chrome with the bridge extension)"
    try:
        exe = str(
            find_browser(config.getoption("--browser-path"), config.getoption(CHANNEL_OPTION))
        )
    except BridgeError as exc:
        exe = f"none found ({exc.__class__.__name__})"
    mode = "headed" if config.getoption("headed", default=False) else "headless"
    return f"bridge: launched browser {exe} ({mode}), fake ChatGPT/Gemini"


# The plugin's async fixtures live on the session event loop (one browser per session).
_SESSION_LOOP_FIXTURES = frozenset(
    {
        "bridge_runtime",
        "bridge_cdp_url",
        "launched_browser",
        "relay",
        "extension_link",
        "tab",
        "new_tab",
        "bridge",
        "chatgpt_tab",
        "gemini_tab",
    }
)
# Fixtures defined in bridge's own modules (this one, bridge.testing.scenarios.collect, any
# module the fixtures may move to) are bridge's; the same names in a user's conftest are not.
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
    and bridge's own tests (tests/testing/test_plugin.py) would fail loudly with "session loop".
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
        link=str(pytestconfig.getoption("--bridge-link")),
        headed=bool(pytestconfig.getoption("headed", default=False)),
        browser_path=pytestconfig.getoption("--browser-path"),
        channel=pytestconfig.getoption(CHANNEL_OPTION),
        load_extensions=tuple(pytestconfig.getoption(LOAD_EXTENSION_OPTION)),
        chrome_args=tuple(pytestconfig.getoption("--chrome-arg")),
        allow_paths=(
            *(Path(p) for p in pytestconfig.getini("bridge_allow_paths")),
            *pytestconfig.getoption(ALLOW_PATH_OPTION),
        ),
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


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def bridge_runtime(
    bridge_options: BridgeOptions,
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Runtime]:
    """The stack the MCP server runs, wired by the same ``Runtime``: relay, browser, facade.

    A Chromium launched for the session (temporary profile, fake ChatGPT/Gemini mapped in,
    its DevTools on a pipe for tests that poke the browser directly), or with ``--live``
    the person's own Chrome, which must connect by itself.
    """
    chrome_args: list[str] = []
    runtime_dir: Path | None = None
    saved_env = os.environ.get(ENV_RUNTIME_DIR)
    if not bridge_options.live:
        # A runtime directory of the session's own: its relays (any a test starts too) and
        # the launched browser's native host meet there, not in the person's.
        # Under /tmp directly: Unix socket paths must stay short (about 100 bytes), and
        # pytest's own temporary paths can be longer.
        runtime_dir = Path(tempfile.mkdtemp(prefix="bridge-rt-"))
        os.environ[ENV_RUNTIME_DIR] = str(runtime_dir)
        if bridge_options.headed and not os.environ.get("DISPLAY"):
            raise pytest.UsageError("--headed needs a display: run under `xvfb-run -a pytest ...`")
        sites: FakeSites = request.getfixturevalue("fake_sites")
        chrome_args = [*sites.chromium_args(), *bridge_options.chrome_args]
    runtime = Runtime(
        RuntimeOptions(
            launch=not bridge_options.live,
            headless=not bridge_options.headed,
            isolated=True,
            browser_path=bridge_options.browser_path,
            channel=bridge_options.channel,
            load_extensions=bridge_options.load_extensions,
            chrome_args=chrome_args,
            debug_pipe=True,  # the browser's own DevTools for tests: a pipe, never a port
            cdp=True,  # the DevTools endpoint, for Playwright/Puppeteer (bridge_cdp_url)
            state_dir=tmp_path_factory.mktemp("bridge-runtime"),
            runtime_dir=runtime_dir,
            link=bridge_options.link,
            allow_paths=bridge_options.allow_paths,
        )
    )
    try:
        await runtime.start()
        runtime.bridge.file_policy = replace(runtime.bridge.file_policy, flag=ALLOW_PATH_OPTION)
        yield runtime
    finally:
        await runtime.stop()
        if runtime_dir is not None:
            shutil.rmtree(runtime_dir, ignore_errors=True)
            if saved_env is None:
                os.environ.pop(ENV_RUNTIME_DIR, None)
            else:
                os.environ[ENV_RUNTIME_DIR] = saved_env


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def launched_browser(bridge_runtime: Runtime) -> LaunchedBrowser | None:
    """The browser this session launched, or None with ``--live``."""
    return bridge_runtime.launched


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def bridge_cdp_url(bridge_runtime: Runtime) -> str:
    """``ws://127.0.0.1:<port>/cdp?token=…``: Playwright's ``connect_over_cdp`` (or
    Puppeteer's ``connect``) drives the session's browser through the extension."""
    await bridge_runtime.connected()
    return bridge_runtime.cdp_url


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def relay(bridge_runtime: Runtime) -> Relay:
    """The session's loopback relay."""
    return bridge_runtime.relay


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def extension_link(bridge_runtime: Runtime) -> Browser:
    """A Browser whose extension is connected to the session's relay."""
    live = bridge_runtime.launched is None
    try:
        await bridge_runtime.connected(scaled(60.0 if live else 30.0))
    except BridgeError as exc:
        launched = bridge_runtime.launched
        detail = f"\n{launched.stderr_tail()}" if launched else ""
        pytest.fail(f"{exc}{detail}", pytrace=False)
    link = bridge_runtime.relay.link
    if link is not None and link.via != bridge_runtime.options.link:
        pytest.fail(f"--bridge-link={bridge_runtime.options.link}, but {link!r} came by {link.via}")
    return bridge_runtime.browser


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
            await _close_quietly(extension_link, session.tab_id)


@pytest_asyncio.fixture(loop_scope="session")
async def bridge(
    extension_link: Browser,
    bridge_options: BridgeOptions,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> AsyncIterator[Bridge]:
    """The facade the MCP server uses, with a fresh state directory; its tabs close afterwards.
    Files it gives to pages come from the working directory and ``--bridge-allow-path``
    (``bridge.file_policy = bridge.file_policy.allowing(tmp_path)`` adds a test's own)."""
    before = set(extension_link.sessions)
    state = tmp_path_factory.mktemp("bridge-state")
    policy = FilePolicy.create(bridge_options.allow_paths, flag=ALLOW_PATH_OPTION)
    key = f"test-{request.node.name}"[:80]
    yield Bridge(extension_link, state_dir=state, session_key=key, file_policy=policy)
    for tab_id in set(extension_link.sessions) - before:
        await _close_quietly(extension_link, tab_id)


async def _close_quietly(browser: Browser, tab_id: int) -> None:
    """Teardown: a tab the test already closed, or lost with the link, needs no closing."""
    try:
        await browser.close_tab(tab_id)
    except BridgeError as exc:
        log.debug("closing tab %s after the test: %s", tab_id, exc)


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


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def claude_hub() -> AsyncIterator[ClaudeToolHub]:
    """The browser tools over the Claude extension: this session's endpoint in the runtime
    directory, which the extension's native host (``bridge install-native-host
    --claude-extension``) links to. Each call waits for that host (bounded), so a session
    without it fails with the set-up instructions, not a hang."""
    async with claude_browser(connect_timeout=scaled(30.0)) as hub:
        yield hub


@pytest.fixture
def claude_tools(claude_hub: ClaudeToolHub, request: pytest.FixtureRequest) -> ClaudeTools:
    """One test's client of the Claude extension's tools (its own current tab)."""
    return claude_hub.client(request.node.name)
