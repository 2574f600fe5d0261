"""The reading family: what the page shows and did, without acting on it: its snapshot and
screenshots, the console and network recorded since attachment, a function evaluated in it,
a wait for text or an element, and the DOM exploration script and elements for
``bridge.tools.dom``."""

from __future__ import annotations

import asyncio
import base64
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bridge.cdp.page_script import PageScript
from bridge.errors import BridgeError, BridgeTimeout, CdpError
from bridge.tools.dom import dom_page
from bridge.tools.element import Element
from bridge.tools.operations.client import (
    NoCurrentTab,
    ToolClient,
    current_url,
    document_replaced,
    unless_dialog,
)
from bridge.tools.pixels_core import Viewport, shot_scale
from bridge.tools.saving import save_file, writable_path
from bridge.tools.scripts import ACTIONS_SCRIPT
from bridge.tools.snapshot import take_snapshot
from bridge.tools.targets import TabState, resolve_target
from bridge.waiting import scaled

__all__ = ["Reading"]

MAX_WAIT_S = 30.0
SCREENSHOT_WAIT_S = 5.0
#: How long a plain capture may wait for its frame before the screencast fallback takes over
#: (a background tab may never paint one). Its own name so that a test of the fallback can
#: shorten this wait alone; the fallback's frame keeps SCREENSHOT_WAIT_S.
CAPTURE_WAIT_S = SCREENSHOT_WAIT_S
MAX_SCREENSHOT_SIDE = 8000  # pixels; larger pages are scaled down, never refused
BODY_LIMIT = 10_000

ShotType = Literal["png", "jpeg", "webp"]


@dataclass(frozen=True)
class Shot:
    """A screenshot: its bytes, their format, image pixels per CSS pixel when the capture
    was scaled to a known factor (``max_size``: the agent maps coordinates with it), and
    where it was saved (``filename``)."""

    data: bytes
    format: str
    scale: float | None = None
    path: Path | None = None


