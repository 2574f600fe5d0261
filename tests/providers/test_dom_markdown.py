"""How exactly page.js turns a rendered answer back into its markdown (the DOM source).

Every corpus answer (bridge/fakes/corpus) is rendered in a real page by the fakes' own
renderer (bridge/fakes/static/common.js, ``FakeKit.MarkdownView``, dressed as chatgpt.js and
gemini.js dress it), then read back with page.js's extraction, and compared with the source
after whitespace normalisation (runs of whitespace become one space), nothing more. Some
differences are unknowable from the DOM (``*`` or ``-`` bullets, ``\\(`` or ``$`` math,
``~~~`` fences, ``***`` rules, entities, needless escapes): they are printed with their
reason, and the floor below leaves room for them, so only a regression fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge.bench.fidelity import normalize
from bridge.cdp.session import CdpSession
from bridge.fakes.corpus import corpus
from bridge.providers.ask_script import PAGE_JS

pytestmark = pytest.mark.e2e

COMMON_JS = Path(__file__).resolve().parents[2] / "bridge" / "fakes" / "static" / "common.js"

#: Exact answers (of 46) per style, at least: what the converter achieves (27), less one.
FLOOR = {"chatgpt": 26, "gemini": 26}

#: Why an answer cannot come back exactly: the source chose a form the DOM keeps no trace
#: of (the converter writes the commonest one), or the renderer dropped something.
UNKNOWABLE = {
    "05-typescript-generics": "an escaped backtick after a code span (the text shows none)",
    "13-fence-without-language": "a ~~~ fence",
    "14-code-with-markdown-inside": "a ~~~ fence; \\<div\\> escaped where no escape is needed",
    "15-table-alignment": "delimiter rows with more than three dashes",
    "16-table-inline-code-pipes": "delimiter rows with more than three dashes",
    "17-nested-lists": "* bullets",
    "19-nested-blockquotes": "a soft line break inside a quote (a > the DOM has no trace of)",
    "21-emphasis-strike": "_em_ and __strong__; 2 \\* 3 escaped where no escape is needed",
    "22-links-autolinks-images": "a link title (the renderer drops it)",
    "23-math-inline": "\\(...\\) inline math",
    "24-math-display": "\\[...\\] and one-line $$...$$ display math",
    "25-horizontal-rules": "*** and ___ rules",
    "26-html-entities-special-chars": "entities (&lt; &amp; &copy;) the DOM shows decoded",
    "38-physics-latex": "\\(...\\) and \\[...\\] math",
    "39-steps-with-nested-code": "an indented code block (written fenced)",
    "40-hard-line-breaks": "a backslash hard break; an indented code block",
    "42-python-traceback": ">>> for a nested quote (written > > >)",
    "44-gemini-style-bullets": "* bullets; a *** rule",
    "46-long-japanese-handbook": "*** rules",
}

# One answer per call: the page is emptied, the site's answer markup built as chatgpt.js /
# gemini.js build it, the markdown rendered and filled, and page.js's extraction run.
RENDER_AND_EXTRACT = """
(({ docs, style }) => {
  const { el, MarkdownView } = window.FakeKit;
  return docs.map((markdown) => {
    document.body.replaceChildren();
    const box = el('div', { class: 'markdown prose wrap-break-word markdown-new-styling' });
    let flavor;
    if (style === 'chatgpt') {
      flavor = { site: 'chatgpt', copyCode: 'Copy code' };
      const message = el('div', {
        'data-message-author-role': 'assistant', 'data-message-id': 'm1',
      }, box);
      document.body.append(el('section', {
        'data-turn': 'assistant', 'data-testid': 'conversation-turn-2',
      }, el('h6', { class: 'sr-only' }, 'ChatGPT said:'), message));
    } else {
      flavor = { site: 'gemini' };
      box.className = 'markdown';
      document.body.append(el('model-response', {}, el('div', { class: 'response-container' },
        el('div', { class: 'response-container-header' },
          el('span', { class: 'cdk-visually-hidden' }, 'Gemini said')),
        el('div', { class: 'response-content' },
          el('message-content', { class: 'model-response-text' }, box)))));
    }
    const view = new MarkdownView(box, flavor);
    view.update(markdown);
    view.fill();
    return window.__bridgePage.extract(style);
  });
})
"""


async def _load(tab: CdpSession, pages: str) -> None:
    await tab.navigate(f"{pages}/")
    common = COMMON_JS.read_text(encoding="utf-8")
    # common.js declares `const FakeKit` at its top level: kept in a function, then exposed.
    await tab.evaluate(f"(function () {{\n{common}\nwindow.FakeKit = FakeKit;\n}})();")
    await tab.evaluate(PAGE_JS)


def _first_difference(got: str, want: str) -> str:
    """Where the normalised texts part, with a little context either side."""
    a, b = normalize(got), normalize(want)
    pairs = enumerate(zip(a, b, strict=False))
    at = next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))
    start = max(0, at - 30)
    return f"got {a[start : at + 40]!r}\n      want {b[start : at + 40]!r}"


@pytest.mark.parametrize("style", ["chatgpt", "gemini"])
async def test_rendered_corpus_reads_back_as_its_markdown(
    tab: CdpSession, pages: str, style: str
) -> None:
    answers = corpus()
    await _load(tab, pages)
    job = {"docs": [answer.markdown for answer in answers], "style": style}
    found = await tab.evaluate(f"{RENDER_AND_EXTRACT}({json.dumps(job)})")
    assert isinstance(found, list) and len(found) == len(answers)
    assert {f["method"] for f in found} == {"markdown"}
    differ = [
        (answer.name, _first_difference(f["text"], answer.markdown))
        for answer, f in zip(answers, found, strict=True)
        if normalize(f["text"]) != normalize(answer.markdown)
    ]
    exact = len(answers) - len(differ)
    print(f"\n{style}: {exact}/{len(answers)} exact ({exact / len(answers):.1%})")
    for name, where in differ:
        print(f"  {name}: {UNKNOWABLE.get(name, 'NOT KNOWN TO DIFFER')}\n      {where}")
    assert exact >= FLOOR[style], [name for name, _ in differ]
