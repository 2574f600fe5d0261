"""Sent means sent (docs/sites.md#sent): after Send, the new user turn on the page and the
pack's answer request both confirm the question reached the site (SITE-FACTS C14.2, C14.3,
G14.2); a turn with no request, or a question the site takes back, ends the ask at once
with a typed error instead of a wait for an answer that cannot come."""

from __future__ import annotations

import json
import time

import pytest

from bridge.app.facade import Bridge
from bridge.errors import NotSent, QuestionTakenBack
from bridge.fakes import Behaviour, FakeSites

pytestmark = pytest.mark.e2e

QUESTION = "How do I read files asynchronously in Python?"
#: A short send confirmation (a pack override: flow entries are pack data) keeps the
#: failing asks quick; the answer's own deadline is minutes.
CONFIRM_S = 2.0


def _quick_confirm(bridge: Bridge, provider: str) -> None:
    packs = bridge.store.root / "packs"
    packs.mkdir(exist_ok=True)
    override = {"flow": {"send_confirm_s": {"value": CONFIRM_S}}}
    (packs / f"{provider}.json").write_text(json.dumps(override), encoding="utf-8")


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_a_normal_send_is_confirmed_by_the_turn_and_the_request(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    result = await bridge.ask(provider, QUESTION, new_chat=True)  # type: ignore[arg-type]
    assert result.used.sent == "turn+request"
    assert getattr(fakes, provider).records[-1].text == QUESTION


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_a_turn_without_its_request_is_not_sent_at_once(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    """The page shows the question as a user turn but never makes its answer request: the
    site was never asked. Without the request check the ask would wait for an answer until
    its own deadline (the 60 s given here)."""
    _quick_confirm(bridge, provider)
    getattr(fakes, provider).set_behaviour(Behaviour(state="no_request"))
    started = time.monotonic()
    with pytest.raises(NotSent, match="never asked") as info:
        await bridge.ask(provider, QUESTION, new_chat=True, timeout=60)  # type: ignore[arg-type]
    assert time.monotonic() - started < CONFIRM_S + 15  # the page's load and ready included
    assert info.value.code == "not_sent"
    assert getattr(fakes, provider).records == []  # the fake server was indeed never asked
    history = bridge.store.history()
    assert history[-1]["outcome"] != "ok"


async def test_a_question_gemini_takes_back_ends_the_ask_at_once(
    bridge: Bridge, fakes: FakeSites
) -> None:
    """G14.2's rollback: the request is made and the user-query shows, then about a second
    later it vanishes and the text is back in the editor. Nothing will answer."""
    fakes.gemini.queue(Behaviour(state="rollback"))
    started = time.monotonic()
    with pytest.raises(QuestionTakenBack, match="took the question back") as info:
        await bridge.ask("gemini", QUESTION, new_chat=True, timeout=60)
    assert time.monotonic() - started < 20  # not the no-response wait, nor the deadline
    assert info.value.code == "taken_back"
    assert [r.text for r in fakes.gemini.records] == [QUESTION]  # asked once, not retried
