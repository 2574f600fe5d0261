"""Choosing the site's mode before asking (docs/sites.md#modes): matching (pure), then the
pickers of both fake sites in real Chromium through the extension.

The fakes record the mode each question was sent in (ChatGPT's request names the model
slug, Gemini's its model header), so a test sees what the site got, not what bridge
believes it chose. Whatever cannot be confirmed on the page ends the ask before anything
is typed.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.app.facade import Bridge
from bridge.cli.commands import parse_modes
from bridge.errors import ModeUnavailable, ModeUnconfirmed
from bridge.fakes import Behaviour, FakeSites
from bridge.fakes.controller import SiteController
from bridge.providers.modes import ModeItem, match_mode, mode_key
from bridge.providers.results import Provider

CHATGPT = [
    ModeItem("auto", "Auto", selected=True),
    ModeItem("gpt-5-5-instant", "Instant"),
    ModeItem("gpt-5-5-thinking", "Thinking"),
    ModeItem("gpt-5-5-pro", "Pro", disabled=True),
]
GEMINI = [ModeItem("fast", "Fast", selected=True), ModeItem("thinking", "Thinking")]


# -- pure: matching --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wanted", "items", "found"),
    [
        ("thinking", CHATGPT, "gpt-5-5-thinking"),  # the label, exactly
        ("GPT-5.5 Instant", CHATGPT, "gpt-5-5-instant"),  # the id as a person writes it
        ("Instant 5.5", CHATGPT, None),  # words out of order are no name
        ("gpt-5.5-instant", CHATGPT, "gpt-5-5-instant"),  # the id with dots for dashes
        ("gpt_5_5_thinking", CHATGPT, "gpt-5-5-thinking"),
        ("  Instant ", CHATGPT, "gpt-5-5-instant"),
        ("instant", CHATGPT, "gpt-5-5-instant"),
        ("Thinking", GEMINI, "thinking"),
        ("FAST", GEMINI, "fast"),
    ],
)
def test_a_mode_is_found_by_its_id_or_label(
    wanted: str, items: list[ModeItem], found: str | None
) -> None:
    if found is None:
        with pytest.raises(ModeUnavailable):
            match_mode("chatgpt", wanted, items)
        return
    assert match_mode("chatgpt", wanted, items).id == found


def test_a_part_of_an_id_matches_only_whole_words() -> None:
    items = [ModeItem("gpt-5-5-thinking", ""), ModeItem("gpt-5-5-thinking-mini", "")]
    # "thinking" is a whole word of both ids: ambiguous, and the error names both.
    with pytest.raises(ModeUnavailable) as caught:
        match_mode("chatgpt", "thinking", items)
    assert "matches several" in str(caught.value)
    assert "gpt-5-5-thinking-mini" in str(caught.value)
    assert match_mode("chatgpt", "mini", items).id == "gpt-5-5-thinking-mini"
    with pytest.raises(ModeUnavailable):
        match_mode("chatgpt", "think", items)  # not a whole word


def test_an_unknown_mode_lists_what_the_picker_offers() -> None:
    with pytest.raises(ModeUnavailable) as caught:
        match_mode("chatgpt", "turbo", CHATGPT)
    error = caught.value
    assert error.code == "mode_unavailable"
    assert error.offered == [
        "Auto",
        "Instant (gpt-5-5-instant)",
        "Thinking (gpt-5-5-thinking)",
        "Pro (gpt-5-5-pro)",
    ]
    assert "Nothing was typed or sent" in str(error)
    assert "Ask again with one of them" in str(error)


def test_a_disabled_mode_is_refused_not_clicked() -> None:
    with pytest.raises(ModeUnavailable) as caught:
        match_mode("chatgpt", "pro", CHATGPT)
    assert "disabled" in str(caught.value)


def test_an_empty_mode_is_refused() -> None:
    with pytest.raises(ModeUnavailable):
        match_mode("gemini", " - ", GEMINI)


@given(st.text(min_size=1, max_size=30))
def test_mode_key_is_stable(text: str) -> None:
    assert mode_key(mode_key(text)) == mode_key(text)


@given(
    st.lists(
        st.text(alphabet="abcdefgh", min_size=1, max_size=6), min_size=1, max_size=6, unique=True
    )
)
def test_every_item_is_found_by_its_own_id(ids: list[str]) -> None:
    items = [ModeItem(i, f"Label {n}") for n, i in enumerate(ids)]
    for item in items:
        assert match_mode("gemini", item.id, items) == item
        assert match_mode("gemini", item.label, items) == item


def test_the_cli_reads_modes_for_one_side_or_both() -> None:
    assert parse_modes([]) == {}
    assert parse_modes(["thinking"]) == {"chatgpt": "thinking", "gemini": "thinking"}
    assert parse_modes(["thinking", "gemini=pro"]) == {"chatgpt": "thinking", "gemini": "pro"}
    with pytest.raises(ValueError, match="no provider"):
        parse_modes(["claude=opus"])
    with pytest.raises(ValueError, match="names no mode"):
        parse_modes(["chatgpt= "])


# -- end to end: real Chromium, the extension, the fake sites -----------------------------------


def site(fakes: FakeSites, provider: str) -> SiteController:
    return fakes.chatgpt if provider == "chatgpt" else fakes.gemini


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
@pytest.mark.parametrize(
    ("provider", "wanted", "sent_as", "label", "answered_by"),
    [
        ("chatgpt", "thinking", "gpt-5-5-thinking", "Thinking", "gpt-5-5-thinking"),
        ("gemini", "pro", "pro", "Pro", ""),  # Gemini's stream names no model where known
    ],
)
async def test_the_mode_is_chosen_confirmed_and_reaches_the_site(
    bridge: Bridge,
    fakes: FakeSites,
    provider: Provider,
    wanted: str,
    sent_as: str,
    label: str,
    answered_by: str,
) -> None:
    sent = site(fakes, provider)
    first = await bridge.ask(provider, "Which mode answers this?", new_chat=True, mode=wanted)
    assert sent.records[-1].mode == sent_as
    assert first.used.mode == {
        "requested": wanted,
        "id": sent_as,
        "label": label,
        "how": "chosen",
    }
    assert first.answer.startswith(sent.records[-1].answer.splitlines()[0])
    assert first.used.model == answered_by  # the stream's own word on who answered (C7.5)
    # The same mode again in the same conversation: seen chosen, not clicked again.
    second = await bridge.ask(provider, "And this one?", mode=sent_as)
    assert second.used.mode["how"] == "already"
    assert sent.records[-1].mode == sent_as
    # No mode: the page's own choice stands.
    third = await bridge.ask(provider, "And without a mode?")
    assert third.used.mode == {}
    assert sent.records[-1].mode == sent_as
    assert (await _page_state(bridge, provider))["menu"] is False


@pytest.mark.e2e
@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_a_mode_the_picker_lacks_ends_the_ask_before_typing(
    bridge: Bridge, fakes: FakeSites, provider: Provider
) -> None:
    with pytest.raises(ModeUnavailable) as caught:
        await bridge.ask(provider, "Answer in turbo mode.", new_chat=True, mode="turbo")
    assert "Thinking" in caught.value.offered[1] or "Thinking" in " ".join(caught.value.offered)
    assert site(fakes, provider).records == []
    assert await _page_state(bridge, provider) == {"text": "", "menu": False}


@pytest.mark.e2e
@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_a_choice_the_page_does_not_show_fails_closed(
    bridge: Bridge, fakes: FakeSites, provider: Provider
) -> None:
    """A picker whose click does not take (an account without that mode): bridge looks at
    the page again instead of trusting its click, and sends nothing."""
    sent = site(fakes, provider)
    sent.set_behaviour(Behaviour(mode_sticks=False))
    with pytest.raises(ModeUnconfirmed) as caught:
        await bridge.ask(provider, "Think hard about this.", new_chat=True, mode="thinking")
    assert caught.value.code == "mode_unconfirmed"
    assert "chosen" in str(caught.value) and "Nothing was typed or sent" in str(caught.value)
    assert sent.records == []
    assert await _page_state(bridge, provider) == {"text": "", "menu": False}
