"""The in-page script (page.js) against evidence-shaped pages.

Each page below is written from rows of the site-facts compilation (SITE-FACTS, cited as
``[C1.5]`` / ``[G2.7]``; docs/sites.md names the sources), not from the fakes: a belief the
fake and the detector share would prove nothing. The script is built from the shipped packs
(bridge/providers/packs) and injected into a blank page whose body is the snippet.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bridge.cdp.session import CdpSession
from bridge.providers.ask_script import PAGE_JS, current_script
from bridge.providers.pack import builtin_pack

pytestmark = pytest.mark.e2e


async def _page(
    tab: CdpSession, pages: str, html: str, script: str = "", source: str = PAGE_JS
) -> None:
    await tab.navigate(f"{pages}/")
    await tab.evaluate(f"document.body.innerHTML = {json.dumps(html)}; {script}")
    await tab.evaluate(source)


async def _call(tab: CdpSession, function: str, *args: Any) -> Any:
    arguments = ", ".join(json.dumps(a) for a in args)
    return await tab.evaluate(f"window.__bridgePage.{function}({arguments})", await_promise=True)


async def _observe(tab: CdpSession, pages: str, provider: str, html: str) -> dict[str, Any]:
    await _page(tab, pages, html)
    observed = await _call(tab, "observe", provider)
    assert isinstance(observed, dict)
    return observed


async def _extract(
    tab: CdpSession, pages: str, provider: str, html: str, script: str = ""
) -> dict[str, str]:
    await _page(tab, pages, html, script)
    result = await _call(tab, "extract", provider)
    assert isinstance(result, dict)
    return result


# -- ChatGPT page parts (SITE-FACTS C1, C2) ---------------------------------------------------

# [C1.1] the ProseMirror composer; [C1.2] the hidden fallback textarea next to it; [C1.10,
# C1.11] the voice-mode button in the send slot while the composer is empty; [C1.14] the form.
CG_COMPOSER = (
    '<form data-type="unified-composer">'
    '<textarea name="prompt-textarea" class="wcDTda_fallbackTextarea" style="display:none">'
    "</textarea>"
    '<div id="prompt-textarea" class="ProseMirror" contenteditable="true" role="textbox">'
    "<p>{text}</p></div>"
    '<div data-testid="composer-speech-button-container">{slot}</div>'
    "</form>"
)
SPEECH = '<button data-testid="composer-speech-button" aria-label="Start voice mode"></button>'
SEND = '<button id="composer-submit-button" data-testid="send-button" aria-label="Send prompt">'
STOP = '<button id="composer-submit-button" data-testid="stop-button" aria-label="Stop answering">'


def cg_composer(text: str = "", slot: str = SPEECH) -> str:
    return CG_COMPOSER.format(text=text, slot=slot)


def cg_turn(body: str, n: int = 2, tag: str = "section", extra: str = "") -> str:
    """[C2.1] a turn wrapper (article or section) with [C2.2] data-turn, [C2.5] the hidden
    heading, and [C2.3] the assistant message with its id."""
    return (
        f'<{tag} data-testid="conversation-turn-{n}" data-turn="assistant">'
        '<h6 class="sr-only">ChatGPT said:</h6>'
        f'<div data-message-author-role="assistant" data-message-id="m{n}">{body}</div>'
        f"{extra}</{tag}>"
    )


def cg_user(text: str, n: int = 1) -> str:
    return (
        f'<article data-testid="conversation-turn-{n}" data-turn="user">'
        '<h5 class="sr-only">You said:</h5>'
        f'<div data-message-author-role="user" data-message-id="u{n}">{text}</div></article>'
    )


def markdown(html: str) -> str:
    """[C2.4] the answer container's class list."""
    return f'<div class="markdown prose dark:prose-invert w-full wrap-break-word">{html}</div>'


RICH = cg_turn(
    '<button aria-expanded="false">Thought for 17s</button>'
    + markdown(
        "<h2>Deep copy</h2>"
        "<p>Use <code>structuredClone</code> for <strong>plain</strong> data.</p>"
        "<ul><li>fast</li><li>safe<ul><li>nested</li></ul></li></ul>"
        '<ol start="3"><li>three</li><li>four</li></ol>'
        '<pre><div>javascript</div><code class="language-javascript">const b = structuredClone(a);\n'
        "console.log(b);\n</code></pre>"
        "<blockquote><p>quoted</p></blockquote>"
        "<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>"
    ),
    tag="article",
)


async def test_chatgpt_markdown_keeps_structure_and_drops_buttons(
    tab: CdpSession, pages: str
) -> None:
    found = await _extract(tab, pages, "chatgpt", RICH)
    assert found["method"] == "markdown"
    assert found["text"] == (
        "## Deep copy\n\n"
        "Use `structuredClone` for **plain** data.\n\n"
        "- fast\n- safe\n  - nested\n\n"
        "3. three\n4. four\n\n"
        "```javascript\nconst b = structuredClone(a);\nconsole.log(b);\n```\n\n"
        "> quoted\n\n"
        "| k | v |\n|---|---|\n| a | 1 |"
    )
    assert "Thought for" not in found["text"]


