"""Where an ask is asked (docs/sites.md#where): the forms checked before the browser is touched
(pure), then each place end to end on the fake sites in real Chromium through the extension.

The fakes record where each question arrived: the page that sent it, ChatGPT's
``conversation_mode.gizmo_id`` (C12.2), Gemini's Gem id and temporary flag (G9.2, G13.2), so a
test sees what the site got, not what bridge believes it did. A place the page does not show
ends the ask before anything is typed.
"""

from __future__ import annotations

import json

import pytest

from bridge.app.facade import Bridge
from bridge.errors import PlaceNotFound, TemporaryChatUnavailable
from bridge.fakes import Behaviour, FakeSites
from bridge.providers import places
from bridge.providers.places import resolve_place
from bridge.providers.specs import AskOptions, provider_spec
from bridge.testing.scenarios.model import AskSettings

PROJECT = "g-p-0123456789abcdef0123456789abcdef"
GPT = "g-abc123XYZ"
GEM = "4221cfdd4fe7"
UUID = "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f"


def place(provider: str, **given: object) -> dict[str, str] | None:
    found = resolve_place(provider_spec(provider), AskOptions(**given))  # type: ignore[arg-type]
    return None if found is None else found.to_dict()


# -- pure: the accepted forms ------------------------------------------------------------------


def test_each_accepted_form_becomes_the_url_the_tab_opens() -> None:
    assert place("chatgpt") is None
    assert place("chatgpt", project=PROJECT) == {
        "kind": "project",
        "id": PROJECT,
        "url": f"https://chatgpt.com/g/{PROJECT}/project",
    }
    url = f"https://chatgpt.com/g/{PROJECT}-notes/c/{UUID}"
    assert place("chatgpt", project=url) == {
        "kind": "project",
        "id": PROJECT,
        "url": f"https://chatgpt.com/g/{PROJECT}-notes/project",
    }
    assert place("chatgpt", gpt=f"https://chatgpt.com/g/{GPT}-helper")["url"] == (  # type: ignore[index]
        f"https://chatgpt.com/g/{GPT}-helper"
    )
    assert place("chatgpt", gpt=GPT)["id"] == GPT  # type: ignore[index]
    assert place("chatgpt", conversation=UUID)["url"] == f"https://chatgpt.com/c/{UUID}"  # type: ignore[index]
    assert place("chatgpt", temporary=True)["url"] == "https://chatgpt.com/?temporary-chat=true"  # type: ignore[index]
    assert place("gemini", gem=f"https://gemini.google.com/gem/{GEM}/cfe2d141fe0adecb") == {
        "kind": "gem",
        "id": GEM,
        "url": f"https://gemini.google.com/gem/{GEM}",
    }
    assert place("gemini", gem="coding-partner")["id"] == "coding-partner"  # type: ignore[index]
    assert place("gemini", conversation="c_1f9dadf233e175e7")["url"] == (  # type: ignore[index]
        "https://gemini.google.com/app/1f9dadf233e175e7"
    )


@pytest.mark.parametrize(
    ("provider", "given", "says"),
    [
        ("chatgpt", {"project": "g-p-123"}, "g-p-<32 hex>"),
        ("chatgpt", {"project": f"https://evil.example/g/{PROJECT}/project"}, "no other host"),
        ("chatgpt", {"project": f"https://chatgpt.com.evil.example/g/{PROJECT}"}, "no other host"),
        ("chatgpt", {"gpt": PROJECT}, "is a project"),
        ("chatgpt", {"gpt": "abc"}, "g-<id>"),
        ("chatgpt", {"conversation": "https://evil.example/c/" + UUID}, "no other host"),
        ("chatgpt", {"conversation": "https://chatgpt.com/settings"}, "/c/<uuid>"),
        ("chatgpt", {"conversation": "hello"}, "bare uuid"),
        ("chatgpt", {"gem": GEM}, "gemini place"),
        ("gemini", {"project": PROJECT}, "chatgpt place"),
        ("gemini", {"gem": "https://gemini.google.com/app/x"}, "Gem URL"),
        ("gemini", {"gem": "a b"}, "Gem id"),
        ("chatgpt", {"conversation": UUID, "new_chat": True}, "contradiction"),
        ("chatgpt", {"conversation": UUID, "temporary": True}, "contradiction"),
        ("chatgpt", {"project": PROJECT, "gpt": GPT}, "two places"),
        ("chatgpt", {"project": " "}, "empty"),
    ],
)
def test_bad_forms_are_refused_naming_what_is_accepted(
    provider: str, given: dict[str, object], says: str
) -> None:
    with pytest.raises(ValueError, match=None) as caught:
        place(provider, **given)
    assert says in str(caught.value)


