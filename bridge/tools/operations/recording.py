"""The record family (``record`` group, off by default): ``browser_record_gif``, the Claude
extension's recorder (gif_creator) over bridge's own link, so a client sees one tool either
way. A screencast of the client's tab (``bridge.tools.screencast``) becomes an animated GIF
with a marker at every click (``bridge.tools.gif_core``), written under a folder the file
policy allows (``bridge.tools.saving``).

One recording per client. It ends when stopped, when the client leaves (``on_leave``), or
when its tab closes; its frames are kept (bounded) until exported again, cleared, or the
client leaves.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from bridge.errors import GifRecordingError
from bridge.tools.gif_core import encode_gif
from bridge.tools.operations.client import ToolClient
from bridge.tools.saving import default_name, save_file, writable_path
from bridge.tools.screencast import MAX_BYTES, MAX_FRAMES, Screencast

__all__ = ["Recording"]

RecordAction = Literal["start_recording", "stop_recording", "export", "clear"]
_LEAVE = "record_gif"


class Recording(ToolClient):
    """``browser_record_gif`` (start_recording, stop_recording, export, clear)."""

    _recording: Screencast | None = None

    async def record_gif(
        self, action: RecordAction, *, filename: str | None = None, tab: int | None = None
    ) -> dict[str, Any]:
        if action == "start_recording":
            return await self._start_recording(tab)
        if action == "stop_recording":
            return await self._stop_recording()
        if action == "export":
            return await self._export(filename)
        if action == "clear":
            return await self._clear()
        raise ValueError("action is start_recording, stop_recording, export or clear")

    async def _start_recording(self, tab: int | None) -> dict[str, Any]:
        state = await self._state(tab)
        old = self._recording
        if old is not None and old.running:
            if old.tab_id == state.tab_id:
                return {"recording": True, "tab": old.tab_id, "note": "already recording"}
            await old.stop()
        if state.screencasting is not None:
            # One screencast per tab: a second would share its frames and end with either.
            raise GifRecordingError(
                f"another client is recording tab {state.tab_id}: record another tab, or "
                "wait until that recording stops"
            )
        cast = Screencast(state)
        await cast.start()
        self._recording = cast

        async def end() -> None:
            recording, self._recording = self._recording, None
            if recording is not None:
                await recording.stop()
                recording.clear()

        self.on_leave(_LEAVE, end)
        return {"recording": True, "tab": state.tab_id}

    def _recorded(self, action: str) -> Screencast:
        if self._recording is None:
            raise GifRecordingError(
                f"nothing to {action}: browser_record_gif start_recording first, then act, "
                "then stop_recording and export"
            )
        return self._recording

    async def _stop_recording(self) -> dict[str, Any]:
        cast = self._recorded("stop")
        await cast.stop()
        return self._status(cast)

    def _status(self, cast: Screencast) -> dict[str, Any]:
        out: dict[str, Any] = {
            "recording": cast.running,
            "tab": cast.tab_id,
            "frames": len(cast.frames),
            "clicks": len(cast.markers),
        }
        if cast.dropped:
            out["dropped_frames"] = cast.dropped
            out["note"] = (
                f"only the first {len(cast.frames)} frames are kept (at most {MAX_FRAMES}, "
                f"{MAX_BYTES // 1_000_000} MB): record shorter stretches"
            )
        if cast.ended_by:
            out["ended"] = cast.ended_by
        return out

    async def _export(self, filename: str | None) -> dict[str, Any]:
        cast = self._recorded("export")
        name = filename or default_name("recording", "gif")
        if not name.lower().endswith(".gif"):
            name += ".gif"
        writable_path(self.hub.files, name)  # refused before any encoding work
        if not cast.frames:
            raise GifRecordingError(
                "the recording has no frames yet: the screencast sends one when the page "
                "changes; act on the page (or wait for it to draw), then export"
            )
        frames, markers = list(cast.frames), list(cast.markers)
        # Decoding and quantizing hundreds of frames takes a while: off the event loop.
        data = await asyncio.to_thread(encode_gif, frames, markers)
        path = await asyncio.to_thread(save_file, self.hub.files, name, data, "image/gif")
        out = self._status(cast)
        out.update(path=str(path), bytes=len(data))
        return out

    async def _clear(self) -> dict[str, Any]:
        cast = self._recorded("clear")
        cast.clear()
        return self._status(cast)
