"""The fake pages in real Chromium, observed through CDP as bridge's drivers observe them.

Tabs come from the bridge plugin (relay + extension + launched headless Chromium whose
``--host-resolver-rules`` send chatgpt.com and gemini.google.com to the fakes). Waits are on
page mutations or server records under a deadline, never sleeps.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from bridge.cdp import CdpSession
from bridge.fakes import Behaviour, FakeSites, QuestionRecord, answer_lines, answer_markdown
from bridge.waiting import scaled

pytestmark = pytest.mark.e2e

NewTab = Callable[..., Awaitable[CdpSession]]
CHATGPT = "https://chatgpt.com/"
GEMINI = "https://gemini.google.com/app"

# The search of docs/sites.md#gemini-shadow-dom: every match, in the document and in every
# shadow root under it.
DEEP = """
const deepAll = (selector) => {
  const found = [];
  const visit = (root) => {
    root.querySelectorAll(selector).forEach((el) => found.push(el));
    root.querySelectorAll('*').forEach((el) => { if (el.shadowRoot) visit(el.shadowRoot); });
  };
  visit(document);
  return found;
};
const deep = (selector) => deepAll(selector)[0] || null;
"""

# Resolves once `condition` is truthy, re-checking on every mutation of the document and of
# every shadow root, and rejects at the deadline.
UNTIL = """
(condition, ms) => new Promise((resolve, reject) => {
  const roots = new Set();
  const observer = new MutationObserver(() => check());
  const watch = (root) => {
    if (!roots.has(root)) {
      roots.add(root);
      observer.observe(root, { subtree: true, childList: true, attributes: true,
        characterData: true });
    }
    root.querySelectorAll('*').forEach((el) => { if (el.shadowRoot) watch(el.shadowRoot); });
  };
  const timer = setTimeout(() => {
    observer.disconnect();
    reject(new Error('timed out waiting for ' + condition));
  }, ms);
  const check = () => {
    watch(document);
    let value;
    try { value = condition(); } catch (error) { value = undefined; }
    if (value) {
      observer.disconnect();
      clearTimeout(timer);
      resolve(value);
    }
  };
  check();
})
"""


async def js(tab: CdpSession, expression: str) -> Any:
    """Evaluate with the deep-search helpers in scope."""
    return await tab.evaluate(f"(() => {{ {DEEP} return ({expression}); }})()")


async def until(tab: CdpSession, condition: str, timeout: float = 10.0) -> Any:
    """Wait in the page until the JS ``condition`` is truthy; return its value."""
    limit = scaled(timeout)
    return await tab.evaluate(
        f"(() => {{ {DEEP} return ({UNTIL})(() => ({condition}), {int(limit * 1000)}); }})()",
        await_promise=True,
        timeout=limit + 5,
    )


async def completed(
    site: Any, text: str, field: str = "completed_at", timeout: float = 10.0
) -> QuestionRecord:
    """The record of ``text`` once its ``field`` is set."""
    record: QuestionRecord = await site.wait_for_record_async(
        lambda r: r.text == text and getattr(r, field) is not None, scaled(timeout)
    )
    return record


def lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


# -- ChatGPT ------------------------------------------------------------------------------------

CHATGPT_INPUT = "document.querySelector('#prompt-textarea')"
SEND = "document.querySelector('button[data-testid=\"send-button\"]')"
STOP = "document.querySelector('button[data-testid=\"stop-button\"]')"
LAST_ANSWER = (
    "[...document.querySelectorAll('[data-message-author-role=\"assistant\"] .markdown')].pop()"
)

# Records, in the page, when the DOM showed each thing: compared with what the page reported.
WATCH_CHATGPT = f"""
window.__seen = {{ lengths: [] }};
new MutationObserver(() => {{
  const now = (performance.timeOrigin + performance.now()) / 1000;
  const seen = window.__seen;
  const answer = {LAST_ANSWER};
  if (answer && answer.childElementCount && !seen.first) seen.first = now;
  const length = answer ? answer.textContent.length : 0;
  if (length && !seen.text) seen.text = now;
  if (seen.lengths[seen.lengths.length - 1] !== length) seen.lengths.push(length);
  const stop = {STOP};
  if (stop) seen.sawStop = true;
  if (seen.sawStop && !stop && {SEND} && !seen.done) seen.done = now;
}}).observe(document, {{ subtree: true, childList: true, characterData: true,
  attributes: true }});
