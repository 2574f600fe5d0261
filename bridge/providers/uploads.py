"""Uploading files through a site's own upload control (docs/sites.md#attachments).

Every file that does not go into the question itself (``bridge.providers.attachments``)
is attached as a person would: bridge intercepts the file chooser
(``Page.setInterceptFileChooserDialog``), clicks the upload control with a trusted CDP
click (C1.13; on Gemini the menu item once its "Upload & tools" menu opened, G8.1), and
puts the files into the input the chooser belongs to (``Page.fileChooserOpened`` names
it). :func:`attach_files` returns only once the page shows every file staged (its chip,
none busy) and the page's upload requests have ended, so the send never races an upload.

A site may ask the person's consent before its first upload instead of opening the chooser
(Gemini's "Creating content from images and files", Cancel/Agree, G5.3). That dialog is
watched for from the click on: it ends the ask at once with ``ConsentRequired`` rather than
after the chooser's wait with a vague failure, and bridge never answers it (agreeing is the
person's decision, not an agent's).

How the files reach the input: ``DOM.setFileInputFiles`` with their paths (resolved and
allowed by the file policy when they were read), so Chrome reads them itself. Chrome refuses
that to an extension without file access; the ask then ends with ``FileAccessOff``, saying
which switch to turn on. bridge never reads the bytes into the page instead
(bridge.cdp.file_input, docs/flows.md#file-policy).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from bridge.cdp.file_input import set_input_files
from bridge.cdp.session import CdpSession, JavaScriptError
from bridge.errors import (
    AttachmentFailed,
    BridgeError,
    BridgeTimeout,
    ConsentRequired,
    FileAccessOff,
)
from bridge.providers.attachments import KB, FilePart
from bridge.providers.composer import trusted_click
from bridge.providers.context import AskContext
from bridge.providers.dumps import dump
from bridge.waiting import Waiter, scaled

__all__ = ["SET_FILE_INPUT_FILES", "attach_files"]

log = logging.getLogger(__name__)

CONTROL_S = 10.0  # the upload control appears with the composer; a little grace
CHOOSER_S = 8.0  # click (and menu item) to file chooser
UPLOAD_BASE_S = 60.0  # chips and the end of the upload requests: this, plus …
UPLOAD_BYTES_PER_S = 250 * KB  # … one second per 250 kB (a slow uplink)
UPLOAD_QUIET_S = 0.5  # no upload request for this long: the site's uploads have ended
_GROUP = "bridge-attachments"
#: The one way files reach the input (``used.attachments[].method``).
SET_FILE_INPUT_FILES = "set_file_input_files"


@dataclass(frozen=True)
class _Input:
    """A file input of the page: the chooser's (backendNodeId) or one found by selector."""

    ref: dict[str, Any]  # {"backendNodeId": n} or {"objectId": "…"}
    multiple: bool
    via: str  # "file_chooser" | "file_input"


async def attach_files(ctx: AskContext, files: Sequence[FilePart]) -> list[str]:
    """Stage ``files`` in the composer through the site's upload control and wait until the
    site has them; returns the method that carried each file. ``AttachmentFailed`` when
    the site never shows them, ``FileAccessOff`` when Chrome refuses the extension files."""
    if not files:
        return []
    selectors = ctx.spec.pack.selectors
    if "upload_button" not in selectors or "attachment_chip" not in selectors:
        raise AttachmentFailed(
            ctx.provider,
            f"the {ctx.provider} pack names no upload control or attachment chip "
            "(selectors.upload_button, selectors.attachment_chip), so bridge cannot attach "
            f"{', '.join(f.name for f in files)}. Send text small enough to go into the "
            "question, or name them in a pack override (docs/sites.md#provider-packs).",
        )
    names = [f.name for f in files]
    baseline = int((await ctx.page.call("attachments", ctx.provider, []))["chips"])
    used: list[str] = []
    async with _upload_traffic(ctx.tab) as traffic:
        await ctx.tab.send("Page.enable")
        await ctx.tab.send("Page.setInterceptFileChooserDialog", {"enabled": True})
        try:
            pending = list(files)
            while pending:
                target = await _file_input(ctx)
                group = pending if target.multiple else pending[:1]
                traffic.touch()
                await _give(ctx, target, group)
                used.extend([SET_FILE_INPUT_FILES] * len(group))
                pending = pending[len(group) :]
        finally:
            if ctx.tab.ended is None:
                with contextlib.suppress(BridgeError):
                    await ctx.tab.send("Page.setInterceptFileChooserDialog", {"enabled": False})
                    await ctx.tab.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP})
        await _wait_uploaded(ctx, names, baseline, traffic, sum(f.size for f in files))
    return used


async def _give(ctx: AskContext, target: _Input, files: Sequence[FilePart]) -> None:
    """Put ``files`` into ``target`` by their paths; Chrome reads them (bridge.cdp.file_input)."""
    try:
        await set_input_files(ctx.tab, target.ref, [f.path for f in files])
    except FileAccessOff:
        raise
    except BridgeError as exc:
        raise AttachmentFailed(
            ctx.provider,
            f"Chrome did not put {', '.join(f.name for f in files)} into the {ctx.provider} "
            f"page's file input ({exc}). Reload the tab and ask again.",
        ) from exc


