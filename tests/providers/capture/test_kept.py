"""The captures the project keeps of its fakes (tests/captures/) are still what the fakes
show: a fake changed without its capture being taken again is a difference listed by the
same diff that compares a fake with a live capture (docs/captures.md#the-fakes-meet-reality).

``BRIDGE_WRITE_CAPTURES=1 pytest tests/providers/capture/test_kept.py`` takes them again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bridge.app.captures import take_capture, write_capture
from bridge.app.facade import Bridge
from bridge.fakes import Behaviour, FakeSites
from bridge.providers.capture.diff import diff_captures, render_diff
from bridge.providers.capture.model import load_capture

pytestmark = pytest.mark.e2e
KEPT = Path(__file__).resolve().parents[2] / "captures"


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_each_fake_is_still_what_its_kept_capture_shows(
    bridge: Bridge, fakes: FakeSites, provider: str, tmp_path: Path
) -> None:
    # An answer of a second and a half: the answering page is read while it comes.
    getattr(fakes, provider).queue(Behaviour(duration_ms=1500))
    capture, _, error = await take_capture(bridge, provider, source="fake")  # type: ignore[arg-type]
    assert capture["phases"]["answering"]["during_answer"] is True
    assert error is None, error
    path = KEPT / f"{provider}-fake.json"
    if os.environ.get("BRIDGE_WRITE_CAPTURES"):
        written = write_capture(tmp_path, capture)
        path.write_text(written.read_text(encoding="utf-8"), encoding="utf-8")
    kept = load_capture(path)
    findings = diff_captures(kept, capture, a_name=path.name, b_name="the fake now")
    assert [f for f in findings if not f.ok] == [], (
        render_diff(findings)
        + "\n(the fake changed: take its capture again with BRIDGE_WRITE_CAPTURES=1 pytest "
        "tests/providers/capture/test_kept.py, and say why in the commit)"
    )
