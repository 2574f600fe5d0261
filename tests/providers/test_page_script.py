"""The in-page script (page.js): extraction order of docs/sites.md#extraction-chatgpt /
docs/sites.md#extraction-gemini and markdown output.

The fakes render the happy path; these pages are the shapes the fallbacks exist for.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from bridge.cdp import CdpSession
from bridge.providers.page_script import PAGE_JS

pytestmark = pytest.mark.e2e


async def _extract(
    tab: CdpSession, pages: str, provider: str, html: str, script: str = ""
) -> dict[str, str]:
    await tab.navigate(f"{pages}/")
    await tab.evaluate(f"document.body.innerHTML = {json.dumps(html)}; {script}")
    await tab.evaluate(PAGE_JS)
    result = await tab.evaluate(f"window.__bridgePage.extract({json.dumps(provider)})")
    assert isinstance(result, dict)
    return result


RICH = """
<article data-turn="assistant"><div data-message-author-role="assistant">
<button>Thinking time: 17s</button>
<div class="markdown prose">
<h2>Deep copy</h2>
<p>Use <code>structuredClone</code> for <strong>plain</strong> data.</p>
<ul><li>fast</li><li>safe<ul><li>nested</li></ul></li></ul>
<ol start="3"><li>three</li><li>four</li></ol>
<pre><div>javascript</div><code class="language-javascript">const b = structuredClone(a);
console.log(b);
</code></pre>
<blockquote><p>quoted</p></blockquote>
<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
</div></div></article>
"""


async def test_chatgpt_markdown_keeps_structure_and_drops_buttons(
    tab: CdpSession, pages: str
) -> None:
    found = await _extract(tab, pages, "chatgpt", RICH)
    assert found["method"] == "markdown"
    assert found["text"] == (
        "## Deep copy\n\n"
        "Use `structuredClone` for plain data.\n\n"
        "- fast\n- safe\n  - nested\n\n"
        "3. three\n4. four\n\n"
        "```javascript\nconst b = structuredClone(a);\nconsole.log(b);\n```\n\n"
        "> quoted\n\n"
        "| k | v |\n| a | 1 |"
    )
    assert "Thinking time" not in found["text"]


@pytest.mark.parametrize(
    ("html", "method", "text"),
    [
        pytest.param(
            '<article><div data-message-author-role="assistant"><div class="prose-x prose"><p>From prose.</p></div></div></article>',
            "prose",
            "From prose.",
            id="prose",
        ),
        pytest.param(
            '<article><div data-message-author-role="assistant"><div><p>One.</p><p>Two.</p></div></div></article>',
            "paragraphs",
            "One.\n\nTwo.",
            id="paragraphs",
        ),
        pytest.param(
            '<article><h6 class="sr-only">ChatGPT said:</h6><div data-message-author-role="assistant"><span>Bare text</span><button>Copy</button></div></article>',
            "article_text",
            "Bare text",
            id="article-text",
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


SHADOW_RESPONSE = """
const host = document.createElement('model-response');
document.body.append(host);
const root = host.attachShadow({mode: 'open'});
root.innerHTML = '<div class="response-container"><div class="markdown"><p>Gemini answer.</p>'
  + '<pre><code class="language-python">print(1)</code></pre></div>'
  + (FEEDBACK ? '<div class="footer"><button><img alt="thumb_up"></button><button><img alt="thumb_down"></button></div>' : '')
  + '</div>';
"""


@pytest.mark.parametrize(("feedback", "method"), [(True, "feedback"), (False, "selector")])
async def test_gemini_extraction_through_shadow_dom(
    tab: CdpSession, pages: str, feedback: bool, method: str
) -> None:
    script = SHADOW_RESPONSE.replace("FEEDBACK", "true" if feedback else "false")
    found = await _extract(tab, pages, "gemini", "", script)
    assert found["method"] == method
    assert found["text"] == "Gemini answer.\n\n```python\nprint(1)\n```"


async def test_gemini_aria_live_is_the_last_resort(tab: CdpSession, pages: str) -> None:
    found = await _extract(tab, pages, "gemini", '<div aria-live="polite">Announced answer.</div>')
    assert found == {"method": "aria_live", "text": "Announced answer."}


async def test_gemini_feedback_of_an_older_answer_is_not_taken_for_the_new_one(
    tab: CdpSession, pages: str
) -> None:
    script = (
        SHADOW_RESPONSE.replace("FEEDBACK", "true")
        + "const h2 = document.createElement('model-response'); document.body.append(h2);"
        + "h2.attachShadow({mode:'open'}).innerHTML = '<div class=\"markdown\"><p>Newer, streaming.</p></div>';"
    )
    await _extract(tab, pages, "gemini", "", script)
    observed = await tab.evaluate("window.__bridgePage.observe('gemini')")
    assert observed["model_response_count"] == 2
    assert observed["has_feedback_buttons"] is False  # the icons belong to the older answer


async def test_gemini_leftover_stop_button_is_waited_for_then_reported(
    tab: CdpSession, pages: str
) -> None:
    stop = '<button><mat-icon data-mat-icon-name="stop"></mat-icon></button>'
    await _extract(tab, pages, "gemini", stop)
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


async def test_the_script_travels_once_per_document(tab: CdpSession, pages: str) -> None:
    """Calls go to the script already in the page; only a new document gets it again."""
    from bridge.providers.page_script import provider_page

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
    from bridge.providers.page_script import provider_page

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


@pytest.mark.parametrize(
    "notice",
    [
        "You've reached our limit of messages per hour. Please try again later.",
        "You've reached your GPT-4o limit.",
        "You've hit the Free plan limit for GPT-5.",
        "Too many requests in 1 hour. Try again later.",
        "You're making requests too quickly. We've temporarily limited access to your "
        "conversations. Please wait a few minutes before trying again.",
        "Du hast dein Nutzungslimit erreicht.",
    ],
)
async def test_chatgpt_usage_limit_texts_of_the_evidence_are_rate_limits(
    tab: CdpSession, pages: str, notice: str
) -> None:
    """Each text SITE-FACTS C5.7 records (docs/sites.md#rate-limit), English and German."""
    await tab.navigate(f"{pages}/")
    await tab.evaluate(f"document.body.innerHTML = {json.dumps(f'<div role=alert>{notice}</div>')}")
    await tab.evaluate(PAGE_JS)
    observed = await tab.evaluate("window.__bridgePage.observe('chatgpt')")
    assert observed["rate_limited"] is True, notice


async def test_an_ordinary_alert_is_no_rate_limit(tab: CdpSession, pages: str) -> None:
    await tab.navigate(f"{pages}/")
    await tab.evaluate("document.body.innerHTML = '<div role=alert>Copied to clipboard</div>'")
    await tab.evaluate(PAGE_JS)
    assert (await tab.evaluate("window.__bridgePage.observe('chatgpt')"))["rate_limited"] is False
