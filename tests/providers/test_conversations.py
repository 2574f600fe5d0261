"""Reading whole conversations and the list of recent ones (docs/sites.md#conversations).

The pure parts first: ChatGPT's read response (SITE-FACTS C7.8's two shapes, the ``mapping``
walked from ``current_node``), merging, the cross-check with the page, folding the windows of
a virtualized history. Then page.js against evidence-shaped pages (not the fakes: a belief the
fake and the detector shared would prove nothing). Then end to end against the fake sites in
real Chromium: a 40-exchange conversation (80 turns) read back exactly, in order, for both
providers, with the source used; the sidebar's list.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from bridge.app.facade import Bridge
from bridge.bench.fidelity import normalize
from bridge.cdp.session import CdpSession
from bridge.errors import ConversationNotFound
from bridge.fakes import Behaviour, FakeSites
from bridge.fakes.corpus import corpus
from bridge.providers.ask_script import PAGE_JS
from bridge.providers.conversations import (
    Conversation,
    PageTurn,
    Turn,
    chatgpt_conversation,
    conversation_id,
    conversation_url,
    cross_check,
    merge_runs,
    merge_window,
    reading,
    url_of_conversation_id,
)
from bridge.providers.pack import builtin_pack
from bridge.providers.specs import provider_spec
from tests.providers.test_dom_markdown import UNKNOWABLE

BASES = {"chatgpt": "https://chatgpt.com/c/", "gemini": "https://gemini.google.com/app/"}


# -- ChatGPT's read response (C7.8, C7.5, C4.5) -------------------------------------------------


def _message(role: str, text: str | list[Any], **more: Any) -> dict[str, Any]:
    parts = text if isinstance(text, list) else [text]
    content_type = more.pop("content_type", "text")
    return {
        "author": {"role": role},
        "content": {"content_type": content_type, "parts": parts},
        **more,
    }


def _mapping(*chain: tuple[str, dict[str, Any] | None, str | None]) -> dict[str, Any]:
    """Nodes as ``(id, message, parent)``; children are filled in from the parents."""
    nodes: dict[str, Any] = {
        node_id: {"id": node_id, "message": message, "parent": parent, "children": []}
        for node_id, message, parent in chain
    }
    for node_id, _, parent in chain:
        if parent is not None:
            nodes[parent]["children"].append(node_id)
    return nodes


def test_the_mapping_is_walked_from_the_current_node_to_the_root() -> None:
    hidden = {"is_visually_hidden_from_conversation": True}
    mapping = _mapping(
        ("root", None, None),
        ("sys", _message("system", "", metadata=hidden), "root"),
        ("u1", _message("user", "First question"), "sys"),
        ("a1", _message("assistant", "First **answer**", channel="final"), "u1"),
        ("u2", _message("user", "Second question"), "a1"),
        # A regenerated answer: a sibling off the shown branch, never a turn.
        ("a2-old", _message("assistant", "An answer regenerated away"), "u2"),
        ("think", _message("assistant", "", content_type="thoughts"), "u2"),
        ("recap", _message("assistant", "Thought for 3s", content_type="reasoning_recap"), "think"),
        ("call", _message("assistant", "search('x')", recipient="browser"), "recap"),
        ("tool", _message("tool", "results"), "call"),
        ("analysis", _message("assistant", "thinking aloud", channel="analysis"), "tool"),
        ("a2", _message("assistant", "Second answer", status="finished_successfully"), "analysis"),
    )
    body = json.dumps({"mapping": mapping, "current_node": "a2", "title": "Two questions"})
    turns = chatgpt_conversation(body)
    assert turns == [
        Turn("user", "First question"),
        Turn("assistant", "First **answer**"),
        Turn("user", "Second question"),
        Turn("assistant", "Second answer"),
    ]
    # The page's branch follows current_node: the regenerated-away answer when it is current.
    other = chatgpt_conversation(json.dumps({"mapping": mapping, "current_node": "a2-old"}))
    assert other is not None and other[-1] == Turn("assistant", "An answer regenerated away")


def test_multimodal_parts_keep_their_text_and_drop_the_files() -> None:
    image = {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"}
    mapping = _mapping(
        (
            "u",
            _message("user", [image, "What is in this picture?"], content_type="multimodal_text"),
            None,
        ),
        ("a", _message("assistant", ["A cat."], content_type="multimodal_text"), "u"),
    )
    turns = chatgpt_conversation(json.dumps({"mapping": mapping, "current_node": "a"}))
    assert turns == [Turn("user", "What is in this picture?"), Turn("assistant", "A cat.")]


def test_the_messages_shape_is_read_in_order() -> None:
    body = {
        "messages": [
            _message("user", "Q"),
            {"message": _message("assistant", "A")},  # a node holding its message
            _message("assistant", "hidden", metadata={"is_visually_hidden_from_conversation": 1}),
        ]
    }
    assert chatgpt_conversation(json.dumps(body)) == [Turn("user", "Q"), Turn("assistant", "A")]


@pytest.mark.parametrize(
    "body",
    [
        "",
        "not json",
        "[]",
        '{"detail": "Unable to load conversation"}',
        json.dumps({"mapping": {}, "current_node": "gone"}),
        json.dumps({"mapping": {"a": {"parent": "b"}}, "current_node": "zzz"}),
    ],
    ids=["empty", "text", "list", "error", "empty-mapping", "unknown-current"],
)
def test_what_is_no_read_response_gives_none(body: str) -> None:
    assert chatgpt_conversation(body) is None


def test_unfinished_messages_are_incomplete_turns() -> None:
    """C7.5's status: only finished_successfully (the status a complete stream ends with,
    C7.3) is a whole answer; in_progress is one still being written, another value one cut
    short. A message without a status says nothing (complete)."""
    mapping = _mapping(
        ("u1", _message("user", "First question", status="finished_successfully"), None),
        ("a1", _message("assistant", "Cut short", status="finished_partial_completion"), "u1"),
        ("u2", _message("user", "Second question"), "a1"),
        ("a2", _message("assistant", "Half an ans", status="in_progress"), "u2"),
    )
    turns = chatgpt_conversation(json.dumps({"mapping": mapping, "current_node": "a2"}))
    assert turns == [
        Turn("user", "First question"),
        Turn("assistant", "Cut short", complete=False),
        Turn("user", "Second question"),
        Turn("assistant", "Half an ans", complete=False),
    ]
    assert [t.to_dict()["complete"] for t in turns] == [True, False, True, False]


def test_an_answer_is_incomplete_while_its_current_node_is_unfinished() -> None:
    """The newest message need not be a turn: a tool call or thoughts still running after an
    answer's first words mean that answer is still being written."""
    mapping = _mapping(
        ("u", _message("user", "Look it up"), None),
        ("a", _message("assistant", "Searching.", status="finished_successfully"), "u"),
        (
            "call",
            _message("assistant", "search('x')", recipient="browser", status="in_progress"),
            "a",
        ),
    )
    turns = chatgpt_conversation(json.dumps({"mapping": mapping, "current_node": "call"}))
    assert turns == [Turn("user", "Look it up"), Turn("assistant", "Searching.", complete=False)]
    # Thinking before any answer: the question is the last turn, and it is whole.
    thinking = _mapping(
        ("u", _message("user", "Think hard"), None),
        ("t", _message("assistant", "", content_type="thoughts", status="in_progress"), "u"),
    )
    assert chatgpt_conversation(json.dumps({"mapping": thinking, "current_node": "t"})) == [
        Turn("user", "Think hard")
    ]


