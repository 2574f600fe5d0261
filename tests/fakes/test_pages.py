"""The fake pages in real Chromium, observed through CDP as bridge's drivers observe them.

Tabs come from the bridge plugin (relay + extension + launched headless Chromium whose
``--host-resolver-rules`` send chatgpt.com and gemini.google.com to the fakes). Waits are on
page mutations or server records under a deadline, never sleeps. The structures asserted are
the evidence's (docs/sites.md, the SITE-FACTS rows cited in the pages' scripts).
"""

from __future__ import annotations

import json
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from bridge.cdp.session import CdpSession
from bridge.fakes import Behaviour, FakeSites, QuestionRecord, answer_lines, answer_markdown
from bridge.waiting import scaled

pytestmark = pytest.mark.e2e

NewTab = Callable[..., Awaitable[CdpSession]]
CHATGPT = "https://chatgpt.com/"
GEMINI = "https://gemini.google.com/app"

# In scope of every evaluation: the answer's own text, without what the site adds around it
# (a code block's header and buttons, KaTeX's visual copy) and without images (no text, but
# the spaces around one would not collapse): math becomes its TeX source, as answer_lines
# describes it. innerText needs layout, so the copy is read while attached.
HELPERS = """
const answerText = (node) => {
  const copy = node.cloneNode(true);
  copy.querySelectorAll('.katex').forEach((k) => {
    const tex = k.querySelector('annotation[encoding="application/x-tex"]');
    k.replaceWith(tex ? tex.textContent : '');
  });
  copy.querySelectorAll('pre > :not(code), .code-block-decoration, button, img')
    .forEach((n) => n.remove());
  const box = document.createElement('div');
  box.append(copy);
  document.body.append(box);
  const text = box.innerText;
  box.remove();
  return text;
};
const q = (selector) => document.querySelector(selector);
const qa = (selector) => [...document.querySelectorAll(selector)];
const resources = (part) => performance.getEntriesByType('resource')
  .filter((e) => e.name.includes(part))
  .map((e) => ({ status: e.responseStatus, initiator: e.initiatorType }));
"""

# Resolves once `condition` is truthy, re-checking on every mutation, and rejects at the
# deadline.
UNTIL = """
(condition, ms) => new Promise((resolve, reject) => {
  const observer = new MutationObserver(() => check());
  const timer = setTimeout(() => {
    observer.disconnect();
    reject(new Error('timed out waiting for ' + condition));
  }, ms);
  const check = () => {
    let value;
    try { value = condition(); } catch (error) { value = undefined; }
    if (value) {
      observer.disconnect();
      clearTimeout(timer);
      resolve(value);
    }
  };
  observer.observe(document, { subtree: true, childList: true, attributes: true,
    characterData: true });
  check();
})
"""


async def js(tab: CdpSession, expression: str) -> Any:
    """Evaluate with the helpers in scope."""
    return await tab.evaluate(f"(() => {{ {HELPERS} return ({expression}); }})()")


