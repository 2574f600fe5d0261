"""Choosing the thinking effort before asking (docs/sites.md#effort): matching (pure), then
ChatGPT's Intelligence picker and Gemini's Deep Think on the fake sites in real Chromium
through the extension.

The fakes record what each question was sent with (ChatGPT's body's ``thinking_effort``,
C13.6; Gemini's Deep Think as the fake's own request header), so a test sees what the site
got, not what bridge believes it chose. Whatever cannot be confirmed on the page ends the
ask before anything is typed.
"""

from __future__ import annotations

import pytest

from bridge.app.facade import Bridge
from bridge.cli.commands import check_effort_args
from bridge.errors import EffortUnavailable, EffortUnconfirmed
from bridge.fakes import Behaviour, FakeSites
from bridge.providers import effort
from bridge.providers.effort import EffortRow, match_effort, pill_names, tier_of
from bridge.providers.results import Provider

ROWS = [
    EffortRow("Instant"),
    EffortRow("Medium", selected=True),
    EffortRow("High"),
    EffortRow("Extra High"),
    EffortRow("Pro", disabled=True, notice="You've reached your Pro limit. It resets at 5:00 PM."),
]


# -- pure: matching --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wanted", "found"),
    [
        ("high", "High"),  # the label
        ("EXTRA HIGH", "Extra High"),
        ("extra-high", "Extra High"),
        ("extended", "High"),  # the older name and the wire value of the same tier (C13.3, C13.6)
        ("max", "Extra High"),
        ("heavy", "Extra High"),
        ("standard", "Medium"),
        ("light", "Instant"),
        ("Hoch", "High"),  # German (C13.3)
        ("高い", "High"),  # Japanese
    ],
)
def test_a_tier_is_found_by_any_of_its_names(wanted: str, found: str) -> None:
    assert match_effort("chatgpt", wanted, ROWS).label == found


def test_an_unknown_tier_lists_what_the_menu_offers() -> None:
    with pytest.raises(EffortUnavailable) as caught:
        match_effort("chatgpt", "turbo", ROWS)
    error = caught.value
    assert error.code == "effort_unavailable"
    assert error.offered == ["Instant", "Medium", "High", "Extra High", "Pro"]
    assert "Instant; Medium; High; Extra High; Pro" in str(error)
    assert "Nothing was typed or sent" in str(error)


def test_a_disabled_tier_is_refused_with_the_pages_notice() -> None:
    with pytest.raises(EffortUnavailable) as caught:
        match_effort("chatgpt", "pro", ROWS)
    assert caught.value.notice == "You've reached your Pro limit. It resets at 5:00 PM."
    assert "disabled" in str(caught.value) and "resets at 5:00 PM" in str(caught.value)


def test_the_pill_confirms_only_the_tier_it_names() -> None:
    high, extra = ROWS[2], ROWS[3]
    assert pill_names("High", high, ROWS)
    assert not pill_names("Extra High", high, ROWS)  # "Extra High" ends with "High"
    assert pill_names("Extra High", extra, ROWS)
    assert pill_names("Max", extra, ROWS)  # BTW's pill text for the top thinking tier (C13.3)
    assert not pill_names("Auto", high, ROWS)
    assert tier_of("Pro Extended") == tier_of("pro") == "pro"


def test_effort_and_deep_think_belong_to_one_site_each() -> None:
    check_effort_args("chatgpt", "high", False)
    check_effort_args("both", "high", True)
    check_effort_args("gemini", None, True)
    with pytest.raises(ValueError, match="ChatGPT's thinking effort"):
        check_effort_args("gemini", "high", False)
    with pytest.raises(ValueError, match="Gemini's Deep Think"):
        check_effort_args("chatgpt", None, True)


async def test_the_facade_refuses_a_misplaced_option_before_any_browser_work(
    bridge: Bridge,
) -> None:
    with pytest.raises(ValueError, match="ChatGPT's thinking effort"):
        await bridge.ask("gemini", "Hello?", effort="high")
    with pytest.raises(ValueError, match="Gemini's Deep Think"):
        await bridge.ask("chatgpt", "Hello?", deep_think=True)
    with pytest.raises(ValueError, match="the effort is empty"):
        await bridge.start_job("chatgpt", "Hello?", effort=" ")