@pytest.mark.parametrize(
    ("html", "method", "text"),
    [
        pytest.param(
            cg_turn('<div class="prose-x prose"><p>From prose.</p></div>'),
            "prose",
            "From prose.",
            id="prose",
        ),
        pytest.param(
            cg_turn("<div><p>One.</p><p>Two.</p></div>"),
            "paragraphs",
            "One.\n\nTwo.",
            id="paragraphs",
        ),
        pytest.param(
            # [C2.1, C2.5] a section wrapper: its hidden heading is no answer text.
            cg_turn("<span>Bare text</span><button>Copy</button>"),
            "article_text",
            "Bare text",
            id="article-text-section-turn",
        ),
    ],
)
async def test_chatgpt_extraction_fallbacks_in_documented_order(
    tab: CdpSession, pages: str, html: str, method: str, text: str
) -> None:
    found = await _extract(tab, pages, "chatgpt", html)
    assert (found["method"], found["text"]) == (method, text)


async def test_chatgpt_body_text_cuts_at_the_last_turn_label_but_not_at_the_start(
    tab: CdpSession, pages: str
) -> None:
    html = (
        "<main><p>You said: first question</p><p>You said: second</p><p>The answer text.</p></main>"
    )
    found = await _extract(tab, pages, "chatgpt", html)
    assert found["method"] == "body_text"
    assert found["text"].endswith("The answer text.") and "first question" not in found["text"]


async def test_chatgpt_counts_messages_by_author_role_in_article_or_section_turns(
    tab: CdpSession, pages: str
) -> None:
    """[C2.1] article or section wrappers; [C2.3] counting by data-message-author-role."""
    html = (
        cg_user("Q1", 1)
        + cg_turn(markdown("<p>A1</p>"), 2, "article")
        + cg_user("Q2", 3)
        + cg_turn(markdown("<p>Second answer.</p>"), 4, "section")
        + cg_composer()
    )
    observed = await _observe(tab, pages, "chatgpt", html)
    assert (observed["user_count"], observed["assistant_count"]) == (2, 2)
    assert observed["last_assistant_text_len"] == len("Second answer.")
    assert (await _call(tab, "extract", "chatgpt"))["text"] == "Second answer."


# -- ChatGPT composer: input, send, stop, speech (C1) ------------------------------------------


async def test_chatgpt_input_is_the_prosemirror_never_the_hidden_textarea(
    tab: CdpSession, pages: str
) -> None:
    """[C1.2] a plain textarea selector would pick the hidden fallback and typing would fail."""
    await _page(tab, pages, cg_composer())
    await tab.evaluate("document.querySelector('textarea').value = 'stale hidden text'")
    assert (await _call(tab, "observe", "chatgpt"))["input_empty"] is True
    assert not await _call(tab, "inputHolds", "chatgpt", "stale hidden text")
    assert await _call(tab, "focusInput", "chatgpt")
    assert await tab.evaluate("document.activeElement.id") == "prompt-textarea"
    await tab.evaluate("document.querySelector('#prompt-textarea p').textContent = 'Hi there'")
    assert await _call(tab, "inputHolds", "chatgpt", "Hi there")


async def test_chatgpt_empty_composer_shows_the_speech_button_not_send(
    tab: CdpSession, pages: str
) -> None:
    """[C1.10, C1.11] empty composer: the voice-mode button, no send button in the DOM."""
    observed = await _observe(tab, pages, "chatgpt", cg_composer())
    assert observed["speech_button"] is True
    assert observed["send_button_present"] is False
    assert observed["has_stop_button"] is False
    assert observed["input_empty"] is True


async def test_chatgpt_send_button_by_test_id_and_label(tab: CdpSession, pages: str) -> None:
    """[C1.5] send-button test id; the aria-label fallback ("Send prompt") only on a button
    that is no voice control."""
    observed = await _observe(tab, pages, "chatgpt", cg_composer("Hi", SEND + "</button>"))
    assert observed["send_button_present"] and observed["send_button_enabled"]
    assert observed["speech_button"] is False
    labelled = '<button aria-label="Send prompt"></button>'
    observed = await _observe(tab, pages, "chatgpt", cg_composer("Hi", labelled))
    assert observed["send_button_present"] is True
    disabled = SEND.replace("<button", '<button disabled=""') + "</button>"
    observed = await _observe(tab, pages, "chatgpt", cg_composer("", disabled))
    assert observed["send_button_present"] and not observed["send_button_enabled"]  # [C1.6]


@pytest.mark.parametrize(
    "slot",
    [
        pytest.param(STOP + "</button>", id="stop-button-test-id"),
        pytest.param('<div data-testid="composer-stop-button"><button></button></div>', id="C1.9"),
        pytest.param('<button aria-label="Stop streaming"></button>', id="label-stop-streaming"),
        pytest.param('<button aria-label="ストリーミングの停止"></button>', id="label-ja"),
        pytest.param('<button aria-label="Stop generating"></button>', id="label-old"),
    ],
)
async def test_chatgpt_stop_button(tab: CdpSession, pages: str, slot: str) -> None:
    """[C1.7, C1.8, C1.9] the stop button in the send slot, by test id or label."""
    observed = await _observe(
        tab, pages, "chatgpt", cg_turn(markdown("<p>Hal</p>")) + cg_composer("", slot)
    )
    assert observed["has_stop_button"] is True
    assert observed["speech_button"] is False  # the slot holds stop, not the idle voice button