async def until(tab: CdpSession, condition: str, timeout: float = 10.0) -> Any:
    """Wait in the page until the JS ``condition`` is truthy; return its value."""
    limit = scaled(timeout)
    return await tab.evaluate(
        f"(() => {{ {HELPERS} return ({UNTIL})(() => ({condition}), {int(limit * 1000)}); }})()",
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


async def capture_clipboard(tab: CdpSession) -> None:
    """Replace the page's clipboard write, as bridge's copy capture does: what a copy
    button writes lands in ``window.__copied``."""
    await js(
        tab,
        "(() => { window.__copied = []; Object.defineProperty(navigator.clipboard, 'writeText',"
        " { configurable: true, value: async (t) => { window.__copied.push(t); } }); })()",
    )


# -- ChatGPT ------------------------------------------------------------------------------------

CHATGPT_INPUT = "q('#prompt-textarea')"
SEND = "q('button[data-testid=\"send-button\"]')"
STOP = "q('button[data-testid=\"stop-button\"]')"
SPEECH = "q('button[data-testid=\"composer-speech-button\"]')"
TURNS = "qa('[data-testid^=\"conversation-turn-\"]')"
LAST_ANSWER = "qa('[data-message-author-role=\"assistant\"] .markdown').pop()"
LAST_TURN = "qa('[data-turn=\"assistant\"]').pop()"

# Records, in the page, when the DOM showed each thing: compared with what the page reported.
WATCH_CHATGPT = f"""
(() => {{
{HELPERS}
window.__seen = {{ lengths: [] }};
new MutationObserver(() => {{
  const now = (performance.timeOrigin + performance.now()) / 1000;
  const seen = window.__seen;
  const answer = {LAST_ANSWER};
  if (answer && answer.childElementCount && !seen.first) seen.first = now;
  const length = answer ? answer.textContent.length : 0;
  if (length && !seen.text) seen.text = now;
  if (seen.lengths[seen.lengths.length - 1] !== length) seen.lengths.push(length);
  if (answer && answer.classList.contains('result-streaming')) seen.streamingMark = true;
  if ({LAST_TURN}?.querySelector('.turn-action-controls') && {STOP}) seen.barWhileStop = true;
  const stop = {STOP};
  if (stop) {{ seen.sawStop = true; seen.stopId = stop.id; }}
  if (seen.sawStop && !stop && ({SEND} || {SPEECH}) && !seen.done) seen.done = now;
}}).observe(document, {{ subtree: true, childList: true, characterData: true,
  attributes: true }});
return true;
}})()
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


MERGE_ANSWER = """Walk both lists with two indices and always take the smaller head:

- it runs in $O(n + m)$ time;
- it keeps equal items in their original order (a *stable* merge).

```python
def merge(a, b):
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out + a[i:] + b[j:]
```

The standard library does the same lazily with `heapq.merge(a, b)`."""


async def test_chatgpt_streams_an_answer_typed_with_insert_text(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    fakes.chatgpt.set_behaviour(
        Behaviour(answer=MERGE_ANSWER, chunk_chars=12, chunk_interval_ms=10)
    )
    tab = await open_chatgpt(new_tab)
    # An empty composer: the voice-mode button in the submit slot, no send button [C1.11].
    idle = await js(
        tab,
        f"[{SEND} === null, {STOP} === null, {SPEECH}.getAttribute('aria-label'),"
        f" !!{SPEECH}.closest('[data-testid=\"composer-speech-button-container\"]'),"
        " q('#prompt-textarea').matches('div.ProseMirror[contenteditable=\"true\"][role=textbox]'),"
        " q('textarea[name=\"prompt-textarea\"]').checkVisibility(),"
        " !!q('form[data-type=\"unified-composer\"] #composer-background')]",
    )
    assert idle == [True, True, "Start Voice", True, True, False, True]
    question = "Write Python code to merge two sorted lists"
    await tab.evaluate(WATCH_CHATGPT)
    await type_question(tab, question)
    sending = await js(
        tab,
        f"[{SPEECH} === null, {SEND}.id, {SEND}.getAttribute('aria-label'), {SEND}.disabled]",
    )
    assert sending == [True, "composer-submit-button", "Send prompt", False]
    await js(tab, f"{SEND}.click()")
    record = await completed(fakes.chatgpt, question)

    assert await js(tab, "location.pathname") == f"/c/{record.conversation_id}"
    turns = await js(
        tab,
        f"{TURNS}.map((t) => [t.tagName, t.dataset.turn,"
        " t.querySelector('[data-message-author-role][data-message-id]').dataset.messageAuthorRole,"
        " t.querySelector('h5, h6').textContent])",
    )
    assert turns == [
        ["SECTION", "user", "user", "You said:"],
        ["SECTION", "assistant", "assistant", "ChatGPT said:"],
    ]
    assert lines(await js(tab, f"answerText({LAST_ANSWER})")) == answer_lines(record.answer)
    markup = await js(tab, f"[...{LAST_ANSWER}.children].map((el) => el.tagName)")
    assert markup == ["P", "UL", "PRE", "P"]
    header = await js(
        tab,
        f"(() => {{ const pre = {LAST_ANSWER}.querySelector('pre');"
        " return [pre.querySelector(':scope > code.language-python') !== null,"
        " pre.querySelector(':scope > div').innerText.split('\\n')]; })()",
    )
    assert header == [True, ["python", "Copy code"]]
    # Done: no stop, the composer empty again, so the voice button is back [C1.11].
    assert await js(tab, f"{STOP} === null && {SEND} === null && !!{SPEECH}")
    bar = await js(
        tab,
        f"[...{LAST_TURN}.querySelectorAll('.turn-action-controls > button')]"
        ".map((b) => [b.dataset.testid, b.getAttribute('aria-label')])",
    )
    assert bar == [
        ["copy-turn-action-button", "Copy"],
        ["good-response-turn-action-button", "Good response"],
        ["bad-response-turn-action-button", "Bad response"],
        ["voice-play-turn-action-button", "Read aloud"],
    ]
    assert not await js(tab, f"{LAST_ANSWER}.classList.contains('result-streaming')")
    # Logged in [C5.2].
    assert await js(
        tab,
        "!!q('[data-testid=\"accounts-profile-button\"]') && !!q('nav[aria-label=\"Chat history\"]')"
        " && !q('[data-testid=\"login-button\"]')",
    )

    # Token by token: the page showed many growing lengths before the whole answer; the stop
    # button was the same submit slot [C1.7]; no action bar while it showed [C2.6].
    seen = await js(tab, "window.__seen")
    assert len(seen["lengths"]) > 5
    assert seen["lengths"] == sorted(seen["lengths"])
    assert seen["sawStop"] and seen["stopId"] == "composer-submit-button"
    assert seen["streamingMark"]
    assert "barWhileStop" not in seen
    sent = await js(tab, "resources('/backend-api/f/conversation')")
    assert sent == [{"status": 200, "initiator": "fetch"}]


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
    # And they match what a mutation observer in the page saw: never before the page showed
    # it, and not long after (bounded generously: on a busy machine the observer's task can
    # run a good while later; the order, not the delay, is what this checks).
    for reported, observed in [
        (record.first_token_at, seen["first"]),
        (record.text_visible_at, seen["text"]),
        (record.completed_at, seen["done"]),
    ]:
        assert reported - 0.002 <= observed <= reported + 1.0


async def test_chatgpt_ignores_a_direct_dom_write(fakes: FakeSites, new_tab: NewTab) -> None:
    tab = await open_chatgpt(new_tab)
    # Phase 1's innerHTML write, even with a synthetic input event, changes the DOM only: the
    # editor's state stays empty, so no send button appears.
    await js(
        tab,
        f"(() => {{ const e = {CHATGPT_INPUT}; e.innerHTML = '<p>Ignored question</p>'; "
        "e.dispatchEvent(new Event('input', { bubbles: true })); })()",
    )
    assert await js(tab, f"{CHATGPT_INPUT}.textContent") == "Ignored question"
    assert await js(tab, f"{SEND} === null && !!{SPEECH}")
    await js(tab, f"{CHATGPT_INPUT}.textContent = 'Also ignored'")
    assert await js(tab, f"{SEND} === null")
    # Typing into the hidden fallback textarea does nothing either [C1.2].
    await js(
        tab,
        "(() => { const t = q('textarea[name=\"prompt-textarea\"]'); t.value = 'Fallback';"
        " t.dispatchEvent(new Event('input', { bubbles: true })); })()",
    )
    assert await js(tab, f"{SEND} === null")
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
    assert await js(tab, f"{SEND} === null")
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
    assert await js(tab, "q('textarea#prompt-textarea') !== null")
    await js(tab, f"{CHATGPT_INPUT}.value = 'Value without an event'")
    assert await js(tab, f"{SEND} === null")
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
    stop = await js(tab, f"[{STOP}.id, {STOP}.getAttribute('aria-label'), {SEND}, {SPEECH}]")
    assert stop == ["composer-submit-button", "Stop answering", None, None]
    await js(tab, f"{STOP}.click()")
    record = await completed(fakes.chatgpt, question)
    assert record.stopped
    shown = await js(tab, f"{LAST_ANSWER}.textContent.length")
    assert 0 < shown < len(record.answer)
    assert await js(tab, f"{STOP} === null && !!{SPEECH}")


async def test_chatgpt_other_stop_labels_are_not_the_stop_button(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    """Dictation and read-aloud say "Stop …" while active [C1.12]: a document-wide
    aria-label search for "stop" finds them when no answer is being written."""
    tab = await open_chatgpt(new_tab)
    await ask_chatgpt(tab, "Say something short")
    await completed(fakes.chatgpt, "Say something short")
    await js(tab, "q('button[data-start-dictation]').click()")
    await js(
        tab, f"{LAST_TURN}.querySelector('[data-testid=\"voice-play-turn-action-button\"]').click()"
    )
    labels = await js(
        tab, "qa('button[aria-label*=\"stop\" i]').map((b) => b.getAttribute('aria-label'))"
    )
    assert labels == ["Stop reading aloud", "Stop dictation"]
    assert await js(tab, f"{STOP} === null")
    scoped = (
        'form button[aria-label*="stop" i]:not([aria-label*="dictat" i])'
        ':not([aria-label*="voice" i]):not([aria-label*="read" i])'
    )
    assert await js(tab, f"qa({json.dumps(scoped)}).length") == 0


async def test_chatgpt_copy_puts_the_source_markdown_on_the_clipboard(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    markdown = (
        "# Title\n\nSome **bold** text and $x^2$.\n\n```js\nconsole.log(1);\n```\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |"
    )
    fakes.chatgpt.set_behaviour(Behaviour(answer=markdown))
    tab = await open_chatgpt(new_tab)
    await ask_chatgpt(tab, "Show me everything")
    await completed(fakes.chatgpt, "Show me everything")
    await capture_clipboard(tab)
    await js(tab, f"{LAST_TURN}.querySelector('[data-testid=\"copy-turn-action-button\"]').click()")
    assert await until(tab, "window.__copied.length && window.__copied") == [markdown]
    # A code block's own "Copy code" copies that block only.
    await js(tab, f"{LAST_ANSWER}.querySelector('pre button').click()")
    assert await until(tab, "window.__copied.length === 2 && window.__copied[1]") == (
        "console.log(1);"
    )


async def test_chatgpt_japanese_labels(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(locale="ja", chunk_interval_ms=40))
    tab = await open_chatgpt(new_tab)
    assert await js(tab, "document.documentElement.lang") == "ja"
    await ask_chatgpt(tab, "再帰について説明して")
    await completed(fakes.chatgpt, "再帰について説明して", "first_token_at")
    assert await js(tab, f"{STOP}.getAttribute('aria-label')") == "ストリーミングの停止"
    await completed(fakes.chatgpt, "再帰について説明して")


SKIP_BUTTON = (
    "(qa('[data-message-author-role=\"assistant\"] button')"
    ".find((b) => b.textContent === {label}) || null)"
)


@pytest.mark.parametrize(
    ("locale", "status", "skip_label", "time_label"),
    [
        ("en", "Thinking", "Answer now", "Thought for 1s"),
        ("ja", "思考中", "今すぐ回答", "思考時間: 1s"),
    ],
)
async def test_chatgpt_thinking_phase(
    fakes: FakeSites,
    new_tab: NewTab,
    locale: str,
    status: str,
    skip_label: str,
    time_label: str,
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(locale=locale, thinking_ms=400))  # type: ignore[arg-type]
    tab = await open_chatgpt(new_tab)
    question = "Design a shortest path algorithm for a graph"
    await ask_chatgpt(tab, question)
    skip = SKIP_BUTTON.format(label=json.dumps(skip_label))
    # Thinking [C4.1, C4.4, C2.4]: a status with its shimmer, the skip control, an empty
    # placeholder answer marked result-thinking; the stop button is up all along.
    thinking = await until(
        tab,
        f"{skip} && [q('[data-message-author-role=\"assistant\"] span.loading-shimmer')"
        f"?.textContent, {STOP} !== null, {LAST_ANSWER}.className, {LAST_ANSWER}.textContent]",
    )
    assert thinking[0] == status
    assert thinking[1] is True
    assert "result-thinking" in thinking[2].split()
    assert thinking[3] == ""
    record = await completed(fakes.chatgpt, question)
    assert record.first_token_at is not None
    assert record.first_token_at - record.received_at >= 0.4
    button = await js(
        tab,
        "(() => { const b = q('[data-message-author-role=\"assistant\"] > button[aria-expanded]');"
        " return [b.textContent, b.getAttribute('aria-expanded')]; })()",
    )
    assert button == [time_label, "false"]
    assert await js(tab, skip) is None
    assert await js(tab, "q('.loading-shimmer')") is None
    assert lines(await js(tab, f"answerText({LAST_ANSWER})")) == answer_lines(record.answer)


async def test_chatgpt_skip_thinking_answers_at_once(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(thinking_ms=600_000))
    tab = await open_chatgpt(new_tab)
    question = "Explain recursion in detail"
    await ask_chatgpt(tab, question)
    skip = SKIP_BUTTON.format(label=json.dumps("Answer now"))
    await until(tab, skip)
    await js(tab, f"({skip}).click()")
    record = await completed(fakes.chatgpt, question)
    assert lines(await js(tab, f"answerText({LAST_ANSWER})")) == answer_lines(record.answer)


async def test_chatgpt_stop_while_thinking_ends_with_stopped_thinking(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(thinking_ms=600_000))
    tab = await open_chatgpt(new_tab)
    question = "Think about this forever"
    await ask_chatgpt(tab, question)
    await until(tab, SKIP_BUTTON.format(label=json.dumps("Answer now")))
    await js(tab, f"{STOP}.click()")
    record = await completed(fakes.chatgpt, question)
    assert record.stopped
    # A terminal disclosure, no answer text, no action bar [C3.6].
    state = await js(
        tab,
        f"[qa('[data-message-author-role=\"assistant\"] button[aria-expanded]')"
        f".map((b) => b.textContent), {LAST_ANSWER}.textContent,"
        f" !!{LAST_TURN}.querySelector('.turn-action-controls'), !!{SPEECH}]",
    )
    assert state == [["Stopped thinking"], "", False, True]


async def test_chatgpt_background_tab_hides_text_until_focus_is_emulated(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    fakes.chatgpt.queue(Behaviour(answer="A hidden tab gets no frames.\n\n- so no text\n- yet"))
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
    assert lines(await js(tab, f"answerText({LAST_ANSWER})")) == answer_lines(record.answer)


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
    assert lines(await js(tab, f"answerText({LAST_ANSWER})")) == answer_lines(record.answer)


async def test_chatgpt_existing_conversation_loads_its_turns(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    conversation_id = fakes.chatgpt.create_conversation(
        [("First question", "First **answer**."), ("Second question", "- second answer")]
    )
    tab = await open_chatgpt(new_tab, f"https://chatgpt.com/c/{conversation_id}")
    turns = await until(
        tab,
        "(() => { const t = qa('[data-message-author-role]')"
        ".map((m) => m.innerText.trim()); return t.length === 4 && t; })()",
    )
    assert turns == ["First question", "First answer.", "Second question", "second answer"]
    await ask_chatgpt(tab, "Third question")
    record = await completed(fakes.chatgpt, "Third question")
    assert record.conversation_id == conversation_id
    assert await js(tab, "location.pathname") == f"/c/{conversation_id}"
    assert await js(tab, f"{TURNS}.length") == 6


async def test_chatgpt_reload_shows_the_conversation_so_far(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    tab = await open_chatgpt(new_tab)
    await ask_chatgpt(tab, "Remember this question")
    record = await completed(fakes.chatgpt, "Remember this question")
    await tab.navigate(f"https://chatgpt.com/c/{record.conversation_id}")
    await until(tab, f"{LAST_ANSWER}?.textContent")
    assert await js(tab, f"{TURNS}.length") == 2
    assert lines(await js(tab, f"answerText({LAST_ANSWER})")) == answer_lines(record.answer)


ERROR_TEXT = (
    "Something went wrong while generating the response. If this issue persists please "
    "contact us through our help center at help.openai.com."
)


async def test_chatgpt_error_turn_is_the_answer_text_and_retry(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    fakes.chatgpt.queue(Behaviour(state="error_turn"))
    tab = await open_chatgpt(new_tab)
    await ask_chatgpt(tab, "Will this fail?")
    failed = await completed(fakes.chatgpt, "Will this fail?")
    # The error is the assistant message's own text [C5.8], then a regenerate button [C2.8];
    # no alert, no error class, no action bar.
    shown = await until(tab, f"{LAST_ANSWER}?.innerText")
    assert shown.strip() == ERROR_TEXT
    chrome = await js(
        tab,
        f"[{LAST_TURN}.querySelectorAll('[role=alert], .error-message').length,"
        f" {LAST_TURN}.querySelector('button[data-testid*=regenerate]')?.textContent,"
        f" !!{LAST_TURN}.querySelector('.turn-action-controls'), {STOP} === null, !!{SPEECH}]",
    )
    assert chrome == [0, "Retry", False, True, True]
    await js(tab, "q('button[data-testid*=regenerate]').click()")
    answered = await fakes.chatgpt.wait_for_record_async(
        lambda r: r.id != failed.id and r.completed_at is not None, scaled(10.0)
    )
    assert answered.text == "Will this fail?"
    assert await js(tab, "qa('[data-turn=\"assistant\"]').length") == 1
    assert await js(tab, "q('button[data-testid*=regenerate]')") is None
    assert lines(await js(tab, f"answerText({LAST_ANSWER})")) == answer_lines(answered.answer)


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        ("en", "You've reached our limit of messages per hour. Please try again later."),
        ("de", "Nutzungslimit"),
        ("ja", None),  # no Japanese limit text is documented: only the 429 is asserted
    ],
)
async def test_chatgpt_usage_limit_is_a_429_and_a_dialog(
    fakes: FakeSites, new_tab: NewTab, locale: str, expected: str | None
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(locale=locale))  # type: ignore[arg-type]
    fakes.chatgpt.queue(Behaviour(locale=locale, state="rate_limited"))  # type: ignore[arg-type]
    tab = await open_chatgpt(new_tab)
    await ask_chatgpt(tab, "One more?")
    await completed(fakes.chatgpt, "One more?")
    dialog = await until(
        tab,
        "q('[role=dialog]') && [q('[role=dialog]').innerText, "
        "qa('[role=dialog] button').map((b) => b.textContent)]",
    )
    sent = await js(tab, "resources('/backend-api/f/conversation')")
    assert sent == [{"status": 429, "initiator": "fetch"}]
    if expected is not None:
        assert expected in dialog[0]
    if locale != "ja":
        assert dialog[1] == ["Got it"]
    assert await js(tab, "qa('[data-message-author-role=\"assistant\"]').length") == 0
    await js(tab, "q('[role=dialog] button').click()")
    assert await js(tab, "q('[role=dialog]')") is None


async def test_chatgpt_logged_out_keeps_the_composer_and_offers_log_in(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(state="logged_out"))
    tab = await new_tab(CHATGPT, active=True)
    # Guest mode [C5.1]: a composer, and the log-in CTAs; none of the logged-in signs [C5.2].
    found = await until(
        tab,
        f"{CHATGPT_INPUT} && [q('[data-testid=\"login-button\"]').textContent,"
        " q('[data-testid=\"signup-button\"]').textContent,"
        " !!q('[data-testid=\"accounts-profile-button\"]'),"
        f" !!q('nav[aria-label=\"Chat history\"]'), !!{SPEECH}]",
    )
    assert found == ["Log in", "Sign up for free", False, False, True]
    # Sending is refused (401): the no-auth login modal.
    await type_question(tab, "Hello?")
    await js(tab, f"{SEND}.click()")
    modal = await until(
        tab,
        "q('[data-testid=\"modal-no-auth-login\"][role=dialog]')"
        "?.querySelector('[data-testid=\"login-button\"]')?.textContent",
    )
    assert modal == "Log in"


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
    assert lines(await js(tab, f"answerText({LAST_ANSWER})")) == answer_lines(record.answer)


# -- the markdown both pages render -------------------------------------------------------------

GFM_SAMPLES = [
    "# One\n## Two\n\nsoft\nwrapped **line**\n\n1. a\n2. `b`\n- c\n\n```\n  x\n\ny\n```",
    "Unfinished ```\n```js\nstill streaming",
    "- level 1\n  - level 2\n    - level 3\n      1. ordered 4\n- back to 1\n\n"
    "1. one\n   * nested under one\n2. two",
    "- [ ] open task\n- [x] done task\n- plain",
    "| Left | Center | Right |\n|:-----|:------:|------:|\n| a | **b** | `c \\| d` |\n| | e |",
    "> quoted **text**\n> > nested quote\n>\n> - list in quote",
    "Above\n\n---\n\nBelow *em* and _em_ and ~~del~~ and snake_case_name.",
    "A [link](https://example.com) and ![image](data:image/gif;base64,R0lGODlhAQABAAAAACw=) and "
    "<https://auto.example>.",
    "Inline $x^2 + y^2$ and \\(a \\neq b\\), a price of $5 and $10.\n\n$$\nE = mc^2\n$$\n\n"
    "\\[\n\\int_0^1 x\\,dx\n\\]\n\n$$\\sum_i i$$",
    "Entities &lt;div&gt; &amp; &copy; 2025, not in `&lt;code&gt;`.",
    "Hard  \nbreak and\\\nbackslash break\nsoft one.",
    "Para\n\n    indented code\n      more\n\n\tafter a tab\n\nEnd",
    "1. First\n\n   Second paragraph of the item.\n\n       code in item\n\n2. Next",
    "***\n\n* **Bold lead:** text\n    * four-space nested\n* another",
    "Escaped \\*not em\\* and \\`not code\\`.",
    "# Heading with trailing hashes ##\n#NotAHeading\n####### seven",
    "```python\ndef f():\n\n    return 1\n```\n~~~\ntilde fence\n~~~",
]


def _random_markdown(rng: random.Random) -> str:
    """A document built from the subset's pieces, in random nesting and order."""
    words = [
        "alpha",
        "beta",
        "**bold**",
        "*em*",
        "`code`",
        "$x_1$",
        "[l](u)",
        "&amp;",
        "日本語",
        "a_b",
        "~~gone~~",
        "\\*",
        "x|y",
        "2 * 3",
        "<tag>",
        "__s__",
        "_e_",
    ]

    def inline() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(1, 6)))

    def block(depth: int) -> list[str]:
        kind = rng.choice(
            [
                "p",
                "p",
                "h",
                "list",
                "olist",
                "code",
                "quote",
                "table",
                "hr",
                "math",
                "task",
                "break",
            ]
        )
        if depth > 2 and kind in ("list", "olist", "quote", "task"):
            kind = "p"
        if kind == "h":
            return ["#" * rng.randint(1, 6) + " " + inline()]
        if kind == "code":
            lang = rng.choice(["", "python", "js"])
            return ["```" + lang, inline(), "", "  " + inline(), "```"]
        if kind == "hr":
            return [rng.choice(["---", "***", "___", "- - -"])]
        if kind == "math":
            return ["$$", "a^2 + b^2", "$$"]
        if kind == "break":
            return [inline() + "  ", inline() + "\\", inline()]
        if kind == "table":
            return ["| h1 | h2 |", "|---|:-:|", f"| {inline()} | {inline()} |", "| only |"]
        if kind == "quote":
            return ["> " + line if line else ">" for line in block(depth + 1)]
        if kind in ("list", "olist", "task"):
            out: list[str] = []
            for n in range(rng.randint(1, 3)):
                marker = f"{n + 1}." if kind == "olist" else "-"
                box = "[x] " if kind == "task" and rng.random() < 0.5 else ""
                out.append(f"{marker} {box}{inline()}")
                pad = " " * (len(marker) + 1)
                if rng.random() < 0.4:
                    out.extend(pad + line if line else "" for line in block(depth + 1))
                if rng.random() < 0.2:
                    out.append("")
            return out
        return [inline() for _ in range(rng.randint(1, 3))]

    doc: list[str] = []
    for _ in range(rng.randint(1, 6)):
        doc.extend(block(0))
        if rng.random() < 0.8:
            doc.append("")
    return "\n".join(doc)


