"""Browser operations for any tab, as a Python API: what the MCP browser tools wrap.

``ToolHub`` (one per ``Bridge``) keeps one ``TabState`` per tab the tools touched: its
recorder (console, network, dialogs, downloads, popups since attachment), its refs and
frames. ``BrowserTools`` is one client's view: its current tab (the last one it opened,
navigated or selected) and every operation. Several clients never share a current tab.
Provider tabs (the ask tools' ChatGPT and Gemini tabs) are never a default: a client only
acts on one it selected or named explicitly.

The operations live in ``bridge.tools.operations``, one module per family (``tabs``,
``navigation``, ``reading``, ``acting``), each a class over ``ToolClient`` (the current tab,
the tab an operation names, the frame of every action); ``BrowserTools`` is all of them.
Mixins rather than functions the class forwards to: each public method is written once,
its signature and docstring where its code is, and mypy checks every family against the
one base they share.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bridge.cdp.browser import Browser
from bridge.policy.files import FilePolicy
from bridge.tools.operations.acting import Acting
from bridge.tools.operations.client import DialogOpen, NoCurrentTab
from bridge.tools.operations.devtools import DevTools
from bridge.tools.operations.lean import LeanSnapshots
from bridge.tools.operations.navigation import Navigation
from bridge.tools.operations.network import NetworkOperations
from bridge.tools.operations.pdf import Pdf
from bridge.tools.operations.reading import Reading
from bridge.tools.operations.recording import Recording
from bridge.tools.operations.storage import Storage
from bridge.tools.operations.tabs import TabOperations
from bridge.tools.operations.testing import Testing
from bridge.tools.operations.vision import Vision
from bridge.tools.recorder import TabRecorder
from bridge.tools.targets import TabState

__all__ = ["BrowserTools", "DialogOpen", "NoCurrentTab", "ToolHub", "ToolSettings"]


@dataclass(frozen=True)
class ToolSettings:
    """The person's settings for the browser tools: how long an action waits for its
    element, whether file: URLs may be opened (--allow-file-urls), and whether each client's
    tabs are gathered in a tab group of its own. ``codegen`` (--codegen python) adds each
    action's Playwright-for-Python line to its result; ``record_code`` keeps those lines
    without showing them (the testing group's browser_generate_test writes them)."""

    action_timeout: float = 5.0
    allow_file_urls: bool = False
    #: Each client's tabs in a Chrome tab group named after it (``ToolClient._group``).
    tab_groups: bool = True
    codegen: Literal["none", "python"] = "none"
    record_code: bool = False


class ToolHub:
    """The browser tools of one ``Bridge``: the state of every tab they touched, shared by
    all clients, and each client's ``BrowserTools``."""

    def __init__(
        self,
        browser: Browser,
        settings: ToolSettings | None = None,
        *,
        files: FilePolicy | None = None,
    ) -> None:
        self.browser = browser
        self.settings = settings or ToolSettings()
        #: Which files ``file_upload`` may give to a page (docs/flows.md#file-policy).
        self.files = files if files is not None else FilePolicy.create()
        #: Bridge's state folder: where files no client named go (traces). The facade sets
        #: it to its own (``--state-dir``); unset, the default state folder.
        self.state_root: Path | None = None
        self.states: dict[int, TabState] = {}
        self._clients: dict[str, BrowserTools] = {}

    def client(self, key: str = "default") -> BrowserTools:
        """The operations as seen by one client (its own current tab)."""
        tools = self._clients.get(key)
        if tools is None:
            tools = self._clients[key] = BrowserTools(self, key)
        return tools

    async def leave(self, key: str) -> None:
        """Client ``key`` is gone: put back what it changed (``ToolClient.on_leave``) and
        forget its current tab."""
        tools = self._clients.pop(key, None)
        if tools is not None:
            await tools.leave()

    async def close(self) -> None:
        """Bridge is stopping: every client leaves, so the person's tabs are as they were."""
        for key in list(self._clients):
            await self.leave(key)

    async def state(self, tab_id: int) -> TabState:
        """The tab, attached and recording (attached on first use only)."""
        state = self.states.get(tab_id)
        if state is not None and state.tab.ended is None:
            return state
        tab = await self.browser.attach(tab_id)
        recorder = TabRecorder(tab)
        state = TabState(tab, recorder)
        self.states[tab_id] = state
        try:
            await recorder.start()
            # Input to a background tab waits ~5 s for a frame that never comes; emulated
            # focus makes it render (and take input) without touching the person's focus.
            await tab.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
        except BaseException:
            self.states.pop(tab_id, None)
            raise
        return state


class BrowserTools(
    TabOperations,
    Navigation,
    Reading,
    Acting,
    Storage,
    Pdf,
    Testing,
    LeanSnapshots,
    DevTools,
    Vision,
    Recording,
    NetworkOperations,
):
    """Every browser operation, as one client sees them (``ToolHub.client``): what the MCP
    browser tools wrap."""