async def test_chatgpt_read_aloud_and_dictation_stops_are_not_the_stop_button(
    tab: CdpSession, pages: str
) -> None:
    """[C1.12] a document-wide `aria-label*=stop` matches read-aloud / dictation / voice
    controls and blocks completion forever; [C2.6] "Read aloud" in the turn's action bar."""
    slot = (
        SPEECH
        + '<button data-start-dictation aria-label="Stop dictation"></button>'
        + '<button aria-label="Stop voice mode"></button>'
    )
    turn = cg_turn(
        markdown("<p>Answer.</p>"),
        extra=(
            '<div class="turn-action-controls">'
            '<button data-testid="voice-play-turn-action-button" aria-label="Stop reading aloud">'
            "</button>"
            '<button aria-label="Stop answering"></button></div>'  # not in the composer scope
        ),
    )
    observed = await _observe(tab, pages, "chatgpt", turn + cg_composer("", slot))
    assert observed["has_stop_button"] is False
    assert observed["speech_button"] is True


# -- ChatGPT thinking (C3.5, C3.6, C4) ----------------------------------------------------------


async def test_chatgpt_thinking_status_and_skip_control(tab: CdpSession, pages: str) -> None:
    """[C4.1] a status label and the `.result-thinking` placeholder; [C4.4] "Answer now";
    [C3.5] the placeholder turn "ChatGPT said: Pro thinking Answer now"."""
    turn = cg_turn(
        '<button aria-expanded="false"><span>Pro thinking</span></button>'
        '<div class="markdown prose result-thinking"></div>'
        "<button>Answer now</button>"
    )
    observed = await _observe(tab, pages, "chatgpt", turn + cg_composer("", STOP + "</button>"))
    assert observed["still_generating_text"] is True
    assert observed["has_skip_thinking_button"] is True
    assert observed["thinking_complete_marker"] is False
    assert observed["last_assistant_text_len"] == 0
    assert observed["error_turn"] is False
    assert await _call(tab, "clickSkipThinking")  # any site's skip control, as the loop calls it


@pytest.mark.parametrize(
    "label",
    ["Thinking", "Reasoning…", "Searching the web", "思考中", "回答を生成しています"],
)
async def test_chatgpt_thinking_labels(tab: CdpSession, pages: str, label: str) -> None:
    """[C4.1] present-tense status labels, English and Japanese."""
    turn = cg_turn(f'<div class="text-token-text-secondary"><span>{label}</span></div>')
    observed = await _observe(tab, pages, "chatgpt", turn + cg_composer("", STOP + "</button>"))
    assert observed["still_generating_text"] is True


@pytest.mark.parametrize(
    "summary",
    ["Thought for 12s", "Thought for a few seconds", "Thought for 1m 5s", "思考時間: 17s"],
)
async def test_chatgpt_thinking_summary_marks_thinking_done(
    tab: CdpSession, pages: str, summary: str
) -> None:
    """[C4.2, C4.3] the summary disclosure button stays after thinking; a word "Thinking"
    inside the answer is answer text, not a status."""
    turn = cg_turn(
        f'<button aria-expanded="false">{summary}</button>'
        + markdown("<p>Thinking</p><p>is what the answer is about.</p>")
    )
    observed = await _observe(tab, pages, "chatgpt", turn + cg_composer())
    assert observed["thinking_complete_marker"] is True
    assert observed["still_generating_text"] is False


@pytest.mark.parametrize("label", ["Thinking failed", "Stopped thinking"])
async def test_chatgpt_thinking_that_ended_without_an_answer_is_an_error_turn(
    tab: CdpSession, pages: str, label: str
) -> None:
    """[C3.6] a collapsed "Thinking failed" / "Stopped thinking" with no answer."""
    turn = cg_turn(f'<button aria-expanded="false">{label}</button><div class="markdown"></div>')
    observed = await _observe(tab, pages, "chatgpt", turn + cg_composer())
    assert observed["error_turn"] is True
    assert (await _call(tab, "notices", "chatgpt"))["error"] == label
    answered = cg_turn(f'<button aria-expanded="false">{label}</button>' + markdown("<p>Yes.</p>"))
    assert (await _observe(tab, pages, "chatgpt", answered + cg_composer()))["error_turn"] is False


# -- ChatGPT login (C5.1-C5.4) ------------------------------------------------------------------

LOGIN_CTAS = (
    '<header><button data-testid="login-button">Log in</button>'
    '<button data-testid="signup-button">Sign up for free</button></header>'
)


async def test_chatgpt_guest_page_with_a_composer_is_logged_out(
    tab: CdpSession, pages: str
) -> None:
    """[C5.1] logged out, chatgpt.com still renders a usable composer (guest mode)."""
    observed = await _observe(tab, pages, "chatgpt", LOGIN_CTAS + cg_composer())
    assert observed["login_wall"] is True
    assert await _call(tab, "whenReady", "chatgpt", 2000) == "login"


async def test_chatgpt_no_auth_login_modal_is_logged_out(tab: CdpSession, pages: str) -> None:
    modal = (
        '<div data-testid="modal-no-auth-login" role="dialog"><p>Log in to get answers</p></div>'
    )
    assert (await _observe(tab, pages, "chatgpt", modal + cg_composer()))["login_wall"] is True


async def test_chatgpt_profile_button_means_logged_in(tab: CdpSession, pages: str) -> None:
    """[C5.2] the accounts profile button; a chat titled "Login…" changes nothing."""
    html = (
        '<nav aria-label="Chat history"><a data-testid="history-item-0">Login page bug</a></nav>'
        '<button data-testid="accounts-profile-button">Me</button>' + cg_composer()
    )
    observed = await _observe(tab, pages, "chatgpt", html)
    assert observed["login_wall"] is False
    assert await _call(tab, "whenReady", "chatgpt", 2000) == "ready"


