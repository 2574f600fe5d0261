"""A fake of the Claude browser extension's side of native messaging: Chrome and the extension.

It spawns a native host as Chrome does, greets it as the extension does (``ping``,
``get_status``), and runs the host's ``tool_request`` messages one at a time in a real
Chromium (through a plain ``DirectCdp``), answering ``tool_response`` messages without ids.
Built only from public evidence (docs/claude-extension.md, "The fake Claude extension");
it imports nothing of bridge's own Claude code, which it exists to test.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import json
import re
import shutil
import struct
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from bridge.cdp.direct import DirectCdp
from bridge.errors import CdpError
from tests.claude_extension.gif import pngs_to_gif

__all__ = [
    "CLAUDE_EXTENSION_ID",
    "CLAUDE_ORIGIN",
    "FakeClaudeExtension",
    "ManifestRefused",
    "ToolError",
    "frame",
]

CLAUDE_EXTENSION_ID = "fcoeoabgfenejglbffodgkkbkcdhcgfn"
CLAUDE_ORIGIN = f"chrome-extension://{CLAUDE_EXTENSION_ID}/"
#: Chrome's limit on a message from a native host (1 MB); the fake records a larger one.
MAX_FROM_HOST = 1024 * 1024
READ_PAGE_LIMIT = 50_000
PAGE_SCRIPT = (Path(__file__).with_name("page.js")).read_text(encoding="utf-8")

_MODIFIER_BITS = {"alt": 1, "ctrl": 2, "control": 2, "meta": 4, "cmd": 4, "command": 4}
_MODIFIER_BITS |= {"win": 4, "windows": 4, "shift": 8}
#: Named keys: (key, code, windowsVirtualKeyCode, text typed).
_KEYS: dict[str, tuple[str, str, int, str]] = {
    "enter": ("Enter", "Enter", 13, "\r"),
    "return": ("Enter", "Enter", 13, "\r"),
    "tab": ("Tab", "Tab", 9, ""),
    "backspace": ("Backspace", "Backspace", 8, ""),
    "delete": ("Delete", "Delete", 46, ""),
    "escape": ("Escape", "Escape", 27, ""),
    "esc": ("Escape", "Escape", 27, ""),
    "space": (" ", "Space", 32, " "),
    "arrowup": ("ArrowUp", "ArrowUp", 38, ""),
    "arrowdown": ("ArrowDown", "ArrowDown", 40, ""),
    "arrowleft": ("ArrowLeft", "ArrowLeft", 37, ""),
    "arrowright": ("ArrowRight", "ArrowRight", 39, ""),
    "up": ("ArrowUp", "ArrowUp", 38, ""),
    "down": ("ArrowDown", "ArrowDown", 40, ""),
    "left": ("ArrowLeft", "ArrowLeft", 37, ""),
    "right": ("ArrowRight", "ArrowRight", 39, ""),
    "home": ("Home", "Home", 36, ""),
    "end": ("End", "End", 35, ""),
    "pageup": ("PageUp", "PageUp", 33, ""),
    "pagedown": ("PageDown", "PageDown", 34, ""),
}
_KEYS |= {f"f{n}": (f"F{n}", f"F{n}", 111 + n, "") for n in range(1, 13)}
_ACTIONS = {
    "left_click", "right_click", "type", "screenshot", "wait", "scroll", "key",
    "left_click_drag", "double_click", "triple_click", "zoom", "scroll_to", "hover",
}  # fmt: skip


def frame(message: Any) -> bytes:
    """Native messaging's framing: 4-byte little-endian length, then UTF-8 JSON."""
    payload = json.dumps(message, separators=(",", ":")).encode("utf-8")
    return struct.pack("<I", len(payload)) + payload


class ToolError(Exception):
    """A tool's failure, answered as ``{"type": "tool_response", "error": {"content": ...}}``."""


class ManifestRefused(ValueError):
    """A native-messaging manifest Chrome would not start for the Claude extension."""


@dataclass
class _Tab:
    tab_id: int
    target_id: str
    session: str
    url: str = "about:blank"
    closed: bool = False
    console: list[dict[str, Any]] = field(default_factory=list)
    network: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class _Waiter:
    session: str | None
    method: str
    predicate: Any
    future: asyncio.Future[dict[str, Any]]


