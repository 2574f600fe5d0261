"""The offline demo (``bridge ask --demo``, ``bridge-mcp --demo``): the whole flow, no account.

It serves bridge's built-in fake ChatGPT and Gemini (:mod:`bridge.fakes`) at their real URLs
to a headless Chromium that bridge launches with a temporary profile and the extension, so
a newcomer sees what bridge does (tabs opened, question typed, answer streamed and read)
before pointing it at their own Chrome. Nothing reaches the real sites: the browser's
host-resolver rules map chatgpt.com and gemini.google.com to 127.0.0.1, and the flag that
accepts the fakes' certificate is confined to that throwaway profile.

What the demo needs is refused up front when an option contradicts it (a profile of the
person's, no launch), rather than silently ignored.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bridge.app.runtime import RuntimeOptions
from bridge.fakes import FakeSites

__all__ = ["DEMO_NOTE", "DemoSetup", "demo_setup", "demo_summary", "refuse_demo_options"]

DEMO_NOTE = (
    "demo: bridge's built-in fake ChatGPT and Gemini, in a headless Chromium with a temporary "
    "profile; no account, nothing leaves this machine"
)


@dataclass(frozen=True)
class DemoSetup:
    """What the demo runs against: the fake sites it started and its state directory."""

    sites: FakeSites
    state_dir: Path  # temporary unless the person named one


def refuse_demo_options(options: RuntimeOptions) -> str | None:
    """Why these options cannot run the demo (the message says what to drop), or None."""
    if options.profile_dir is not None:
        return (
            "--demo runs in a temporary profile of its own (the fakes need browser flags that "
            "must never touch yours): drop --profile-dir"
        )
    if options.link != "websocket":
        return "--demo links the browser it launches over the loopback WebSocket: drop --link"
    return None


@contextlib.contextmanager
def demo_setup(options: RuntimeOptions) -> Iterator[DemoSetup]:
    """Start the fake sites and turn ``options`` into the demo's: a launched headless Chromium
    with a temporary profile that loads the fakes at the real URLs, and a temporary state
    directory (unless one was given), all removed afterwards."""
    sites = FakeSites()
    sites.start()
    made: Path | None = None
    try:
        if options.state_dir is None:
            made = Path(tempfile.mkdtemp(prefix="bridge-demo-"))
        options.launch = True
        options.headless = True
        options.isolated = True
        options.chrome_args = [*sites.chromium_args(), *options.chrome_args]
        options.state_dir = options.state_dir or made
        assert options.state_dir is not None
        yield DemoSetup(sites, options.state_dir)
    finally:
        sites.stop()
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


def demo_summary(history: list[dict[str, Any]], wall_ms: float | None) -> list[str]:
    """What the demo prints after the answers, from the history lines the asks appended (what
    a real ask keeps): each provider's timings, then the lines themselves, shortened. (The
    demo's note, :data:`DEMO_NOTE`, goes to stderr when it starts.)"""
    lines: list[str] = []
    answered = [record for record in history if record.get("outcome") == "ok"]
    for record in answered:
        t = record.get("timings") or {}

        def s(key: str, t: dict[str, Any] = t) -> str:
            return f"{float(t.get(key, 0.0)) / 1000:.2f} s"

        lines.append(
            f"timings: {record.get('provider')}: {s('total_ms')} in all (open tab "
            f"{s('connect_ms')}, type {s('input_ms')}, send {s('send_ms')}, answer "
            f"{s('wait_response_ms')}); {len(str(record.get('answer', '')))} chars from "
            f"{record.get('url')}"
        )
    if wall_ms is not None:
        lines.append(f"timings: the whole command, browser start included: {wall_ms / 1000:.2f} s")
    for record in history:
        lines.append("history: " + json.dumps(_shortened(record), ensure_ascii=False))
    return lines


_ANSWER_SHOWN = 60


def _shortened(record: dict[str, Any]) -> dict[str, Any]:
    """A history line as the demo shows it: the answer cut short and the nested details
    (timings, what was used) named, so it fits a terminal; the file holds them whole."""
    shown: dict[str, Any] = {}
    for key, value in record.items():
        if key == "answer" and isinstance(value, str) and len(value) > _ANSWER_SHOWN:
            shown[key] = f"{value[:_ANSWER_SHOWN]}… ({len(value)} chars)"
        elif isinstance(value, dict):
            shown[key] = "{…}"
        else:
            shown[key] = value
    return shown