true
"""


async def open_chatgpt(new_tab: NewTab, url: str = CHATGPT, active: bool = True) -> CdpSession:
    tab = await new_tab(url, active=active)
    await until(tab, CHATGPT_INPUT)
    return tab


async def type_question(tab: CdpSession, text: str) -> None:
    """Phase 2 of docs/sites.md#input-fallbacks: focus, then CDP Input.insertText."""
    await js(tab, f"{CHATGPT_INPUT}.focus()")
    await tab.send("Input.insertText", {"text": text})


async def ask_chatgpt(tab: CdpSession, text: str) -> None:
    await type_question(tab, text)
    assert await js(tab, f"!{SEND}.disabled")
    await js(tab, f"{SEND}.click()")


async def test_chatgpt_streams_an_answer_typed_with_insert_text(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(chunk_chars=12, chunk_interval_ms=10))
    tab = await open_chatgpt(new_tab)
    question = "Write Python code to merge two sorted lists"
    assert await js(tab, f"{SEND}.disabled")  # empty input
    assert await js(tab, f"{SEND}.getAttribute('aria-label')") == "Send prompt"
    await tab.evaluate(WATCH_CHATGPT)
    await ask_chatgpt(tab, question)
    record = await completed(fakes.chatgpt, question)

    assert await js(tab, "location.pathname") == f"/c/{record.conversation_id}"
    turns = await js(
        tab,
        "[...document.querySelectorAll('article[data-turn]')].map((a) => [a.dataset.turn, "
        "a.querySelector('[data-message-author-role]').dataset.messageAuthorRole])",
    )
    assert turns == [["user", "user"], ["assistant", "assistant"]]
    answer = await js(tab, f"{LAST_ANSWER}.innerText")
    assert lines(answer) == answer_lines(record.answer)
    markup = await js(tab, f"[...{LAST_ANSWER}.children].map((el) => el.tagName)")
    assert markup == ["P", "UL", "PRE", "P"]
    assert await js(tab, f"{LAST_ANSWER}.querySelector('pre > code.language-python') !== null")
    assert await js(tab, f"{STOP} === null && !!{SEND}")

    # Token by token: the page showed many growing lengths before the whole answer.
    seen = await js(tab, "window.__seen")
    assert len(seen["lengths"]) > 5
    assert seen["lengths"] == sorted(seen["lengths"])
    assert seen["sawStop"]


async def test_chatgpt_records_when_the_page_showed_each_step(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(chunk_interval_ms=20))
    tab = await open_chatgpt(new_tab)
    await tab.evaluate(WATCH_CHATGPT)
    question = "Explain the TCP handshake"
    await ask_chatgpt(tab, question)
    record = await completed(fakes.chatgpt, question)
    seen = await js(tab, "window.__seen")

    assert record.first_token_at is not None
    assert record.text_visible_at is not None
    assert record.completed_at is not None
    # Monotonic (received_at is the server's clock; the rest are the page's).
    assert record.received_at - 0.01 <= record.first_token_at
    assert record.first_token_at <= record.text_visible_at <= record.completed_at
    # And they match what a mutation observer in the page saw, within one task.
    for reported, observed in [
        (record.first_token_at, seen["first"]),
        (record.text_visible_at, seen["text"]),
        (record.completed_at, seen["done"]),
    ]:
        assert reported - 0.002 <= observed <= reported + 0.05


