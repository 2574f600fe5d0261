"""Debug dumps (docs/flows.md#debug-dumps): what led to a failure or a suspicious answer."""

from __future__ import annotations

import base64
import logging
import math
import os
from typing import Any

from bridge.errors import BridgeError
from bridge.providers.context import AskContext
from bridge.waiting import scaled

__all__ = ["ENV_SCREENSHOT_S", "SCREENSHOT_S", "dump", "screenshot_wait"]

log = logging.getLogger(__name__)

#: How long a dump waits for the page's screenshot (before the timeout factor). A tab in the
#: background of its window may paint no frame at all (Chromium 156): the dump is then
#: written without one when this runs out.
SCREENSHOT_S = 10.0
#: Overrides SCREENSHOT_S. For test runs, whose ask tabs sit in the background of a shared
#: browser: each failure a test provokes on purpose would otherwise wait the whole 10 s for a
#: frame that never comes. Unset (the default) everywhere else.
ENV_SCREENSHOT_S = "BRIDGE_DUMP_SCREENSHOT_S"


def screenshot_wait(environ: dict[str, str] | None = None) -> float:
    """Seconds a dump waits for its screenshot, before ``scaled``: ``$BRIDGE_DUMP_SCREENSHOT_S``
    when it is a positive finite number, else SCREENSHOT_S."""
    raw = (os.environ if environ is None else environ).get(ENV_SCREENSHOT_S, "")
    try:
        seconds = float(raw)
    except ValueError:
        return SCREENSHOT_S
    return seconds if math.isfinite(seconds) and seconds > 0 else SCREENSHOT_S


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
                "Page.captureScreenshot", {"format": "png"}, timeout=scaled(screenshot_wait())
            )
            screenshot = base64.b64decode(shot["data"])
        except BridgeError as exc:
            payload["page_error"] = str(exc)
    try:
        path = await ctx.store.write_debug_async(ctx.provider, payload, screenshot)
        log.warning("%s: %s (debug dump %s)", ctx.provider, why, path)
    except OSError as exc:
        log.warning("could not write a debug dump: %s", exc)