def test_the_transcript_and_the_dict_say_which_turns_are_incomplete() -> None:
    conversation = Conversation(
        "chatgpt",
        "https://chatgpt.com/c/x",
        [Turn("user", "Q"), Turn("assistant", "A so f", complete=False)],
        "network",
    )
    assert conversation.transcript() == (
        "## User (1)\n\nQ\n\n## ChatGPT (2, incomplete: still being written)\n\nA so f"
    )
    assert [t["complete"] for t in conversation.to_dict()["turns"]] == [True, False]


def test_a_cycle_in_the_mapping_ends_the_walk() -> None:
    mapping = _mapping(("a", _message("user", "Q"), "b"), ("b", _message("assistant", "A"), "a"))
    assert chatgpt_conversation(json.dumps({"mapping": mapping, "current_node": "b"})) == [
        Turn("user", "Q"),
        Turn("assistant", "A"),
    ]


def test_the_read_request_rule() -> None:
    rule = builtin_pack("chatgpt").network.conversation_read
    assert rule is not None and rule.format == "chatgpt-conversation"
    uuid = "6803e3a1-2b7c-8000-9d2e-0c4f5a6b7c8d"
    assert rule.matches("GET", f"https://chatgpt.com/backend-api/conversation/{uuid}")
    assert rule.matches("GET", f"https://chatgpt.com/backend-api/conversations/{uuid}")
    assert not rule.matches(
        "GET", "https://chatgpt.com/backend-api/conversations?offset=0&limit=28"
    )
    assert not rule.matches("POST", "https://chatgpt.com/backend-api/conversation/skip_thinking")
    assert not rule.matches("GET", f"https://chatgpt.com/backend-api/conversation/{uuid}/textdocs")
    assert builtin_pack("gemini").network.conversation_read is None  # hNvQHb: undocumented


