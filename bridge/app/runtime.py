"""The whole stack in one object: relay, optional launched browser, Browser, Bridge.

The one way to wire bridge: ``python -m bridge.mcp``, every ``python -m bridge`` command,
the pytest plugin's fixtures and the benchmarks all build a ``Runtime`` from
``RuntimeOptions``, so an option means the same thing everywhere.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bridge.app.facade import Bridge
from bridge.app.launcher import (
    CHANNELS,
    ExtensionDirInvalid,
    ExtensionLoading,
    LaunchedBrowser,
    LaunchOptions,
    default_profile_dir,
    validate_extension_dir,
)
from bridge.cdp.browser import Browser
from bridge.cdp.endpoint import CdpEndpoint
from bridge.folders import folder_hint
from bridge.link.extension_link import ExtensionLink
from bridge.link.relay import Relay
from bridge.link.tokens import load_or_create_token
from bridge.policy.files import FilePolicy
from bridge.policy.guard import Guard
from bridge.policy.tabs import SCOPES
from bridge.providers.flow import AskFlow
from bridge.store.state import default_state_dir, private_state_dir
from bridge.tools.browsing import ToolSettings
from bridge.waiting import scaled
from bridge.wire.extension import LINK_MODES, PORT_RANGE

__all__ = [
    "Runtime",
    "RuntimeOptions",
    "add_allow_path_argument",
    "add_runtime_arguments",
    "display_available",
    "file_policy",
    "options_from_args",
]


@dataclass
class RuntimeOptions:
    """Every option of the stack, meaning the same in every face (MCP server, CLI, pytest)."""

    launch: bool = False  # start Chromium with the extension (the embedded default)
    headless: bool = False  # with launch; forced when there is no display
    isolated: bool = False  # temporary profile
    browser_path: str | None = None
    #: With launch: a Chrome release channel (stable, beta, dev, canary) instead of the
    #: first Chromium/Chrome found; its own lasting profile. Not with browser_path.
    channel: str | None = None
    #: With launch: unpacked extensions loaded next to bridge's (a person's own, under test).
    load_extensions: Sequence[Path] = ()
    #: With launch: how the extensions get in ("flags" or "cdp"; None: by the browser,
    #: Google Chrome over its DevTools pipe). bridge.app.launcher.extension_loading_for.
    extension_loading: ExtensionLoading | None = None
    chrome_args: Sequence[str] = ()
    profile_dir: Path | None = None
    state_dir: Path | None = None  # sessions.json, history.jsonl, debug/ (default_state_dir())
    relay_port: int | None = None
    session_key: str | None = None
    remote_debugging: bool = False  # benchmarks: the browser's own DevTools port
    debug_pipe: bool = False  # tests: the browser's own DevTools over a pipe (no port)
    #: How long a command waits for the extension to connect before failing with advice.
    connect_timeout: float | None = None
    flow: AskFlow | None = None
    tool_settings: ToolSettings | None = None  # the browser tools' action timeout, file URLs
    cdp: bool = False  # serve the DevTools endpoint (/json/*, /cdp) on the relay's port
    #: Where relays and native hosts meet (bridge.link.registry); None: the per-user one.
    #: With launch it is the island's directory (its secret too); None: a fresh private one.
    runtime_dir: Path | None = None
    #: Live mode, several of the person's browsers linked: "first" keeps the first serving
    #: until it goes away or the person picks another in its popup; "newest" switches.
    switch: str = "first"
    #: Which tabs clients may act on (bridge.policy.tabs): "own" (tabs bridge opened, and
    #: tabs the person shared) or "all". None: "all" in a browser bridge launched (every tab
    #: is bridge's), "own" in the person's.
    tabs: str | None = None
    #: How the extension links to this relay: "websocket", or "native" through the host.
    link: str = "websocket"
    native_host: bool = True  # with launch: register the native host in the profile
    #: Folders (or files) besides the working directory whose files may be given to a page
    #: (``--allow-path``; docs/flows.md#file-policy).
    allow_paths: Sequence[Path] = ()
    #: The person's guard rails (--allowed-origins, --blocked-origins, --read-only): every
    #: tab's commands, the tools' and the DevTools endpoint's, are checked against it.
    guard: Guard | None = None


def add_runtime_arguments(parser: argparse.ArgumentParser, *, state: bool = True) -> None:
    """The browser and state options the entry points share (MCP server, CLI commands).

    ``state=False`` leaves out what a command has no use for (the relay command keeps no
    state): an option a command accepts is an option it honours.
    """
    b = parser.add_argument_group("browser")
    b.add_argument("--launch", action="store_true", help="start Chromium/Chrome with the extension")
    b.add_argument("--headless", action="store_true", help="with --launch: no window")
    b.add_argument("--isolated", action="store_true", help="with --launch: a temporary profile")
    which = b.add_mutually_exclusive_group()
    which.add_argument("--browser-path", help="with --launch: the Chromium/Chrome executable")
    which.add_argument(
        "--channel",
        choices=CHANNELS,
        help="with --launch: this Google Chrome channel instead of the first Chromium/Chrome "
        "found, with a profile of its own (not with --browser-path or $BRIDGE_BROWSER)",
    )
    b.add_argument(
        "--load-extension",
        action="append",
        default=[],
        type=_extension_dir_argument,
        metavar="DIR",
        help="with --launch: also load this unpacked extension (the folder with its "
        "manifest.json) next to bridge's; repeatable",
    )
    b.add_argument("--profile-dir", type=Path, help="with --launch: profile directory")
    b.add_argument(
        "--chrome-arg", action="append", default=[], metavar="ARG", help="extra browser argument"
    )
    b.add_argument("--relay-port", type=int, help="relay port (default: first free in 19222-19250)")
    b.add_argument(
        "--newest-browser",
        action="store_true",
        help="without --launch: a browser of yours that links later serves at once (logged); "
        "by default it waits until the first goes away or you choose it in its popup",
    )
    b.add_argument(
        "--tabs",
        choices=SCOPES,
        default=None,
        help="which tabs bridge may act on: own (tabs it opened, and tabs you share from "
        "its popup; the default in your own browser) or all (the default with --launch)",
    )
    b.add_argument(
        "--link",
        choices=LINK_MODES,
        default="websocket",
        help="how the extension links to the relay: a loopback WebSocket (default) or "
        "through the native host (install-native-host; where loopback sockets are blocked)",
    )
    if not state:
        return
    s = parser.add_argument_group("state")
    s.add_argument(
        "--state-dir",
        type=Path,
        help="sessions, history, tokens, pack overrides (default: $BRIDGE_STATE_DIR, else "
        f"{folder_hint('state')}; a working directory's .local/bridge only when named here)",
    )
    s.add_argument("--session-key", help="conversation key (default: the working directory name)")


def _extension_dir_argument(value: str) -> Path:
    """``--load-extension``'s check at parse time: a bad folder stops the command at once,
    with argparse's usage line, before a relay or a browser starts."""
    try:
        return validate_extension_dir(value)
    except ExtensionDirInvalid as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--load-extension ")) from None


