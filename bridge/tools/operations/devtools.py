"""The devtools operations: performance traces with a short insight summary, and emulation
(CPU, network, viewport, geolocation, user agent, color scheme) that is put back when the
client resets it or leaves.

Both act through the tab's own ``chrome.debugger`` session. What that session allows:

- ``Tracing`` works on a tab target: Chrome records the tab's renderer process (not the
  browser or GPU process: those need the browser target, which ``chrome.debugger`` does not
  give an extension). One trace at a time in the browser; a second is ``TraceBusy``.
- ``Emulation.*`` and ``Network.emulateNetworkConditions`` work per tab. ``Browser.*`` does
  not exist there, so bridge cannot grant a site the geolocation permission: the emulated
  position reaches pages the person already allowed; elsewhere the page's request asks the
  person as usual (the answer says which). That is also the safer default: an agent never
  gives a site a permission that would outlive it.

The pure parts are elsewhere: what each setting sends and what undoes it
(``bridge.tools.emulation_core``), what a trace says (``bridge.tools.trace_insights``).
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bridge.cdp.page_script import script_file
from bridge.errors import (
    BridgeError,
    CdpError,
    PathNotAllowed,
    TraceBusy,
    TraceFileRefused,
    TraceNotRunning,
    TraceOptionsInvalid,
    TraceTooLarge,
)
from bridge.link.transport import Params
from bridge.store.outputs import OutputFolder, safe_name
from bridge.store.state import default_state_dir
from bridge.tools import emulation_core
from bridge.tools.operations.client import ToolClient
from bridge.tools.targets import TabState
from bridge.tools.trace_insights import TraceSummary, analyze, parse_trace, summarize
from bridge.waiting import EventStream, scaled

__all__ = ["TRACE_CATEGORIES", "DevTools", "TraceResult"]

log = logging.getLogger(__name__)

#: The DevTools performance panel's categories (as chrome-devtools-mcp and Lighthouse record
#: them), without screenshots: they would put pictures of the page into the file and make it
#: many times larger, and no insight here reads them.
TRACE_CATEGORIES = (
    "blink.console",
    "blink.user_timing",
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "disabled-by-default-devtools.timeline.invalidationTracking",
    "disabled-by-default-devtools.timeline.frame",
    "disabled-by-default-devtools.timeline.stack",
    "disabled-by-default-v8.cpu_profiler",
    "disabled-by-default-v8.cpu_profiler.hires",
    "latencyInfo",
    "loading",
    "disabled-by-default-lighthouse",
    "v8.execute",
    "v8",
)
#: The most of a trace bridge reads: a page load is a few MB, a minute of a busy page tens of
#: MB; reading stops here, so a page that floods the trace cannot take bridge's memory.
MAX_TRACE_BYTES = 128 * 1024 * 1024
#: One ``IO.read``: large enough for few round trips, small enough for one relay message.
READ_CHUNK = 4 * 1024 * 1024
#: The trace file names bridge writes (a trace is JSON: nothing else is written under a
#: name a page or a prompt chose, so a "trace" never lands as a script or a dotfile).
TRACE_SUFFIXES = (".json", ".json.gz")
#: Asks the page whether it may read the position (the emulated one reaches it only then).
_GEO_PERMISSION = script_file("geolocation.js").strip().rstrip(";")
#: The isolated world it runs in (shown in DevTools' context picker).
WORLD = "bridge-devtools"


@dataclass
class _Trace:
    """A trace being recorded by this client."""

    state: TabState
    main_frame: str


@dataclass
class _DevToolsState:
    """One client's devtools state: its trace, its last summary, what it emulates where."""

    trace: _Trace | None = None
    last: TraceSummary | None = None
    emulated: dict[int, set[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class TraceResult:
    """A stopped trace: its summary, and where its raw file is."""

    summary: TraceSummary
    path: Path
    bytes: int
    events: int

    def to_text(self) -> str:
        return f"{self.summary.to_text()}\nThe raw trace ({self.bytes} bytes): {self.path}"

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.summary.to_dict(),
            "file": str(self.path),
            "bytes": self.bytes,
            "events": self.events,
        }


class DevTools(ToolClient):
    """Traces and emulation, for one client (``ToolHub.client``)."""

    _devtools_state: _DevToolsState | None = None

    @property
    def _devtools(self) -> _DevToolsState:
        if self._devtools_state is None:
            self._devtools_state = _DevToolsState()
        return self._devtools_state

    # -- emulation ---------------------------------------------------------------------

    async def emulate(self, settings: dict[str, Any], tab: int | None = None) -> dict[str, Any]:
        """Emulate on one tab (``emulation_core.plan``: each setting checked before any is
        sent; a value of None, "auto", "", rate 1 or "No throttling" puts that one back).
        Everything set is undone by ``emulate_reset`` or when this client leaves."""
        steps, resets = emulation_core.plan(settings)
        state = await self._state(tab)
        tab_id = state.tab_id
        mine = self._devtools.emulated.setdefault(tab_id, set())
        done: list[str] = []
        for step in steps:
            # Remembered first: a step of two commands that fails halfway (the viewport's
            # metrics set, its touch refused) is still undone; clearing is always harmless.
            mine.add(step.field)
            self._remember_emulation(tab_id)
            for method, params in step.commands:
                await state.tab.send(method, params)
            done.append(step.said)
        for name in resets:
            for method, params in emulation_core.undo(name):
                await state.tab.send(method, params)
            mine.discard(name)
        self._remember_emulation(tab_id)
        result: dict[str, Any] = {
            "tab": tab_id,
            "set": done,
            "reset": resets,
            "emulating": sorted(mine),
        }
        if "geolocation" in settings and settings["geolocation"] is not None:
            result["geolocation_permission"] = await _geolocation_permission(state)
        return result

    async def emulate_reset(self, tab: int | None = None) -> dict[str, Any]:
        """Put back what this client emulated: on ``tab``, or on every tab it emulated on."""
        tabs = [tab] if tab is not None else sorted(self._devtools.emulated)
        reset: dict[str, list[str]] = {}
        for tab_id in tabs:
            fields = sorted(self._devtools.emulated.get(tab_id, ()))
            await self._reset_tab(tab_id)
            if fields:
                reset[str(tab_id)] = fields
        return {"reset": reset}

    def _remember_emulation(self, tab_id: int) -> None:
        name = f"emulation:{tab_id}"
        if self._devtools.emulated.get(tab_id):

            async def put_back() -> None:
                await self._reset_tab(tab_id)

            self.on_leave(name, put_back)
        else:
            self._devtools.emulated.pop(tab_id, None)
            self.cancel_leave(name)

    async def _reset_tab(self, tab_id: int) -> None:
        """Clear every field this client set on the tab. A tab closed meanwhile took its
        overrides with it: nothing is left to put back there."""
        fields = self._devtools.emulated.pop(tab_id, set())
        self.cancel_leave(f"emulation:{tab_id}")
        state = self.hub.states.get(tab_id)
        if state is None or state.tab.ended is not None:
            return
        for name in sorted(fields):
            for method, params in emulation_core.undo(name):
                await state.tab.send(method, params)

    # -- traces ------------------------------------------------------------------------

    async def start_trace(
        self,
        *,
        reload: bool = False,
        auto_stop: bool = False,
        file_path: str | None = None,
        tab: int | None = None,
    ) -> TraceResult | None:
        """Start recording a performance trace of the tab; with ``reload``, of its load.
        ``auto_stop`` (with ``reload``) stops when the reloaded page is loaded and its network
        has been idle, and returns the result; otherwise ``stop_trace`` does."""
        if auto_stop and not reload:
            raise TraceOptionsInvalid(
                "auto_stop needs reload=true: the trace then ends when the reloaded page is "
                "loaded and its network idle. To trace an interaction, start without "
                "auto_stop, act, then call performance_stop_trace."
            )
        if file_path is not None:
            self._trace_target(file_path)  # refused before anything starts
        if self._devtools.trace is not None:
            raise TraceBusy(
                f"this client is already recording a trace of tab "
                f"{self._devtools.trace.state.tab_id}: call performance_stop_trace first"
            )
        state = await self._state(tab)
        main = await state.main_frame_id()
        params = {
            "transferMode": "ReturnAsStream",
            "streamFormat": "json",
            "streamCompression": "none",
            "traceConfig": {
                "includedCategories": list(TRACE_CATEGORIES),
                "excludedCategories": ["*"],
            },
        }
        try:
            await state.tab.send("Tracing.start", params)
        except CdpError as exc:
            raise TraceBusy(
                "the browser is already recording a trace (another client, or DevTools' own "
                f"performance panel): stop that one first ({exc})"
            ) from exc
        self._devtools.trace = _Trace(state, main)
        self.on_leave("trace", self._discard_trace)
        if reload:
            try:
                await self._reload_for_trace(state, main, wait_idle=auto_stop)
            except BaseException:
                await self._discard_trace()
                raise
        if auto_stop:
            return await self.stop_trace(file_path=file_path)
        return None

    async def _reload_for_trace(self, state: TabState, main: str, *, wait_idle: bool) -> None:
        """Reload and wait for the load event; with ``wait_idle``, also for Chrome's own
        ``networkIdle`` lifecycle event of the reloaded document (no request for 500 ms), so
        what the page loads late (images set by script, the LCP) is in the trace. Only the
        new document's events count: enabling lifecycle events replays the old document's,
        so the new one is known by the loader id of its first ("init") event. Bounded by
        the timeouts; a page that never goes idle simply ends the trace there."""
        tab = state.tab
        lifecycle = tab.stream("Page.lifecycleEvent", lambda p: p.get("frameId") == main)
        loaded = tab.expect_event("Page.loadEventFired")
        try:
            if wait_idle:
                await tab.send("Page.setLifecycleEventsEnabled", {"enabled": True})
            await tab.send("Page.reload", {})
            await loaded.wait(scaled(30.0))
            if wait_idle:
                await _network_idle(lifecycle, self.timeout)
        finally:
            loaded.close()
            lifecycle.close()
            if wait_idle and tab.ended is None:
                await tab.send("Page.setLifecycleEventsEnabled", {"enabled": False})

    async def stop_trace(self, *, file_path: str | None = None) -> TraceResult:
        """Stop this client's trace: its summary, and its raw file (``file_path`` inside an
        allowed folder, ``.json`` or ``.json.gz``; by default bridge's outputs folder)."""
        folder, name = self._trace_target(file_path)
        trace = self._devtools.trace
        if trace is None:
            raise TraceNotRunning(
                "this client is not recording a trace: start one with performance_start_trace"
            )
        self._devtools.trace = None
        self.cancel_leave("trace")
        data = await _collect(trace.state)
        events = parse_trace(data)
        summary = summarize(events, trace.main_frame)
        self._devtools.last = summary
        body = gzip.compress(data) if name.endswith(".gz") else data
        try:
            saved = OutputFolder(folder).save("file", name, body, "application/json")
        except OSError as exc:  # a full disk, a folder gone: the summary stays readable
            raise TraceFileRefused(
                str(folder / name),
                f"writing it failed ({exc}); performance_analyze_insight still has its insights",
            ) from exc
        return TraceResult(summary, saved.path, saved.bytes, len(events))

    async def analyze_insight(self, insight_name: str) -> str:
        """One insight of this client's last trace, in detail."""
        last = self._devtools.last
        if last is None:
            raise TraceNotRunning(
                "no trace recorded yet: performance_start_trace (reload=true, auto_stop=true) "
                "records one"
            )
        return analyze(last, insight_name)

    async def _discard_trace(self) -> None:
        """End this client's trace without reading it (the client left, or its reload failed):
        the browser's single trace slot is free again."""
        trace, self._devtools.trace = self._devtools.trace, None
        self.cancel_leave("trace")
        if trace is None or trace.state.tab.ended is not None:
            return
        tab = trace.state.tab
        complete = tab.expect_event("Tracing.tracingComplete")
        try:
            await tab.send("Tracing.end")
            done = await complete.wait(scaled(30.0))
        finally:
            complete.close()
        if done.get("stream"):
            await tab.send("IO.close", {"handle": done["stream"]})

    def _trace_target(self, file_path: str | None) -> tuple[Path, str]:
        """The folder and name a trace goes to; ``TraceFileRefused`` for a path bridge will
        not write (outside the allowed folders, hidden, protected, not a plain .json name)."""
        if file_path is None:
            stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
            root = self.hub.state_root or default_state_dir()
            return root / "outputs" / "traces", f"trace-{stamp}.json"
        if not file_path.strip() or "\x00" in file_path:
            raise TraceFileRefused(file_path, "a file name may not be empty or hold a NUL")
        try:
            resolved = self.hub.files.check(file_path)
        except PathNotAllowed as exc:
            raise TraceFileRefused(file_path, _refusal(exc.reason)) from exc
        name = resolved.name
        if resolved.is_dir():
            raise TraceFileRefused(file_path, "it is a folder: name a file in it, e.g. trace.json")
        if safe_name(name) != name or not name.lower().endswith(TRACE_SUFFIXES):
            raise TraceFileRefused(
                file_path, "a trace file is a plain name ending in .json or .json.gz"
            )
        if not resolved.parent.is_dir():
            raise TraceFileRefused(file_path, f"the folder {resolved.parent} does not exist")
        return resolved.parent, name


async def _network_idle(lifecycle: EventStream[Params], timeout: float) -> None:
    """Wait for the reloaded document's ``networkIdle`` (its loader: the last "init" seen;
    every event before that one is an older document's), at most ``timeout`` s."""
    deadline = asyncio.get_running_loop().time() + timeout
    loader: Any = None
    while (left := deadline - asyncio.get_running_loop().time()) > 0:
        event = await lifecycle.next(left)
        if event is None:
            break
        if event.get("name") == "init":
            loader = event.get("loaderId")
        elif event.get("name") == "networkIdle" and loader and event.get("loaderId") == loader:
            return
    log.info("the reloaded page's network was not idle within %.0f s", timeout)


async def _geolocation_permission(state: TabState) -> str:
    """The page's geolocation permission, read in an isolated world (``geolocation.js``)."""
    world = await state.tab.send(
        "Page.createIsolatedWorld", {"frameId": await state.main_frame_id(), "worldName": WORLD}
    )
    result = await state.tab.send(
        "Runtime.callFunctionOn",
        {
            "functionDeclaration": _GEO_PERMISSION,
            "executionContextId": world["executionContextId"],
            "returnByValue": True,
            "awaitPromise": True,
        },
    )
    return str(result.get("result", {}).get("value", "unknown"))


def _refusal(reason: str) -> str:
    if reason == "hidden":
        return "a name in its path is hidden (starts with '.')"
    if reason == "protected":
        return "it is in a protected place (credentials, browser profiles, bridge's own state)"
    return "it is outside the folders bridge may write to (the working directory, --allow-path)"


async def _collect(state: TabState) -> bytes:
    """End the trace and read it from its stream (bounded by ``MAX_TRACE_BYTES``)."""
    tab = state.tab
    complete = tab.expect_event("Tracing.tracingComplete")
    try:
        await tab.send("Tracing.end")
        done = await complete.wait(scaled(60.0))
    finally:
        complete.close()
    handle = done.get("stream")
    if not handle:
        raise TraceNotRunning("the browser returned no trace (was it stopped elsewhere?)")
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            part = await tab.send("IO.read", {"handle": handle, "size": READ_CHUNK})
            text = str(part.get("data", ""))
            chunk = base64.b64decode(text) if part.get("base64Encoded") else text.encode()
            size += len(chunk)
            if size > MAX_TRACE_BYTES:
                raise TraceTooLarge(
                    f"the trace is over {MAX_TRACE_BYTES // (1024 * 1024)} MB and was dropped: "
                    "trace a shorter stretch (reload=true, auto_stop=true traces one page load)"
                )
            chunks.append(chunk)
            if part.get("eof"):
                break
    finally:
        try:
            await tab.send("IO.close", {"handle": handle})
        except BridgeError as exc:  # the tab closed while reading: the stream went with it
            log.info("closing the trace stream failed: %s", exc)
    return b"".join(chunks)