class FakeClaudeExtension:
    """Chrome plus the Claude extension, as seen by their native host (see module doc)."""

    def __init__(
        self,
        cdp: DirectCdp,
        host_command: list[str],
        env: dict[str, str] | None = None,
        *,
        downloads: Path | None = None,
    ) -> None:
        self.cdp = cdp
        self.host_command = list(host_command)
        self.env = env
        #: Chrome's download folder (``gif_creator`` export with ``download: true``); by
        #: default a temporary one, made by ``start`` and removed by ``stop``.
        self.downloads = downloads
        #: Every message the host sent, in order (an unreadable one as {"type": "invalid"}).
        self.received: list[dict[str, Any]] = []
        #: The host's stderr, line by line.
        self.stderr: list[str] = []
        #: Every tool request run and its answer: (request, response), in order.
        self.handled: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.tab_group_id: int | None = None
        self.images: dict[str, bytes] = {}
        self.gif_frames: list[bytes] = []
        self.recording = False
        self._tabs: dict[int, _Tab] = {}
        self._by_session: dict[str, _Tab] = {}
        self._current: int | None = None
        self._next_tab_id = 101
        self._next_image = 1
        self._proc: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._answers: collections.deque[dict[str, Any]] = collections.deque()
        self._requests: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._unseen: collections.defaultdict[str, collections.deque[dict[str, Any]]] = (
            collections.defaultdict(collections.deque)
        )
        self._changed = asyncio.Condition()
        self._host_gone = False
        self._waiters: list[_Waiter] = []
        self._unlisten: Any = None
        self._tmp: Path | None = None

    # -- starting and stopping -----------------------------------------------------------

    @classmethod
    def from_manifest(
        cls,
        manifest: Path,
        cdp: DirectCdp,
        env: dict[str, str] | None = None,
        *,
        downloads: Path | None = None,
    ) -> FakeClaudeExtension:
        """The host a native-messaging manifest names, refused as Chrome refuses it: not
        stdio, or the Claude extension's origin not among its ``allowed_origins``."""
        data = json.loads(Path(manifest).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ManifestRefused(f"{manifest}: not a JSON object")
        if data.get("type") != "stdio":
            raise ManifestRefused(f"{manifest}: type is {data.get('type')!r}, not 'stdio'")
        origins = data.get("allowed_origins")
        if not isinstance(origins, list) or CLAUDE_ORIGIN not in origins:
            raise ManifestRefused(f"{manifest}: allowed_origins lacks {CLAUDE_ORIGIN}")
        path = data.get("path")
        if not isinstance(path, str) or not path:
            raise ManifestRefused(f"{manifest}: no path")
        host = Path(path)
        if not host.is_absolute():  # Chrome: relative to the manifest's directory (Windows)
            host = Path(manifest).parent / host
        return cls(cdp, [str(host)], env, downloads=downloads)

    async def start(self, timeout: float = 10.0) -> None:
        """Spawn the host (argv: command + the extension's origin), send ``ping`` and
        ``get_status`` as the extension does, and wait for ``pong`` and ``status_response``."""
        self._tmp = Path(tempfile.mkdtemp(prefix="fake-claude-"))
        if self.downloads is None:
            self.downloads = self._tmp / "downloads"
        self.downloads.mkdir(parents=True, exist_ok=True)
        self._unlisten = self.cdp.listen(self._on_cdp_event)
        self._proc = await asyncio.create_subprocess_exec(
            *self.host_command,
            CLAUDE_ORIGIN,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.env,
        )
        self._tasks = [
            asyncio.ensure_future(self._read_host()),
            asyncio.ensure_future(self._read_stderr()),
            asyncio.ensure_future(self._run_tools()),
        ]
        await self.send({"type": "ping"})
        await self.send({"type": "get_status"})
        async with asyncio.timeout(timeout):
            for wanted in ("pong", "status_response"):
                await self._wait_until(lambda t=wanted: any(m["type"] == t for m in self.received))

    async def stop(self, timeout: float = 5.0) -> int | None:
        """Close the host's stdin (Chrome closing the port), wait for it to exit (killed
        after ``timeout``), close the fake's tabs. The host's exit code."""
        code: int | None = None
        if self._proc is not None:
            if self._proc.stdin is not None and not self._proc.stdin.is_closing():
                self._proc.stdin.close()
                with contextlib.suppress(ConnectionError):
                    await self._proc.stdin.wait_closed()
            try:
                async with asyncio.timeout(timeout):
                    code = await self._proc.wait()
            except TimeoutError:
                self._proc.kill()
                code = await self._proc.wait()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None
        for tab in self._tabs.values():
            if not tab.closed:
                with contextlib.suppress(Exception):
                    await self.cdp.call("Target.closeTarget", {"targetId": tab.target_id})
                tab.closed = True
        if self._tmp is not None:
            if self.downloads is not None and self.downloads.is_relative_to(self._tmp):
                self.downloads = None  # the default folder goes with the rest
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        return code

    async def __aenter__(self) -> FakeClaudeExtension:
        await self.start()
        return self

    async def __aexit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # -- the port ----------------------------------------------------------------------

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.returncode

    async def send(self, message: Any) -> None:
        """A message to the host (as the extension's ``port.postMessage``)."""
        await self.send_raw(frame(message))

    async def send_raw(self, data: bytes) -> None:
        assert self._proc is not None and self._proc.stdin is not None, "start() first"
        self._proc.stdin.write(data)
        await self._proc.stdin.drain()

    async def next_message(self, type_: str, timeout: float = 10.0) -> dict[str, Any]:
        """The earliest message of ``type_`` from the host not yet returned by this (waited
        for at most ``timeout`` s; ConnectionError if the host's stdout closes first)."""
        async with asyncio.timeout(timeout):
            await self._wait_until(lambda: bool(self._unseen[type_]), type_)
        return self._unseen[type_].popleft()

    async def next_answer(self, timeout: float = 60.0) -> dict[str, Any]:
        """The earliest ``tool_response`` the fake sent not yet returned by this."""
        async with asyncio.timeout(timeout):
            await self._wait_until(lambda: bool(self._answers), "a tool answer")
        return self._answers.popleft()

    async def _wait_until(self, ready: Any, what: str = "a message") -> None:
        async with self._changed:
            while not ready():
                if self._host_gone:
                    raise ConnectionError(f"the native host closed its stdout before {what}")
                await self._changed.wait()

    async def _arrived(self, message: dict[str, Any]) -> None:
        self.received.append(message)
        self._unseen[str(message.get("type"))].append(message)
        async with self._changed:
            self._changed.notify_all()

    async def _read_host(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        try:
            while True:
                try:
                    (length,) = struct.unpack("<I", await stdout.readexactly(4))
                    payload = await stdout.readexactly(length)
                except asyncio.IncompleteReadError:
                    return
                message: Any
                try:
                    message = json.loads(payload.decode("utf-8"))
                except ValueError as exc:
                    raw = payload[:200].decode("latin-1")
                    message = {"type": "invalid", "raw": raw, "error": f"not JSON ({exc})"}
                if not isinstance(message, dict) or not isinstance(message.get("type"), str):
                    message = {"type": "invalid", "raw": message, "error": "not a typed object"}
                elif length > MAX_FROM_HOST:
                    message = {"type": "invalid", "error": f"{length} bytes > 1 MB", "raw": ""}
                await self._arrived(message)
                if message["type"] in ("tool_request", "invalid"):
                    # Garbage is answered in its turn (Chrome would close the port instead).
                    self._requests.put_nowait(message)
        finally:
            self._host_gone = True
            async with self._changed:
                self._changed.notify_all()

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        async for line in self._proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace").rstrip("\n"))

    async def _run_tools(self) -> None:
        """Tool requests one at a time, in arrival order; answers carry no request id."""
        while True:
            request = await self._requests.get()
            response = await self._answer(request)
            self.handled.append((request, response))
            with contextlib.suppress(ConnectionError):
                await self.send(response)
            self._answers.append(response)
            async with self._changed:
                self._changed.notify_all()

    async def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        params = request.get("params")
        try:
            if request["type"] == "invalid":
                raise ToolError(f"invalid message from the native host: {request.get('error')}")
            if request.get("method") != "execute_tool" or not isinstance(params, dict):
                raise ToolError(f"Unsupported method: {request.get('method')!r}")
            tool, args = params.get("tool"), params.get("args") or {}
            if not isinstance(tool, str) or not isinstance(args, dict):
                raise ToolError("A tool request needs params.tool and params.args")
            handler = getattr(self, f"_tool_{tool}", None)
            if handler is None:
                raise ToolError(f"Unknown tool: {tool}")
            async with asyncio.timeout(60):
                content, executed_on = await handler(args)
            # tools.ts (gif_creator): "take a screenshot immediately after [starting] to
            # capture the initial state as the first frame": screenshots are frames too.
            if self.recording and tool == "computer":
                await self._gif_frame(executed_on)
            context = await self._tab_context(executed_on)
            return {"type": "tool_response", "result": {"content": content, "tabContext": context}}
        except ToolError as exc:
            return {"type": "tool_response", "error": {"content": str(exc)}}
        except TimeoutError:
            return {"type": "tool_response", "error": {"content": "Tool timed out after 60 s"}}
        except Exception as exc:  # the browser refused: answered, never fatal
            return {"type": "tool_response", "error": {"content": f"{type(exc).__name__}: {exc}"}}

    # -- CDP events ----------------------------------------------------------------------

    def _on_cdp_event(self, method: str, params: dict[str, Any], session: str | None) -> None:
        if method == "Target.detachedFromTarget" and session is None:
            gone = self._by_session.get(str(params.get("sessionId")))
            if gone is not None:
                gone.closed = True
        tab = self._by_session.get(session or "")
        if tab is not None:
            self._record(tab, method, params)
        for waiter in list(self._waiters):
            if waiter.future.done():
                self._waiters.remove(waiter)
            elif (waiter.session, waiter.method) == (session, method) and waiter.predicate(params):
                waiter.future.set_result(params)
                self._waiters.remove(waiter)

    def _expect(
        self, session: str, methods: tuple[str, ...], predicate: Any = lambda p: True
    ) -> asyncio.Future[dict[str, Any]]:
        """The first of ``methods`` on ``session`` (register before causing it)."""
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        for method in methods:
            self._waiters.append(_Waiter(session, method, predicate, fut))
        return fut

    def _record(self, tab: _Tab, method: str, p: dict[str, Any]) -> None:
        if method == "Page.frameNavigated" and not p["frame"].get("parentId"):
            url = str(p["frame"].get("url", ""))
            if _domain(url) != _domain(tab.url):  # tools.ts: cleared on another domain
                tab.network.clear()
            tab.url = url
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(_remote_text(arg) for arg in p.get("args", []))
            level = {"warning": "warn"}.get(p.get("type", "log"), p.get("type", "log"))
            tab.console.append({"level": level, "text": text, "domain": _domain(tab.url)})
        elif method == "Runtime.exceptionThrown":
            details = p.get("exceptionDetails", {})
            exc = details.get("exception") or {}
            text = exc.get("description") or details.get("text", "")
            tab.console.append({"level": "exception", "text": text, "domain": _domain(tab.url)})
        elif method == "Network.requestWillBeSent":
            req = p["request"]
            tab.network[p["requestId"]] = {
                "url": req["url"],
                "method": req["method"],
                "type": p.get("type", ""),
                "status": None,
            }
        elif method == "Network.responseReceived" and p["requestId"] in tab.network:
            tab.network[p["requestId"]]["status"] = p["response"].get("status")
        elif method == "Network.loadingFailed" and p["requestId"] in tab.network:
            tab.network[p["requestId"]]["status"] = f"failed ({p.get('errorText', '')})"

    # -- the MCP tab group ---------------------------------------------------------------

    async def _create_tab(self) -> _Tab:
        # A window of its own: the extension acts in the group's shown tab, and a hidden tab
        # of a shared window would hold input events back (the renderer draws no frames).
        created = await self.cdp.call(
            "Target.createTarget", {"url": "about:blank", "background": True, "newWindow": True}
        )
        target_id = str(created["targetId"])
        session = await self.cdp.attach(target_id)
        tab = _Tab(self._next_tab_id, target_id, session)
        self._next_tab_id += 1
        self._tabs[tab.tab_id] = tab
        self._by_session[session] = tab
        for domain in ("Page", "Runtime", "Network"):
            await self.cdp.call(f"{domain}.enable", {}, session)
        if self.tab_group_id is None:
            self.tab_group_id = 1
        self._current = tab.tab_id
        return tab

    async def _open_targets(self) -> dict[str, dict[str, Any]]:
        return {t["targetId"]: t for t in await self.cdp.targets("page")}

    async def _tab(self, args: dict[str, Any]) -> _Tab:
        tab_id = args.get("tabId")
        if not isinstance(tab_id, int) or isinstance(tab_id, bool):
            raise ToolError("tabId is required (a number): use tabs_context first")
        tab = self._tabs.get(tab_id)
        if tab is None:
            raise ToolError(
                f"Tab {tab_id} is not in the MCP tab group. Use tabs_context to list its tabs."
            )
        if not tab.closed and tab.target_id not in await self._open_targets():
            tab.closed = True
        if tab.closed:
            raise ToolError(f"Tab not found: tab {tab_id} was closed")
        self._current = tab_id
        return tab

    async def _tab_context(self, executed_on: int | None) -> dict[str, Any]:
        targets = await self._open_targets()
        available = []
        for tab in self._tabs.values():
            info = targets.get(tab.target_id)
            if info is None:
                tab.closed = True
            if not tab.closed and info is not None:
                available.append({"tabId": tab.tab_id, "title": info["title"], "url": info["url"]})
        context: dict[str, Any] = {
            "currentTabId": self._current if self._current is not None else -1,
            "availableTabs": available,
            "tabCount": len(available),
        }
        if executed_on is not None:
            context["executedOnTabId"] = executed_on
        if self.tab_group_id is not None:
            context["tabGroupId"] = self.tab_group_id
        return context

    # -- helpers in the page -------------------------------------------------------------

    async def _page(self, tab: _Tab, op: str, args: dict[str, Any]) -> Any:
        expression = f"({PAGE_SCRIPT})({json.dumps(op)}, {json.dumps(args)})"
        params = {"expression": expression, "returnByValue": True}
        result = await self.cdp.call("Runtime.evaluate", params, tab.session)
        if "exceptionDetails" in result:
            raise ToolError(_exception_text(result))
        value = result["result"].get("value")
        if isinstance(value, dict) and "error" in value:
            raise ToolError(str(value["error"]))
        return value

    async def _point(
        self, tab: _Tab, args: dict[str, Any], key: str = "coordinate"
    ) -> tuple[float, float]:
        if isinstance(args.get("ref"), str):
            p = await self._page(tab, "refPoint", {"ref": args["ref"]})
            return float(p["x"]), float(p["y"])
        coordinate = args.get(key)
        if not (isinstance(coordinate, list) and len(coordinate) == 2):
            raise ToolError(f"{key} [x, y] or ref is required for {args.get('action')}")
        return float(coordinate[0]), float(coordinate[1])

    async def _mouse(self, tab: _Tab, type_: str, x: float, y: float, **extra: Any) -> None:
        params = {"type": type_, "x": x, "y": y, **extra}
        await self.cdp.call("Input.dispatchMouseEvent", params, tab.session)

    async def _click(
        self, tab: _Tab, x: float, y: float, button: str, clicks: int, modifiers: int
    ) -> None:
        await self._mouse(tab, "mouseMoved", x, y, modifiers=modifiers)
        for count in range(1, clicks + 1):
            common = {"button": button, "clickCount": count, "modifiers": modifiers}
            await self._mouse(tab, "mousePressed", x, y, **common)
            await self._mouse(tab, "mouseReleased", x, y, **common)

    async def _screenshot(self, tab: _Tab, clip: dict[str, float] | None = None) -> bytes:
        params: dict[str, Any] = {"format": "png"}
        if clip is not None:
            params["clip"] = clip
        shot = await self.cdp.call("Page.captureScreenshot", params, tab.session)
        return base64.b64decode(shot["data"])

    async def _gif_frame(self, tab_id: int | None) -> None:
        tab = self._tabs.get(tab_id) if tab_id is not None else None
        if tab is None or tab.closed:
            return
        # A page between documents (after a click on a link) may refuse a screenshot, or
        # leave it unanswered: then the frame waits for the new document to load (an event),
        # and is tried again, up to 5 s in all.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        while (left := deadline - loop.time()) > 0:
            loaded = self._expect(tab.session, ("Page.loadEventFired", "Page.frameStoppedLoading"))
            try:
                async with asyncio.timeout(min(1.0, left)):
                    self.gif_frames.append(await self._screenshot(tab))
                return
            except (CdpError, TimeoutError, ConnectionError):  # refused or unanswered
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(0.0, deadline - loop.time())):
                        await loaded
            finally:
                loaded.cancel()

    def _store_image(self, png: bytes) -> str:
        image_id = f"screenshot_{self._next_image}"
        self._next_image += 1
        self.images[image_id] = png
        return image_id

    # -- the tools (names as the extension knows them) -----------------------------------

    async def _tool_tabs_context_mcp(self, args: dict[str, Any]) -> tuple[list[Any], int | None]:
        if not any(not t.closed for t in self._tabs.values()):
            for tab in self._tabs.values():
                tab.closed = tab.closed or tab.target_id not in await self._open_targets()
        if not any(not t.closed for t in self._tabs.values()):
            if not args.get("createIfEmpty"):
                raise ToolError("No MCP tab group exists. Call again with createIfEmpty: true.")
            await self._create_tab()
        context = await self._tab_context(None)
        return [_text(json.dumps(context, indent=1))], None

    async def _tool_tabs_create_mcp(self, args: dict[str, Any]) -> tuple[list[Any], int | None]:
        tab = await self._create_tab()
        content = [_text(f"Created new tab. Tab ID: {tab.tab_id}")]
        if isinstance(args.get("url"), str) and args["url"]:
            await self._navigate(tab, args["url"])
        return content, tab.tab_id

    async def _tool_navigate(self, args: dict[str, Any]) -> tuple[list[Any], int | None]:
        tab = await self._tab(args)
        url = args.get("url")
        if not isinstance(url, str) or not url:
            raise ToolError("url is required")
        final = await self._navigate(tab, url)
        return [_text(f"Navigated to {final}")], tab.tab_id

    async def _navigate(self, tab: _Tab, url: str) -> str:
        loaded = self._expect(
            tab.session,
            ("Page.loadEventFired", "Page.frameStoppedLoading"),
            lambda p: "frameId" not in p or p["frameId"] == tab.target_id,
        )
        try:
            if url in ("back", "forward"):
                history = await self.cdp.call("Page.getNavigationHistory", {}, tab.session)
                index = history["currentIndex"] + (-1 if url == "back" else 1)
                if not 0 <= index < len(history["entries"]):
                    raise ToolError(f"Cannot go {url}: no history entry")
                entry = history["entries"][index]["id"]
                await self.cdp.call("Page.navigateToHistoryEntry", {"entryId": entry}, tab.session)
            else:
                if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:(//)?", url) or re.match(
                    r"^[^:/]+:\d", url
                ):
                    url = "https://" + url
                done = await self.cdp.call("Page.navigate", {"url": url}, tab.session)
                if done.get("errorText"):
                    raise ToolError(f"Navigation to {url} failed: {done['errorText']}")
                if not done.get("loaderId"):  # same document: no load to wait for
                    loaded.cancel()
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                async with asyncio.timeout(30):
                    await loaded
        finally:
            loaded.cancel()
        info = (await self._open_targets()).get(tab.target_id, {})
        return str(info.get("url", url))

    async def _tool_computer(self, args: dict[str, Any]) -> tuple[list[Any], int | None]:
        tab = await self._tab(args)
        action = args.get("action")
        if action not in _ACTIONS:
            raise ToolError(f"Unknown action: {action!r}")
        modifiers = _modifiers(args.get("modifiers"))
        if action in ("left_click", "right_click", "double_click", "triple_click"):
            x, y = await self._point(tab, args)
            button = "right" if action == "right_click" else "left"
            clicks = {"double_click": 2, "triple_click": 3}.get(action, 1)
            await self._click(tab, x, y, button, clicks, modifiers)
            return [_text(f"Clicked at ({round(x)}, {round(y)})")], tab.tab_id
        if action == "hover":
            x, y = await self._point(tab, args)
            await self._mouse(tab, "mouseMoved", x, y, modifiers=modifiers)
            return [_text(f"Hovered at ({round(x)}, {round(y)})")], tab.tab_id
        if action == "type":
            text = args.get("text")
            if not isinstance(text, str):
                raise ToolError("text is required for type")
            for ch in text:
                params = {"type": "char", "text": "\r" if ch == "\n" else ch}
                await self.cdp.call("Input.dispatchKeyEvent", params, tab.session)
            return [_text(f'Typed "{text}"')], tab.tab_id
        if action == "key":
            return await self._keys(tab, args), tab.tab_id
        if action in ("screenshot", "zoom"):
            return await self._shoot(tab, args), tab.tab_id
        if action == "wait":
            duration = args.get("duration")
            if not isinstance(duration, int | float) or not 0 <= duration <= 30:
                raise ToolError("duration (0 to 30 seconds) is required for wait")
            await asyncio.sleep(duration)  # the action's own meaning
            return [_text(f"Waited for {duration} seconds")], tab.tab_id
        if action == "scroll":
            x, y = await self._point(tab, args)
            direction = args.get("scroll_direction")
            amount = args.get("scroll_amount") or 3
            deltas = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
            if direction not in deltas:
                raise ToolError("scroll_direction (up, down, left, right) is required")
            dx, dy = (d * 100 * amount for d in deltas[direction])
            await self._mouse(tab, "mouseWheel", x, y, deltaX=dx, deltaY=dy, modifiers=modifiers)
            return [
                _text(f"Scrolled {direction} by {amount} at ({round(x)}, {round(y)})")
            ], tab.tab_id
        if action == "left_click_drag":
            start = {"start_coordinate": args.get("start_coordinate"), "action": action}
            x0, y0 = await self._point(tab, start, "start_coordinate")
            x1, y1 = await self._point(
                tab, {"coordinate": args.get("coordinate"), "action": action}
            )
            await self._mouse(tab, "mouseMoved", x0, y0, modifiers=modifiers)
            pressed = {"button": "left", "clickCount": 1, "modifiers": modifiers}
            await self._mouse(tab, "mousePressed", x0, y0, **pressed)
            await self._mouse(tab, "mouseMoved", x1, y1, button="left", buttons=1)
            await self._mouse(tab, "mouseReleased", x1, y1, **pressed)
            return [_text(f"Dragged from ({x0:g}, {y0:g}) to ({x1:g}, {y1:g})")], tab.tab_id
        # scroll_to
        if not isinstance(args.get("ref"), str):
            raise ToolError("ref is required for scroll_to")
        await self._page(tab, "refPoint", {"ref": args["ref"], "scroll": True})
        return [_text(f"Scrolled {args['ref']} into view")], tab.tab_id

    async def _keys(self, tab: _Tab, args: dict[str, Any]) -> list[Any]:
        text = args.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ToolError("text (space-separated keys) is required for key")
        repeat = args.get("repeat") or 1
        if not isinstance(repeat, int) or not 1 <= repeat <= 100:
            raise ToolError("repeat must be an integer from 1 to 100")
        for _ in range(repeat):
            for chord in text.split():
                await self._press(tab, chord)
        return [_text(f"Pressed {text}" + (f" {repeat} times" if repeat > 1 else ""))]

    async def _press(self, tab: _Tab, chord: str) -> None:
        parts = chord.split("+")
        *mods, name = parts if len(parts) == 1 or parts[-1] else [*parts[:-2], "+"]
        modifiers = _modifiers("+".join(mods))
        if name.lower() in _KEYS:
            key, code, vk, typed = _KEYS[name.lower()]
        elif len(name) == 1:
            key, typed = name, name
            code = (
                f"Key{name.upper()}"
                if name.isalpha()
                else (f"Digit{name}" if name.isdigit() else "")
            )
            vk = ord(name.upper()) if name.isalnum() else 0
        else:
            raise ToolError(f"Unknown key: {name}")
        plain = modifiers & ~8 == 0  # shift alone still types
        down: dict[str, Any] = {
            "type": "keyDown" if typed and plain else "rawKeyDown",
            "key": key,
            "code": code,
            "windowsVirtualKeyCode": vk,
            "modifiers": modifiers,
        }
        if typed and plain:
            down["text"] = typed
        if name.lower() == "a" and modifiers & (2 | 4):  # cmd+a / ctrl+a: select all
            down["commands"] = ["selectAll"]
        await self.cdp.call("Input.dispatchKeyEvent", down, tab.session)
        up = {"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk}
        await self.cdp.call("Input.dispatchKeyEvent", {**up, "modifiers": modifiers}, tab.session)

    async def _shoot(self, tab: _Tab, args: dict[str, Any]) -> list[Any]:
        clip = None
        if args.get("action") == "zoom":
            region = args.get("region")
            if not (isinstance(region, list) and len(region) == 4):
                raise ToolError("region [x0, y0, x1, y1] is required for zoom")
            x0, y0, x1, y1 = (float(v) for v in region)
            if x1 <= x0 or y1 <= y0:
                raise ToolError("region must run from top-left (x0, y0) to bottom-right (x1, y1)")
            metrics = await self.cdp.call("Page.getLayoutMetrics", {}, tab.session)
            view = metrics.get("cssVisualViewport", {})
            clip = {
                "x": x0 + view.get("pageX", 0),
                "y": y0 + view.get("pageY", 0),
                "width": x1 - x0,
                "height": y1 - y0,
                "scale": 1,
            }
        png = await self._screenshot(tab, clip)
        image_id = self._store_image(png)
        width, height = struct.unpack(">II", png[16:24])
        what = "zoomed region" if clip else "screenshot"
        return [
            _text(f"Successfully captured {what} ({width}x{height}, png) - ID: {image_id}"),
            {
                "type": "image",
                "data": base64.b64encode(png).decode("ascii"),
                "mimeType": "image/png",
            },
        ]

    async def _tool_form_input(self, args: dict[str, Any]) -> tuple[list[Any], int | None]:
        tab = await self._tab(args)
        if not isinstance(args.get("ref"), str) or "value" not in args:
            raise ToolError("ref and value are required")
        done = await self._page(tab, "formInput", {"ref": args["ref"], "value": args["value"]})
        return [_text(done["text"])], tab.tab_id

    async def _tool_find(self, args: dict[str, Any]) -> tuple[list[Any], int | None]:
        tab = await self._tab(args)
        found = await self._page(tab, "find", {"query": args.get("query", "")})
        if not found["lines"]:
            return [_text(f'No elements found matching "{args.get("query")}"')], tab.tab_id
        text = "\n".join(found["lines"])
        if found["total"] > 20:
            text += f"\n\n{found['total']} elements matched; showing 20. Use a more specific query."
        return [_text(text)], tab.tab_id

    async def _tool_read_page(self, args: dict[str, Any]) -> tuple[list[Any], int | None]:
        tab = await self._tab(args)
        if args.get("filter") not in (None, "interactive", "all"):
            raise ToolError('filter must be "interactive" or "all"')
        wanted = {k: args[k] for k in ("depth", "filter", "ref_id") if k in args}
        tree = await self._page(tab, "readPage", wanted)
        text = tree["text"]
        if len(text) > READ_PAGE_LIMIT:
            raise ToolError(
                f"Output exceeds {READ_PAGE_LIMIT} character limit ({len(text)} characters). "
                "Try specifying a smaller depth parameter or use ref_id to focus on a "
                "specific element."
            )
        return [_text(text or "(no elements)")], tab.tab_id

    async def _tool_get_page_text(self, args: dict[str, Any]) -> tuple[list[Any], int | None]:
        tab = await self._tab(args)
        page = await self._page(tab, "pageText", {})
        head = f"Title: {page['title']}\nURL: {page['url']}\nSource element: <{page['source']}>"
        return [_text(f"{head}\n---\n{page['text']}")], tab.tab_id

    async def _tool_resize_window(self, args: dict[str, Any]) -> tuple[list[Any], int | None]:
        tab = await self._tab(args)
        width, height = args.get("width"), args.get("height")
        if not isinstance(width, int | float) or not isinstance(height, int | float):
            raise ToolError("width and height are required")
        window = await self.cdp.call("Browser.getWindowForTarget", {"targetId": tab.target_id})
        window_id = window["windowId"]
        if window.get("bounds", {}).get("windowState", "normal") != "normal":
            normal = {"windowId": window_id, "bounds": {"windowState": "normal"}}
            await self.cdp.call("Browser.setWindowBounds", normal)
        bounds = {"width": int(width), "height": int(height)}
        await self.cdp.call("Browser.setWindowBounds", {"windowId": window_id, "bounds": bounds})
        return [_text(f"Resized window to {int(width)}x{int(height)}")], tab.tab_id

    async def _tool_read_console_messages(
        self, args: dict[str, Any]
    ) -> tuple[list[Any], int | None]:
        tab = await self._tab(args)
        pattern = _regex(args.get("pattern"))
        domain = _domain(tab.url)
        messages = [m for m in tab.console if m["domain"] == domain]
        if args.get("onlyErrors"):
            messages = [m for m in messages if m["level"] in ("error", "exception")]
        if pattern is not None:
            messages = [m for m in messages if pattern.search(m["text"])]
        messages = messages[-_limit(args) :]
        if args.get("clear"):
            tab.console.clear()
        if not messages:
            return [_text("No console messages found.")], tab.tab_id
        lines = [f"[{m['level']}] {m['text']}" for m in messages]
        return [_text(f"Found {len(lines)} console messages:\n" + "\n".join(lines))], tab.tab_id

    async def _tool_read_network_requests(
        self, args: dict[str, Any]
    ) -> tuple[list[Any], int | None]:
        tab = await self._tab(args)
        needle = args.get("urlPattern")
        requests = list(tab.network.values())
        if isinstance(needle, str) and needle:
            requests = [r for r in requests if needle in r["url"]]
        requests = requests[-_limit(args) :]
        if args.get("clear"):
            tab.network.clear()
        if not requests:
            return [_text("No network requests found.")], tab.tab_id
        lines = [
            f"{r['method']} {r['url']} ({r['type'] or 'Other'}) -> {r['status'] or 'pending'}"
            for r in requests
        ]
        return [_text(f"Found {len(lines)} network requests:\n" + "\n".join(lines))], tab.tab_id

    async def _tool_javascript_tool(self, args: dict[str, Any]) -> tuple[list[Any], int | None]:
        tab = await self._tab(args)
        if args.get("action") != "javascript_exec":
            raise ToolError("action must be 'javascript_exec'")
        code = args.get("text")
        if not isinstance(code, str):
            raise ToolError("text (the JavaScript to run) is required")
        params = {"expression": code, "awaitPromise": True, "returnByValue": True}
        result = await self.cdp.call("Runtime.evaluate", params, tab.session)
        if "exceptionDetails" in result:
            raise ToolError(_exception_text(result))
        remote = result["result"]
        if "value" not in remote:
            shown = "undefined" if remote.get("type") == "undefined" else remote.get("description")
        elif isinstance(remote["value"], str):
            shown = remote["value"]
        else:
            shown = json.dumps(remote["value"], indent=2)
        return [_text(str(shown))], tab.tab_id

    async def _tool_upload_image(self, args: dict[str, Any]) -> tuple[list[Any], int | None]:
        tab = await self._tab(args)
        image_id = args.get("imageId")
        if image_id not in self.images:
            raise ToolError(f"Image not found: {image_id}")
        if args.get("coordinate") is not None:
            raise ToolError("drag & drop upload (coordinate) is not implemented in the fake")
        if not isinstance(args.get("ref"), str):
            raise ToolError("ref or coordinate is required")
        filename = Path(str(args.get("filename") or "image.png")).name or "image.png"
        assert self._tmp is not None
        folder = Path(tempfile.mkdtemp(dir=self._tmp))
        path = folder / filename
        path.write_bytes(self.images[str(image_id)])
        expression = f"({PAGE_SCRIPT})('element', {json.dumps({'ref': args['ref']})})"
        found = await self.cdp.call("Runtime.evaluate", {"expression": expression}, tab.session)
        object_id = found["result"].get("objectId")
        if object_id is None:
            raise ToolError(f'Element with ref "{args["ref"]}" not found')
        params = {"files": [str(path)], "objectId": object_id}
        await self.cdp.call("DOM.setFileInputFiles", params, tab.session)
        return [_text(f"Uploaded {image_id} as {filename} to {args['ref']}")], tab.tab_id

    async def _tool_gif_creator(self, args: dict[str, Any]) -> tuple[list[Any], int | None]:
        tab = await self._tab(args)
        action = args.get("action")
        if action == "start_recording":
            self.recording = True
            self.gif_frames.clear()
            return [_text("Started recording")], tab.tab_id
        if action == "stop_recording":
            self.recording = False
            return [_text(f"Stopped recording ({len(self.gif_frames)} frames)")], tab.tab_id
        if action == "clear":
            self.gif_frames.clear()
            return [_text("Cleared recorded frames")], tab.tab_id
        if action == "export":
            return [_text(await self._export_gif(args))], tab.tab_id
        raise ToolError(f"Unknown gif_creator action: {action!r}")

    async def _export_gif(self, args: dict[str, Any]) -> str:
        if not args.get("download"):
            raise ToolError(
                "gif export by drag & drop (coordinate) is not implemented in the fake: "
                "use download: true"
            )
        filename = args.get("filename") or f"recording-{int(time.time() * 1000)}.gif"
        bad = not isinstance(filename, str) or filename in (".", "..")
        if bad or re.search(r"[/\\\0]", filename):
            raise ToolError(f"Invalid filename for the GIF: {filename!r} (no path separators)")
        if not self.gif_frames:
            raise ToolError("no frames recorded: start_recording, then act, then export")
        frames = list(self.gif_frames)
        data = await asyncio.to_thread(pngs_to_gif, frames)
        assert self.downloads is not None, "start() first"
        path = self.downloads / filename
        stem, suffix, n = path.stem, path.suffix, 0
        while path.exists():  # as Chrome's downloads: "name (1).gif"
            n += 1
            path = self.downloads / f"{stem} ({n}){suffix}"
        path.write_bytes(data)
        width, height = struct.unpack("<HH", data[6:10])
        return (
            f"Exported GIF {path.name} ({len(frames)} frames, {width}×{height}, "
            f"{len(data)} bytes) to downloads"
        )


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def _domain(url: str) -> str:
    match = re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://([^/?#]*)", url)
    return match.group(1) if match else url


def _remote_text(arg: dict[str, Any]) -> str:
    if "value" in arg:
        value = arg["value"]
        return value if isinstance(value, str) else json.dumps(value)
    return str(arg.get("description") or arg.get("unserializableValue") or arg.get("type", ""))


def _exception_text(result: dict[str, Any]) -> str:
    details = result["exceptionDetails"]
    exc = details.get("exception") or {}
    return str(exc.get("description") or exc.get("value") or details.get("text", "error"))


def _modifiers(spec: Any) -> int:
    if not isinstance(spec, str) or not spec:
        return 0
    bits = 0
    for name in spec.lower().split("+"):
        if name not in _MODIFIER_BITS:
            raise ToolError(f"Unknown modifier: {name}")
        bits |= _MODIFIER_BITS[name]
    return bits


def _regex(pattern: Any) -> re.Pattern[str] | None:
    if not isinstance(pattern, str) or not pattern:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"Invalid regex pattern: {exc}") from None


def _limit(args: dict[str, Any]) -> int:
    limit = args.get("limit", 100)
    return limit if isinstance(limit, int) and limit > 0 else 100
