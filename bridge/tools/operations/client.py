"""What every browser operation shares: one client's current tab, the tab an operation
names (attached, recording, and not behind a dialog), and the frame of every action (what
it changed: the page, its dialogs, navigations, downloads, new tabs)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from bridge.errors import BridgeError, CdpError, CommandFailed
from bridge.tools import codegen
from bridge.tools.action_report import ActionReport, PageState
from bridge.tools.locating import CodeStep, InFrame, locate
from bridge.tools.tab_groups import group_color, group_title
from bridge.tools.targets import TabState
from bridge.waiting import Waiter, scaled

if TYPE_CHECKING:
    from bridge.tools.browsing import ToolHub

__all__ = [
    "DialogOpen",
    "NoCurrentTab",
    "ToolClient",
    "current_url",
    "document_replaced",
    "unless_dialog",
]

log = logging.getLogger(__name__)


class NoCurrentTab(BridgeError):
    """The client named no tab and has no current one (or its current tab is gone)."""

    code = "no_current_tab"


class DialogOpen(BridgeError):
    """A JavaScript dialog blocks the page: it must be answered before anything else."""

    code = "dialog_open"


class ToolClient:
    """One client's view (``ToolHub.client``): its current tab (the last one it opened,
    navigated or selected) and what every operation family builds on."""

    def __init__(self, hub: ToolHub, client: str) -> None:
        self.hub = hub
        self.client = client
        self.current: int | None = None
        # What this client changed in the person's browser and must put back when it
        # leaves (emulation, routes, …): newest first, each run once (``leave``).
        self._undo: list[tuple[str, Callable[[], Awaitable[None]]]] = []
        # This client's Chrome tab groups (one per window) and the tabs already put in one
        # or left alone (``_group``): each tab is asked about once.
        self._groups: list[int] = []
        self._grouped: set[int] = set()
        #: This client's actions as Playwright-for-Python lines, per tab (``records_code``).
        self.code_log = codegen.CodeLog()

    def on_leave(self, name: str, undo: Callable[[], Awaitable[None]]) -> None:
        """Run ``undo`` when this client leaves (``ToolHub.leave``, bridge stopping). A
        second registration under the same ``name`` replaces the first: a setting changed
        twice is put back once."""
        self._undo = [(n, u) for n, u in self._undo if n != name]
        self._undo.append((name, undo))

    def cancel_leave(self, name: str) -> None:
        """Forget the undo registered as ``name`` (the client already put it back)."""
        self._undo = [(n, u) for n, u in self._undo if n != name]

    async def leave(self) -> None:
        """Put back what this client changed, newest first. One undo that fails (its tab
        closed meanwhile) does not keep the others from running."""
        undo, self._undo = self._undo, []
        for name, step in reversed(undo):
            try:
                await step()
            except (BridgeError, OSError) as exc:
                log.info("client %s: undoing %s failed: %s", self.client, name, exc)

    @property
    def records_code(self) -> bool:
        """Whether actions are written down as Playwright code (--codegen python, or the
        testing group's browser_generate_test): off, no action pays for finding locators."""
        settings = self.hub.settings
        return settings.codegen != "none" or settings.record_code

    async def _code_lines(self, step: CodeStep) -> list[str]:
        """``step``'s lines, its elements' locators found now (before the action changes
        the page). An element no page-level locator finds becomes a comment saying so."""
        located = []
        for element, target in step.elements:
            try:
                located.append((await locate(element, target)).code())
            except (InFrame, ValueError, BridgeError) as exc:
                return [f"# {target}: no Playwright locator ({exc})"]
        return step.lines(located)

    def _record(self, tab: int, lines: list[str], step: CodeStep, report: ActionReport) -> None:
        if step.before_last:
            for line in lines:
                self.code_log.before_last(tab, line)
        else:
            self.code_log.add(tab, lines)
        if self.hub.settings.codegen == "python":
            report.code = lines

    @property
    def timeout(self) -> float:
        return scaled(self.hub.settings.action_timeout)

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
        await self._group(tab_id)
        dialog = state.recorder.dialog
        if dialog is not None and not dialog_ok:
            # Behind a dialog the page answers nothing: fail now instead of at a timeout.
            raise DialogOpen(
                f"a {dialog.kind} dialog is open on tab {tab_id} ({dialog.message!r}): answer "
                "it with browser_handle_dialog first; the page can do nothing else until then"
            )
        return state

    async def _observe(self, state: TabState, *, dialog_open: bool = False) -> PageState:
        """The page's URL and title, and the browser's tabs: asked at once (the page and the
        extension answer each on their own), one round trip instead of two."""
        listing = asyncio.ensure_future(self.hub.browser.list_tabs())
        try:
            if dialog_open or state.recorder.dialog is not None:
                url, title = state.tab.url, state.tab.title  # behind a dialog: no answer
            else:
                url, title = await _evaluate_across_navigation(
                    state, "[location.href, document.title]"
                )
            tabs = frozenset(t.tab_id for t in await listing)
        finally:
            listing.cancel()  # when the page's answer failed; a no-op once it is done
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
        code: CodeStep | None = None,
    ) -> ActionReport:
        """Run ``action`` and say what changed. A dialog that opens ends the wait at once
        (the input command it blocks finishes when the dialog is answered); a navigation the
        action started is waited for, up to the action timeout. ``code``: the action as
        Playwright code, recorded (``records_code``) once the action ran."""
        lines = await self._code_lines(code) if code is not None and self.records_code else None
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
        after: PageState | None = None
        task = asyncio.ensure_future(action())
        try:
            either: set[asyncio.Future[Any]] = {task, opening.future}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                task.result()  # raises what the action raised
                if navigation and state.recorder.dialog is None:
                    # One round trip: a navigation the action caused has announced itself.
                    # It is also the page's state after the action, unless one did.
                    after = await self._observe(state)
                    rec = state.recorder
                    if (
                        started.done
                        or opening.done
                        or rec.dialog is not None
                        or expect_download
                        or len(rec.opened) != before.opened
                    ):
                        # The page moved on, is behind a dialog, or opened a tab or a
                        # download still on its way: its state is asked again at the end.
                        after = None
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
        if after is None:
            after = await self._observe(state)
        report = self._report(state, did, before, after)
        report.still_loading = still_loading
        for opened in report.new_tabs:  # tabs this client's action opened join its group
            if isinstance(opened.get("tab"), int):
                await self._group(opened["tab"])
        if code is not None and lines is not None:
            if code.late:
                lines = code.lines([])
            self._record(state.tab_id, lines, code, report)
        for download in report.downloads:
            await self._locate(download)
        return report

    async def _group(self, tab_id: int) -> None:
        """Put a tab this client uses in its tab group (``bridge.tools.tab_groups``), once.
        Provider tabs of the ask tools are theirs, not the client's: left out. A tab the
        person (or another client) already grouped stays in that group; the extension never
        moves a tab to another window or focuses anything. Leaving does not ungroup: the
        person keeps the group (``leave`` only forgets it). Grouping is a courtesy: when it
        fails (an older extension, a tab gone), the operation goes on."""
        if (
            not self.hub.settings.tab_groups
            or tab_id in self._grouped
            or tab_id in self.hub.browser.claims
        ):
            return
        self._grouped.add(tab_id)
        title = group_title(self.client)
        params = {
            "tabId": tab_id,
            "title": title,
            "color": group_color(title),
            "groupIds": list(self._groups),
        }
        try:
            found = await self.hub.browser.request("groupTab", params)
        except BridgeError as exc:
            log.info("tab %s not grouped for %s: %s", tab_id, title, exc)
            return
        group = found.get("groupId")
        if found.get("joined") and isinstance(group, int) and group not in self._groups:
            self._groups.append(group)

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


async def unless_dialog(state: TabState, call: Awaitable[Any]) -> Any:
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


def _log_outcome(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.info("an action that opened a dialog ended with: %r", task.exception())


async def current_url(state: TabState) -> str:
    if state.recorder.dialog is not None:
        return state.tab.url
    return str(await _evaluate_across_navigation(state, "location.href"))


async def _evaluate_across_navigation(state: TabState, expression: str) -> Any:
    """Evaluate; if a navigation replaced the document meanwhile, once more in the new one."""
    try:
        return await state.tab.evaluate(expression)
    except CdpError as exc:
        if not document_replaced(exc):
            raise
        return await state.tab.evaluate(expression)


def document_replaced(exc: CdpError) -> bool:
    """Whether a command failed because the page's document went away under it (a
    navigation): "Execution context was destroyed", "Inspected target navigated or closed"."""
    text = str(exc).lower()
    return "context" in text or "navigated" in text