async def _file_input(ctx: AskContext) -> _Input:
    """Click the upload control (and its menu item) and take the input whose file chooser
    opens; when none opens, the pack's file input (docs/sites.md#attachments). A consent
    dialog already open (left from an earlier ask) ends it before anything is clicked."""
    await _check_consent(ctx)
    chooser = ctx.tab.expect_event("Page.fileChooserOpened")
    try:
        await _click(ctx, "upload_button")
        opened = await _chooser_or_menu(ctx, chooser)
    finally:
        chooser.close()
    if opened is not None:
        return _Input(
            {"backendNodeId": opened["backendNodeId"]},
            multiple=opened.get("mode") == "selectMultiple",
            via="file_chooser",
        )
    # The control opened something else (a menu the pack names no item of): use the
    # site's own input directly, as oracle does on ChatGPT (C8.3).
    found = await _find_input(ctx)
    if found is None:
        await dump(ctx, "no file chooser and no file input")
        raise AttachmentFailed(
            ctx.provider,
            f"clicking the {ctx.provider} upload control opened no file chooser, and the page "
            "has no file input bridge knows (selectors.file_input). The site may have changed "
            "its upload control: see docs/sites.md#attachments.",
        )
    ctx.used.fallbacks.append("attach:file_input")
    return found


async def _chooser_or_menu(
    ctx: AskContext, chooser: Waiter[dict[str, Any]]
) -> dict[str, Any] | None:
    """The chooser's event, clicking the menu item first if the control opened a menu.
    ``ConsentRequired`` as soon as the site's upload consent dialog shows instead."""
    wait_s = scaled(CHOOSER_S)
    chooser_task: asyncio.Future[Any] = asyncio.ensure_future(chooser.wait(wait_s))
    menu_task: asyncio.Future[Any] | None = None
    consent_task: asyncio.Future[Any] | None = None
    try:
        if "upload_menu_item" in ctx.spec.pack.selectors:
            menu_task = asyncio.ensure_future(
                ctx.page.call(
                    "whenVisible",
                    ctx.provider,
                    "upload_menu_item",
                    int(wait_s * 1000),
                    timeout=wait_s,
                )
            )
        if _watches_consent(ctx):
            consent_task = asyncio.ensure_future(
                ctx.page.call("whenUploadConsent", ctx.provider, int(wait_s * 1000), timeout=wait_s)
            )
        waiting = {t for t in (chooser_task, menu_task, consent_task) if t is not None}
        while chooser_task in waiting:
            done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if consent_task is not None and consent_task in done and consent_task.result():
                raise ConsentRequired(ctx.provider, str(consent_task.result()))
            menu_shown = menu_task is not None and menu_task in done and menu_task.result()
            if menu_shown == "visible" and chooser_task not in done:
                await _click(ctx, "upload_menu_item")
        try:
            event: dict[str, Any] = await chooser_task
        except BridgeTimeout:
            return None
        return event
    finally:
        for task in (chooser_task, menu_task, consent_task):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, BridgeError):
                    await task


def _watches_consent(ctx: AskContext) -> bool:
    """Whether the pack says how the site asks consent for uploads (G5.3)."""
    pack = ctx.spec.pack
    return "blocking_dialog" in pack.selectors and "upload_consent" in pack.texts


async def _check_consent(ctx: AskContext) -> None:
    """``ConsentRequired`` when the site's upload consent dialog shows now."""
    if not _watches_consent(ctx):
        return
    shown = await ctx.page.call("uploadConsent", ctx.provider)
    if shown:
        raise ConsentRequired(ctx.provider, str(shown))


async def _click(ctx: AskContext, name: str) -> None:
    """A trusted CDP mouse click on the newest visible element of the pack's ``name``."""
    wait_s = scaled(CONTROL_S)
    state = await ctx.page.call(
        "whenVisible", ctx.provider, name, int(wait_s * 1000), timeout=wait_s
    )
    target = await ctx.page.call("controlTarget", ctx.provider, name) if state else None
    if not target:
        await dump(ctx, f"no {name}")
        raise AttachmentFailed(
            ctx.provider,
            f"the {ctx.provider} page shows no upload control (selectors.{name}) after "
            f"{wait_s:.0f}s; is a dialog in the way? Look at the tab, then ask again.",
        )
    await trusted_click(ctx, target)


async def _find_input(ctx: AskContext) -> _Input | None:
    selectors = ctx.spec.pack.selectors.get("file_input")
    if selectors is None:
        return None
    try:
        object_id = await ctx.page.call_object(
            "fileInput", list(selectors.css), object_group=_GROUP
        )
    except JavaScriptError as exc:  # a selector the page rejects: none found
        log.debug("%s: no file input: %s", ctx.provider, exc)
        return None
    if object_id is None:
        return None
    multiple = await ctx.page.call_on(object_id, "takesMany")
    return _Input({"objectId": object_id}, multiple=bool(multiple), via="file_input")