async def test_chatgpt_ignores_a_direct_dom_write(fakes: FakeSites, new_tab: NewTab) -> None:
    tab = await open_chatgpt(new_tab)
    # Phase 1's innerHTML write, even with a synthetic input event, changes the DOM only.
    await js(
        tab,
        f"(() => {{ const e = {CHATGPT_INPUT}; e.innerHTML = '<p>Ignored question</p>'; "
        "e.dispatchEvent(new Event('input', { bubbles: true })); })()",
    )
    assert await js(tab, f"{CHATGPT_INPUT}.textContent") == "Ignored question"
    assert await js(tab, f"{SEND}.disabled")
    await js(tab, f"{SEND}.click()")
    await js(tab, f"{CHATGPT_INPUT}.textContent = 'Also ignored'")
    assert await js(tab, f"{SEND}.disabled")
    await js(tab, f"{SEND}.click()")
    # Pressing Enter sends the editor's state, which is still empty.
    await js(tab, f"{CHATGPT_INPUT}.focus()")
    await press_enter(tab)
    # A real edit replaces everything; only that question ever reaches the server.
    await js(tab, "document.execCommand('selectAll')")
    await ask_chatgpt(tab, "Real question")
    await completed(fakes.chatgpt, "Real question")
    assert [r.text for r in fakes.chatgpt.records] == ["Real question"]


async def press_enter(tab: CdpSession) -> None:
    key = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}
    await tab.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", **key})
    await tab.send("Input.dispatchKeyEvent", {"type": "char", "text": "\r", **key})
    await tab.send("Input.dispatchKeyEvent", {"type": "keyUp", **key})


async def test_chatgpt_takes_exec_command_and_key_events(fakes: FakeSites, new_tab: NewTab) -> None:
    tab = await open_chatgpt(new_tab)
    await js(tab, f"{CHATGPT_INPUT}.focus()")
    await js(tab, "document.execCommand('insertText', false, 'From execCommand')")
    assert not await js(tab, f"{SEND}.disabled")
    await js(tab, f"{SEND}.click()")
    await completed(fakes.chatgpt, "From execCommand")

    # Phase 3: select all, delete, then one key event per character, then Enter sends.
    await js(tab, f"{CHATGPT_INPUT}.focus()")
    await js(tab, "document.execCommand('selectAll') && document.execCommand('delete')")
    assert await js(tab, f"{SEND}.disabled")
    for char in "Typed key by key":
        await tab.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": char, "key": char})
        await tab.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": char})
    assert not await js(tab, f"{SEND}.disabled")
    await press_enter(tab)
    await completed(fakes.chatgpt, "Typed key by key")
    assert await js(tab, f"{CHATGPT_INPUT}.textContent") == ""


async def test_chatgpt_textarea_variant_needs_an_input_event(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(input_kind="textarea"))
    tab = await open_chatgpt(new_tab)
    assert await js(tab, "document.querySelector('textarea#prompt-textarea') !== null")
    await js(tab, f"{CHATGPT_INPUT}.value = 'Value without an event'")
    assert await js(tab, f"{SEND}.disabled")
    await js(tab, f"{SEND}.click()")
    await js(
        tab,
        f"(() => {{ const e = {CHATGPT_INPUT}; e.value = 'Value with an event'; "
        "e.dispatchEvent(new Event('input', { bubbles: true })); })()",
    )
    assert not await js(tab, f"{SEND}.disabled")
    await js(tab, f"{SEND}.click()")
    await completed(fakes.chatgpt, "Value with an event")
    await type_question(tab, "Typed into the textarea")
    await js(tab, f"{SEND}.click()")
    await completed(fakes.chatgpt, "Typed into the textarea")
    assert [r.text for r in fakes.chatgpt.records] == [
        "Value with an event",
        "Typed into the textarea",
    ]


