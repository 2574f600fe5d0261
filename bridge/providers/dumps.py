"""Debug dumps (docs/flows.md#debug-dumps): what led to a failure or a suspicious answer."""

from __future__ import annotations

import base64
import logging
from typing import Any

from bridge.errors import BridgeError
from bridge.providers.context import AskContext
from bridge.waiting import scaled

__all__ = ["dump"]

log = logging.getLogger(__name__)


async def dump(ctx: AskContext, why: str) -> None:
    """Write page state, the last observations and verdicts, and a screenshot. Never raises
    for a page or disk problem: a dump must not hide the error it documents."""
    payload: dict[str, Any] = {
        "why": why,
        "provider": ctx.provider,
        "question": ctx.question,
        "session_key": ctx.key,
        "used": ctx.used.to_dict(),
        "timings": ctx.timings.to_dict(),
        "observations": ctx.observations[-50:],
        "verdicts": ctx.verdicts[-50:],
    }
    screenshot: bytes | None = None
    if ctx.session is not None and ctx.session.ended is None:
        try:
            payload["page"] = await ctx.page.call("debugInfo", ctx.provider, timeout=scaled(5.0))
            if payload["page"].get("visibilityState") == "hidden":
                # A hidden tab produces no frames, so a screenshot would wait for one in vain.
                await ctx.tab.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
            shot = await ctx.tab.send(
                "Page.captureScreenshot", {"format": "png"}, timeout=scaled(10.0)
            )
            screenshot = base64.b64decode(shot["data"])
        except BridgeError as exc:
            payload["page_error"] = str(exc)
    try:
        path = await ctx.store.write_debug_async(ctx.provider, payload, screenshot)
        log.warning("%s: %s (debug dump %s)", ctx.provider, why, path)
    except OSError as exc:
        log.warning("could not write a debug dump: %s", exc)