def test_scenarios_say_where_to_ask() -> None:
    ask = AskSettings.model_validate({"project": PROJECT, "temporary": True, "gem": GEM})
    assert (ask.project, ask.temporary, ask.gem, ask.conversation) == (PROJECT, True, GEM, None)
    with pytest.raises(ValueError, match="true or false"):
        AskSettings.model_validate({"temporary": "yes"})


# -- end to end: real Chromium, the extension, the fake sites ----------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize(("kind", "gizmo"), [("project", PROJECT), ("gpt", GPT)])
async def test_a_project_or_gpt_gets_the_question_with_its_gizmo(
    bridge: Bridge, fakes: FakeSites, kind: str, gizmo: str
) -> None:
    sent = fakes.chatgpt
    sent.add_place(gizmo)
    result = await bridge.ask("chatgpt", "What is inside this place?", **{kind: gizmo})  # type: ignore[arg-type]
    record = sent.records[-1]
    assert record.place == gizmo  # the body's conversation_mode.gizmo_id (C12.2)
    assert record.page.startswith(f"/g/{gizmo}")
    assert result.used.place["kind"] == kind and result.used.place["id"] == gizmo
    # The chat lives under the gizmo (C12.1), and the session continues it there.
    assert result.url.endswith(f"/g/{gizmo}/c/{record.conversation_id}")
    again = await bridge.ask("chatgpt", "And a follow-up?")
    assert sent.records[-1].conversation_id == record.conversation_id
    assert sent.records[-1].place == gizmo
    assert again.used.place == {}
    # Outside: the primary assistant.
    await bridge.ask("chatgpt", "And outside it?", new_chat=True)
    assert sent.records[-1].place == ""


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("provider", "given"),
    [("chatgpt", {"project": PROJECT}), ("chatgpt", {"gpt": GPT}), ("gemini", {"gem": GEM})],
)
async def test_a_place_the_site_does_not_have_ends_the_ask_unsent(
    bridge: Bridge, fakes: FakeSites, provider: str, given: dict[str, str]
) -> None:
    with pytest.raises(PlaceNotFound) as caught:
        await bridge.ask(provider, "Is anyone there?", **given)  # type: ignore[arg-type]
    assert caught.value.code == "place_not_found"
    assert "HTTP 404" in str(caught.value) and "Nothing was typed or sent" in str(caught.value)
    sent = fakes.chatgpt if provider == "chatgpt" else fakes.gemini
    assert sent.records == []


