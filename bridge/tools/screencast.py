"""One client's recording of one tab: Chrome's screencast, kept for a GIF (``record`` group).

``Page.startScreencast`` sends a frame only when the page changed, so an idle page costs
nothing; every frame is acknowledged (``Page.screencastFrameAck``) or Chrome stops sending.
Frames are JPEG, at most ``MAX_SIDE`` pixels on their longest side, at most ``MAX_FRAMES``
of them and ``MAX_BYTES`` in all: past that, later frames are counted, not kept (the GIF
says so). Clicks the tools send on the tab (``TabState.clicked``) become markers.

The recording ends when asked, when the client leaves (``ToolClient.on_leave``), or when
the tab closes or is detached (``CdpSession.on_end``): the screencast's listeners go then;
the frames stay until exported or cleared, so a flow that closes its tab can still be
exported.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
from typing import Any

from bridge.errors import BridgeError
from bridge.tools.gif_core import Frame, Marker
from bridge.tools.targets import TabState

__all__ = ["MAX_BYTES", "MAX_FRAMES", "MAX_SIDE", "Screencast"]

log = logging.getLogger(__name__)

MAX_FRAMES = 600
MAX_BYTES = 60_000_000
MAX_SIDE = 800
JPEG_QUALITY = 70


class Screencast:
    """The screencast of ``state``'s tab, from ``start`` until ``stop``."""

    def __init__(self, state: TabState) -> None:
        self.state = state
        self.frames: list[Frame] = []
        self.markers: list[Marker] = []
        self.dropped = 0  # frames past the limits, counted only
        self.size = 0
        self.running = False
        self.ended_by: str = ""  # why it ended, when not asked: "the tab closed"
        self._latest: bytes | None = None
        self._unsubscribe: list[Any] = []
        self._acks: set[asyncio.Future[Any]] = set()

    @property
    def tab_id(self) -> int:
        return self.state.tab_id

    async def start(self) -> None:
        tab = self.state.tab
        self.running = True
        self._unsubscribe = [
            tab.on("Page.screencastFrame", self._frame),
            tab.on_end(self._ended),
        ]
        self.state.click_watchers.append(self._clicked)
        self.state.screencasting = self.latest
        try:
            await tab.send(
                "Page.startScreencast",
                {
                    "format": "jpeg",
                    "quality": JPEG_QUALITY,
                    "maxWidth": MAX_SIDE,
                    "maxHeight": MAX_SIDE,
                    "everyNthFrame": 1,
                },
            )
        except BaseException:
            self._release()
            raise

    def latest(self) -> bytes | None:
        """The last frame Chrome sent (kept or not)."""
        return self._latest

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def _frame(self, params: dict[str, Any]) -> None:
        # Acknowledged first and always: an unacknowledged frame stops the screencast.
        ack = asyncio.ensure_future(
            self.state.tab.send("Page.screencastFrameAck", {"sessionId": params["sessionId"]})
        )
        self._acks.add(ack)
        ack.add_done_callback(self._acked)
        try:
            data = base64.b64decode(params["data"], validate=True)
        except (binascii.Error, KeyError, TypeError):
            return
        self._latest = data
        if not self.running:
            return
        if len(self.frames) >= MAX_FRAMES or self.size + len(data) > MAX_BYTES:
            self.dropped += 1
            return
        meta = params.get("metadata") or {}
        width = float(meta.get("deviceWidth") or 0)
        height = float(meta.get("deviceHeight") or 0)
        self.frames.append(Frame(data, self._now(), width, height))
        self.size += len(data)

    def _acked(self, ack: asyncio.Future[Any]) -> None:
        self._acks.discard(ack)
        if not ack.cancelled() and ack.exception() is not None:
            log.info("screencast frame ack failed: %s", ack.exception())

    def _clicked(self, x: float, y: float) -> None:
        if self.running:
            self.markers.append(Marker(x, y, self._now()))

    def _ended(self, error: BridgeError) -> None:
        self.ended_by = f"the tab ended ({error})"
        self._release()

    def _release(self) -> None:
        """Stop listening and watching (no CDP call: usable when the tab is gone)."""
        self.running = False
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        if self._clicked in self.state.click_watchers:
            self.state.click_watchers.remove(self._clicked)
        if self.state.screencasting == self.latest:
            self.state.screencasting = None

    async def stop(self) -> None:
        """End the screencast; the frames stay. A tab already gone is fine."""
        was_running = bool(self._unsubscribe)
        self._release()
        if was_running and self.state.tab.ended is None:
            try:
                await self.state.tab.send("Page.stopScreencast")
            except BridgeError as exc:  # closed meanwhile: nothing left to stop
                log.info("stopping the screencast of tab %s: %s", self.tab_id, exc)
        for ack in list(self._acks):
            ack.cancel()
        self._acks.clear()

    def clear(self) -> None:
        self.frames = []
        self.markers = []
        self.dropped = 0
        self.size = 0