# -- merging and checking -------------------------------------------------------------------------


def test_consecutive_answers_are_one_turn_questions_never() -> None:
    turns = [
        Turn("user", "Q1"),
        Turn("user", "Q2"),  # the first one was never answered
        Turn("assistant", "Searching."),
        Turn("assistant", "Found it."),
    ]
    assert merge_runs(turns) == [
        Turn("user", "Q1"),
        Turn("user", "Q2"),
        Turn("assistant", "Searching.\n\nFound it."),
    ]
    # A turn is complete only if each of its messages is.
    writing = [Turn("user", "Q"), Turn("assistant", "Searching."), Turn("assistant", "Fo", False)]
    assert merge_runs(writing)[-1] == Turn("assistant", "Searching.\n\nFo", complete=False)


def test_the_cross_check() -> None:
    network = [Turn("user", "What is **2+2**?"), Turn("assistant", "It is `4`.")]
    shown = [Turn("user", "What is **2+2**?"), Turn("assistant", "It is 4.")]
    assert cross_check(network, shown) == (1.0, "")
    assert cross_check(network, shown[1:]) == (1.0, "")  # a page showing the newest only
    assert cross_check(network, []) == (1.0, "")
    assert "shows 3 turns" in cross_check(network, [*shown, shown[0]])[1]
    assert "is a assistant turn on the page" in cross_check(network, shown[::-1][:2])[1]
    score, why = cross_check(network, [shown[0], Turn("assistant", "Something else entirely.")])
    assert score < 0.9 and "turn 2 disagrees" in why


def _window(*keys: str) -> list[PageTurn]:
    return [PageTurn(k, "user" if k.endswith("u") else "assistant", k) for k in keys]


def test_windows_of_a_virtualized_history_fold_in_order() -> None:
    collected: list[PageTurn] = []
    assert merge_window(collected, _window("5u", "5a", "6u", "6a")) == 4
    # Scrolled up: older turns before known ones, the newest ones already removed.
    assert merge_window(collected, _window("3u", "3a", "4u", "4a", "5u", "5a")) == 4
    assert merge_window(collected, _window("3u", "3a", "4u")) == 0
    # A slice sharing nothing with what is known lies above it.
    assert merge_window(collected, _window("1u", "1a")) == 2
    # A turn between known ones (re-rendered with one more) goes in its place.
    assert merge_window(collected, _window("1a", "2u", "2a", "3u")) == 2
    assert [t.key for t in collected] == [
        "1u", "1a", "2u", "2a", "3u", "3a", "4u", "4a", "5u", "5a", "6u", "6a",
    ]  # fmt: skip


