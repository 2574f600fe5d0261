"""What happened in a tab since bridge attached to it: console, network, dialogs, downloads,
popups, and the sessions of its out-of-process frames.

One ``TabRecorder`` per attached tab (shared by every client that uses the tab), fed by CDP
events. Bounded: the newest entries are kept, the count of dropped ones is said. Actions
read it before and after to say what they changed.
"""

from __future__ import annotations

import collections
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError
from bridge.tasks import TaskSet

__all__ = ["ConsoleEntry", "Dialog", "NetworkEntry", "TabRecorder"]

log = logging.getLogger(__name__)

MAX_CONSOLE = 1000
MAX_REQUESTS = 500
Params = dict[str, Any]


@dataclass
class ConsoleEntry:
    """One console message or page error, as ``browser_console_messages`` lists it."""

    level: str  # log, info, warning, error, debug (console API levels; "error" for exceptions)
    text: str
    source: str  # console, exception, log (browser-side messages: network errors, CSP, …)
    url: str = ""
    line: int | None = None
    time: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"level": self.level, "text": self.text, "source": self.source}
        if self.url:
            out["url"] = self.url + (f":{self.line}" if self.line is not None else "")
        return out


@dataclass
class NetworkEntry:
    """One network request of a tab, as ``browser_network_requests`` lists it."""

    request_id: str
    method: str
    url: str
    resource_type: str
    started: float
    status: int | None = None
    status_text: str = ""
    mime_type: str = ""
    size: int | None = None  # encoded bytes received
    duration_ms: float | None = None
    failed: str = ""  # the error text of a failed request
    request_headers: dict[str, str] = field(default_factory=dict)
    response_headers: dict[str, str] = field(default_factory=dict)
    post_data: str | None = None
    session_id: str | None = None

    def summary(self, index: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": index,
            "method": self.method,
            "url": self.url,
            "type": self.resource_type,
            "status": self.status
            if self.status is not None
            else ("failed" if self.failed else None),
        }
        if self.failed:
            out["error"] = self.failed
        if self.size is not None:
            out["size"] = self.size
        if self.duration_ms is not None:
            out["duration_ms"] = round(self.duration_ms, 1)
        return out


@dataclass
class Dialog:
    """A JavaScript dialog the page opened (alert, confirm, prompt, beforeunload)."""

    kind: str  # alert, confirm, prompt, beforeunload
    message: str
    default_prompt: str = ""
    url: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "message": self.message, "default_prompt": self.default_prompt}


