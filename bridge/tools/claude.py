"""The browser tools over the Claude extension's own tools (``--link claude``).

The same operations as ``bridge.tools.browsing.BrowserTools``, with the same signatures and
results, carried by the 14 tools of the Claude browser extension (``bridge.wire.claude``)
instead of CDP. Where an operation's meaning matches one of them it maps onto it (the table
is in docs/claude-extension.md); where it does not, it raises ``NotOverClaudeExtension``
saying why, instead of half-working.

What the extension decides, not bridge: its tabs are the tabs of its own "MCP tab group"
(``tabs_context``), its element refs are its own (``ref_N`` from ``read_page``, which is
what ``browser_snapshot`` returns here), and it acts on the page through its own debugger.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

from bridge.errors import ClaudeToolError, NotOverClaudeExtension, TabClosed
from bridge.link.claude_link import ClaudeConnector, ClaudeLink
from bridge.link.registry import runtime_dir
from bridge.link.trust_root import load_secret
from bridge.policy.urls import check_navigable
from bridge.tools.action_report import ActionReport
from bridge.tools.operations.client import NoCurrentTab
from bridge.wire.claude import ClaudeReply, tab_id_from_text

__all__ = ["CARRIED", "NOT_CARRIED", "ClaudeToolHub", "ClaudeTools", "claude_browser"]

#: bridge tool -> the extension's tool that carries it (docs/claude-extension.md).
CARRIED: Final = {
    "browser_navigate": "navigate (tabs_create first when the client has no tab)",
    "browser_go_back": 'navigate url="back"',
    "browser_go_forward": 'navigate url="forward"',
    "browser_snapshot": "read_page (its refs: ref_N)",
    "browser_click": "computer left_click / right_click / double_click (ref)",
    "browser_hover": "computer hover (ref)",
    "browser_type": "form_input (ref); slowly: computer left_click + type",
    "browser_fill_form": "form_input per field",
    "browser_select_option": "form_input (one value)",
    "browser_drag": "computer left_click_drag (the refs' points from the last read_page)",
    "browser_press_key": "computer key",
    "browser_wait": "computer wait (a pause only)",
    "browser_screenshot": "computer screenshot (the viewport)",
    "browser_get_console_logs": "read_console_messages (its text)",
    "browser_network_requests": "read_network_requests (its text)",
    "browser_tabs": "tabs_context / tabs_create (the extension's tab group)",
    "browser_evaluate": "javascript_tool",
    "browser_resize": "resize_window (the window, not the viewport)",
    "browser_record_gif": "gif_creator",
}
#: bridge tool -> why the extension's tools cannot carry it faithfully.
NOT_CARRIED: Final = {
    "browser_network_request": "its read_network_requests lists requests without headers or bodies",
    "browser_file_upload": "its upload_image only puts its own screenshots into a page, never "
    "a file from this machine",
    "browser_handle_dialog": "a JavaScript dialog blocks the extension until the person "
    "answers it (its own guidance: avoid triggering dialogs)",
    "dom tools": "they run bridge's page scripts through a CDP session; the extension runs "
    "only its own",
    "capability tools": "they drive CDP domains (Fetch, Emulation, Tracing, Storage, …) that "
    "only a CDP session of bridge's own extension reaches; the extension's tools expose none",
    "asking ChatGPT and Gemini": "an exact answer is read from the site's own answer stream, "
    "which the extension's tools cannot read (read_network_requests has no bodies), and "
    "completion is noticed from page events, which they do not deliver (only a fixed "
    "'wait'); polling the page would be slower and could not prove the answer complete",
}

#: Playwright key names -> the extension's ("ctrl+a", "Backspace"): [tools] computer ``text``.
_MODIFIERS: Final = {
    "control": "ctrl",
    "controlormeta": "ctrl",
    "meta": "cmd",
    "alt": "alt",
    "shift": "shift",
}
_REF: Final = re.compile(r"^ref_\d+$")
_POINT: Final = re.compile(
    r"\[ref=(ref_\d+)\][^\n]*?\(x=(-?\d+(?:\.\d+)?),\s*y=(-?\d+(?:\.\d+)?)\)"
)
_CLOSED: Final = re.compile(r"tab.*(not found|no longer|closed|does not exist)|no tab with", re.I)


def key_chord(key: str) -> str:
    """``Control+Shift+A`` -> ``ctrl+shift+A``; ``Enter`` stays ``Enter``."""
    parts = [p for p in key.split("+") if p] or [key]
    *mods, last = parts
    return "+".join([*(_MODIFIERS.get(m.lower(), m.lower()) for m in mods), last])


def modifier_list(modifiers: list[str] | None) -> str | None:
    if not modifiers:
        return None
    return "+".join(_MODIFIERS.get(m.lower(), m.lower()) for m in modifiers)


def ref_points(snapshot: str) -> dict[str, tuple[float, float]]:
    """Each ref's point in a ``read_page`` answer (``(x=…,y=…)`` after it, [a11y])."""
    return {m.group(1): (float(m.group(2)), float(m.group(3))) for m in _POINT.finditer(snapshot)}


