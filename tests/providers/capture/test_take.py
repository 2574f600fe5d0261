"""A capture taken during a real ask in real Chromium against the fakes (docs/captures.md):
every phase, the structure around the pack's entries, no conversation text anywhere; and
the check of that capture against the pack, the parser and the detector."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from bridge.app.captures import take_capture
from bridge.app.facade import Bridge
from bridge.fakes import Behaviour, FakeSites
from bridge.providers.capture.check import check_capture
from bridge.providers.capture.matching import capture_matcher
from bridge.providers.specs import provider_spec

pytestmark = pytest.mark.e2e

#: Marker text planted in the question and in the answer: it must appear nowhere in a capture.
QUESTION_MARKER = "QMARKER7731"
ANSWER_MARKER = "AMARKER5520"
QUESTION = f"Please explain {QUESTION_MARKER} in one sentence."
ANSWER = f"The word {ANSWER_MARKER} means nothing; it is a marker.\n\nA second paragraph."


async def _capture(bridge: Bridge, fakes: FakeSites, provider: str) -> dict[str, Any]:
    site = getattr(fakes, provider)
    # A second and a half of streaming: the answering page is read while the answer comes.
    site.queue(Behaviour(answer=ANSWER, duration_ms=1500))
    capture, result, error = await take_capture(
        bridge,
        provider,  # type: ignore[arg-type]
        QUESTION,
        source="fake",
    )
    assert error is None, error
    assert result is not None and ANSWER_MARKER in result.answer
    return capture


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_a_capture_of_a_fake_has_every_phase_and_no_conversation_text(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    capture = await _capture(bridge, fakes, provider)
    text = json.dumps(capture, ensure_ascii=False)
    for marker in (QUESTION_MARKER, ANSWER_MARKER, "Please explain", "second paragraph"):
        assert marker.casefold() not in text.casefold(), marker
    assert set(capture["phases"]) == {"ready", "typed", "answering", "done"}, capture["missing"]
    assert capture["phases"]["answering"]["during_answer"] is True
    # The browser's full version, not the user agent's reduced "156.0.0.0".
    assert re.fullmatch(r"[A-Za-z ]+/\d+\.\d+\.\d+\.\d+", capture["versions"]["browser"])
    assert not capture["versions"]["browser"].endswith(".0.0.0")
    done = capture["phases"]["done"]["entries"]
    assert any(row["count"] for row in done["assistant_message"])
    typed = capture["phases"]["typed"]["entries"]
    send = next(row for row in typed["send_button"] if row["count"])
    assert send["first"]["tag"] in ("button", "mat-icon")  # G1.3: the icon is selected too
    assert capture["ask"]["answer_chars"] >= len(ANSWER) - 2


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_a_capture_of_a_fake_passes_its_check(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    capture = await _capture(bridge, fakes, provider)
    spec = provider_spec(provider, bridge.store.root)  # type: ignore[arg-type]
    async with capture_matcher(bridge.browser) as matcher:
        findings = await check_capture(capture, spec, matcher)
    failed = [f.line() for f in findings if not f.ok]
    assert failed == [], "\n".join(f.line() for f in findings)
    assert any(f.subject == "selectors.send_button" and f.ok for f in findings)


async def test_a_changed_send_button_is_named_with_the_selector_that_matches(
    bridge: Bridge, fakes: FakeSites
) -> None:
    """The fake's send button under the slot's other test id (C1.5): the pack's send_button
    matches nothing; the check names the entry and proposes a selector that matches it."""
    fakes.chatgpt.set_behaviour(Behaviour(send_markup="submit"))
    try:
        capture, _, _ = await take_capture(bridge, "chatgpt", QUESTION, source="fake")
    finally:
        fakes.chatgpt.reset()
    spec = provider_spec("chatgpt", bridge.store.root)
    async with capture_matcher(bridge.browser) as matcher:
        findings = await check_capture(capture, spec, matcher)
    failed = {f.subject: f for f in findings if not f.ok}
    assert set(failed) == {"selectors.send_button"}, [f.line() for f in findings]
    proposal = failed["selectors.send_button"].proposal
    assert proposal is not None
    css = proposal["selectors"]["send_button"]["css"]
    assert css[0] == 'button[data-testid="composer-submit-button"]', css
    assert "composer-submit-button" in failed["selectors.send_button"].message


async def test_an_ask_that_never_finds_the_composer_is_captured_and_the_input_named(
    bridge: Bridge, fakes: FakeSites
) -> None:
    """The worst change a site can make (the composer moved): the ask fails before it types,
    and the capture still shows the page, so the check names selectors.input and proposes
    what matches. Here the pack is the one that went wrong (an override), the page is not."""
    override = bridge.store.root / "packs" / "chatgpt.json"
    override.parent.mkdir(exist_ok=True)
    broken = {
        "selectors": {"input": {"css": ['div#prompt-input[contenteditable="true"]']}},
        "flow": {"input_wait_s": {"value": 2.0}},
    }
    override.write_text(json.dumps(broken), encoding="utf-8")
    try:
        capture, result, error = await take_capture(bridge, "chatgpt", QUESTION, source="fake")
        spec = provider_spec("chatgpt", bridge.store.root)
        async with capture_matcher(bridge.browser) as matcher:
            findings = await check_capture(capture, spec, matcher)
    finally:
        override.unlink()
    assert result is None and error is not None
    assert capture["ask"]["outcome"] == error.code
    assert "ready" in capture["phases"]
    failed = {f.subject: f for f in findings if not f.ok}
    assert "selectors.input" in failed, [f.line() for f in findings]
    proposal = failed["selectors.input"].proposal
    assert proposal is not None
    assert proposal["selectors"]["input"]["css"][0] == (
        'div#prompt-textarea[contenteditable="true"]'
    ), proposal