def test_conversation_urls_are_checked() -> None:
    chatgpt, gemini = provider_spec("chatgpt"), provider_spec("gemini")
    url = "https://chatgpt.com/c/6803e3a1-2b7c-8000-9d2e-0c4f5a6b7c8d#x"
    assert conversation_url(chatgpt, url) == url.removesuffix("#x")
    assert conversation_url(gemini, "https://gemini.google.com/app/1f9dadf233e175e7")
    for wrong, spec in [
        ("https://chatgpt.com/", chatgpt),
        ("https://example.com/c/1", chatgpt),
        ("https://chatgpt.com/c/1", gemini),
    ]:
        with pytest.raises(ValueError, match=r"is not a .* conversation URL: give one like"):
            conversation_url(spec, wrong)


def test_conversation_ids_and_their_urls() -> None:
    """The id a resource URI names (bridge://conversations/<provider>/<id>) and back."""
    chatgpt, gemini = provider_spec("chatgpt"), provider_spec("gemini")
    uuid = "6803e3a1-2b7c-8000-9d2e-0c4f5a6b7c8d"
    for url, spec, ident in [
        (f"https://chatgpt.com/c/{uuid}#x", chatgpt, uuid),
        (f"https://chatgpt.com/g/g-abc-helper/c/{uuid}", chatgpt, uuid),
        ("https://gemini.google.com/app/1f9dadf233e175e7", gemini, "1f9dadf233e175e7"),
        ("https://gemini.google.com/u/1/app/1f9dadf233e175e7?hl=en", gemini, "1f9dadf233e175e7"),
    ]:
        assert conversation_id(spec, url) == ident
    assert conversation_id(chatgpt, "https://chatgpt.com/") is None
    assert conversation_id(gemini, f"https://chatgpt.com/c/{uuid}") is None
    assert url_of_conversation_id(chatgpt, uuid) == f"https://chatgpt.com/c/{uuid}"
    assert url_of_conversation_id(gemini, "1f9d") == "https://gemini.google.com/app/1f9d"
    for wrong in ["", "a/b", "a.b", "..", "a b", "x?y", "abc\n"]:
        with pytest.raises(ValueError, match=r"is not a chatgpt conversation id: give the last"):
            url_of_conversation_id(chatgpt, wrong)


# -- page.js on evidence-shaped pages ---------------------------------------------------------------

# [C5.2] the sidebar, [C2.1–C2.5] turns (an article and a section), [C6.1] /c/<id> links.
CG_PAGE = (
    '<nav aria-label="Chat history"><a href="/">New chat</a>'
    '<a href="/c/aaa" data-testid="history-item-0">First chat <button>…</button></a>'
    '<div data-testid="history-item-1"><a href="/c/bbb">Second  chat</a></div>'
    '<a href="/gpts">Explore GPTs</a></nav>'
    "<main>"
    '<article data-testid="conversation-turn-1" data-turn="user"><h5 class="sr-only">You said:</h5>'
    '<div data-message-author-role="user" data-message-id="m1"><div>Line one\nline  two</div>'
    "</div></article>"
    '<section data-testid="conversation-turn-2" data-turn="assistant">'
    '<h6 class="sr-only">ChatGPT said:</h6>'
    '<div data-message-author-role="assistant" data-message-id="m2">'
    '<div class="markdown prose"><p>It is <strong>4</strong>, see <a href="/c/ccc">that chat</a>.'
    "</p></div></div></section></main>"
)
# [G2.1] the scroller, [G2.2] an exchange with an id, [G2.3] question lines, [G2.4] the
# answer, [G2.5] hidden labels; [G6.1] /app/<id> links (no sidebar markup is evidenced).
GM_PAGE = (
    '<div><a href="/app/1f9dadf233e175e7">Recipes</a><a href="/app">New chat</a>'
    '<a href="https://example.com/app/x">Elsewhere</a></div>'
    '<infinite-scroller data-test-id="chat-history-container">'
    '<div class="conversation-container" id="c1"><user-query><user-query-content>'
    '<span class="cdk-visually-hidden">You said</span><div class="query-text">'
    '<p class="query-text-line">line one</p><p class="query-text-line">line two</p></div>'
    "</user-query-content></user-query>"
    '<model-response><div class="response-container"><div class="response-container-header">'
    '<span class="cdk-visually-hidden">Gemini said</span></div><div class="response-content">'
    '<message-content class="model-response-text"><div class="markdown"><p>Hi <em>there</em>, '
    'see <a href="/app/735afd264d35c312">this</a></p></div></message-content></div></div>'
    "</model-response></div></infinite-scroller>"
)