async def test_chatgpt_login_ctas_with_the_profile_button_are_not_a_wall(
    tab: CdpSession, pages: str
) -> None:
    html = LOGIN_CTAS + '<button data-testid="accounts-profile-button">Me</button>' + cg_composer()
    assert (await _observe(tab, pages, "chatgpt", html))["login_wall"] is False


# -- ChatGPT rate limits (C5.7, C5.9) and error turns (C5.8) ------------------------------------


@pytest.mark.parametrize(
    "notice",
    [
        "You've reached our limit of messages per hour. Please try again later.",
        "You've reached your GPT-4o limit.",
        "You've hit the Free plan limit for GPT-5.",
        "Too many requests in 1 hour. Try again later.",
        "You're making requests too quickly. We've temporarily limited access to your "
        "conversations. Please wait a few minutes before trying again.",
        "You've reached the current usage cap for GPT-4, please try again after 3:00 PM.",
        "Du hast dein Nutzungslimit erreicht.",
    ],
)
async def test_chatgpt_usage_limit_texts_of_the_evidence_are_rate_limits(
    tab: CdpSession, pages: str, notice: str
) -> None:
    """Each text SITE-FACTS C5.7 records (docs/sites.md#rate-limit), English and German."""
    observed = await _observe(tab, pages, "chatgpt", f"<div role=alert>{notice}</div>")
    assert observed["rate_limited"] is True, notice


@pytest.mark.parametrize(
    "surface",
    [
        '<div role="dialog"><h2>Too many requests</h2><p>{t}</p><button>Got it</button></div>',
        '<div class="toast-root"><div>{t}</div></div>',
        '<div class="text-error text-sm">{t}</div>',
        '<div aria-live="assertive">{t}</div>',
    ],
)
async def test_chatgpt_limit_surfaces(tab: CdpSession, pages: str, surface: str) -> None:
    """[C5.9] the surfaces oracle and chatgpt.js scan; [C5.7] the dialog "Got it"."""
    text = (
        "You're making requests too quickly. We've temporarily limited access to your "
        "conversations. Please wait a few minutes before trying again."
    )
    observed = await _observe(tab, pages, "chatgpt", surface.format(t=text) + cg_composer())
    assert observed["rate_limited"] is True
    notices = await _call(tab, "notices", "chatgpt")
    assert "making requests too quickly" in notices["rateLimit"]
    assert notices["rateLimitResets"] == ""


@pytest.mark.parametrize(
    ("notice", "resets"),
    [
        ("You've hit the Free plan limit for GPT-5. You can try again after 3:45 PM.", "3:45 PM"),
        ("You've reached our limit of messages per hour. Please try again in 2 hours.", "2 hours"),
        (
            "You've reached your GPT-4o limit. Responses will use another model until 11:20 AM.",
            "11:20 AM",
        ),
        ("You've reached our limit of messages per hour. Please try again later.", ""),
    ],
)
async def test_rate_limit_reset_time_is_a_separate_field(
    tab: CdpSession, pages: str, notice: str, resets: str
) -> None:
    await _page(tab, pages, f'<div role="alert">{notice}</div>')
    notices = await _call(tab, "notices", "chatgpt")
    assert (notices["rateLimit"], notices["rateLimitResets"]) == (notice, resets)


async def test_an_ordinary_alert_is_no_rate_limit(tab: CdpSession, pages: str) -> None:
    observed = await _observe(tab, pages, "chatgpt", "<div role=alert>Copied to clipboard</div>")
    assert observed["rate_limited"] is False


async def test_an_answer_about_rate_limits_is_no_rate_limit(tab: CdpSession, pages: str) -> None:
    """A live region around the conversation holds answers, not notices."""
    answer = markdown("<p>HTTP 429 means too many requests: the client sent them too quickly.</p>")
    html = f'<main><div role="status" aria-live="polite">{cg_turn(answer)}</div></main>'
    assert (await _observe(tab, pages, "chatgpt", html + cg_composer()))["rate_limited"] is False


CHATGPT_ERRORS = [
    "Something went wrong. If this issue persists please contact us through our help center "
    "at help.openai.com.",
    "Something went wrong while generating the response. If this issue persists please contact "
    "us through our help center at help.openai.com.",
    "There was an error generating a response",
    "Our systems have detected unusual traffic from your computer network. Please try again later.",
    "A network error occurred. Please check your connection and try again. If this issue "
    "persists please contact us through our help center at help.openai.com.",
]


@pytest.mark.parametrize("error", CHATGPT_ERRORS)
async def test_chatgpt_error_text_as_the_assistant_message_is_an_error_turn(
    tab: CdpSession, pages: str, error: str
) -> None:
    """[C5.8] error turns are the assistant message itself (GPT-T matches the whole trimmed
    answer); [C2.8] with a Regenerate button."""
    regenerate = '<button data-testid="regenerate-thread-error-button">Regenerate</button>'
    html = cg_turn(markdown(f"<p>{error}</p>")) + regenerate + cg_composer()
    observed = await _observe(tab, pages, "chatgpt", html)
    assert observed["error_turn"] is True
    assert (await _call(tab, "notices", "chatgpt"))["error"] == error


async def test_chatgpt_error_split_over_paragraphs_is_still_the_error(
    tab: CdpSession, pages: str
) -> None:
    body = markdown(
        "<p>Something went wrong.</p><p>If this issue persists please contact us through our "
        "help center at help.openai.com.</p>"
    )
    assert (await _observe(tab, pages, "chatgpt", cg_turn(body) + cg_composer()))["error_turn"]