# -- end to end: real Chromium, the extension, the fake sites -----------------------------------


async def _page_state(bridge: Bridge, provider: Provider) -> dict[str, object]:
    """What a person would see: text in the composer, a menu left open."""
    tab = await bridge.provider_tab(provider)
    value = await tab.evaluate(
        "(() => { const input = document.querySelector("
        "'#prompt-textarea, rich-textarea [role=\"textbox\"]');"
        " return { text: input ? input.innerText.trim() : null,"
        " menu: !!document.querySelector('[role=\"menu\"]') }; })()"
    )
    return dict(value)


@pytest.mark.e2e
async def test_the_tier_is_chosen_confirmed_and_reaches_chatgpt(
    bridge: Bridge, fakes: FakeSites
) -> None:
    sent = fakes.chatgpt
    first = await bridge.ask(
        "chatgpt", "How hard should this be thought about?", new_chat=True, effort="high"
    )
    assert sent.records[-1].effort == "extended"  # the body's thinking_effort (C13.6)
    assert first.used.effort == {
        "requested": "high",
        "label": "High",
        "tier": "extended",
        "shown": "High",
        "how": "chosen",
    }
    assert first.used.model == "gpt-5-5-thinking"  # the stream's metadata.model_slug (C13.7)
    assert first.answer.startswith(sent.records[-1].answer.splitlines()[0])
    # The same tier by another of its names: seen chosen, not clicked again.
    second = await bridge.ask("chatgpt", "And this one?", effort="extended")
    assert second.used.effort["how"] == "already"
    assert sent.records[-1].effort == "extended"
    # Another tier: the body says so, and so does the answering model.
    third = await bridge.ask("chatgpt", "And at the top?", effort="extra high")
    assert sent.records[-1].effort == "max"
    assert third.used.effort["label"] == "Extra High"
    pro = await bridge.ask("chatgpt", "And with Pro?", effort="pro")
    assert (sent.records[-1].effort, pro.used.model) == ("extended", "gpt-5-5-pro")
    assert (await _page_state(bridge, "chatgpt"))["menu"] is False


@pytest.mark.e2e
async def test_a_tier_the_menu_lacks_ends_the_ask_before_typing(
    bridge: Bridge, fakes: FakeSites
) -> None:
    with pytest.raises(EffortUnavailable) as caught:
        await bridge.ask("chatgpt", "Think at turbo.", new_chat=True, effort="turbo")
    assert caught.value.offered == ["Instant", "Medium", "High", "Extra High", "Pro"]
    assert fakes.chatgpt.records == []
    assert await _page_state(bridge, "chatgpt") == {"text": "", "menu": False}


@pytest.mark.e2e
async def test_a_disabled_tier_ends_the_ask_with_its_notice(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(effort_disabled="Pro"))
    with pytest.raises(EffortUnavailable) as caught:
        await bridge.ask("chatgpt", "Think with Pro.", new_chat=True, effort="pro")
    assert caught.value.notice == "You've reached your Pro limit. It resets at 5:00 PM."
    assert fakes.chatgpt.records == []
    assert await _page_state(bridge, "chatgpt") == {"text": "", "menu": False}


@pytest.mark.e2e
async def test_a_tier_the_page_does_not_show_chosen_fails_closed(
    bridge: Bridge, fakes: FakeSites
) -> None:
    """A click that does not take: bridge reads the pill back instead of trusting it."""
    fakes.chatgpt.set_behaviour(Behaviour(mode_sticks=False))
    with pytest.raises(EffortUnconfirmed) as caught:
        await bridge.ask("chatgpt", "Think hard.", new_chat=True, effort="high")
    assert caught.value.code == "effort_unconfirmed"
    assert "'Auto'" in str(caught.value) and "Nothing was typed or sent" in str(caught.value)
    assert fakes.chatgpt.records == []
    assert await _page_state(bridge, "chatgpt") == {"text": "", "menu": False}


# -- Gemini's Deep Think (G10.1, G10.2) ---------------------------------------------------------