@pytest.mark.e2e
async def test_a_conversation_is_continued_by_its_url_or_id(
    bridge: Bridge, fakes: FakeSites, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = fakes.chatgpt
    old = sent.create_conversation([("An earlier question?", "An earlier answer.")])
    await bridge.ask("chatgpt", "Something else first.", new_chat=True)
    elsewhere = sent.records[-1].conversation_id
    result = await bridge.ask("chatgpt", "Back to the earlier one?", conversation=old)
    assert sent.records[-1].conversation_id == old
    assert result.used.place["kind"] == "conversation"
    # The session now continues it.
    await bridge.ask("chatgpt", "And on?")
    assert sent.records[-1].conversation_id == old != elsewhere
    # One that is not there: nothing is sent. Its page never shows a turn, so the product
    # waits out its deadline for turns (15 s): 3 s shows the same absence here.
    monkeypatch.setattr(places, "TURNS_S", 3.0)
    before = len(sent.records)
    with pytest.raises(PlaceNotFound):
        await bridge.ask("chatgpt", "Hello?", conversation="00000000-0000-4000-8000-000000000000")
    assert len(sent.records) == before


@pytest.mark.e2e
async def test_a_chatgpt_temporary_chat_is_asked_and_recorded_nowhere(
    bridge: Bridge, fakes: FakeSites
) -> None:
    sent = fakes.chatgpt
    first = await bridge.ask("chatgpt", "Remember the number seven.", new_chat=True)
    remembered = sent.records[-1].conversation_id
    before = await bridge.store.get_session_async(bridge.session_key, "chatgpt")
    result = await bridge.ask("chatgpt", "Is this temporary?", temporary=True)
    record = sent.records[-1]
    assert record.temporary and record.page == "/?temporary-chat=true"  # C6.3
    assert record.conversation_id != remembered  # never the remembered conversation
    assert result.used.temporary and result.used.place["kind"] == "temporary"
    assert result.url == "https://chatgpt.com/?temporary-chat=true"  # the id never shows
    after = await bridge.store.get_session_async(bridge.session_key, "chatgpt")
    assert after == before and after is not None and after.url == first.url
    # The history keeps that a temporary ask happened, never what was asked or answered.
    line = bridge.store.history()[-1]
    assert line["temporary"] is True and line["outcome"] == "ok"
    assert "Is this temporary?" not in json.dumps(line) and result.answer not in json.dumps(line)
    assert not {"question", "answer", "url", "used"} & set(line)
    # The next ordinary ask continues the remembered conversation, not the temporary one.
    await bridge.ask("chatgpt", "What number?")
    assert sent.records[-1].conversation_id == remembered and not sent.records[-1].temporary


@pytest.mark.e2e
async def test_a_temporary_chat_the_site_will_not_open_fails_closed(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(temporary_chat=False))
    with pytest.raises(TemporaryChatUnavailable) as caught:
        await bridge.ask("chatgpt", "Is this temporary?", temporary=True)
    assert caught.value.code == "temporary_chat_unavailable"
    assert "Nothing was typed or sent" in str(caught.value)
    assert fakes.chatgpt.records == []


@pytest.mark.e2e
async def test_a_gem_gets_the_question_with_its_id(bridge: Bridge, fakes: FakeSites) -> None:
    sent = fakes.gemini
    sent.add_place(GEM)
    result = await bridge.ask("gemini", "What does this Gem do?", gem=GEM)
    record = sent.records[-1]
    assert record.place == GEM  # the inner request's index 19 (G9.2)
    assert record.page == f"/gem/{GEM}"
    assert result.used.place == {
        "kind": "gem",
        "id": GEM,
        "url": f"https://gemini.google.com/gem/{GEM}",
    }
    assert result.url.endswith(f"/gem/{GEM}/{record.conversation_id}")  # G9.1
    await bridge.ask("gemini", "And a follow-up?")
    assert sent.records[-1].conversation_id == record.conversation_id
    assert sent.records[-1].place == GEM


@pytest.mark.e2e
async def test_a_gemini_temporary_chat_is_turned_on_and_recorded_nowhere(
    bridge: Bridge, fakes: FakeSites
) -> None:
    sent = fakes.gemini
    await bridge.ask("gemini", "Remember the number seven.", new_chat=True)
    remembered = sent.records[-1].conversation_id
    before = await bridge.store.get_session_async(bridge.session_key, "gemini")
    result = await bridge.ask("gemini", "Is this temporary?", temporary=True)
    record = sent.records[-1]
    assert record.temporary  # the inner request's index 45 = 1 (G13.2)
    assert record.conversation_id != remembered
    assert result.used.temporary
    assert await bridge.store.get_session_async(bridge.session_key, "gemini") == before
    await bridge.ask("gemini", "What number?")
    assert sent.records[-1].conversation_id == remembered and not sent.records[-1].temporary


@pytest.mark.e2e
async def test_no_gemini_temporary_chat_button_fails_closed(
    bridge: Bridge, fakes: FakeSites, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.gemini.set_behaviour(Behaviour(temporary_chat=False))
    # The button never shows, so the product waits out its deadline for it (8 s): 2 s shows
    # the same absence here.
    monkeypatch.setattr(places, "TEMP_S", 2.0)
    with pytest.raises(TemporaryChatUnavailable) as caught:
        await bridge.ask("gemini", "Is this temporary?", temporary=True)
    assert "no temporary-chat button" in str(caught.value)
    assert fakes.gemini.records == []


@pytest.mark.e2e
async def test_a_collapsed_gemini_side_nav_is_expanded_for_the_temporary_chat_button(
    bridge: Bridge, fakes: FakeSites
) -> None:
    # G13.1: while the side nav is collapsed the button is not in the DOM at all.
    fakes.gemini.set_behaviour(Behaviour(side_nav_collapsed=True))
    result = await bridge.ask("gemini", "Is this temporary too?", temporary=True)
    assert fakes.gemini.records[-1].temporary  # index 45 = 1 (G13.2): the site was told
    assert result.used.temporary