async def test_chatgpt_error_with_more_after_it_needs_the_regenerate_button(
    tab: CdpSession, pages: str
) -> None:
    body = markdown("<p>There was an error generating a response. Request ID: abc-123</p>")
    assert (await _observe(tab, pages, "chatgpt", cg_turn(body) + cg_composer()))[
        "error_turn"
    ] is False
    regenerate = '<button data-testid="regenerate-button">Regenerate</button>'
    observed = await _observe(tab, pages, "chatgpt", cg_turn(body) + regenerate + cg_composer())
    assert observed["error_turn"] is True


@pytest.mark.parametrize(
    "answer",
    [
        "If the deploy log says something went wrong, restart the service and check the "
        "database connection.",
        "<strong>Something went wrong.</strong> is a message your app shows; here is how to "
        "find the cause.",
    ],
)
async def test_an_answer_mentioning_an_error_is_no_error_turn(
    tab: CdpSession, pages: str, answer: str
) -> None:
    html = cg_turn(markdown(f"<p>{answer}</p>")) + cg_composer()
    assert (await _observe(tab, pages, "chatgpt", html))["error_turn"] is False


# -- Cloudflare (C5.5) --------------------------------------------------------------------------


async def test_cloudflare_interstitial_is_a_challenge(tab: CdpSession, pages: str) -> None:
    await _page(
        tab,
        pages,
        '<div id="challenge-running"><h1>Verify you are human</h1></div>',
        "document.title = 'Just a moment...';",
    )
    assert await _call(tab, "whenReady", "chatgpt", 2000) == "challenge"
    assert await _call(tab, "whenReady", "gemini", 2000) == "challenge"


async def test_challenge_platform_script_on_a_normal_page_is_no_challenge(
    tab: CdpSession, pages: str
) -> None:
    """[C5.5] pitfall: the challenge-platform script is on normal ChatGPT pages too."""
    html = '<script src="/cdn-cgi/challenge-platform/scripts/jsd/main.js"></script>' + cg_composer()
    await _page(tab, pages, html)
    assert await _call(tab, "whenReady", "chatgpt", 2000) == "ready"


# -- Gemini (light DOM only, G2.8) ---------------------------------------------------------------

# [G1.1] rich-textarea with the Quill editor.
GM_COMPOSER = (
    '<input-area><rich-textarea><div class="ql-editor ql-blank" contenteditable="true" '
    'role="textbox" aria-label="Enter a prompt for Gemini"><p>{text}</p></div></rich-textarea>'
    "{slot}</input-area>"
)
# [G1.3] send: the icon in a button of class send-button; [G1.5] stop: the same button.
GM_SEND = (
    '<button class="send-button submit" aria-label="Send message">'
    '<mat-icon data-mat-icon-name="send" fonticon="send"></mat-icon></button>'
)
GM_STOP = (
    '<button class="send-button stop" aria-label="Stop response">'
    '<mat-icon data-mat-icon-name="stop" fonticon="stop"></mat-icon></button>'
)


def gm_composer(text: str = "", slot: str = "") -> str:
    return GM_COMPOSER.format(text=text, slot=slot)


def gm_response(answer_html: str, *, footer: str = "", thoughts: str = "") -> str:
    """[G2.2] a conversation container; [G2.4] model-response > message-content > div.markdown;
    [G2.5] the "Gemini said" header and hidden labels; [G4.1] model-thoughts."""
    thinking = (
        '<model-thoughts data-test-id="model-thoughts"><div class="thoughts-container">'
        '<button data-test-id="thoughts-header-button" class="thoughts-header-button">'
        f'Show thinking</button><div class="markdown"><p>{thoughts}</p></div></div>'
        "</model-thoughts>"
        if thoughts
        else ""
    )
    return (
        '<div class="conversation-container" id="c1">'
        '<user-query><div class="query-text"><p class="query-text-line">Question?</p></div>'
        "</user-query>"
        '<model-response><div class="response-container">'
        '<div class="response-container-header"><span class="cdk-visually-hidden">Gemini said'
        "</span></div>"
        f"{thinking}"
        '<message-content class="model-response-text" id="message-content-id-r_1">'
        f'<div class="markdown markdown-main-panel" id="model-response-message-contentr_1">'
        f"{answer_html}</div></message-content>"
        f"{footer}</div></model-response></div>"
    )


# [G2.6] feedback buttons by aria-label; [G2.7] the footer's `complete` class.
GM_FOOTER_DONE = (
    '<div class="response-footer complete"><div class="actions-container-v2">'
    '<button aria-label="Good response"><mat-icon fonticon="thumb_up"></mat-icon></button>'
    '<button aria-label="Bad response"><mat-icon fonticon="thumb_down"></mat-icon></button>'
    "</div></div>"
)


async def test_gemini_answer_is_the_markdown_never_its_chrome(tab: CdpSession, pages: str) -> None:
    """[G2.4] message-content > div.markdown; [G2.5, G4.1] "Gemini said", "Show thinking" and
    the thoughts are inside model-response but never answer text."""
    html = gm_response(
        '<p>Gemini answer.</p><pre><code class="language-python">print(1)</code></pre>',
        footer=GM_FOOTER_DONE,
        thoughts="Considering the question",
    )
    found = await _extract(tab, pages, "gemini", html + gm_composer())
    assert found == {"method": "markdown", "text": "Gemini answer.\n\n```python\nprint(1)\n```"}