async def _page_call(tab: CdpSession, pages: str, html: str, function: str, provider: str) -> Any:
    await tab.navigate(f"{pages}/")
    await tab.evaluate(f"document.body.innerHTML = {json.dumps(html)}")
    await tab.evaluate(PAGE_JS)
    return await tab.evaluate(f"window.__bridgePage.{function}({json.dumps(provider)})")


@pytest.mark.e2e
async def test_page_turns_and_links_on_chatgpt_markup(tab: CdpSession, pages: str) -> None:
    turns = await _page_call(tab, pages, CG_PAGE, "conversationTurns", "chatgpt")
    assert turns == [
        {"key": "m1", "role": "user", "text": "Line one\nline  two"},
        {"key": "m2", "role": "assistant", "text": "It is **4**, see [that chat](/c/ccc)."},
    ]
    # The sidebar's entries [C5.2], titled without their buttons; not the answer's link.
    listed = await tab.evaluate(
        "window.__bridgePage.whenConversationLinks('chatgpt', 50, 2000)", await_promise=True
    )
    assert listed == {
        "method": "sidebar",
        "links": [
            {"title": "First chat", "url": f"{pages}/c/aaa"},
            {"title": "Second chat", "url": f"{pages}/c/bbb"},
        ],
    }


@pytest.mark.e2e
async def test_page_turns_and_links_on_gemini_markup(tab: CdpSession, pages: str) -> None:
    turns = await _page_call(tab, pages, GM_PAGE, "conversationTurns", "gemini")
    assert turns == [
        {"key": "c1/user", "role": "user", "text": "line one\nline two"},
        {
            "key": "c1/assistant",
            "role": "assistant",
            "text": "Hi *there*, see [this](/app/735afd264d35c312)",
        },
    ]
    listed = await tab.evaluate(
        "window.__bridgePage.whenConversationLinks('gemini', 50, 2000)", await_promise=True
    )
    # By behaviour: links to conversation URLs of this site, not inside a message.
    assert listed == {
        "method": "links",
        "links": [{"title": "Recipes", "url": f"{pages}/app/1f9dadf233e175e7"}],
    }


# -- end to end: the fakes, real Chromium ------------------------------------------------------------


def _forty_exchanges() -> list[tuple[str, str]]:
    """40 questions and varied markdown answers: the corpus answers the DOM can reproduce
    exactly (tests/providers/test_dom_markdown.py UNKNOWABLE lists the others), each made
    unique by its number."""
    answers = [a for a in corpus() if a.name not in UNKNOWABLE and len(a.markdown) < 20_000]
    assert len(answers) >= 20
    out = []
    for i in range(40):
        answer = answers[i % len(answers)]
        out.append(
            (f"Question {i + 1}: {answer.question}", f"Answer {i + 1}.\n\n{answer.markdown}")
        )
    return out