async def test_chatgpt_stop_button_stops_the_answer(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(length="long", chunk_chars=8, chunk_interval_ms=50))
    tab = await open_chatgpt(new_tab)
    question = "Explain caching in depth"
    await ask_chatgpt(tab, question)
    await completed(fakes.chatgpt, question, "first_token_at")
    assert await js(tab, f"{STOP}.getAttribute('aria-label')") == "Stop generating"
    assert await js(tab, f"{SEND} === null")
    await js(tab, f"{STOP}.click()")
    record = await completed(fakes.chatgpt, question)
    assert record.stopped
    shown = await js(tab, f"{LAST_ANSWER}.textContent.length")
    assert 0 < shown < len(record.answer)
    assert await js(tab, f"{STOP} === null && {SEND} !== null")


async def test_chatgpt_japanese_labels(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(locale="ja", chunk_interval_ms=40))
    tab = await open_chatgpt(new_tab)
    assert await js(tab, "document.documentElement.lang") == "ja"
    assert await js(tab, f"{SEND}.getAttribute('aria-label')") == "プロンプトを送信する"
    await ask_chatgpt(tab, "再帰について説明して")
    await completed(fakes.chatgpt, "再帰について説明して", "first_token_at")
    assert await js(tab, f"{STOP}.getAttribute('aria-label')") == "生成を停止"
    await completed(fakes.chatgpt, "再帰について説明して")


@pytest.mark.parametrize(
    ("locale", "skip_label", "time_label"),
    [("en", "Skip thinking", "Thinking time: 1s"), ("ja", "今すぐ回答", "思考時間: 1s")],
)
async def test_chatgpt_thinking_phase(
    fakes: FakeSites, new_tab: NewTab, locale: str, skip_label: str, time_label: str
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(locale=locale, thinking_ms=400))  # type: ignore[arg-type]
    tab = await open_chatgpt(new_tab)
    question = "Design a shortest path algorithm for a graph"
    await ask_chatgpt(tab, question)
    # Thinking: a skip button in the assistant turn, and no stop button.
    thinking = await until(
        tab,
        "(() => { const b = document.querySelector("
        '\'[data-message-author-role="assistant"] [data-testid="skip-thinking-button"]\');'
        f" return b && [b.textContent, {STOP} === null, document.body.innerText]; }})()",
    )
    assert thinking[0] == skip_label
    assert thinking[1] is True
    assert skip_label in thinking[2]
    record = await completed(fakes.chatgpt, question)
    assert record.first_token_at is not None
    assert record.first_token_at - record.received_at >= 0.4
    button = await js(
        tab,
        "(() => { const b = document.querySelector("
        "'[data-message-author-role=\"assistant\"] > button[aria-expanded]');"
        " return [b.textContent, b.getAttribute('aria-expanded')]; })()",
    )
    assert button == [time_label, "false"]
    assert await js(tab, "document.querySelector('[data-testid=\"skip-thinking-button\"]')") is None
    assert lines(await js(tab, f"{LAST_ANSWER}.innerText")) == answer_lines(record.answer)


async def test_chatgpt_skip_thinking_answers_at_once(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(thinking_ms=600_000))
    tab = await open_chatgpt(new_tab)
    question = "Explain recursion in detail"
    await ask_chatgpt(tab, question)
    await until(tab, "document.querySelector('[data-testid=\"skip-thinking-button\"]')")
    await js(tab, "document.querySelector('[data-testid=\"skip-thinking-button\"]').click()")
    record = await completed(fakes.chatgpt, question)
    assert lines(await js(tab, f"{LAST_ANSWER}.innerText")) == answer_lines(record.answer)