async def test_gemini_thoughts_alone_are_no_answer(tab: CdpSession, pages: str) -> None:
    """While thinking, the response has thoughts and an empty message-content."""
    html = gm_response("", thoughts="Considering the question") + gm_composer("", GM_STOP)
    observed = await _observe(tab, pages, "gemini", html)
    assert observed["last_response_text_len"] == 0
    found = await _call(tab, "extract", "gemini")
    assert found["text"] == ""


async def test_gemini_finished_response_footer_and_feedback_buttons(
    tab: CdpSession, pages: str
) -> None:
    html = gm_response("<p>Done.</p>", footer=GM_FOOTER_DONE) + gm_composer()
    observed = await _observe(tab, pages, "gemini", html)
    assert (observed["user_count"], observed["model_response_count"]) == (1, 1)
    assert observed["response_complete"] is True
    assert observed["has_feedback_buttons"] is True
    assert observed["last_response_text_len"] == len("Done.")


@pytest.mark.parametrize(
    "footer",
    [
        '<div class="response-footer complete"></div>',
        '<div class="response-footer"><button aria-label="良い回答"></button></div>',
    ],
)
async def test_gemini_each_completion_mark_alone(tab: CdpSession, pages: str, footer: str) -> None:
    observed = await _observe(tab, pages, "gemini", gm_response("<p>Done.</p>", footer=footer))
    assert observed["response_complete"] or observed["has_feedback_buttons"]


async def test_gemini_marks_of_an_older_response_are_not_the_new_ones(
    tab: CdpSession, pages: str
) -> None:
    html = (
        gm_response("<p>Old answer.</p>", footer=GM_FOOTER_DONE)
        + gm_response("<p>Newer, streaming.</p>", footer='<div class="response-footer"></div>')
        + gm_composer("", GM_STOP)
    )
    observed = await _observe(tab, pages, "gemini", html)
    assert observed["model_response_count"] == 2
    assert observed["response_complete"] is False
    assert observed["has_feedback_buttons"] is False
    assert (await _call(tab, "extract", "gemini"))["text"] == "Newer, streaming."


async def test_gemini_is_read_from_the_light_dom_only(tab: CdpSession, pages: str) -> None:
    """[G2.8] no shadow roots: a response only inside a shadow root is not the site's."""
    script = (
        "const host = document.createElement('div'); document.body.append(host);"
        "host.attachShadow({mode: 'open'}).innerHTML = '<model-response></model-response>';"
    )
    await _page(tab, pages, gm_composer(), script)
    assert (await _call(tab, "observe", "gemini"))["model_response_count"] == 0


@pytest.mark.parametrize(
    "slot",
    [
        pytest.param(GM_STOP, id="icon-and-class"),
        pytest.param('<button><mat-icon fonticon="stop"></mat-icon></button>', id="fonticon"),
        pytest.param('<button class="send-button stop"></button>', id="class"),
        pytest.param('<button aria-label="Stop response"></button>', id="label"),
        pytest.param('<button aria-label="Stop generation"></button>', id="older-label"),
        pytest.param('<button aria-label="回答を停止"></button>', id="label-ja"),
    ],
)
async def test_gemini_stop_button(tab: CdpSession, pages: str, slot: str) -> None:
    """[G1.5] the send button in its stop state; no test id, a localized label."""
    observed = await _observe(tab, pages, "gemini", gm_composer("", slot))
    assert observed["has_stop_button"] is True
    assert observed["send_button_enabled"] is False  # the stop state is no send button
    assert observed["has_mic_button"] is False


@pytest.mark.parametrize(
    "slot",
    [
        pytest.param(GM_SEND, id="icon-and-class"),
        pytest.param('<button class="send-button"></button>', id="class"),
        pytest.param('<button aria-label="Send message"></button>', id="label"),
        pytest.param('<button aria-label="プロンプトを送信"></button>', id="label-ja"),
    ],
)
async def test_gemini_send_button(tab: CdpSession, pages: str, slot: str) -> None:
    """[G1.3] send by icon, class or label; [G1.4] it shows once text is typed."""
    observed = await _observe(tab, pages, "gemini", gm_composer("Hello", slot))
    assert observed["send_button_enabled"] is True
    assert observed["has_stop_button"] is False
    assert observed["has_mic_button"] is False


async def test_gemini_labels_match_whole(tab: CdpSession, pages: str) -> None:
    """Labels are matched whole: "Send feedback" in Japanese is no send button."""
    feedback = '<button aria-label="フィードバックを送信"></button>'
    observed = await _observe(tab, pages, "gemini", gm_composer("", feedback))
    assert observed["send_button_enabled"] is False
    assert observed["has_mic_button"] is True


async def test_gemini_empty_composer_is_the_mic_state_by_behaviour(
    tab: CdpSession, pages: str
) -> None:
    """[G1.4] empty box: the mic sits where send was. No mic selector is evidenced, so the
    page tells the mic state by behaviour: composer empty, neither send nor stop."""
    mic = (
        '<button class="speech_dictation_mic_button"><mat-icon fonticon="mic"></mat-icon></button>'
    )
    observed = await _observe(tab, pages, "gemini", gm_composer("", mic))
    assert observed["has_mic_button"] is True
    assert observed["input_empty"] is True


async def test_gemini_script_input_sets_the_quill_editor(tab: CdpSession, pages: str) -> None:
    await _page(tab, pages, gm_composer())
    assert await _call(tab, "setInputByScript", "gemini", "What is a tuple?")
    assert await _call(tab, "inputHolds", "gemini", "What is a tuple?")