class Reading(ToolClient):
    """``browser_snapshot``, ``browser_take_screenshot``, ``browser_console_messages``,
    ``browser_network_requests``, ``browser_evaluate``, ``browser_wait_for``; and the DOM
    tools' page script and elements."""

    async def snapshot(self, tab: int | None = None, *, max_chars: int | None = None) -> str:
        state = await self._state(tab)
        # The URL asked along with the tree: one round trip less.
        text, url = await asyncio.gather(
            take_snapshot(state, max_chars=max_chars), current_url(state)
        )
        return f"tab {state.tab_id}: {url}\n{text}"

    async def screenshot(
        self, target: str | None = None, full_page: bool = False, tab: int | None = None
    ) -> tuple[bytes, str]:
        """PNG bytes (JPEG when large) and the format; never steals focus."""
        shot = await self.capture(target, full_page, tab)
        return shot.data, shot.format

    async def capture(
        self,
        target: str | None = None,
        full_page: bool = False,
        tab: int | None = None,
        *,
        type: ShotType | None = None,
        quality: int | None = None,
        max_size: int | None = None,
        filename: str | None = None,
    ) -> Shot:
        """A screenshot: the viewport, an element or the full page; as ``type`` (png, jpeg,
        webp; default png, jpeg for a huge full page), ``quality`` 0-100 (jpeg, webp),
        scaled down to at most ``max_size`` pixels on its longest side (never up); also
        saved at ``filename`` when given (under a folder the file policy allows)."""
        if quality is not None and not 0 <= quality <= 100:
            raise ValueError("quality is 0-100")
        if quality is not None and (type or "png") == "png":
            raise ValueError("quality applies to type jpeg or webp, not png: give type too")
        if filename is not None:
            writable_path(self.hub.files, filename)  # refused before the page is touched
        state = await self._state(tab)
        params: dict[str, Any] = {"format": type or "png"}
        view = None
        if max_size is not None:
            view = Viewport.from_metrics(await state.tab.send("Page.getLayoutMetrics"))
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
            if type is None and width * height * scale * scale > 4_000_000:
                params.update(format="jpeg", quality=80)
        elif view is not None:
            # The viewport as a clip, so that it can be scaled (a plain capture cannot).
            params["clip"] = {
                "x": view.page_x,
                "y": view.page_y,
                "width": view.width,
                "height": view.height,
                "scale": 1,
            }
        factor: float | None = None  # image pixels per CSS pixel, when scaled to a bound
        if view is not None:
            clip = params["clip"]
            bound = shot_scale(clip["width"], clip["height"], view.dpr, max_size)
            clip["scale"] = min(float(clip["scale"]), bound)
            factor = clip["scale"] * view.dpr
        if quality is not None:
            params["quality"] = quality
        try:
            # A tab in the background of its window may never produce the frame this waits
            # for (seen in Chromium 156, through chrome.debugger and direct CDP alike).
            shot = await state.tab.send(
                "Page.captureScreenshot", params, timeout=scaled(CAPTURE_WAIT_S)
            )
            data, kind = base64.b64decode(shot["data"]), str(params["format"])
        except BridgeTimeout:
            if "clip" in params:
                raise BridgeError(
                    "Chrome rendered no frame of this background tab for an element, scaled "
                    "or full-page screenshot; a viewport screenshot still works, or open the "
                    "page in a tab of its own with browser_tabs new"
                ) from None
            data, kind = await _screencast_frame(state)
        result = Shot(data, kind, factor)
        if filename is not None:
            mime = f"image/{kind}"
            path = await asyncio.to_thread(save_file, self.hub.files, filename, data, mime)
            result = Shot(data, kind, factor, path)
        return result

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
            return await unless_dialog(
                state,
                element.call(f"function () {{ return ({function})(this); }}", await_promise=True),
            )
        return await unless_dialog(state, state.tab.evaluate(f"({function})()", await_promise=True))

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
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        held = False
        while (left := deadline - loop.time()) > 0:
            # A page that navigates meanwhile (a tab just opened, a click's new page) ends
            # the check in its old document: it goes on in the new one, once that exists.
            fresh = state.tab.expect_event(
                "Runtime.executionContextCreated",
                lambda p: bool(p.get("context", {}).get("auxData", {}).get("isDefault")),
            )
            try:
                held = await unless_dialog(
                    state,
                    dom_page(state.tab).call(
                        "waitFor", text, text_gone, selector, int(left * 1000), timeout=left
                    ),
                )
                break
            except CdpError as exc:
                if not document_replaced(exc):
                    raise
                try:
                    await fresh.wait(max(deadline - loop.time(), 0.0))
                except BridgeTimeout:
                    break
            finally:
                fresh.close()
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


async def _screencast_frame(state: TabState) -> tuple[bytes, str]:
    """The viewport from one screencast frame: screencasts keep producing frames for a
    background tab when a plain capture waits in vain. While a GIF recording screencasts
    the tab, its latest frame (a screencast of our own would end the recording's)."""
    if state.screencasting is not None:
        latest = state.screencasting()
        if latest is not None:
            return latest, "jpeg"
        raise BridgeError(
            "Chrome rendered no frame of this background tab yet while a GIF recording runs "
            "on it; act on the page or stop the recording, then take the screenshot again"
        )
    frame = state.tab.expect_event("Page.screencastFrame")
    try:
        await state.tab.send("Page.startScreencast", {"format": "png", "everyNthFrame": 1})
        params = await frame.wait(scaled(SCREENSHOT_WAIT_S))
        await state.tab.send("Page.screencastFrameAck", {"sessionId": params["sessionId"]})
        return base64.b64decode(params["data"]), "png"
    finally:
        frame.close()
        await state.tab.send("Page.stopScreencast")


def _cut(text: str) -> str:
    if len(text) <= BODY_LIMIT:
        return text
    return text[:BODY_LIMIT] + f"… ({len(text) - BODY_LIMIT} more characters)"