async def test_chatgpt_background_tab_hides_text_until_focus_is_emulated(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    tab = await open_chatgpt(new_tab, active=False)
    assert await js(tab, "[document.hidden, document.visibilityState]") == [True, "hidden"]
    question = "Explain background tab rendering"
    await ask_chatgpt(tab, question)
    record = await completed(fakes.chatgpt, question)
    assert record.first_token_at is not None
    assert record.text_visible_at is None
    html = await js(tab, f"{LAST_ANSWER}.innerHTML")
    end = record.answer.index("\n\n")
    assert html.startswith(f'<p data-start="0" data-end="{end}"></p>')
    assert await js(tab, f"{LAST_ANSWER}.textContent") == ""

    await tab.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
    record = await completed(fakes.chatgpt, question, "text_visible_at")
    assert record.completed_at is not None and record.text_visible_at is not None
    assert record.text_visible_at > record.completed_at
    assert lines(await js(tab, f"{LAST_ANSWER}.innerText")) == answer_lines(record.answer)


async def test_chatgpt_background_tab_shows_text_once_activated(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    tab = await open_chatgpt(new_tab, active=False)
    question = "Explain tab activation"
    await ask_chatgpt(tab, question)
    record = await completed(fakes.chatgpt, question)
    assert await js(tab, f"{LAST_ANSWER}.textContent") == ""
    await tab.send("Page.bringToFront")
    record = await completed(fakes.chatgpt, question, "text_visible_at")
    assert lines(await js(tab, f"{LAST_ANSWER}.innerText")) == answer_lines(record.answer)


async def test_chatgpt_existing_conversation_loads_its_turns(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    conversation_id = fakes.chatgpt.create_conversation(
        [("First question", "First **answer**."), ("Second question", "- second answer")]
    )
    tab = await open_chatgpt(new_tab, f"https://chatgpt.com/c/{conversation_id}")
    turns = await until(
        tab,
        "(() => { const t = [...document.querySelectorAll('[data-message-author-role]')]"
        ".map((m) => m.innerText.trim()); return t.length === 4 && t; })()",
    )
    assert turns == ["First question", "First answer.", "Second question", "second answer"]
    await ask_chatgpt(tab, "Third question")
    record = await completed(fakes.chatgpt, "Third question")
    assert record.conversation_id == conversation_id
    assert await js(tab, "location.pathname") == f"/c/{conversation_id}"
    assert await js(tab, "document.querySelectorAll('article[data-turn]').length") == 6


async def test_chatgpt_reload_shows_the_conversation_so_far(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    tab = await open_chatgpt(new_tab)
    await ask_chatgpt(tab, "Remember this question")
    record = await completed(fakes.chatgpt, "Remember this question")
    await tab.navigate(f"https://chatgpt.com/c/{record.conversation_id}")
    await until(tab, f"{LAST_ANSWER}?.textContent")
    assert await js(tab, "document.querySelectorAll('article[data-turn]').length") == 2
    assert lines(await js(tab, f"{LAST_ANSWER}.innerText")) == answer_lines(record.answer)


async def test_chatgpt_error_turn_and_retry(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.chatgpt.queue(Behaviour(state="error_turn"))
    tab = await open_chatgpt(new_tab)
    await ask_chatgpt(tab, "Will this fail?")
    failed = await completed(fakes.chatgpt, "Will this fail?")
    message = await until(
        tab,
        "document.querySelector('[data-message-author-role=\"assistant\"] [role=alert]')"
        "?.textContent",
    )
    assert message.startswith("Something went wrong")
    assert await js(tab, f"{SEND} !== null && {STOP} === null")
    await js(tab, "document.querySelector('[data-testid=\"regenerate-button\"]').click()")
    answered = await fakes.chatgpt.wait_for_record_async(
        lambda r: r.id != failed.id and r.completed_at is not None, scaled(10.0)
    )
    assert answered.text == "Will this fail?"
    assert await js(tab, "document.querySelectorAll('[role=alert]').length") == 0
    assert (
        await js(tab, "document.querySelectorAll('article[data-turn=\"assistant\"]').length") == 1
    )
    assert lines(await js(tab, f"{LAST_ANSWER}.innerText")) == answer_lines(answered.answer)


async def test_chatgpt_rate_limit_message(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.chatgpt.queue(Behaviour(state="rate_limited"))
    tab = await open_chatgpt(new_tab)
    await ask_chatgpt(tab, "One more?")
    await completed(fakes.chatgpt, "One more?")
    notice = await until(tab, "document.querySelector('.rate-limit-notice')?.textContent")
    assert notice == "You've reached our limit of messages per hour. Please try again later."
    assert (
        await js(
            tab, "document.querySelectorAll('[data-message-author-role=\"assistant\"]').length"
        )
        == 0
    )


async def test_chatgpt_logged_out_shows_a_login_wall(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(state="logged_out"))
    tab = await new_tab(CHATGPT, active=True)
    login = await until(
        tab, "document.querySelector('[data-testid=\"login-button\"]')?.textContent"
    )
    assert login == "Log in"
    assert await js(tab, f"{CHATGPT_INPUT} === null && {SEND} === null")


async def test_chatgpt_slow_hydration_shows_the_composer_late(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(hydration_ms=800))
    tab = await new_tab(CHATGPT, active=True)
    present, now = await js(tab, f"[{CHATGPT_INPUT} !== null, performance.now()]")
    assert present == (now >= 800)
    appeared_at = await until(tab, f"{CHATGPT_INPUT} && performance.now()")
    assert appeared_at >= 800
    assert await js(tab, "document.readyState") == "complete"


async def test_chatgpt_long_answer(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(length="long", chunk_chars=3000, chunk_interval_ms=5))
    tab = await open_chatgpt(new_tab)
    await ask_chatgpt(tab, "Write a long guide to Python code style")
    record = await completed(fakes.chatgpt, "Write a long guide to Python code style")
    assert len(record.answer) > 20_000
    assert lines(await js(tab, f"{LAST_ANSWER}.innerText")) == answer_lines(record.answer)


@pytest.mark.parametrize(
    "markdown",
    [
        answer_markdown("Write a bash script that counts lines", Behaviour(length="long")),
        answer_markdown("TypeScriptの型ガードのコードを書いて"),
        "# One\n## Two\n\nsoft\nwrapped **line**\n\n1. a\n2. `b`\n- c\n\n```\n  x\n\ny\n```",
        "Unfinished ```\n```js\nstill streaming",
    ],
    ids=["long", "japanese", "mixed", "unfinished"],
)
async def test_pages_render_markdown_as_answer_lines_describes(
    fakes: FakeSites, new_tab: NewTab, markdown: str
) -> None:
    tab = await open_chatgpt(new_tab)
    rendered = await tab.evaluate(
        "(() => { const box = document.createElement('div'); document.body.append(box);"
        " const view = new FakeKit.MarkdownView(box);"
        f" view.update({json.dumps(markdown)}); view.fill();"
        " const text = box.innerText; box.remove(); return text; })()"
    )
    assert lines(rendered) == answer_lines(markdown)


# -- Gemini -------------------------------------------------------------------------------------

TEXTBOX = "deep('[role=\"textbox\"]')"
GEMINI_SEND = "(deep('mat-icon[data-mat-icon-name=\"send\"]')?.closest('button') ?? null)"
GEMINI_STOP = "(deep('mat-icon[data-mat-icon-name=\"stop\"]')?.closest('button') ?? null)"
THUMBS = 'deepAll(\'img[alt="thumb_up"], img[alt="thumb_down"]\').length'

# docs/sites.md#extraction-gemini: from the feedback icon up to the response container, then
# its text blocks.
EXTRACT_GEMINI = """
(() => {
  const icon = deepAll('img[alt="thumb_up"]').pop();
  const container = icon.closest('button').parentElement.parentElement;
  return [...container.querySelectorAll('p, h1, h2, h3, h4, h5, h6, li, pre')]
    .map((el) => el.innerText).join('\\n');
})()
"""


async def open_gemini(new_tab: NewTab, url: str = GEMINI) -> CdpSession:
    tab = await new_tab(url, active=True)
    await until(tab, TEXTBOX)
    return tab


async def ask_gemini(tab: CdpSession, text: str) -> None:
    await js(tab, f"{TEXTBOX}.focus()")
    await tab.send("Input.insertText", {"text": text})
    assert await js(tab, f"{GEMINI_SEND}.getAttribute('aria-disabled')") == "false"
    await js(tab, f"{GEMINI_SEND}.click()")


async def test_gemini_lives_in_shadow_roots(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.gemini.set_behaviour(Behaviour(chunk_chars=10, chunk_interval_ms=30))
    tab = await open_gemini(new_tab)
    assert await js(tab, "document.querySelector('[role=\"textbox\"]')") is None
    assert await js(tab, "document.querySelector('mat-icon[data-mat-icon-name=\"send\"]')") is None
    assert await js(tab, "deepAll('img[alt=\"mic\"]').length") == 1
    assert await js(tab, f"{GEMINI_SEND}.getAttribute('aria-disabled')") == "true"
    question = "Explain recursion with an example"
    await ask_gemini(tab, question)
    await completed(fakes.gemini, question, "first_token_at")
    # While streaming: a stop button, no feedback icons yet, no mic.
    assert await js(tab, f"{GEMINI_STOP}.getAttribute('aria-label')") == "Stop response"
    assert await js(tab, THUMBS) == 0
    assert (
        await js(tab, "deepAll('img[alt=\"mic\"]').filter((i) => i.checkVisibility()).length") == 0
    )
    record = await completed(fakes.gemini, question)

    assert await js(tab, "document.querySelectorAll('user-query, model-response').length") == 0
    assert await js(tab, "[deepAll('user-query').length, deepAll('model-response').length]") == [
        1,
        1,
    ]
    assert await js(tab, THUMBS) == 2
    assert await js(tab, f"{GEMINI_STOP} === null && {GEMINI_SEND} !== null")
    assert lines(await js(tab, EXTRACT_GEMINI)) == answer_lines(record.answer)
    live = await js(tab, "document.querySelector('[aria-live=\"polite\"]').textContent")
    assert lines(live) == answer_lines(record.answer)
    assert await js(tab, "location.pathname") == f"/app/{record.conversation_id}"
    assert record.first_token_at is not None and record.completed_at is not None
    assert record.received_at - 0.01 <= record.first_token_at <= record.completed_at


async def test_gemini_takes_inner_text_with_input_events(fakes: FakeSites, new_tab: NewTab) -> None:
    tab = await open_gemini(new_tab)
    await js(
        tab,
        f"(() => {{ const box = {TEXTBOX}; box.innerText = 'Set through innerText'; "
        "box.dispatchEvent(new Event('input', { bubbles: true })); "
        "box.dispatchEvent(new Event('change', { bubbles: true })); })()",
    )
    assert await js(tab, f"{GEMINI_SEND}.getAttribute('aria-disabled')") == "false"
    await js(tab, f"{GEMINI_SEND}.click()")
    await completed(fakes.gemini, "Set through innerText")
    assert await js(tab, f"{TEXTBOX}.textContent") == ""


async def test_gemini_japanese_labels(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.gemini.set_behaviour(Behaviour(locale="ja"))
    tab = await open_gemini(new_tab)
    labels = await js(
        tab,
        f"[{GEMINI_SEND}.getAttribute('aria-label'), {TEXTBOX}.getAttribute('aria-label'), "
        "deep('img[alt=\"mic\"]').closest('button').getAttribute('aria-label')]",
    )
    assert labels == ["プロンプトを送信", "ここにプロンプトを入力してください", "マイク"]
    await ask_gemini(tab, "型ガードとは")
    await completed(fakes.gemini, "型ガードとは")
    thumbs = await js(
        tab, "deepAll('img[alt^=\"thumb\"]').map((i) => i.closest('button').ariaLabel)"
    )
    assert thumbs == ["良い回答", "悪い回答"]


async def test_gemini_stuck_state_never_completes(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.gemini.set_behaviour(Behaviour(state="stuck"))
    tab = await open_gemini(new_tab)
    question = "Will this ever finish?"
    await ask_gemini(tab, question)
    record = await completed(fakes.gemini, question, "first_token_at")
    assert await js(tab, f"{GEMINI_STOP} !== null")
    await js(tab, f"{GEMINI_STOP}.click()")  # the hung UI ignores it
    # Many streaming intervals pass without completion, and the stop button stays.
    with pytest.raises(TimeoutError):
        await completed(fakes.gemini, question, timeout=1.0)
    assert await js(tab, f"{GEMINI_STOP} !== null && {THUMBS} === 0")
    shown = await js(tab, "deep('model-response').shadowRoot.querySelector('.markdown').innerText")
    assert shown == record.answer[: Behaviour().chunk_chars].strip()


async def test_gemini_stop_button_stops_the_answer(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.gemini.set_behaviour(Behaviour(length="long", chunk_chars=8, chunk_interval_ms=50))
    tab = await open_gemini(new_tab)
    question = "Explain streaming in depth"
    await ask_gemini(tab, question)
    await completed(fakes.gemini, question, "first_token_at")
    await js(tab, f"{GEMINI_STOP}.click()")
    record = await completed(fakes.gemini, question)
    assert record.stopped
    note = await js(tab, "deep('.stopped-note')?.textContent")
    assert note == "You stopped this response"
    assert await js(tab, f"{THUMBS} === 2 && {GEMINI_STOP} === null")
    shown = await js(
        tab, "deep('model-response').shadowRoot.querySelector('.markdown').textContent.length"
    )
    assert 0 < shown < len(record.answer)


async def test_gemini_error_message(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.gemini.queue(Behaviour(state="error_turn"))
    tab = await open_gemini(new_tab)
    await ask_gemini(tab, "Break, please")
    await completed(fakes.gemini, "Break, please")
    assert await until(tab, "deep('.error-message')?.textContent") == (
        "Something went wrong. Please try again."
    )
    assert await js(tab, f"{THUMBS} === 0 && {GEMINI_SEND} !== null")


async def test_gemini_existing_conversation_loads_its_turns(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    conversation_id = fakes.gemini.create_conversation([("Earlier question", "Earlier answer")])
    tab = await open_gemini(new_tab, f"https://gemini.google.com/app/{conversation_id}")
    await until(tab, "deepAll('model-response').length === 1")
    assert await js(tab, THUMBS) == 2
    await ask_gemini(tab, "Later question")
    record = await completed(fakes.gemini, "Later question")
    assert record.conversation_id == conversation_id
    assert await js(tab, "deepAll('user-query').length") == 2


async def test_gemini_rate_limit_message(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.gemini.queue(Behaviour(state="rate_limited"))
    tab = await open_gemini(new_tab)
    await ask_gemini(tab, "Again?")
    await completed(fakes.gemini, "Again?")
    message = await until(tab, "deep('.rate-limit-message')?.textContent")
    assert message == "You've reached your limit for now. Try again later."
    assert await js(tab, f"{THUMBS} === 0 && {GEMINI_STOP} === null")


async def test_gemini_logged_out_shows_sign_in(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.gemini.set_behaviour(Behaviour(state="logged_out"))
    tab = await new_tab(GEMINI, active=True)
    assert await until(tab, "deep('a.sign-in-button')?.textContent") == "Sign in"
    assert await js(tab, f"{TEXTBOX} === null")


async def test_gemini_slow_hydration_shows_the_input_late(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    fakes.gemini.set_behaviour(Behaviour(hydration_ms=800))
    tab = await new_tab(GEMINI, active=True)
    present, now = await js(tab, f"[{TEXTBOX} !== null, performance.now()]")
    assert present == (now >= 800)
    assert await until(tab, f"{TEXTBOX} && performance.now()") >= 800