async def _wait_uploaded(
    ctx: AskContext, names: list[str], baseline: int, traffic: _UploadTraffic, total: int
) -> None:
    """Every file's chip shown, none busy, and the page's upload requests ended."""
    wait_s = scaled(UPLOAD_BASE_S + total / UPLOAD_BYTES_PER_S)
    deadline = time.monotonic() + wait_s
    state = await ctx.page.call(
        "whenAttached", ctx.provider, names, baseline, int(wait_s * 1000), timeout=wait_s
    )
    log.debug("%s: whenAttached said %r", ctx.provider, state)
    if state == "consent":
        await _check_consent(ctx)  # raises, unless the dialog closed meanwhile
    if state == "attached":
        quiet = await traffic.quiet(scaled(UPLOAD_QUIET_S), max(0.0, deadline - time.monotonic()))
        log.debug("%s: uploads quiet: %s", ctx.provider, quiet)
        if quiet:
            # An upload that ended may have changed a chip (busy again, an error): look again.
            state = await ctx.page.call(
                "whenAttached", ctx.provider, names, baseline, 0, timeout=scaled(5.0)
            )
            if state == "consent":
                await _check_consent(ctx)
            if state == "attached":
                return
        else:
            state = "uploading"
    seen = await ctx.page.call("attachments", ctx.provider, names)
    await dump(ctx, "attachments never finished")
    what = (
        "its upload requests were still running"
        if state == "uploading"
        else f"it showed {seen['shown']} of {len(names)} file(s) staged"
        + (", still uploading" if seen["busy"] else "")
    )
    raise AttachmentFailed(
        ctx.provider,
        f"the {ctx.provider} page did not finish taking {', '.join(names)} within "
        f"{wait_s:.0f}s: {what}. Look at the tab (take_cdp_snapshot): the site may refuse "
        "the file's type or size, or ask for a consent first; then ask again.",
    )


class _UploadTraffic:
    """The page's uploads as CDP ``Network`` sees them: POST/PUT requests with a body,
    started while files are handed over. A behaviour, not markup: it needs no knowledge
    of how a site draws progress (docs/sites.md#attachments)."""

    def __init__(self, tab: CdpSession) -> None:
        self.tab = tab
        self.in_flight: set[str] = set()
        self.changed_at = time.monotonic()
        self._changed = asyncio.Event()
        self._watching = False

    def touch(self) -> None:
        """Files are being handed over: requests from now on are uploads."""
        self._watching = True
        self._mark()

    def _mark(self) -> None:
        self.changed_at = time.monotonic()
        self._changed.set()

    def sent(self, params: dict[str, Any]) -> None:
        request = params.get("request", {})
        if not self._watching or str(request.get("method", "")).upper() not in ("POST", "PUT"):
            return
        if not (request.get("hasPostData") or request.get("postData")):
            return
        if params.get("type") in ("Ping", "CSPViolationReport", "Preflight"):
            return  # beacons are not uploads
        self.in_flight.add(str(params.get("requestId")))
        log.debug("upload request %s %s", params.get("requestId"), request.get("url"))
        self._mark()

    def ended(self, params: dict[str, Any]) -> None:
        request_id = str(params.get("requestId"))
        if request_id in self.in_flight:
            self.in_flight.discard(request_id)
            log.debug("upload request %s ended", request_id)
            self._mark()

    async def quiet(self, quiet_s: float, timeout_s: float) -> bool:
        """True once no upload has been in flight for ``quiet_s``; False at ``timeout_s``.
        A tab that ends meanwhile raises its error at once."""
        deadline = time.monotonic() + timeout_s
        guard = self.tab.expect_event("Network.loadingFinished", lambda _: False)
        try:
            while True:
                now = time.monotonic()
                if not self.in_flight and now - self.changed_at >= quiet_s:
                    return True
                if now >= deadline:
                    return False
                wake = deadline - now
                if not self.in_flight:
                    wake = min(wake, quiet_s - (now - self.changed_at))
                self._changed.clear()
                changed = asyncio.ensure_future(self._changed.wait())
                try:
                    waits: set[asyncio.Future[Any]] = {changed, guard.future}
                    await asyncio.wait(
                        waits, timeout=max(wake, 0.001), return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    changed.cancel()
                if guard.future.done():
                    guard.future.result()  # raises the tab's end
        finally:
            guard.close()


@contextlib.asynccontextmanager
async def _upload_traffic(tab: CdpSession) -> AsyncIterator[_UploadTraffic]:
    """Watch the tab's requests while files are attached; ``Network`` is on only meanwhile
    (left on when it was on before)."""
    traffic = _UploadTraffic(tab)
    already = "Network" in tab.enabled
    unsubscribe = [
        tab.on("Network.requestWillBeSent", traffic.sent),
        tab.on("Network.loadingFinished", traffic.ended),
        tab.on("Network.loadingFailed", traffic.ended),
    ]
    try:
        if not already:
            await tab.send("Network.enable", {"maxPostDataSize": 0})
        yield traffic
    finally:
        for off in unsubscribe:
            off()
        if not already and tab.ended is None:
            with contextlib.suppress(BridgeError):
                await tab.send("Network.disable", timeout=scaled(5.0))