async def test_gemini_leftover_stop_button_is_waited_for_then_reported(
    tab: CdpSession, pages: str
) -> None:
    stop = '<button><mat-icon data-mat-icon-name="stop"></mat-icon></button>'
    await _page(tab, pages, stop)
    # Still there at the deadline: '' (the driver calls that stuck).
    assert (
        await tab.evaluate("window.__bridgePage.whenStopGone('gemini', 200)", await_promise=True)
        == ""
    )
    # Goes away while waited for: resolved by the mutation, not the deadline.
    pending = tab.evaluate(
        "window.__bridgePage.whenStopGone('gemini', 30000)", await_promise=True, timeout=10
    )
    removal = tab.evaluate("setTimeout(() => document.querySelector('button').remove(), 50)")
    gone, _ = await asyncio.gather(pending, removal)
    assert gone == "gone"


GEMINI_ERRORS = [
    "I'm having a hard time fulfilling your request. Can I help you with something else instead?",
    "I encountered an error doing what you asked. Could you try again?",
    "Sorry, something went wrong. Please try your request again.",
    "Something went wrong. Please try again.",
    "I\u2019m just a language model, so I can\u2019t help you with that.",  # curly apostrophes
    "我只是一个语言模型，所以没法帮你。",
]


@pytest.mark.parametrize("error", GEMINI_ERRORS)
async def test_gemini_error_reply_is_an_error_turn(tab: CdpSession, pages: str, error: str) -> None:
    """[G5.4] errors arrive as ordinary model replies (apostrophes ' and ’ alike)."""
    html = gm_response(f"<p>{error}</p>", footer=GM_FOOTER_DONE) + gm_composer()
    observed = await _observe(tab, pages, "gemini", html)
    assert observed["error_turn"] is True
    assert observed["rate_limited"] is False
    assert (await _call(tab, "notices", "gemini"))["error"] == error


async def test_gemini_answer_mentioning_an_error_is_no_error_turn(
    tab: CdpSession, pages: str
) -> None:
    answer = "<p>When the app says Something went wrong. Please try again. it lost its token.</p>"
    html = gm_response(answer, footer=GM_FOOTER_DONE) + gm_composer()
    assert (await _observe(tab, pages, "gemini", html))["error_turn"] is False


@pytest.mark.parametrize(
    ("reply", "limited"),
    [
        ("You've reached your limit for Gemini 2.5 Pro. Try again later.", True),
        ("You\u2019ve reached your limit. Please try again later.", True),
        ("I can't create more images for you today. Try again tomorrow.", True),
        ("Please try again later.", False),  # "try again later" alone is no limit (G5.5)
        ("Rate limits protect APIs. " * 20 + "When you have reached your limit, wait.", False),
    ],
)
async def test_gemini_limit_reply_is_a_rate_limit(
    tab: CdpSession, pages: str, reply: str, limited: bool
) -> None:
    """[G5.5] "reached your limit" with "try again later"; [G5.4] image limits."""
    html = gm_response(f"<p>{reply}</p>") + gm_composer()
    observed = await _observe(tab, pages, "gemini", html)
    assert observed["rate_limited"] is limited
    if limited:
        assert (await _call(tab, "notices", "gemini"))["rateLimit"] == reply


async def test_gemini_sign_in_link_without_a_composer_is_a_login_wall(
    tab: CdpSession, pages: str
) -> None:
    """[G5.1] a visible "Sign in" link to accounts.google.com/ServiceLogin, no composer."""
    link = '<a href="https://accounts.google.com/ServiceLogin?continue=x">Sign in</a>'
    observed = await _observe(tab, pages, "gemini", link)
    assert observed["login_wall"] is True
    assert await _call(tab, "whenReady", "gemini", 2000) == "login"
    # With the composer there, the link is only the page's header: not a wall.
    assert (await _observe(tab, pages, "gemini", link + gm_composer()))["login_wall"] is False
    hidden = link.replace("<a ", '<a style="display:none" ')
    assert (await _observe(tab, pages, "gemini", hidden))["login_wall"] is False


# -- the packs in the page ------------------------------------------------------------------


async def test_every_pack_selector_and_regex_is_valid_in_the_browser(
    tab: CdpSession, pages: str
) -> None:
    """Python checks the packs approximately; Chromium's own parsers have the last word."""
    await _page(tab, pages, "")
    assert await tab.evaluate("window.__bridgePage.packErrors") == []
    assert await tab.evaluate("window.__bridgePage.packs") == {
        p: builtin_pack(p).fingerprint for p in ("chatgpt", "gemini")
    }


async def test_an_override_selector_is_what_the_page_uses(
    tab: CdpSession, pages: str, tmp_path: Path
) -> None:
    """A person's override (docs/sites.md#provider-packs) reaches the page script."""
    (tmp_path / "packs").mkdir()
    (tmp_path / "packs" / "chatgpt.json").write_text(
        json.dumps({"selectors": {"stop_button": {"css": ["button.my-stop"]}}})
    )
    html = cg_composer("", '<button class="my-stop"></button>')
    await _page(tab, pages, html, source=current_script(tmp_path).source)
    assert (await _call(tab, "observe", "chatgpt"))["has_stop_button"] is True
    await _page(tab, pages, html)  # the shipped pack knows no such button
    assert (await _call(tab, "observe", "chatgpt"))["has_stop_button"] is False