async def _gemini_page(bridge: Bridge) -> dict[str, object]:
    """The Deep Think chip, the composer's placeholder and an open menu, as a person sees them."""
    tab = await bridge.provider_tab("gemini")
    value = await tab.evaluate(
        "(() => { const input = document.querySelector('rich-textarea [role=\"textbox\"]');"
        " return { chip: !!document.querySelector('button[aria-label=\"Deselect Deep Think\"]'),"
        " placeholder: input ? input.getAttribute('data-placeholder') : null,"
        " text: input ? input.innerText.trim() : null,"
        " menu: !!document.querySelector('[role=\"menu\"]') }; })()"
    )
    return dict(value)


@pytest.mark.e2e
async def test_deep_think_is_chosen_confirmed_and_answers_after_its_placeholder(
    bridge: Bridge, fakes: FakeSites
) -> None:
    """The fake shows Deep Think's placeholder reply finished-looking first (G10.2): the
    answer must be the one that replaces it, not the placeholder."""
    sent = fakes.gemini
    result = await bridge.ask(
        "gemini", "Prove that there are infinitely many primes.", new_chat=True, deep_think=True
    )
    record = sent.records[-1]
    assert record.deep_think is True  # the fake page's own marker of Deep Think on
    assert result.used.deep_think is True
    assert "I'm on it" not in result.answer and "check back later" not in result.answer
    assert result.answer.startswith(record.answer.splitlines()[0])
    assert record.answer.splitlines()[-1] in result.answer  # the whole answer, its last line
    assert await _gemini_page(bridge) == {
        "chip": True,
        "placeholder": "Ask a complex question",  # G10.1
        "text": "",
        "menu": False,
    }
    # Already on: the chip is seen, nothing is clicked, and the question goes with it.
    again = await bridge.ask(
        "gemini", "And are there infinitely many twin primes?", deep_think=True
    )
    assert again.used.deep_think is True and sent.records[-1].deep_think is True
    # Left on and not asked for: the site still gets Deep Think (its tools stay on, G10.1),
    # and used says so rather than what was requested; bridge leaves the person's page be.
    left_on = await bridge.ask("gemini", "And what is a Sophie Germain prime?")
    assert sent.records[-1].deep_think is True and left_on.used.deep_think is True


@pytest.mark.e2e
async def test_an_ordinary_gemini_ask_is_sent_without_deep_think(
    bridge: Bridge, fakes: FakeSites
) -> None:
    result = await bridge.ask("gemini", "What is a prime number?", new_chat=True)
    assert fakes.gemini.records[-1].deep_think is False
    assert result.used.deep_think is False
    assert (await _gemini_page(bridge))["chip"] is False


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("offer", "problem"),
    [("absent", "has no Deep Think"), ("disabled", "shown but disabled")],
)
async def test_deep_think_not_offered_ends_the_ask_before_typing(
    bridge: Bridge, fakes: FakeSites, offer: str, problem: str
) -> None:
    fakes.gemini.set_behaviour(Behaviour(deep_think=offer))  # type: ignore[arg-type]
    with pytest.raises(EffortUnavailable) as caught:
        await bridge.ask("gemini", "Think deeply.", new_chat=True, deep_think=True)
    assert caught.value.code == "effort_unavailable"
    assert problem in str(caught.value) and "Nothing was typed or sent" in str(caught.value)
    assert "Deep Research" in caught.value.offered  # the menu's other tools, listed (G10.1)
    assert fakes.gemini.records == []
    assert await _gemini_page(bridge) == {
        "chip": False,
        "placeholder": "Ask Gemini",
        "text": "",
        "menu": False,
    }


@pytest.mark.e2e
async def test_deep_think_the_page_does_not_take_fails_closed(
    bridge: Bridge, fakes: FakeSites, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.gemini.set_behaviour(Behaviour(mode_sticks=False))
    # The chip never shows, so the product waits out its deadline for it (8 s): 2 s shows the
    # same absence here (the menu before it keeps its own deadline).
    monkeypatch.setattr(effort, "DEEP_THINK_CHIP_S", 2.0)
    with pytest.raises(EffortUnconfirmed) as caught:
        await bridge.ask("gemini", "Think deeply.", new_chat=True, deep_think=True)
    assert "Deselect Deep Think" in str(caught.value)
    assert fakes.gemini.records == []
