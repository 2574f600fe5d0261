"""Browser operations for any tab, as a Python API: what the MCP browser tools wrap.

``ToolHub`` (one per ``Bridge``) keeps one ``TabState`` per tab the tools touched: its
recorder (console, network, dialogs, downloads, popups since attachment), its refs and
frames. ``BrowserTools`` is one client's view: its current tab (the last one it opened,
navigated or selected) and every operation. Several clients never share a current tab.
Provider tabs (the ask tools' ChatGPT and Gemini tabs) are never a default: a client only
acts on one it selected or named explicitly.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bridge.cdp.browser import Browser, TabInfo
from bridge.cdp.page_script import PageScript
from bridge.errors import BridgeError, BridgeTimeout, CdpError, CommandFailed
from bridge.policy.files import FilePolicy
from bridge.policy.urls import check_navigable
from bridge.tools import actions
from bridge.tools.action_report import ActionReport, PageState
from bridge.tools.dom import dom_page
from bridge.tools.element import Element
from bridge.tools.recorder import TabRecorder
from bridge.tools.scripts import ACTIONS_SCRIPT
from bridge.tools.snapshot import take_snapshot
from bridge.tools.targets import TabState, resolve_target
from bridge.waiting import Waiter, scaled

__all__ = ["BrowserTools", "DialogOpen", "NoCurrentTab", "ToolHub", "ToolSettings"]

log = logging.getLogger(__name__)

MAX_WAIT_S = 30.0
SCREENSHOT_WAIT_S = 5.0
MAX_SCREENSHOT_SIDE = 8000  # pixels; larger pages are scaled down, never refused
BODY_LIMIT = 10_000


class NoCurrentTab(BridgeError):
    code = "no_current_tab"


class DialogOpen(BridgeError):
    code = "dialog_open"


@dataclass(frozen=True)
class ToolSettings:
    action_timeout: float = 5.0
    allow_file_urls: bool = False


class ToolHub:
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
        self.states: dict[int, TabState] = {}
        self._clients: dict[str, BrowserTools] = {}

    def client(self, key: str = "default") -> BrowserTools:
        """The operations as seen by one client (its own current tab)."""
        tools = self._clients.get(key)
        if tools is None:
            tools = self._clients[key] = BrowserTools(self, key)
        return tools

    def forget_client(self, key: str) -> None:
        self._clients.pop(key, None)

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


class BrowserTools:
    def __init__(self, hub: ToolHub, client: str) -> None:
        self.hub = hub
        self.client = client
        self.current: int | None = None

    @property
    def timeout(self) -> float:
        return scaled(self.hub.settings.action_timeout)

    # -- tabs -------------------------------------------------------------------------

    async def _state(self, tab: int | None, *, dialog_ok: bool = False) -> TabState:
        tab_id = tab if tab is not None else self.current
        if tab_id is None:
            raise NoCurrentTab(
                "this client has no current tab yet: open one with browser_navigate, or pick "
                "one with browser_tabs (action 'list', then 'select')"
            )
        # The person's own tabs only when shared (bridge.policy.tabs); before any attach.
        await self.hub.browser.check_access(tab_id)
        try:
            state = await self.hub.state(tab_id)
        except CommandFailed as exc:
            if exc.error_code == "no_tab":
                if self.current == tab_id:
                    self.current = None
                raise NoCurrentTab(
                    f"tab {tab_id} no longer exists: browser_tabs 'list' shows the open tabs"
                ) from exc
            raise
        if tab is not None:
            self.current = tab_id  # naming a tab selects it
        dialog = state.recorder.dialog
        if dialog is not None and not dialog_ok:
            # Behind a dialog the page answers nothing: fail now instead of at a timeout.
            raise DialogOpen(
                f"a {dialog.kind} dialog is open on tab {tab_id} ({dialog.message!r}): answer "
                "it with browser_handle_dialog first; the page can do nothing else until then"
            )
        return state

    async def tabs(
        self, action: str = "list", tab: int | None = None, url: str | None = None
    ) -> dict[str, Any]:
        """``list`` every tab; ``new`` (optionally at ``url``); ``select`` or ``close`` one."""
        browser = self.hub.browser
        if action == "list":
            infos = await browser.list_tabs()
            return {"tabs": [self._describe(t) for t in infos], "current": self.current}
        if action == "new":
            target = check_navigable(
                url or "about:blank", allow_file=self.hub.settings.allow_file_urls
            )
            session = await browser.new_tab(target, own_window=True)
            self.current = session.tab_id
            state = await self.hub.state(session.tab_id)
            return {"tab": state.tab_id, "url": target}
        if tab is None:
            raise ValueError(f"browser_tabs {action!r} needs a tab id (see action 'list')")
        if action == "select":
            state = await self._state(tab, dialog_ok=True)
            return {"tab": state.tab_id, "url": await _href(state)}
        if action == "close":
            await browser.check_access(tab)
            await browser.close_tab(tab)
            self.hub.states.pop(tab, None)
            if self.current == tab:
                self.current = None
            return {"closed": tab}
        raise ValueError(f"unknown action {action!r}: use list, new, select or close")

    def _describe(self, info: TabInfo) -> dict[str, Any]:
        access = self.hub.browser.access(info.tab_id)
        out: dict[str, Any] = {
            "tab": info.tab_id,
            "title": info.title,
            "url": info.url,
            "active": info.active,
            "attached": info.attached_here,
            "current": info.tab_id == self.current,
            "access": access,
        }
        if access == "not shared":
            out["how"] = "the person's tab: usable once they share it (bridge popup)"
        return out

    # -- navigation -------------------------------------------------------------------

    async def navigate(self, url: str, tab: int | None = None) -> ActionReport:
        target = check_navigable(url, allow_file=self.hub.settings.allow_file_urls)
        if tab is None and self.current is None:
            session = await self.hub.browser.new_tab("about:blank", own_window=True)
            self.current = session.tab_id
        state = await self._state(tab)

        async def go() -> None:
            loaded = state.tab.expect_event("Page.loadEventFired")
            try:
                result = await state.tab.send("Page.navigate", {"url": target})
                if result.get("errorText"):
                    raise BridgeError(f"could not open {target}: {result['errorText']}")
                if result.get("loaderId"):  # a new document (not a same-document jump)
                    await loaded.wait(scaled(30.0))
            finally:
                loaded.close()

        return await self._act(state, f"Navigated to {target}", go, navigation=False)

    async def go_back(self, tab: int | None = None) -> ActionReport:
        return await self._history(-1, tab)

    async def go_forward(self, tab: int | None = None) -> ActionReport:
        return await self._history(1, tab)

    async def _history(self, step: int, tab: int | None) -> ActionReport:
        state = await self._state(tab)
        history = await state.tab.send("Page.getNavigationHistory")
        index = int(history["currentIndex"]) + step
        entries = history["entries"]
        if not 0 <= index < len(entries):
            raise BridgeError(f"there is no page to go {'back' if step < 0 else 'forward'} to")

        async def go() -> None:
            await state.tab.send("Page.navigateToHistoryEntry", {"entryId": entries[index]["id"]})

        return await self._act(state, "Went back" if step < 0 else "Went forward", go)

    # -- reading ----------------------------------------------------------------------

    async def snapshot(self, tab: int | None = None, *, max_chars: int | None = None) -> str:
        state = await self._state(tab)
        text = await take_snapshot(state, max_chars=max_chars)
        url = await _href(state)
        return f"tab {state.tab_id}: {url}\n{text}"

    async def screenshot(
        self, target: str | None = None, full_page: bool = False, tab: int | None = None
    ) -> tuple[bytes, str]:
        """PNG bytes (JPEG when large) and the format; never steals focus."""
        state = await self._state(tab)
        params: dict[str, Any] = {"format": "png"}
        if target:
            element = await resolve_target(state, target, timeout=self.timeout)
            box = await element.run(ACTIONS_SCRIPT, "pageBox")
            params["clip"] = {**box, "scale": 1}
        elif full_page:
            metrics = await state.tab.send("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            width, height = float(size["width"]), float(size["height"])
            scale = min(1.0, MAX_SCREENSHOT_SIDE / max(width, height, 1.0))
            params["clip"] = {"x": 0, "y": 0, "width": width, "height": height, "scale": scale}
            params["captureBeyondViewport"] = True
            if width * height * scale * scale > 4_000_000:
                params.update(format="jpeg", quality=80)
        try:
            # A tab in the background of its window may never produce the frame this waits
            # for (seen in Chromium 156, through chrome.debugger and direct CDP alike).
            shot = await state.tab.send(
                "Page.captureScreenshot", params, timeout=scaled(SCREENSHOT_WAIT_S)
            )
        except BridgeTimeout:
            if "clip" in params:
                raise BridgeError(
                    "Chrome rendered no frame of this background tab for an element or "
                    "full-page screenshot; a viewport screenshot still works, or open the page "
                    "in a tab of its own with browser_tabs new"
                ) from None
            return await _screencast_frame(state), "png"
        return base64.b64decode(shot["data"]), str(params["format"])

    async def console_logs(
        self, level: str | None = None, tab: int | None = None
    ) -> dict[str, Any]:
        state = await self._state(tab, dialog_ok=True)  # recorded here: no page round trip
        order = ["debug", "log", "info", "warning", "error"]
        minimum = order.index(level) if level in order else 0
        entries = [
            e.to_dict()
            for e in state.recorder.console
            if (order.index(e.level) if e.level in order else 1) >= minimum
        ]
        dropped = state.recorder.console_seen - len(state.recorder.console)
        return {"messages": entries, "dropped": dropped}

    async def network_requests(
        self, filter: str | None = None, tab: int | None = None
    ) -> dict[str, Any]:
        state = await self._state(tab, dialog_ok=True)  # recorded here: no page round trip
        pattern = re.compile(filter, re.I) if filter else None
        rows = [
            e.summary(i)
            for i, e in enumerate(state.recorder.requests)
            if pattern is None or pattern.search(e.url)
        ]
        return {
            "requests": rows,
            "dropped": state.recorder.requests_seen - len(state.recorder.requests),
        }

    async def network_request(self, index: int, tab: int | None = None) -> dict[str, Any]:
        state = await self._state(tab)
        entries = list(state.recorder.requests)
        if not 0 <= index < len(entries):
            raise ValueError(
                f"no request {index}: browser_network_requests lists 0..{len(entries) - 1}"
            )
        entry = entries[index]
        out = entry.summary(index)
        out["request_headers"] = entry.request_headers
        out["response_headers"] = entry.response_headers
        if entry.post_data is not None:
            out["request_body"] = _cut(entry.post_data)
        if entry.status is not None and not entry.failed:
            try:
                body = await state.tab.send(
                    "Network.getResponseBody", {"requestId": entry.request_id}
                )
                text = body.get("body", "")
                out["response_body"] = (
                    f"({len(base64.b64decode(text))} bytes of binary data)"
                    if body.get("base64Encoded")
                    else _cut(text)
                )
            except BridgeError as exc:
                out["response_body_error"] = str(exc)
        return out

    async def evaluate(
        self, function: str, target: str | None = None, tab: int | None = None
    ) -> Any:
        """``() => …`` in the page, or ``(element) => …`` with the target; the JSON result."""
        state = await self._state(tab)
        if target:
            element = await resolve_target(state, target, timeout=self.timeout)
            return await _unless_dialog(
                state,
                element.call(f"function () {{ return ({function})(this); }}", await_promise=True),
            )
        return await _unless_dialog(
            state, state.tab.evaluate(f"({function})()", await_promise=True)
        )

    async def _pause(self, seconds: float, tab: int | None) -> None:
        """The pause the caller asked for, capped; it ends at once, with the tab's typed
        error, if the tab it is about closes or is lost meanwhile."""
        try:
            state = await self._state(tab)
        except NoCurrentTab:
            state = None
        ended: asyncio.Future[BridgeError] = asyncio.get_running_loop().create_future()

        def end(error: BridgeError) -> None:
            if not ended.done():
                ended.set_result(error)

        stop = state.tab.on_end(end) if state is not None else None
        if state is not None and state.tab.ended is not None:
            end(state.tab.ended)  # it ended before we listened
        try:
            await asyncio.wait_for(asyncio.shield(ended), seconds)
        except TimeoutError:
            return  # the pause ran its course
        finally:
            if stop is not None:
                stop()
        raise ended.result()

    async def wait(
        self,
        time: float | None = None,
        text: str | None = None,
        text_gone: str | None = None,
        selector: str | None = None,
        tab: int | None = None,
    ) -> dict[str, Any]:
        """Return as soon as the condition holds (checked on every DOM change)."""
        if text is None and text_gone is None and selector is None:
            if time is None:
                raise ValueError("browser_wait needs time, text, text_gone or selector")
            seconds = min(float(time), MAX_WAIT_S)
            await self._pause(seconds, tab)
            return {"waited_s": seconds}
        state = await self._state(tab)
        limit = min(float(time), MAX_WAIT_S) if time is not None else MAX_WAIT_S
        held = await _unless_dialog(
            state,
            dom_page(state.tab).call(
                "waitFor", text, text_gone, selector, int(limit * 1000), timeout=limit
            ),
        )
        if not held:
            raise BridgeError(f"the condition did not hold within {limit:.0f}s")
        return {"held": True}

    async def page_script(self, tab: int | None = None) -> PageScript:
        """The DOM exploration script of the tab (``bridge.tools.dom`` functions take it)."""
        return dom_page((await self._state(tab)).tab)

    async def element(self, target: str, tab: int | None = None) -> Element:
        """The element a ref or selector names (``bridge.tools.dom`` element functions)."""
        state = await self._state(tab)
        return await resolve_target(state, target, timeout=self.timeout)

    # -- acting -----------------------------------------------------------------------

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
        state = await self._state(tab)
        el = await resolve_target(state, target, timeout=self.timeout)

        async def go() -> None:
            await actions.click(
                state, el, self.timeout, button=button, double=double_click, modifiers=modifiers
            )

        # A download link's download starts a moment after the click's input is handled.
        downloads = bool(await el.run(ACTIONS_SCRIPT, "inDownloadLink"))
        return await self._act(state, f"Clicked {element or target}", go, expect_download=downloads)

    async def hover(self, target: str, tab: int | None = None) -> ActionReport:
        state = await self._state(tab)
        el = await resolve_target(state, target, timeout=self.timeout)

        async def go() -> None:
            await actions.hover(state, el, self.timeout)

        return await self._act(state, f"Hovered over {target}", go)

    async def type(
        self,
        target: str,
        text: str,
        *,
        submit: bool = False,
        slowly: bool = False,
        tab: int | None = None,
    ) -> ActionReport:
        state = await self._state(tab)
        el = await resolve_target(state, target, timeout=self.timeout)

        async def go() -> None:
            await actions.type_text(state, el, text, self.timeout, slowly=slowly, submit=submit)

        return await self._act(state, f"Typed into {target}", go)

    async def fill_form(self, fields: list[dict[str, Any]], tab: int | None = None) -> ActionReport:
        """Text boxes get the text; checkboxes and radios true/false; selects a value."""
        state = await self._state(tab)

        async def go() -> None:
            for spec in fields:
                el = await resolve_target(state, str(spec["target"]), timeout=self.timeout)
                kind = await el.run(ACTIONS_SCRIPT, "kind")
                value = spec.get("value")
                if kind in ("checkbox", "radio"):
                    await actions.set_checked(state, el, _truthy(value), self.timeout)
                elif kind == "select":
                    values = value if isinstance(value, list) else [str(value)]
                    await actions.select_option(state, el, [str(v) for v in values], self.timeout)
                else:
                    await actions.type_text(
                        state, el, "" if value is None else str(value), self.timeout
                    )

        return await self._act(state, f"Filled {len(fields)} field(s)", go)

    async def select_option(
        self, target: str, values: list[str], tab: int | None = None
    ) -> ActionReport:
        state = await self._state(tab)
        el = await resolve_target(state, target, timeout=self.timeout)
        chosen: list[str] = []

        async def go() -> None:
            chosen.extend(await actions.select_option(state, el, values, self.timeout))

        report = await self._act(state, f"Selected in {target}", go)
        report.extra["selected"] = chosen
        return report

    async def drag(
        self, start_target: str, end_target: str, tab: int | None = None
    ) -> ActionReport:
        state = await self._state(tab)
        source = await resolve_target(state, start_target, timeout=self.timeout)
        target = await resolve_target(state, end_target, timeout=self.timeout)

        async def go() -> None:
            await actions.drag(state, source, target, self.timeout)

        return await self._act(state, f"Dragged {start_target} to {end_target}", go)

    async def press_key(self, key: str, tab: int | None = None) -> ActionReport:
        state = await self._state(tab)

        async def go() -> None:
            await actions.press_key(state, key)

        return await self._act(state, f"Pressed {key}", go)

    async def file_upload(
        self, target: str, paths: list[str], tab: int | None = None
    ) -> ActionReport:
        # Before the page is touched: a path a page talked the agent into is refused here.
        files = self.hub.files.check_all(paths)
        state = await self._state(tab)
        el = await resolve_target(state, target, timeout=self.timeout)
        how: list[str] = []

        async def go() -> None:
            how.append(await actions.upload_files(state, el, files, self.timeout))

        report = await self._act(state, f"Uploaded {len(files)} file(s) to {target}", go)
        report.extra["method"] = how[0] if how else ""
        return report

    async def handle_dialog(
        self, accept: bool, prompt_text: str | None = None, tab: int | None = None
    ) -> ActionReport:
        state = await self._state(tab, dialog_ok=True)
        dialog = state.recorder.dialog
        if dialog is None:
            raise BridgeError(f"no dialog is open on tab {state.tab_id}")
        params: dict[str, Any] = {"accept": accept}
        if prompt_text is not None:
            params["promptText"] = prompt_text

        async def go() -> None:
            await state.tab.send("Page.handleJavaScriptDialog", params)
            state.recorder.dialog = None

        verb = "Accepted" if accept else "Dismissed"
        return await self._act(state, f"{verb} the {dialog.kind} dialog", go, dialog_open=True)

    async def resize(self, width: int, height: int, tab: int | None = None) -> ActionReport:
        state = await self._state(tab)

        async def go() -> None:
            await state.tab.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 0, "mobile": False},
            )

        return await self._act(state, f"Resized the page to {width}×{height}", go)

    # -- the common frame of every action ------------------------------------------------

    async def _observe(self, state: TabState, *, dialog_open: bool = False) -> PageState:
        if dialog_open or state.recorder.dialog is not None:
            url, title = state.tab.url, state.tab.title  # a page behind a dialog cannot answer
        else:
            url, title = await _evaluate_across_navigation(state, "[location.href, document.title]")
        tabs = frozenset(t.tab_id for t in await self.hub.browser.list_tabs())
        rec = state.recorder
        return PageState(url, title, tabs, rec.console_seen, len(rec.downloads), len(rec.opened))

    async def _act(
        self,
        state: TabState,
        did: str,
        action: Callable[[], Awaitable[None]],
        *,
        navigation: bool = True,
        dialog_open: bool = False,
        expect_download: bool = False,
    ) -> ActionReport:
        """Run ``action`` and say what changed. A dialog that opens ends the wait at once
        (the input command it blocks finishes when the dialog is answered); a navigation the
        action started is waited for, up to the action timeout."""
        before = await self._observe(state, dialog_open=dialog_open)
        main = await state.main_frame_id()
        # Registered before the action: whatever it causes is seen, however fast.
        opening = state.tab.expect_event("Page.javascriptDialogOpening")
        started = state.tab.expect_event(
            "Page.frameStartedNavigating",
            lambda p: (
                p.get("frameId") == main
                and p.get("navigationType") not in ("sameDocument", "historySameDocument")
            ),
        )
        loaded = state.tab.expect_event("Page.loadEventFired")
        # A page restored from the back/forward cache fires no load event: it is whole.
        restored = state.tab.expect_event(
            "Page.frameNavigated",
            lambda p: (
                p.get("type") == "BackForwardCacheRestore"
                and not p.get("frame", {}).get("parentId")
            ),
        )
        # A navigation also ends when it stops (failed, aborted, or turned into a download).
        stopped = state.tab.expect_event(
            "Page.frameStoppedLoading", lambda p: p.get("frameId") == main
        )
        downloading = state.tab.expect_event("Page.downloadWillBegin")
        still_loading = False
        task = asyncio.ensure_future(action())
        try:
            either: set[asyncio.Future[Any]] = {task, opening.future}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                task.result()  # raises what the action raised
                if navigation and state.recorder.dialog is None:
                    # One round trip: a navigation the action caused has announced itself.
                    await state.tab.send("Runtime.evaluate", {"expression": "0"})
                    if started.done and not opening.done:
                        still_loading = not await _within(
                            self.timeout, loaded, restored, stopped, downloading
                        )
                    if expect_download:  # a link that downloads: its start is part of the click
                        await _within(self.timeout, downloading)
            else:
                # Answered later by browser_handle_dialog; collect its outcome then.
                task.add_done_callback(_log_outcome)
        finally:
            opening.close()
            started.close()
            loaded.close()
            restored.close()
            stopped.close()
            downloading.close()
        after = await self._observe(state)
        report = self._report(state, did, before, after)
        report.still_loading = still_loading
        for download in report.downloads:
            await self._locate(download)
        return report

    async def _locate(self, download: dict[str, Any]) -> None:
        """Where the browser saves a download (the extension asks chrome.downloads)."""
        try:
            found = await self.hub.browser.request(
                "downloadInfo", {"url": download["url"], "timeoutMs": 2000}
            )
        except BridgeError as exc:  # an older extension: the name is still reported
            log.info("download location unknown: %s", exc)
            return
        if found.get("path"):
            download["path"] = found["path"]

    def _report(
        self, state: TabState, did: str, before: PageState, after: PageState
    ) -> ActionReport:
        rec = state.recorder
        report = ActionReport(did, state.tab_id, url=after.url, title=after.title)
        report.url_changed = after.url != before.url
        report.title_changed = after.title != before.title
        new_console = list(rec.console)[
            -(after.console_seen - before.console_seen) or len(rec.console) :
        ]
        if after.console_seen == before.console_seen:
            new_console = []
        report.console_errors = [e.text for e in new_console if e.level == "error"]
        if rec.dialog is not None:
            report.dialog = rec.dialog.to_dict()
        report.downloads = rec.downloads[before.downloads :]
        opened_urls = rec.opened[before.opened :]
        new_ids = sorted(after.tab_ids - before.tab_ids)
        for i, tab_id in enumerate(new_ids):
            report.new_tabs.append(
                {"tab": tab_id, "url": opened_urls[i] if i < len(opened_urls) else ""}
            )
        for url in opened_urls[len(new_ids) :]:
            report.new_tabs.append({"url": url})
        return report


async def _unless_dialog(state: TabState, call: Awaitable[Any]) -> Any:
    """``call``'s outcome, or DialogOpen as soon as the page opens a dialog meanwhile: a page
    behind a dialog runs nothing else (the call would wait for its own timeout). The call
    itself ends when the dialog is answered; its outcome is then only logged."""
    opening = state.tab.expect_event("Page.javascriptDialogOpening")
    task = asyncio.ensure_future(call)
    try:
        await asyncio.wait({task, opening.future}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()
        raise
    finally:
        opening.close()
    if task.done():
        return task.result()
    task.add_done_callback(_log_outcome)
    dialog = state.recorder.dialog
    kind, message = (dialog.kind, dialog.message) if dialog is not None else ("JavaScript", "")
    raise DialogOpen(
        f"a {kind} dialog opened on tab {state.tab_id} ({message!r}) during the call: answer "
        "it with browser_handle_dialog; the page can do nothing else until then"
    )


async def _within(seconds: float, *waiters: Waiter[Any]) -> bool:
    """Whether any of the waited-for events came within ``seconds``."""
    done, _ = await asyncio.wait(
        {w.future for w in waiters}, timeout=seconds, return_when=asyncio.FIRST_COMPLETED
    )
    return bool(done)


async def _screencast_frame(state: TabState) -> bytes:
    """The viewport from one screencast frame: screencasts keep producing frames for a
    background tab when a plain capture waits in vain."""
    frame = state.tab.expect_event("Page.screencastFrame")
    try:
        await state.tab.send("Page.startScreencast", {"format": "png", "everyNthFrame": 1})
        params = await frame.wait(scaled(SCREENSHOT_WAIT_S))
        await state.tab.send("Page.screencastFrameAck", {"sessionId": params["sessionId"]})
        return base64.b64decode(params["data"])
    finally:
        frame.close()
        await state.tab.send("Page.stopScreencast")


def _log_outcome(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.info("an action that opened a dialog ended with: %r", task.exception())


async def _href(state: TabState) -> str:
    if state.recorder.dialog is not None:
        return state.tab.url
    return str(await _evaluate_across_navigation(state, "location.href"))


async def _evaluate_across_navigation(state: TabState, expression: str) -> Any:
    """Evaluate; if a navigation replaced the document meanwhile, once more in the new one."""
    try:
        return await state.tab.evaluate(expression)
    except CdpError as exc:
        if "context" not in str(exc).lower():
            raise
        return await state.tab.evaluate(expression)


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"true", "1", "yes", "on", "checked"}
    return bool(value)


def _cut(text: str) -> str:
    if len(text) <= BODY_LIMIT:
        return text
    return text[:BODY_LIMIT] + f"… ({len(text) - BODY_LIMIT} more characters)"