def _corpus() -> list[str]:
    """The fidelity corpus's answers, if present (bridge/fakes/corpus)."""
    folder = Path(__file__).resolve().parents[2] / "bridge" / "fakes" / "corpus"
    texts = []
    for path in sorted(folder.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        if text.startswith("<!--"):
            text = text.split("\n", 1)[1] if "\n" in text else ""
        texts.append(text)
    return texts


@pytest.mark.parametrize("site", ["chatgpt", "gemini"])
async def test_pages_render_markdown_as_answer_lines_describes(
    fakes: FakeSites, new_tab: NewTab, site: str
) -> None:
    rng = random.Random(20261101)
    documents = [
        answer_markdown("Write a bash script that counts lines", Behaviour(length="long")),
        answer_markdown("TypeScriptの型ガードのコードを書いて"),
        *GFM_SAMPLES,
        *_corpus(),
        *(_random_markdown(rng) for _ in range(150)),
    ]
    tab = await open_chatgpt(new_tab)
    rendered = await tab.evaluate(
        f"(async () => {{ {HELPERS} const out = [];"
        f" for (const markdown of {json.dumps(documents)}) {{"
        " const box = document.createElement('div'); box.className = 'markdown';"
        " document.body.append(box);"
        f" const view = new FakeKit.MarkdownView(box, {{ site: {json.dumps(site)} }});"
        " await view.update(markdown); view.fill();"
        " out.push(answerText(box)); box.remove(); } return out; })()",
        await_promise=True,
        timeout=scaled(60),
    )
    for markdown, text in zip(documents, rendered, strict=True):
        assert lines(text) == answer_lines(markdown), markdown


async def test_pages_render_gfm_structures(fakes: FakeSites, new_tab: NewTab) -> None:
    markdown = (
        "- [x] done\n  - nested\n\n| a | b |\n|:-|-:|\n| 1 | 2 |\n\n> quote\n\n---\n\n"
        "Inline $x^2$ and ~~old~~ [link](https://example.com).\n\n$$\nE = mc^2\n$$\n\n"
        "```rust\nfn main() {}\n```"
    )
    tab = await open_chatgpt(new_tab)
    found = await tab.evaluate(
        "(async () => { const box = document.createElement('div'); document.body.append(box);"
        " const view = new FakeKit.MarkdownView(box, { site: 'gemini' });"
        f" await view.update({json.dumps(markdown)}); view.fill();"
        " const has = (s) => box.querySelectorAll(s).length;"
        " const out = {"
        "  task: has('ul > li > input[type=checkbox][disabled][checked]'),"
        "  nested: has('ul > li > ul > li'), table: has('table > thead > tr > th'),"
        "  right: box.querySelector('th:last-child').style.textAlign,"
        "  quote: has('blockquote > p'), hr: has('hr'), strike: has('s'), link: has('a[href]'),"
        "  tex: [...box.querySelectorAll('span.katex annotation[encoding=\"application/x-tex\"]')]"
        "    .map((a) => a.textContent),"
        "  display: has('span.katex-display > span.katex'),"
        "  code: box.querySelector('.code-block > .code-block-decoration')?.textContent,"
        "  lang: has('.code-block pre > code.language-rust') };"
        " box.remove(); return out; })()",
        await_promise=True,
    )
    assert found == {
        "task": 1,
        "nested": 1,
        "table": 2,
        "right": "right",
        "quote": 1,
        "hr": 1,
        "strike": 1,
        "link": 1,
        "tex": ["x^2", "E = mc^2"],
        "display": 1,
        "code": "rust",
        "lang": 1,
    }


# -- the wire readers both pages use -----------------------------------------------------------

DELTAS = [
    {"type": "resume_conversation_token", "token": "t"},  # typed: the page skips these
    {
        "p": "",
        "o": "add",
        "v": {
            "message": {
                "id": "m",
                "author": {"role": "assistant"},
                "content": {"content_type": "text", "parts": [""]},
                "status": "in_progress",
                "metadata": {"a": 1},
            },
            "conversation_id": "c",
        },
    },
    {"p": "/message/content/parts/0", "o": "append", "v": "Hel"},
    {"v": "lo"},
    {
        "p": "",
        "o": "patch",
        "v": [
            {"p": "/message/content/parts/0", "o": "append", "v": " world"},
            {"p": "/message/status", "o": "replace", "v": "finished_successfully"},
            {"p": "/message/metadata", "o": "append", "v": {"b": 2}},
        ],
    },
    {"p": "/message/end_turn", "o": "replace", "v": True},
]


async def test_chatgpt_delta_document_applies_the_v1_encoding(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    tab = await open_chatgpt(new_tab)
    doc = await js(
        tab,
        "(() => { const d = new FakeKit.DeltaDocument();"
        f" for (const delta of {json.dumps(DELTAS)})"
        "   if (typeof delta.type !== 'string') d.apply(delta);"
        " return d.doc; })()",
    )
    assert doc["conversation_id"] == "c"
    assert doc["message"]["content"]["parts"] == ["Hello world"]
    assert doc["message"]["status"] == "finished_successfully"
    assert doc["message"]["end_turn"] is True
    assert doc["message"]["metadata"] == {"a": 1, "b": 2}
    # The older whole-message form, and truncate/remove.
    other = await js(
        tab,
        "(() => { const d = new FakeKit.DeltaDocument();"
        " d.apply({ v: { message: { content: { parts: ['abcdef'] }, x: 1 } } });"
        " d.apply({ p: '/message/content/parts/0', o: 'truncate', v: 3 });"
        " d.apply({ p: '/message/x', o: 'remove' });"
        " return d.doc; })()",
    )
    assert other == {"message": {"content": {"parts": ["abc"]}}}


def _frames(payloads: list[Any], convention: str) -> str:
    body = ")]}'\n\n"
    for payload in payloads:
        text = json.dumps(payload, ensure_ascii=False)
        if convention == "hyg":  # n counts "\n<json>\n" in UTF-16 code units
            body += f"{len((chr(10) + text + chr(10)).encode('utf-16-le')) // 2}\n{text}\n"
        elif convention == "after-newline":  # n counts "<json>\n"
            body += f"{len((text + chr(10)).encode('utf-16-le')) // 2}\n{text}\n"
        else:  # n counts UTF-8 bytes
            body += f"{len(text.encode()) + 2}\n{text}\n"
    return body


@pytest.mark.parametrize("convention", ["hyg", "after-newline", "utf8-bytes"])
async def test_gemini_frame_reader_takes_any_length_convention(
    fakes: FakeSites, new_tab: NewTab, convention: str
) -> None:
    payloads: list[Any] = [
        [["wrb.fr", None, json.dumps([None, ["c_1", "r_1"], None, None, [["rc", ["日本 😀"]]]])]],
        [["wrb.fr", None, None, None, None, [3, None, [["type", [1037]]]]]],
        [["di", 80], ["af.httprm", 79, "x", 35]],
    ]
    body = _frames(payloads, convention)
    tab = await open_chatgpt(new_tab)
    # Fed in pieces of 7 characters, as progress events deliver a body.
    frames = await js(
        tab,
        f"(() => {{ const body = {json.dumps(body)}; const r = new FakeKit.FrameReader();"
        " const out = []; for (let i = 0; i < body.length; i += 7)"
        "   out.push(...r.push(body.slice(i, i + 7))); return out; })()",
    )
    assert frames == payloads


async def test_chatgpt_copy_falls_back_to_a_copy_event(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(answer="Copied **as markdown**."))
    tab = await open_chatgpt(new_tab)
    await ask_chatgpt(tab, "Copy me")
    await completed(fakes.chatgpt, "Copy me")
    # No clipboard API: the text travels in the copy event's data (C2.7), read where bridge's
    # copy capture reads it, on window, after the page's own listener.
    await js(
        tab,
        "(() => { window.__copied = [];"
        " Object.defineProperty(navigator.clipboard, 'writeText', { value: undefined,"
        "   configurable: true });"
        " window.addEventListener('copy', (e) =>"
        "   window.__copied.push(e.clipboardData.getData('text/plain')));"
        f" {LAST_TURN}.querySelector('[data-testid=\"copy-turn-action-button\"]').click(); }})()",
    )
    assert await until(tab, "window.__copied.length && window.__copied") == [
        "Copied **as markdown**."
    ]


# -- Gemini -------------------------------------------------------------------------------------

TEXTBOX = 'q(\'rich-textarea > div.ql-editor[contenteditable="true"][role="textbox"][aria-label]\')'
GEMINI_SEND = "(q('mat-icon[data-mat-icon-name=\"send\"]')?.closest('button') ?? null)"
GEMINI_STOP = "(q('mat-icon[data-mat-icon-name=\"stop\"]')?.closest('button') ?? null)"
MIC = "(q('mat-icon[data-mat-icon-name=\"mic\"]')?.closest('button') ?? null)"
RESPONSE_MARKDOWN = "qa('model-response message-content .markdown').pop()"
LAST_RESPONSE = "qa('model-response').pop()"
FOOTER_DONE = f"{LAST_RESPONSE}?.querySelector('.response-footer.complete')"


async def open_gemini(new_tab: NewTab, url: str = GEMINI) -> CdpSession:
    tab = await new_tab(url, active=True)
    await until(tab, TEXTBOX)
    return tab


async def ask_gemini(tab: CdpSession, text: str) -> None:
    await js(tab, f"{TEXTBOX}.focus()")
    await tab.send("Input.insertText", {"text": text})
    assert await js(tab, f"{GEMINI_SEND}.getAttribute('aria-label')") is not None
    await js(tab, f"{GEMINI_SEND}.click()")


async def test_gemini_lives_in_the_light_dom(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.gemini.set_behaviour(Behaviour(chunk_chars=40, chunk_interval_ms=30))
    tab = await open_gemini(new_tab)
    assert await js(tab, "qa('*').some((e) => e.shadowRoot)") is False
    # Empty box: the microphone, no send button [G1.4].
    assert await js(tab, f"[{TEXTBOX}.getAttribute('aria-label'), {GEMINI_SEND}, !!{MIC}]") == [
        "Enter a prompt for Gemini",
        None,
        True,
    ]
    question = "Explain recursion with an example"
    await js(tab, f"{TEXTBOX}.focus()")
    await tab.send("Input.insertText", {"text": question})
    send = await js(
        tab, f"[{GEMINI_SEND}.getAttribute('aria-label'), {GEMINI_SEND}.className, {MIC}]"
    )
    assert send == ["Send message", "send-button", None]
    await js(tab, f"{GEMINI_SEND}.click()")
    await completed(fakes.gemini, question, "first_token_at")
    # While streaming: the same button in its stop state [G1.5], the footer not complete.
    stop = await js(
        tab,
        f"[{GEMINI_STOP}.getAttribute('aria-label'), {GEMINI_STOP}.classList.contains('stop'),"
        f" {GEMINI_STOP}.classList.contains('send-button'),"
        " q('mat-icon[fonticon=\"stop\"]') !== null, !!" + FOOTER_DONE + f", {MIC}]",
    )
    assert stop == ["Stop response", True, True, True, False, None]
    record = await completed(fakes.gemini, question)

    structure = await js(
        tab,
        '(() => { const box = q(\'infinite-scroller[data-test-id="chat-history-container"]'
        "#chat-history.chat-history');"
        " const exchange = box.querySelector(':scope > div.conversation-container[id]');"
        " const content = exchange.querySelector('model-response message-content"
        ".model-response-text');"
        " return [qa('user-query').length, qa('model-response').length,"
        "  exchange.querySelector('user-query .query-text > p.query-text-line').textContent,"
        "  content.id, content.querySelector(':scope > div.markdown').id,"
        "  exchange.querySelector('.response-container-header .cdk-visually-hidden').textContent,"
        "  exchange.querySelector('user-query .cdk-visually-hidden').textContent,"
        "  box.parentElement.className]; })()",
    )
    assert structure == [
        1,
        1,
        question,
        f"message-content-id-r_{record.id}",
        f"model-response-message-contentr_{record.id}",
        "Gemini said",
        "You said",
        "chat-history-scroll-container",
    ]
    footer = await js(tab, f"[...{FOOTER_DONE}.querySelectorAll('button')].map((b) => b.ariaLabel)")
    assert footer == ["Good response", "Bad response"]
    assert await js(tab, f"{GEMINI_STOP} === null && {GEMINI_SEND} === null && !!{MIC}")
    assert lines(await js(tab, f"answerText({RESPONSE_MARKDOWN})")) == answer_lines(record.answer)
    assert await js(tab, "location.pathname") == f"/app/{record.conversation_id}"
    assert record.first_token_at is not None and record.completed_at is not None
    assert record.received_at - 0.01 <= record.first_token_at <= record.completed_at
    # Sent with XMLHttpRequest [G7.1].
    assert await js(tab, "resources('/StreamGenerate')") == [
        {"status": 200, "initiator": "xmlhttprequest"}
    ]


async def test_gemini_takes_inner_text_with_input_events(fakes: FakeSites, new_tab: NewTab) -> None:
    tab = await open_gemini(new_tab)
    await js(
        tab,
        f"(() => {{ const box = {TEXTBOX}; box.innerText = 'Set through innerText'; "
        "box.dispatchEvent(new Event('input', { bubbles: true })); "
        "box.dispatchEvent(new Event('change', { bubbles: true })); })()",
    )
    assert await js(tab, f"{GEMINI_SEND}.getAttribute('aria-label')") == "Send message"
    await js(tab, f"{GEMINI_SEND}.click()")
    await completed(fakes.gemini, "Set through innerText")
    assert await js(tab, f"{TEXTBOX}.textContent") == ""


async def test_gemini_japanese_labels(fakes: FakeSites, new_tab: NewTab) -> None:
    # Small chunks: the answer streams for seconds, so its stop button is there to be read.
    fakes.gemini.set_behaviour(Behaviour(locale="ja", chunk_interval_ms=40, chunk_chars=4))
    tab = await open_gemini(new_tab)
    await js(tab, f"{TEXTBOX}.focus()")
    await tab.send("Input.insertText", {"text": "型ガードとは"})
    assert await js(tab, f"{GEMINI_SEND}.getAttribute('aria-label')") == "プロンプトを送信"
    await js(tab, f"{GEMINI_SEND}.click()")
    stop_label = await until(tab, f"{GEMINI_STOP} && {GEMINI_STOP}.getAttribute('aria-label')")
    assert stop_label == "回答を停止"
    await completed(fakes.gemini, "型ガードとは")
    labels = await js(tab, f"[...{FOOTER_DONE}.querySelectorAll('button')].map((b) => b.ariaLabel)")
    assert labels == ["良い回答", "悪い回答"]


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
    assert await js(tab, f"{GEMINI_STOP} !== null && !{FOOTER_DONE}")
    shown = await js(tab, f"answerText({RESPONSE_MARKDOWN})")
    assert lines(shown) == answer_lines(record.answer[: Behaviour().chunk_chars])


async def test_gemini_stop_button_stops_the_answer(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.gemini.set_behaviour(Behaviour(length="long", chunk_chars=8, chunk_interval_ms=50))
    tab = await open_gemini(new_tab)
    question = "Explain streaming in depth"
    await ask_gemini(tab, question)
    await completed(fakes.gemini, question, "first_token_at")
    await js(tab, f"{GEMINI_STOP}.click()")
    record = await completed(fakes.gemini, question)
    assert record.stopped
    # "You stopped this response" in the turn [G3.6], not inside the answer's markdown.
    assert "You stopped this response" in await js(tab, f"{LAST_RESPONSE}.innerText")
    assert "You stopped" not in await js(tab, f"{RESPONSE_MARKDOWN}.innerText")
    assert await js(tab, f"!!{FOOTER_DONE} && {GEMINI_STOP} === null && !!{MIC}")
    shown = await js(tab, f"{RESPONSE_MARKDOWN}.textContent.length")
    assert 0 < shown < len(record.answer)


async def test_gemini_error_is_an_ordinary_reply(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.gemini.queue(Behaviour(state="error_turn"))
    tab = await open_gemini(new_tab)
    await ask_gemini(tab, "Break, please")
    await completed(fakes.gemini, "Break, please")
    # [G5.4]: the reply's text, no alert, a complete footer like any reply.
    reply = await until(tab, f"{FOOTER_DONE} && {RESPONSE_MARKDOWN}.innerText")
    assert reply.strip() == "Something went wrong. Please try again."
    assert await js(tab, f"{LAST_RESPONSE}.querySelectorAll('[role=alert]').length") == 0
    assert await js(tab, f"{GEMINI_STOP} === null && !!{MIC}")


async def test_gemini_usage_limit_is_a_reply_after_wire_code_1037(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    fakes.gemini.queue(Behaviour(state="rate_limited"))
    tab = await open_gemini(new_tab)
    await ask_gemini(tab, "Again?")
    await completed(fakes.gemini, "Again?")
    reply = await until(tab, f"{FOOTER_DONE} && {RESPONSE_MARKDOWN}.innerText")
    assert "reached your limit" in reply and "try again later" in reply  # [G5.5]
    assert await js(tab, f"{LAST_RESPONSE}.querySelectorAll('[role=alert]').length") == 0
    assert await js(tab, f"{GEMINI_STOP} === null")


async def test_gemini_existing_conversation_loads_its_turns(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    conversation_id = fakes.gemini.create_conversation([("Earlier question", "Earlier answer")])
    tab = await open_gemini(new_tab, f"https://gemini.google.com/app/{conversation_id}")
    await until(tab, "qa('model-response').length === 1")
    assert await js(tab, f"!!{FOOTER_DONE} && {RESPONSE_MARKDOWN}.innerText") == "Earlier answer"
    await ask_gemini(tab, "Later question")
    record = await completed(fakes.gemini, "Later question")
    assert record.conversation_id == conversation_id
    assert await js(tab, "qa('user-query').length") == 2


async def test_gemini_logged_out_shows_sign_in(fakes: FakeSites, new_tab: NewTab) -> None:
    fakes.gemini.set_behaviour(Behaviour(state="logged_out"))
    tab = await new_tab(GEMINI, active=True)
    link = await until(
        tab,
        "(() => { const a = q('a[href^=\"https://accounts.google.com/ServiceLogin\"]');"
        " return a && a.checkVisibility() && a.textContent; })()",
    )
    assert link == "Sign in"
    assert await js(tab, f"{TEXTBOX} === null")


async def test_gemini_slow_hydration_shows_the_input_late(
    fakes: FakeSites, new_tab: NewTab
) -> None:
    fakes.gemini.set_behaviour(Behaviour(hydration_ms=800))
    tab = await new_tab(GEMINI, active=True)
    present, now = await js(tab, f"[{TEXTBOX} !== null, performance.now()]")
    assert present == (now >= 800)
    assert await until(tab, f"{TEXTBOX} && performance.now()") >= 800