class TabRecorder:
    """Subscribes to a tab's events and keeps what tools report."""

    def __init__(self, tab: CdpSession) -> None:
        self.tab = tab
        self.console: collections.deque[ConsoleEntry] = collections.deque(maxlen=MAX_CONSOLE)
        self.console_seen = 0
        self.requests: collections.deque[NetworkEntry] = collections.deque(maxlen=MAX_REQUESTS)
        self.requests_seen = 0
        self._by_id: dict[str, NetworkEntry] = {}
        self.dialog: Dialog | None = None
        self.downloads: list[dict[str, Any]] = []
        self.opened: list[str] = []  # URLs of windows/tabs the page asked to open
        self.navigations = 0  # main-frame navigations committed
        #: Out-of-process iframes: frame id -> child session id (Target auto-attach).
        self.child_sessions: dict[str, str] = {}
        self._unsubscribe: list[Any] = []
        self.started = False
        self._resuming = TaskSet(f"iframes of tab {tab.tab_id}", log)

    async def start(self) -> None:
        """Enable the domains and subscribe (idempotent). From now on, things are recorded."""
        if self.started:
            return
        self.started = True
        on = self.tab.on
        self._unsubscribe += [
            on("Runtime.consoleAPICalled", self._console),
            on("Runtime.exceptionThrown", self._exception),
            on("Log.entryAdded", self._log_entry),
            on("Network.requestWillBeSent", self._request),
            on("Network.responseReceived", self._response),
            on("Network.loadingFinished", self._finished),
            on("Network.loadingFailed", self._failed),
            on("Page.javascriptDialogOpening", self._dialog_opening),
            on("Page.javascriptDialogClosed", self._dialog_closed),
            on("Page.downloadWillBegin", self._download_begins),
            on("Page.downloadProgress", self._download_progress),
            on("Page.windowOpen", self._window_open),
            on("Page.frameNavigated", self._frame_navigated),
            on("Target.attachedToTarget", self._attached),
            on("Target.detachedFromTarget", self._detached),
        ]
        for method in ("Page.enable", "Runtime.enable", "Network.enable", "Log.enable"):
            await self.tab.send(method)
        try:
            # Out-of-process iframes become child sessions we can snapshot and act in. Under
            # an origin guard each waits for us before it runs, so what must hold from its
            # first request on (the guard's Fetch: bridge.cdp.interception, whose listener
            # comes first) is set up before it starts; ``_attached`` lets it run. Without
            # one nothing waits: a frame never pays a round trip for a check nobody asked.
            guard = getattr(self.tab.host, "guard", None)
            pause = bool(guard is not None and guard.origins.active)
            await self.tab.send(
                "Target.setAutoAttach",
                {"autoAttach": True, "waitForDebuggerOnStart": pause, "flatten": True},
            )
        except BridgeError as exc:
            log.info("no child sessions for iframes in tab %s: %s", self.tab.tab_id, exc)

    def stop(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        self.started = False

    # -- console ------------------------------------------------------------------------

    def _console(self, p: Params) -> None:
        level = {"warning": "warning", "error": "error", "assert": "error"}.get(
            str(p.get("type")), "debug" if p.get("type") == "debug" else "log"
        )
        if p.get("type") == "info":
            level = "info"
        text = " ".join(_remote_text(a) for a in p.get("args", []))
        frame = (p.get("stackTrace") or {}).get("callFrames") or [{}]
        self._add_console(
            ConsoleEntry(
                level, text, "console", str(frame[0].get("url", "")), frame[0].get("lineNumber")
            )
        )

    def _exception(self, p: Params) -> None:
        details = p.get("exceptionDetails", {})
        exc = details.get("exception") or {}
        text = str(exc.get("description") or details.get("text") or "exception")
        self._add_console(
            ConsoleEntry(
                "error", text, "exception", str(details.get("url", "")), details.get("lineNumber")
            )
        )

    def _log_entry(self, p: Params) -> None:
        entry = p.get("entry", {})
        level = {"verbose": "debug"}.get(str(entry.get("level")), str(entry.get("level", "log")))
        self._add_console(
            ConsoleEntry(
                level,
                str(entry.get("text", "")),
                "log",
                str(entry.get("url", "")),
                entry.get("lineNumber"),
            )
        )

    def _add_console(self, entry: ConsoleEntry) -> None:
        self.console.append(entry)
        self.console_seen += 1

    def console_errors(self) -> int:
        """How many errors were recorded so far (actions compare before and after)."""
        return sum(1 for e in self.console if e.level == "error")

    # -- network ------------------------------------------------------------------------

    def _request(self, p: Params) -> None:
        request = p.get("request", {})
        rid = str(p.get("requestId"))
        previous = self._by_id.get(rid)
        if previous is not None and p.get("redirectResponse"):
            previous.status = int(p["redirectResponse"].get("status", 0))
        entry = NetworkEntry(
            request_id=rid,
            method=str(request.get("method", "GET")),
            url=str(request.get("url", "")),
            resource_type=str(p.get("type", "Other")),
            started=float(p.get("timestamp", 0.0)),
            request_headers={str(k): str(v) for k, v in (request.get("headers") or {}).items()},
            post_data=request.get("postData"),
        )
        self._by_id[rid] = entry
        self.requests.append(entry)
        self.requests_seen += 1
        if len(self._by_id) > MAX_REQUESTS * 2:
            live = {e.request_id for e in self.requests}
            self._by_id = {k: v for k, v in self._by_id.items() if k in live}

    def _response(self, p: Params) -> None:
        entry = self._by_id.get(str(p.get("requestId")))
        if entry is None:
            return
        response = p.get("response", {})
        entry.status = int(response.get("status", 0))
        entry.status_text = str(response.get("statusText", ""))
        entry.mime_type = str(response.get("mimeType", ""))
        entry.response_headers = {
            str(k): str(v) for k, v in (response.get("headers") or {}).items()
        }

    def _finished(self, p: Params) -> None:
        entry = self._by_id.get(str(p.get("requestId")))
        if entry is None:
            return
        entry.size = int(p.get("encodedDataLength", 0))
        entry.duration_ms = (float(p.get("timestamp", entry.started)) - entry.started) * 1000

    def _failed(self, p: Params) -> None:
        entry = self._by_id.get(str(p.get("requestId")))
        if entry is None:
            return
        entry.failed = str(p.get("errorText", "failed"))
        entry.duration_ms = (float(p.get("timestamp", entry.started)) - entry.started) * 1000

    # -- dialogs, downloads, popups, navigation -------------------------------------------

    def _dialog_opening(self, p: Params) -> None:
        self.dialog = Dialog(
            str(p.get("type", "alert")),
            str(p.get("message", "")),
            str(p.get("defaultPrompt", "")),
            str(p.get("url", "")),
        )

    def _dialog_closed(self, p: Params) -> None:
        self.dialog = None

    def _download_begins(self, p: Params) -> None:
        self.downloads.append(
            {
                "guid": p.get("guid"),
                "url": p.get("url", ""),
                "file_name": p.get("suggestedFilename", ""),
                "state": "inProgress",
            }
        )

    def _download_progress(self, p: Params) -> None:
        for download in self.downloads:
            if download["guid"] == p.get("guid"):
                download["state"] = p.get("state", download["state"])
                if p.get("totalBytes"):
                    download["size"] = p["totalBytes"]

    def _window_open(self, p: Params) -> None:
        self.opened.append(str(p.get("url", "")))

    def _frame_navigated(self, p: Params) -> None:
        frame = p.get("frame", {})
        if not frame.get("parentId"):
            self.navigations += 1

    def _attached(self, p: Params) -> None:
        info = p.get("targetInfo", {})
        if info.get("type") == "iframe" and p.get("sessionId"):
            self.child_sessions[str(info.get("targetId"))] = str(p["sessionId"])
        if p.get("waitingForDebugger") and p.get("sessionId"):
            self._resuming.spawn(self._resume(str(p["sessionId"])))

    async def _resume(self, child: str) -> None:
        try:
            await self.tab.send("Runtime.runIfWaitingForDebugger", session_id=child)
        except BridgeError as exc:  # the frame went away meanwhile
            log.debug("resuming child %s of tab %s: %s", child, self.tab.tab_id, exc)

    def _detached(self, p: Params) -> None:
        sid = p.get("sessionId")
        for frame_id, session in list(self.child_sessions.items()):
            if session == sid:
                del self.child_sessions[frame_id]


def _remote_text(arg: Params) -> str:
    """A console argument as text, the way DevTools' console shows it, briefly."""
    if "value" in arg:
        value = arg["value"]
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if arg.get("unserializableValue"):
        return str(arg["unserializableValue"])
    return str(arg.get("description") or arg.get("type", ""))
