"""A capture of one tiny ask (docs/captures.md): what ``bridge doctor --live --capture DIR``
and a scenario's ``capture`` option run, with the person's content removed.

The capture rides along an ordinary ask (``CaptureRecorder`` wraps its flow), so it sees
exactly what an ask sees; a failed ask is captured too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bridge.app.facade import Bridge
from bridge.errors import BridgeError
from bridge.providers.capture.take import CaptureRecorder
from bridge.providers.results import AskResult, Provider
from bridge.providers.specs import provider_spec
from bridge.store.state import write_atomically

__all__ = ["CAPTURE_QUESTION", "capture_page", "take_capture", "write_capture"]

#: The doctor's tiny ask: an answer of one word is no one's content.
CAPTURE_QUESTION = "Reply with the single word OK."


async def take_capture(
    bridge: Bridge,
    provider: Provider,
    question: str = CAPTURE_QUESTION,
    *,
    session_key: str | None = None,
    new_chat: bool = True,
    timeout: float = 120.0,
    source: str = "live",
    versions: Mapping[str, str | int] | None = None,
) -> tuple[dict[str, Any], AskResult | None, BridgeError | None]:
    """One ask of ``question`` with a capture riding along: the capture, and the ask's
    result or its typed error (a failed ask is captured too)."""
    recorder = CaptureRecorder(provider_spec(provider, bridge.store.root), source=source)
    result: AskResult | None = None
    error: BridgeError | None = None
    try:
        result = await bridge.ask(
            provider,
            question,
            session_key=session_key,
            new_chat=new_chat,
            timeout=timeout,
            flow=recorder.flow(bridge.flow),
        )
    except BridgeError as exc:
        error = exc
        await recorder.after_failure()
        if not recorder.pages:
            # It failed before the composer was found (a changed input, a wall): the page as
            # it is now is the page as it was.
            await _page_as_it_is(bridge, recorder, provider, session_key)
    return recorder.build(question, result, error, versions=versions), result, error


async def capture_page(
    bridge: Bridge,
    provider: Provider,
    outcome: str,
    *,
    session_key: str | None = None,
    versions: Mapping[str, str | int] | None = None,
) -> dict[str, Any]:
    """A capture of the provider's tab as it is, with no ask: for a page that could not be
    asked (no composer found, a login wall), which is when the site's structure is most
    worth seeing. ``outcome`` says why there was no ask."""
    recorder = CaptureRecorder(provider_spec(provider, bridge.store.root))
    await _page_as_it_is(bridge, recorder, provider, session_key)
    return recorder.build("", versions=versions, outcome=outcome)


async def _page_as_it_is(
    bridge: Bridge, recorder: CaptureRecorder, provider: Provider, session_key: str | None
) -> None:
    """The provider's tab read as the ``ready`` page, or why it could not be."""
    try:
        tab = await bridge.provider_tab(provider, session_key=session_key)
    except BridgeError as why:
        recorder.missing["ready"] = f"no tab to read: {why}"
    else:
        await recorder.take_tab(tab, "ready")


def write_capture(folder: Path, capture: Mapping[str, Any], name: str | None = None) -> Path:
    """``<folder>/<name or provider>.json``, written atomically (a reader never sees half a
    file) and readable by the person only until they choose to share it; the folder is made
    if missing."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name or capture['provider']}.json"
    write_atomically(path, json.dumps(capture, indent=1, ensure_ascii=False) + "\n")
    return path