def add_allow_path_argument(parser: argparse.ArgumentParser) -> None:
    """``--allow-path DIR``, on the entry points that give files to pages."""
    parser.add_argument(
        "--allow-path",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="a folder (or file) whose files may be given to pages (uploads, files with a "
        "question), besides the working directory; repeatable. Hidden files and credential "
        "folders are refused unless an --allow-path names them (docs/flows.md#file-policy)",
    )


def file_policy(options: RuntimeOptions) -> FilePolicy:
    """Which files may go to a page: the working directory and ``options.allow_paths``,
    never the state folder or the launched browser's profile (docs/flows.md#file-policy)."""
    protect = [options.state_dir or default_state_dir()]
    if options.launch and not options.isolated:
        protect.append(options.profile_dir or default_profile_dir(options.channel))
    return FilePolicy.create(options.allow_paths, protect=protect)


def options_from_args(args: argparse.Namespace) -> RuntimeOptions:
    return RuntimeOptions(
        launch=args.launch,
        headless=args.headless,
        isolated=args.isolated,
        browser_path=args.browser_path,
        channel=getattr(args, "channel", None),
        load_extensions=tuple(getattr(args, "load_extension", ())),
        chrome_args=args.chrome_arg,
        profile_dir=args.profile_dir,
        state_dir=getattr(args, "state_dir", None),
        relay_port=args.relay_port,
        tabs=getattr(args, "tabs", None),
        switch="newest" if getattr(args, "newest_browser", False) else "first",
        link=args.link,
        session_key=getattr(args, "session_key", None),
        allow_paths=tuple(getattr(args, "allow_path", ())),
    )


def display_available() -> bool:
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