class ClaudeToolHub:
    """The browser tools of one process over the Claude extension: each client's view."""

    def __init__(
        self,
        connector: ClaudeConnector,
        *,
        connect_timeout: float = 10.0,
        allow_file_urls: bool = False,
    ) -> None:
        self.connector = connector
        self.connect_timeout = connect_timeout
        #: The same URL rules as over bridge's own link (bridge.policy.urls): no
        #: javascript:, chrome:, extension pages, or file: without --allow-file-urls.
        self.allow_file_urls = allow_file_urls
        self._clients: dict[str, ClaudeTools] = {}
        #: The last read_page answer per tab: refs' points for drags.
        self.points: dict[int, dict[str, tuple[float, float]]] = {}
        self.urls: dict[int, tuple[str, str]] = {}

    def client(self, key: str = "default") -> ClaudeTools:
        tools = self._clients.get(key)
        if tools is None:
            tools = self._clients[key] = ClaudeTools(self, key)
        return tools

    def forget_client(self, key: str) -> None:
        self._clients.pop(key, None)

    async def link(self) -> ClaudeLink:
        return await self.connector.connect(self.connect_timeout)


class ClaudeTools:
    """One client's browser operations over the Claude extension (see the module docstring)."""

    def __init__(self, hub: ClaudeToolHub, key: str) -> None:
        self.hub = hub
        self.key = key
        self.current: int | None = None

    # -- plumbing -------------------------------------------------------------------------

    async def _call(self, tool: str, args: dict[str, Any], timeout: float = 60.0) -> ClaudeReply:
        link = await self.hub.link()
        reply = await link.call(tool, args, timeout=timeout)
        if reply.tab_context is not None:
            for tab in reply.tab_context.tabs:
                self.hub.urls[tab["tab"]] = (tab["url"], tab["title"])
        if reply.error is not None:
            if _CLOSED.search(reply.error) and "tabId" in args:
                if self.current == args["tabId"]:
                    self.current = None
                raise TabClosed(int(args["tabId"]), reply.error)
            raise ClaudeToolError(tool, reply.error)
        return reply

    def _tab(self, tab: int | None) -> int:
        chosen = tab if tab is not None else self.current
        if chosen is None:
            raise NoCurrentTab(
                "this client has no current tab over the Claude extension: open one with "
                "browser_navigate or browser_tabs new, or pick one from browser_tabs list"
            )
        return chosen

    def _report(self, did: str, tab_id: int, before: tuple[str, str] | None) -> ActionReport:
        url, title = self.hub.urls.get(tab_id, ("", ""))
        report = ActionReport(did, tab_id, url=url, title=title)
        if before is not None:
            report.url_changed = before[0] != url
            report.title_changed = before[1] != title
        return report

    async def _act(self, did: str, tab_id: int, tool: str, args: dict[str, Any]) -> ActionReport:
        before = self.hub.urls.get(tab_id)
        reply = await self._call(tool, {**args, "tabId": tab_id})
        report = self._report(did, tab_id, before)
        if reply.text and reply.text not in ("Tool executed successfully.",):
            report.extra["extension"] = reply.text[:500]
        return report

    @staticmethod
    def _ref(target: str, what: str = "an element target") -> str:
        if not _REF.match(target):
            raise NotOverClaudeExtension(
                f"{what} {target!r}",
                "the extension acts on its own element refs (ref_N, from browser_snapshot), "
                "not on CSS selectors or bridge's refs",
            )
        return target

    # -- navigation and tabs --------------------------------------------------------------

    def _checked(self, url: str) -> str:
        return check_navigable(url, allow_file=self.hub.allow_file_urls)

    async def _new_tab(self, url: str | None) -> int:
        url = self._checked(url) if url else None
        reply = await self._call("tabs_create", {})
        tab_id = tab_id_from_text(reply.text)
        if tab_id is None and reply.tab_context is not None:
            tab_id = reply.tab_context.current
        if tab_id is None:
            raise ClaudeToolError("tabs_create", f"no tab id in its answer: {reply.text[:200]!r}")
        self.current = tab_id
        if url:
            await self._call("navigate", {"url": url, "tabId": tab_id})
        return tab_id

    async def navigate(self, url: str, tab: int | None = None) -> ActionReport:
        url = self._checked(url)
        if tab is None and self.current is None:
            tab_id = await self._new_tab(url)
            return self._report(f"Navigated to {url}", tab_id, ("", ""))
        tab_id = self._tab(tab)
        report = await self._act(f"Navigated to {url}", tab_id, "navigate", {"url": url})
        self.current = tab_id
        return report

    async def go_back(self, tab: int | None = None) -> ActionReport:
        return await self._act("Went back", self._tab(tab), "navigate", {"url": "back"})

    async def go_forward(self, tab: int | None = None) -> ActionReport:
        return await self._act("Went forward", self._tab(tab), "navigate", {"url": "forward"})

    async def tabs(
        self, action: str = "list", tab: int | None = None, url: str | None = None
    ) -> dict[str, Any]:
        if action == "list":
            reply = await self._call("tabs_context", {"createIfEmpty": True})
            listed = reply.tab_context.tabs if reply.tab_context else ()
            return {
                "tabs": [
                    {**t, "active": False, "attached": True, "current": t["tab"] == self.current}
                    for t in listed
                ],
                "current": self.current,
                "scope": "the Claude extension's tab group",
            }
        if action == "new":
            tab_id = await self._new_tab(url)
            return {"tab": tab_id, "url": url or "about:blank"}
        if tab is None:
            raise ValueError(f"browser_tabs {action!r} needs a tab id (see action 'list')")
        if action == "select":
            reply = await self._call("tabs_context", {})
            known = {t["tab"] for t in reply.tab_context.tabs} if reply.tab_context else set()
            if tab not in known:
                raise ValueError(
                    f"tab {tab} is not in the Claude extension's tab group: "
                    f"pick one of {sorted(known)} (browser_tabs list)"
                )
            self.current = tab
            return {"tab": tab, "url": self.hub.urls.get(tab, ("", ""))[0]}
        if action == "close":
            raise NotOverClaudeExtension(
                "closing a tab", "the extension has no tool that closes tabs"
            )
        raise ValueError(f"unknown action {action!r}: use list, new, select or close")

    # -- reading ----------------------------------------------------------------------------

    async def snapshot(self, tab: int | None = None, *, max_chars: int | None = None) -> str:
        tab_id = self._tab(tab)
        reply = await self._call("read_page", {"tabId": tab_id, "filter": "all"})
        text = reply.text
        self.hub.points[tab_id] = ref_points(text)
        url = self.hub.urls.get(tab_id, ("", ""))[0]
        if max_chars is not None and len(text) > max_chars:
            text = text[:max_chars] + "\n… (cut)"
        return f"tab {tab_id}: {url}\n{text}"

    async def screenshot(
        self, target: str | None = None, full_page: bool = False, tab: int | None = None
    ) -> tuple[bytes, str]:
        if target is not None:
            raise NotOverClaudeExtension(
                "a screenshot of one element", "the extension's screenshot is the viewport's"
            )
        if full_page:
            raise NotOverClaudeExtension(
                "a full-page screenshot", "the extension's screenshot is the viewport's"
            )
        reply = await self._call("computer", {"action": "screenshot", "tabId": self._tab(tab)})
        if not reply.images:
            raise ClaudeToolError("computer screenshot", "its answer held no image")
        image = reply.images[0]
        kind = "jpeg" if "jpeg" in image.mime or "jpg" in image.mime else "png"
        return base64.b64decode(image.data), kind

    async def console_logs(
        self, level: str | None = None, tab: int | None = None
    ) -> dict[str, Any]:
        args: dict[str, Any] = {"tabId": self._tab(tab)}
        if level == "error":
            args["onlyErrors"] = True
        elif level not in (None, "debug", "log"):
            raise NotOverClaudeExtension(
                f"console level {level!r}",
                "the extension filters errors only (onlyErrors) or a pattern",
            )
        reply = await self._call("read_console_messages", args)
        lines = [line for line in reply.text.splitlines() if line.strip()]
        # The extension's text has its own format; the level it does not state is not guessed.
        kind = "error" if level == "error" else "console"
        return {"messages": [{"level": kind, "text": line} for line in lines], "via": "claude"}

    async def network_requests(
        self, filter: str | None = None, tab: int | None = None
    ) -> dict[str, Any]:
        try:
            wanted = re.compile(filter) if filter else None
        except re.error as exc:
            raise ValueError(f"filter {filter!r} is not a regular expression: {exc}") from exc
        reply = await self._call("read_network_requests", {"tabId": self._tab(tab)})
        # The extension filters by substring only (urlPattern); the regex is applied here,
        # to its lines, so a filter means the same over either link.
        lines = [line for line in reply.text.splitlines() if line.strip()]
        if wanted is not None:
            lines = [line for line in lines if wanted.search(line)]
        requests = [
            {"index": i, "method": "", "url": line, "status": "", "type": ""}
            for i, line in enumerate(lines, 1)
        ]
        return {"requests": requests, "via": "claude"}

    async def network_request(self, index: int, tab: int | None = None) -> dict[str, Any]:
        raise NotOverClaudeExtension(
            "one request's details", NOT_CARRIED["browser_network_request"]
        )

    async def evaluate(
        self, function: str, target: str | None = None, tab: int | None = None
    ) -> Any:
        if target is not None:
            raise NotOverClaudeExtension(
                "evaluating with an element", "javascript_tool takes no element argument"
            )
        # javascript_tool returns the last expression's value ([tools]): call the function.
        code = f"({function.strip()})()"
        reply = await self._call(
            "javascript_tool",
            {"action": "javascript_exec", "text": code, "tabId": self._tab(tab)},
        )
        try:
            return json.loads(reply.text)
        except ValueError:
            return reply.text

    async def wait(
        self,
        time: float | None = None,
        text: str | None = None,
        text_gone: str | None = None,
        selector: str | None = None,
        tab: int | None = None,
    ) -> dict[str, Any]:
        if text is not None or text_gone is not None or selector is not None:
            raise NotOverClaudeExtension(
                "waiting for a condition",
                "the extension's only wait is a fixed pause (computer wait), and bridge does "
                "not poll a page in place of an event",
            )
        if time is None:
            raise ValueError("browser_wait needs time, text, text_gone or selector")
        seconds = min(time, 30.0)  # [tools] computer wait: at most 30 s
        await self._call(
            "computer", {"action": "wait", "duration": seconds, "tabId": self._tab(tab)}
        )
        return {"waited": seconds}

    # -- acting -----------------------------------------------------------------------------

    async def click(
        self,
        target: str,
        *,
        element: str | None = None,
        button: str = "left",
        double_click: bool = False,
        modifiers: list[str] | None = None,
        tab: int | None = None,
    ) -> ActionReport:
        if button == "middle":
            raise NotOverClaudeExtension("a middle click", "the computer tool has left and right")
        action = "double_click" if double_click else f"{button}_click"
        args: dict[str, Any] = {"action": action, "ref": self._ref(target)}
        mods = modifier_list(modifiers)
        if mods:
            args["modifiers"] = mods
        return await self._act(f"Clicked {element or target}", self._tab(tab), "computer", args)

    async def hover(self, target: str, tab: int | None = None) -> ActionReport:
        args = {"action": "hover", "ref": self._ref(target)}
        return await self._act(f"Hovered over {target}", self._tab(tab), "computer", args)

    async def type(
        self,
        target: str,
        text: str,
        *,
        submit: bool = False,
        slowly: bool = False,
        tab: int | None = None,
    ) -> ActionReport:
        ref, tab_id = self._ref(target), self._tab(tab)
        if slowly:
            await self._call("computer", {"action": "left_click", "ref": ref, "tabId": tab_id})
            await self._call("computer", {"action": "type", "text": text, "tabId": tab_id})
        else:
            await self._call("form_input", {"ref": ref, "value": text, "tabId": tab_id})
        did = f"Typed into {target}"
        if submit:
            return await self._act(did, tab_id, "computer", {"action": "key", "text": "Enter"})
        return self._report(did, tab_id, None)

    async def fill_form(self, fields: list[dict[str, Any]], tab: int | None = None) -> ActionReport:
        tab_id = self._tab(tab)
        for field in fields:
            ref = self._ref(str(field.get("target", "")))
            value = field.get("value")
            if not isinstance(value, (str, bool, int, float)):
                raise ValueError(f"field {ref}: a value is text, true/false or a number")
            await self._call("form_input", {"ref": ref, "value": value, "tabId": tab_id})
        return self._report(f"Filled {len(fields)} field(s)", tab_id, None)

    async def select_option(
        self, target: str, values: list[str], tab: int | None = None
    ) -> ActionReport:
        if len(values) != 1:
            raise NotOverClaudeExtension(
                "selecting several options", "form_input sets one option value or text"
            )
        args = {"ref": self._ref(target), "value": values[0]}
        return await self._act(
            f"Selected {values[0]!r} in {target}", self._tab(tab), "form_input", args
        )

    async def drag(
        self, start_target: str, end_target: str, tab: int | None = None
    ) -> ActionReport:
        tab_id = self._tab(tab)
        points = self.hub.points.get(tab_id, {})
        start, end = self._ref(start_target), self._ref(end_target)
        if start not in points or end not in points:
            raise ValueError(
                "a drag over the Claude extension goes from point to point: take a "
                f"browser_snapshot of tab {tab_id} first (its refs carry their points)"
            )
        args = {
            "action": "left_click_drag",
            "start_coordinate": list(points[start]),
            "coordinate": list(points[end]),
        }
        return await self._act(f"Dragged {start} onto {end}", tab_id, "computer", args)

    async def press_key(self, key: str, tab: int | None = None) -> ActionReport:
        args = {"action": "key", "text": key_chord(key)}
        return await self._act(f"Pressed {key}", self._tab(tab), "computer", args)

    async def file_upload(
        self, target: str, paths: list[str], tab: int | None = None
    ) -> ActionReport:
        raise NotOverClaudeExtension("uploading files", NOT_CARRIED["browser_file_upload"])

    async def handle_dialog(
        self, accept: bool, prompt_text: str | None = None, tab: int | None = None
    ) -> ActionReport:
        raise NotOverClaudeExtension("answering a dialog", NOT_CARRIED["browser_handle_dialog"])

    async def resize(self, width: int, height: int, tab: int | None = None) -> ActionReport:
        args = {"width": width, "height": height}
        return await self._act(
            f"Resized the window to {width}x{height}", self._tab(tab), "resize_window", args
        )

    async def record_gif(
        self,
        action: str,
        *,
        download: bool = False,
        filename: str | None = None,
        tab: int | None = None,
    ) -> str:
        """The extension's gif_creator: start, stop, export (downloaded by the browser), clear."""
        args: dict[str, Any] = {"action": action, "tabId": self._tab(tab)}
        if action == "export":
            if not download:
                raise NotOverClaudeExtension(
                    "exporting a GIF by drag and drop", "bridge exports it as a download"
                )
            args["download"] = True
            if filename:
                args["filename"] = filename
        reply = await self._call("gif_creator", args)
        return reply.text or f"gif_creator {action}: done"


@contextlib.asynccontextmanager
async def claude_browser(
    *,
    connect_timeout: float = 10.0,
    directory: Path | None = None,
    allow_file_urls: bool = False,
) -> AsyncIterator[ClaudeToolHub]:
    """The browser tools over the Claude extension, from Python::

        async with claude_browser() as hub:
            tools = hub.client()
            await tools.navigate("https://example.com")
            print(await tools.snapshot())

    Serves this process's endpoint in the per-user runtime directory (``directory``: another
    one) so the Claude extension's native host links to it; each call waits up to
    ``connect_timeout`` s for that host (ClaudeExtensionNotConnected says how to set it up).
    """
    connector = ClaudeConnector(
        directory if directory is not None else runtime_dir(), secret=load_secret(create=True)
    )
    await connector.start()
    try:
        yield ClaudeToolHub(
            connector, connect_timeout=connect_timeout, allow_file_urls=allow_file_urls
        )
    finally:
        await connector.stop()