def _expected(exchanges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [turn for q, a in exchanges for turn in (("user", q), ("assistant", a))]


def _exact(got: list[Turn], want: list[tuple[str, str]]) -> int:
    return sum(
        1
        for turn, (role, text) in zip(got, want, strict=False)
        if turn.role == role and normalize(turn.markdown) == normalize(text)
    )


@pytest.mark.e2e
@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_forty_exchanges_read_back_exactly_in_order(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    site = getattr(fakes, provider)
    exchanges = _forty_exchanges()
    url = BASES[provider] + site.create_conversation(exchanges, title="Forty exchanges")
    bridge.store.put_session(bridge.session_key, provider, url, None)
    conversation = await bridge.get_conversation(provider)  # type: ignore[arg-type]
    want = _expected(exchanges)
    exact = _exact(conversation.turns, want)
    print(
        f"\n{provider}: {exact}/{len(want)} turns exact from {conversation.source}"
        f" (rejected {conversation.rejected}, {conversation.scroll_steps} scroll steps,"
        f" {conversation.elapsed_ms:.0f} ms)"
    )
    assert conversation.url == url and conversation.tab == "session"
    assert [t.role for t in conversation.turns] == [role for role, _ in want]
    assert exact == len(want)
    if provider == "chatgpt":
        # The page's own read response (C7.8), believed because the page agrees with it.
        assert conversation.source == "network" and conversation.rejected == []
        assert conversation.agreement >= 0.9
        # The fallback alone, on the same page: as exact on these answers.
        dom = await bridge.get_conversation(provider, source="dom")  # type: ignore[arg-type]
        print(f"{provider}: {_exact(dom.turns, want)}/{len(want)} turns exact from the dom alone")
        assert dom.source == "dom" and _exact(dom.turns, want) == len(want)
    else:
        # No documented read format (G7.4): the page, scrolled up through its virtualized
        # history (G2.1), which never renders more than 10 exchanges at once.
        assert conversation.source == "dom"
        assert [s for s, _ in conversation.rejected] == ["network"]
        assert conversation.scroll_steps >= 7
        entry = bridge.store.get_session(bridge.session_key, provider)
        assert entry is not None and entry.tab_id is not None
        tab = bridge.browser.sessions[entry.tab_id]
        assert await tab.evaluate("document.querySelectorAll('model-response').length") <= 20
        # Left at the newest turns: the last question is rendered again.
        shown = await tab.evaluate(
            "[...document.querySelectorAll('p.query-text-line')].at(-1).textContent"
        )
        assert shown == exchanges[-1][0]


@pytest.mark.e2e
async def test_chatgpt_network_reading_is_exact_where_the_dom_cannot_be(
    bridge: Bridge, fakes: FakeSites
) -> None:
    """Every corpus answer, the long ones and those the DOM cannot reproduce included
    (UNKNOWABLE): the read response carries the site's own markdown."""
    answers = corpus()
    exchanges = [(f"Question {i + 1}: {a.question}", a.markdown) for i, a in enumerate(answers)]
    url = BASES["chatgpt"] + fakes.chatgpt.create_conversation(exchanges)
    bridge.store.put_session(bridge.session_key, "chatgpt", url, None)
    want = _expected(exchanges)
    network = await bridge.get_conversation("chatgpt")
    dom = await bridge.get_conversation("chatgpt", source="dom")
    exact = {"network": _exact(network.turns, want), "dom": _exact(dom.turns, want)}
    print(f"\nchatgpt, {len(want)} turns of the whole corpus: exact {exact}")
    assert network.source == "network" and exact["network"] == len(want)
    assert dom.source == "dom" and len(dom.turns) == len(want)
    # The DOM loses only what rendering drops: each answer the converter cannot reproduce.
    assert exact["dom"] >= len(want) - len(UNKNOWABLE)


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
@pytest.mark.e2e
async def test_a_url_is_read_in_a_tab_of_its_own(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    site = getattr(fakes, provider)
    project = BASES[provider] + site.create_conversation([("Project question", "Project answer.")])
    bridge.store.put_session(bridge.session_key, provider, project, None)
    tab = await bridge.provider_tab(provider)  # type: ignore[arg-type]
    other = BASES[provider] + site.create_conversation([("Other question", "Other *answer*.")])
    before = {t.tab_id for t in await bridge.browser.list_tabs()}
    conversation = await bridge.get_conversation(provider, other)  # type: ignore[arg-type]
    assert conversation.tab == "temporary" and conversation.url == other
    assert [(t.role, t.markdown) for t in conversation.turns] == [
        ("user", "Other question"),
        ("assistant", "Other *answer*."),
    ]
    assert {t.tab_id for t in await bridge.browser.list_tabs()} == before  # closed again
    assert await tab.evaluate("location.href") == project  # the project's tab stayed


@pytest.mark.e2e
async def test_a_tab_without_a_conversation_has_no_turns(bridge: Bridge, fakes: FakeSites) -> None:
    conversation = await bridge.get_conversation("gemini")
    assert conversation.turns == [] and conversation.source == "none"
    assert "ask first" in conversation.notes[0]


@pytest.mark.e2e
async def test_an_unknown_conversation_is_a_typed_error(
    bridge: Bridge, fakes: FakeSites, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reading, "TURNS_WAIT_S", 2.0)
    url = BASES["chatgpt"] + "00000000-0000-4000-8000-000000000000"
    with pytest.raises(ConversationNotFound, match="list_conversations shows the recent ones"):
        await bridge.get_conversation("chatgpt", url)


@pytest.mark.e2e
@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_the_list_shows_the_recent_conversations(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    site = getattr(fakes, provider)
    made = [
        (site.create_conversation([(f"Question {n}", f"Answer {n}.")], title=title), title)
        for n, title in enumerate(["Sourdough starter", "Rust lifetimes", "Tax forms 2026"])
    ]
    listed = await bridge.list_conversations(provider)  # type: ignore[arg-type]
    assert listed.method == ("sidebar" if provider == "chatgpt" else "links")
    assert [(c.title, c.url) for c in listed.conversations] == [
        (title, BASES[provider] + cid) for cid, title in reversed(made)
    ]
    # A new chat is listed first once its answer is in (the page updates its list).
    await bridge.ask(provider, "What is a Python context manager?", new_chat=True)  # type: ignore[arg-type]
    again = await bridge.list_conversations(provider)  # type: ignore[arg-type]
    record = site.records[-1]
    assert again.conversations[0].url == BASES[provider] + record.conversation_id
    assert again.conversations[0].title == "What is a Python context manager?"
    assert len(again.conversations) == 4


@pytest.mark.e2e
@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_an_answer_still_being_written_reads_as_incomplete(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    """Read while the newest answer streams (asked by another project, in its own tab): that
    turn is ``complete: False``, the earlier ones True; read again once it has finished,
    every turn is complete. ChatGPT says so in its read response (status in_progress, C7.5)
    and by the page following the answer (its stop button); a reopened Gemini page shows the
    answer without its finished footer (G2.7)."""
    site = getattr(fakes, provider)
    url = BASES[provider] + site.create_conversation([("First question", "First *answer*.")])
    bridge.store.put_session("writer", provider, url, None)
    # About a chunk a second for ten seconds: long enough to be read mid-way.
    site.queue(Behaviour(duration_ms=10_000))
    asking = asyncio.ensure_future(
        bridge.ask(provider, "Explain Python generators, please.", session_key="writer")  # type: ignore[arg-type]
    )
    try:
        await site.wait_for_record_async(lambda r: r.text_visible_at is not None, 60)
        during = await bridge.get_conversation(provider, url)  # type: ignore[arg-type]
        # The page alone (ChatGPT's follows the answer with its stop button up); Gemini's
        # reading above was the page's already.
        dom = (
            await bridge.get_conversation(provider, url, source="dom")  # type: ignore[arg-type]
            if provider == "chatgpt"
            else during
        )
        record = site.records[-1]
        assert record.finished_at is None, "the answer ended before the reading: too slow"
    finally:
        result = await asking
    print(f"\n{provider}: read mid-answer from {during.source} (rejected {during.rejected})")
    assert [t.role for t in during.turns] == ["user", "assistant", "user", "assistant"]
    assert [t.complete for t in during.turns] == [True, True, True, False]
    assert during.to_dict()["turns"][-1]["complete"] is False
    assert dom.source == "dom" and [t.complete for t in dom.turns] == [True, True, True, False]
    assert "incomplete: still being written" in during.transcript()
    assert normalize(during.turns[-1].markdown) != normalize(record.answer)

    after = await bridge.get_conversation(provider, url)  # type: ignore[arg-type]
    assert [t.complete for t in after.turns] == [True, True, True, True]
    assert normalize(after.turns[-1].markdown) == normalize(record.answer)
    assert result.answer and after.url == url