@dataclass
class Runtime:
    """The whole stack, wired the one way: relay, optional launched browser, Browser, the
    Bridge facade and, with ``cdp=True``, the DevTools endpoint. ``async with`` starts and
    stops it."""

    options: RuntimeOptions = field(default_factory=RuntimeOptions)
    relay: Relay = field(init=False)
    browser: Browser = field(init=False)
    bridge: Bridge = field(init=False)
    launched: LaunchedBrowser | None = field(init=False, default=None)
    #: The DevTools endpoint the relay serves (with ``cdp=True``).
    endpoint: CdpEndpoint | None = field(init=False, default=None)

    @property
    def headless(self) -> bool:
        """Whether a launched browser runs without a window (asked for, or no display)."""
        return self.options.headless or not display_available()

    async def start(self) -> Runtime:
        """Relay first, then the browser (so its extension finds the relay at once)."""
        opts = self.options
        # Another user's state directory is refused before anything in it is read.
        private_state_dir(opts.state_dir or default_state_dir(), create=False)
        if opts.launch:
            self.launched = LaunchedBrowser(
                LaunchOptions(
                    browser_path=opts.browser_path,
                    channel=opts.channel,
                    extensions=tuple(opts.load_extensions),
                    extension_loading=opts.extension_loading,
                    headless=self.headless,
                    isolated=opts.isolated,
                    profile_dir=opts.profile_dir,
                    extra_args=list(opts.chrome_args),
                    remote_debugging=opts.remote_debugging,
                    debug_pipe=opts.debug_pipe,
                    native_host=opts.native_host,
                    island_dir=opts.runtime_dir,
                )
            )
            # An island: only the browser launched here can prove its secret to this relay.
            self.relay = self.launched.relay(port=opts.relay_port, link=opts.link)
        else:
            self.relay = Relay(
                port=opts.relay_port,
                runtime_dir=opts.runtime_dir,
                link=opts.link,
                switch=opts.switch,
            )
        await self.relay.start()
        self.browser = Browser(self.relay, connect_timeout=opts.connect_timeout)
        self.browser.tab_scope = opts.tabs or ("all" if opts.launch else "own")
        if opts.guard is not None:
            self.browser.guard = opts.guard
        self.bridge = Bridge(
            self.browser,
            state_dir=opts.state_dir,
            session_key=opts.session_key,
            flow=opts.flow,
            tool_settings=opts.tool_settings,
            file_policy=file_policy(opts),
        )
        if opts.cdp:
            state_dir = opts.state_dir or default_state_dir()
            token, _ = load_or_create_token(state_dir / "cdp-token")
            settings = opts.tool_settings
            self.endpoint = CdpEndpoint(
                self.browser,
                token,
                allow_file_urls=settings.allow_file_urls if settings else False,
            )
            self.relay.cdp = self.endpoint
        if self.launched is not None:
            try:
                await self.launched.start()
            except BaseException:
                await self.relay.stop()
                raise
            if self.endpoint is not None:  # known once the profile is (launched.start)
                self.endpoint.downloads_dir = self.launched.downloads_dir
        return self

    @property
    def cdp_url(self) -> str:
        """``ws://127.0.0.1:<port>/cdp?token=…`` (with ``cdp=True``): for CDP clients in this
        process. Never print or log it (``bridge token cdp --url`` is how a person gets one)."""
        if self.relay.cdp is None:
            raise RuntimeError("the DevTools endpoint is off: RuntimeOptions(cdp=True)")
        return f"ws://127.0.0.1:{self.relay.port}/cdp?token={self.relay.cdp.token}"

    @property
    def cdp_http_url(self) -> str:
        """``http://127.0.0.1:<port>``: with ``Authorization: Bearer <token>``."""
        return f"http://127.0.0.1:{self.relay.port}"

    async def connected(self, timeout: float | None = None) -> ExtensionLink:
        """The extension's link, once it has connected (ExtensionNotConnected after timeout)."""
        limit = timeout if timeout is not None else scaled(30.0 if self.launched else 10.0)
        return await self.relay.wait_for_link(limit)

    async def stop(self) -> None:
        """Detach debuggers, stop the relay, stop a browser we launched. Idempotent, and
        safe after a start that failed half-way."""
        try:
            if hasattr(self, "bridge"):
                await self.bridge.tools.close()  # clients put back what they changed
            if hasattr(self, "browser"):
                await self.browser.detach_all()
        finally:
            if hasattr(self, "relay"):
                await self.relay.stop()
            if self.launched is not None:
                await self.launched.stop()

    async def __aenter__(self) -> Runtime:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


def start_error(exc: OSError, relay_port: int | None) -> str:
    """What went wrong at start-up, and what to do: a taken relay port names the port or the
    range and the option that helps (no errno, no traceback)."""
    if exc.errno != errno.EADDRINUSE:
        return str(exc)
    lo, hi = PORT_RANGE
    if relay_port is not None:
        return (
            f"relay port {relay_port} is already in use (another bridge, or another program): "
            f"stop it, or pass another port with --relay-port N (without --relay-port, bridge "
            f"takes the first free port in {lo}-{hi})"
        )
    return (
        f"no free relay port in {lo}-{hi}: all {hi - lo + 1} are taken (other bridges "
        f"running?). Stop one of them, or pass a free port with --relay-port N"
    )