async def test_the_script_travels_once_per_document(tab: CdpSession, pages: str) -> None:
    """Calls go to the script already in the page; only a new document gets it again."""
    from bridge.providers.ask_script import provider_page

    await tab.navigate(f"{pages}/")
    page = provider_page(tab)
    for _ in range(3):
        assert (await page.call("counts", "chatgpt")) == {"user": 0, "assistant": 0}
    assert page.injections == 1
    await tab.navigate(f"{pages}/console")  # a new document has no script
    assert (await page.call("counts", "gemini")) == {"user": 0, "assistant": 0}
    assert page.injections == 2


async def test_reports_are_coalesced_per_task_burst(tab: CdpSession, pages: str) -> None:
    """Many mutations in one task give one report, not one per mutation observer callback."""
    from bridge.providers.ask_script import provider_page

    await tab.navigate(f"{pages}/")
    page = provider_page(tab)
    await tab.send("Runtime.enable")
    await tab.send("Runtime.addBinding", {"name": "__obs"})
    with tab.stream("Runtime.bindingCalled", lambda p: p["name"] == "__obs") as reports:
        await page.call("watch", "chatgpt", "__obs")
        assert await reports.next(10) is not None  # the initial report
        # 50 turns added in one task, a microtask apart: each wakes the MutationObserver
        # on its own, and still they make one report.
        await tab.evaluate(
            "(async () => { for (let i = 0; i < 50; i++) { const d = document.createElement('div');"
            " d.setAttribute('data-message-author-role', 'user'); document.body.append(d);"
            " await null; } })()",
            await_promise=True,
        )
        first = await reports.next(10)
        assert first is not None and json.loads(first["payload"])["user_count"] == 50
        # A marker mutation in a later task: the next report is its, so nothing came between.
        await tab.evaluate(
            "const a = document.createElement('div');"
            "a.setAttribute('data-message-author-role', 'assistant'); document.body.append(a);"
        )
        second = await reports.next(10)
        assert second is not None and json.loads(second["payload"])["assistant_count"] == 1
        await page.call("unwatch")


async def test_a_watchs_reports_say_what_a_fresh_look_says_through_every_kind_of_change(
    tab: CdpSession, pages: str
) -> None:
    """The watch keeps its whole-document queries (and controls' labels) true from mutation
    records instead of asking the page again each report: after each kind of change (a
    subtree added, an attribute, a text, a node changed while out of the page, a removal,
    a second watch in the same document) its report equals observe() run afresh."""
    from bridge.providers.ask_script import provider_page

    html = cg_user("Question one") + cg_turn(markdown("<p>One</p>")) + cg_composer("", SPEECH)
    await _page(tab, pages, html)
    page = provider_page(tab)
    await tab.send("Runtime.enable")
    await tab.send("Runtime.addBinding", {"name": "__idx"})

    async def after(change: str, key: str, value: Any) -> None:
        await tab.evaluate(f"(() => {{ {change} }})()")
        report = await reports.next(10)
        assert report is not None, change
        watched = json.loads(report["payload"])
        assert watched[key] == value, (change, watched)
        assert watched == await _call(tab, "observe", "chatgpt"), change

    slot = "document.querySelector('[data-testid=composer-speech-button-container]')"
    with tab.stream("Runtime.bindingCalled", lambda p: p["name"] == "__idx") as reports:
        await page.call("watch", "chatgpt", "__idx")
        assert await reports.next(10) is not None  # the initial report
        await after(f"{slot}.innerHTML = {json.dumps(STOP + '</button>')}", "has_stop_button", True)
        # The stop button turns into the send button: an attribute, no node added.
        await after(
            "const b = document.querySelector('[data-testid=stop-button]');"
            " b.setAttribute('data-testid', 'send-button'); b.setAttribute('aria-label', 'Send');",
            "has_stop_button",
            False,
        )
        turn = cg_turn(
            '<div class="markdown prose result-thinking"></div><span><button>Answer now</button></span>',
            4,
        )
        await after(
            f"document.querySelector('form').insertAdjacentHTML('beforebegin', {json.dumps(turn)})",
            "has_skip_thinking_button",
            True,
        )
        skip = "[...document.querySelectorAll('button')].find((b) => b.closest('[data-message-id=m4]'))"
        await after(f"{skip}.firstChild.data = 'Done'", "has_skip_thinking_button", False)
        # Taken out of the page (made visible again, so the change is seen) ...
        await after(
            f"window.__wrap = {skip}.parentElement; window.__home = __wrap.parentElement;"
            " __wrap.remove(); document.querySelector('.result-thinking').className = 'markdown';",
            "still_generating_text",
            False,
        )
        # ... its text changes in a later task, where no observer sees it; then it comes back.
        await after(
            "__wrap.querySelector('button').firstChild.data = 'Answer now'; __home.append(__wrap);",
            "has_skip_thinking_button",
            True,
        )
        await after(
            "document.querySelector('[data-message-id=m4]').closest('section').remove()",
            "has_skip_thinking_button",
            False,
        )
        await page.call("unwatch")
        # Between asks the page goes on changing; the next watch starts from the truth.
        await tab.evaluate(
            f"document.querySelector('form').insertAdjacentHTML('beforebegin', "
            f"{json.dumps(cg_user('Question two', 5))})"
        )
        await page.call("watch", "chatgpt", "__idx")
        first = await reports.next(10)
        assert first is not None
        assert json.loads(first["payload"]) == await _call(tab, "observe", "chatgpt")
        assert json.loads(first["payload"])["user_count"] == 2
        await page.call("unwatch")
