"""The whole stack in one object: relay, optional launched browser, Browser, Bridge.

``python -m bridge.mcp``, ``python -m bridge ask`` and the benchmarks build it the same
way; the pytest plugin builds the same pieces as fixtures.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bridge.browser import Browser
from bridge.core import Bridge
from bridge.launcher import LaunchedBrowser, LaunchOptions
from bridge.relay import Relay

__all__ = ["Runtime", "RuntimeOptions"]


@dataclass
class RuntimeOptions:
    launch: bool = False  # start Chromium with the extension (the embedded default)
    headless: bool = False
    isolated: bool = False  # temporary profile
    browser_path: str | None = None
    chrome_args: Sequence[str] = ()
    profile_dir: Path | None = None
    state_dir: Path | None = None  # sessions.json, history.jsonl, debug/ (default .local/bridge)
    relay_port: int | None = None
    session_key: str | None = None
    remote_debugging: bool = False


def display_available() -> bool:
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


@dataclass
class Runtime:
    options: RuntimeOptions = field(default_factory=RuntimeOptions)
    relay: Relay = field(init=False)
    browser: Browser = field(init=False)
    bridge: Bridge = field(init=False)
    launched: LaunchedBrowser | None = field(init=False, default=None)

    async def start(self) -> Runtime:
        opts = self.options
        if opts.launch:
            self.launched = LaunchedBrowser(
                LaunchOptions(
                    browser_path=opts.browser_path,
                    headless=opts.headless or not display_available(),
                    isolated=opts.isolated,
                    profile_dir=opts.profile_dir,
                    extra_args=list(opts.chrome_args),
                    remote_debugging=opts.remote_debugging,
                )
            )
            self.relay = Relay(port=opts.relay_port, matcher=self.launched.is_mine)
        else:
            self.relay = Relay(port=opts.relay_port)
        await self.relay.start()
        self.browser = Browser(self.relay)
        self.bridge = Bridge(self.browser, state_dir=opts.state_dir, session_key=opts.session_key)
        if self.launched is not None:
            try:
                await self.launched.start()
            except BaseException:
                await self.relay.stop()
                raise
        return self

    async def stop(self) -> None:
        """Detach debuggers, stop the relay, stop a browser we launched. Idempotent."""
        try:
            await self.browser.detach_all()
        finally:
            await self.relay.stop()
            if self.launched is not None:
                await self.launched.stop()

    async def __aenter__(self) -> Runtime:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
