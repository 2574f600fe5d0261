"""Markdown to the answer markup the fake sites show, by a kept library (markdown-it-py).

The fakes used to render answers with a converter written here, and bridge reads the DOM back
into markdown with another one written here (``bridge/js/page.js``), so each was only
ever checked against code from the same hands. Here the markdown becomes HTML by
markdown-it-py, a CommonMark implementation kept by others and tested against the CommonMark
spec, with GFM tables, strikethrough and task lists, and GFM autolinks and math by
mdit-py-plugins (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``). Raw HTML in an answer is
shown as text, never parsed (``html`` off), as the sites show it.

What is the sites' own stays the fakes' (docs/sites.md#extraction-chatgpt,
docs/sites.md#facts-without-evidence): ChatGPT's ``data-start``/``data-end`` source offsets on
each block element (docs/sites.md#background-tab) and its code-block header (language, "Copy
code") inside the ``pre``; Gemini's ``.code-block`` with the language in
``.code-block-decoration`` [G2.4]; math as KaTeX's markup, reduced (the TeX in an
``annotation``). Only these dressings are written here, as renderer rules; the markdown's
structure is the library's.

:func:`render_blocks` is what the pages show (served by ``POST /__fake/render``, one string
per top-level block so a streaming page re-renders only what changed); :func:`answer_lines`
is the text a reader of that page sees, line by line, read from the same library's tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml, unescapeAll
from markdown_it.renderer import RendererProtocol
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.gfm_autolink import gfm_autolink_plugin
from mdit_py_plugins.texmath import texmath_plugin

__all__ = ["Site", "answer_lines", "render_blocks"]

Site = Literal["chatgpt", "gemini"]

#: Block elements that carry ChatGPT's source offsets (as the fakes always gave them).
_OFFSET_TOKENS = frozenset(
    {
        "paragraph_open",
        "heading_open",
        "bullet_list_open",
        "ordered_list_open",
        "list_item_open",
        "blockquote_open",
        "table_open",
        "hr",
        "fence",
        "code_block",
        "math_block",
        "math_block_label",
        "math_block_eqno",
    }
)
_INLINE_MATH = ("math_inline", "math_inline_double", "math_single")
_BLOCK_MATH = ("math_block", "math_block_label", "math_block_eqno")
# What a browser collapses in normal flow (not NBSP, not the ideographic space).
_WHITESPACE = re.compile(r"[ \t\n\r\f]+")


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "tasklists": True})
    md.enable(["table", "strikethrough"])
    md.use(gfm_autolink_plugin)  # bare URLs and e-mail addresses become links, as in GFM
    # $x$ takes no space just inside its delimiters, so a price ("$5 and $10") stays text;
    # $$…$$ also inline, as the sites take it.
    md.use(dollarmath_plugin, allow_space=False, double_inline=True)
    md.use(texmath_plugin, delimiters="brackets")  # \( \) and \[ \]
    md.core.ruler.push("fake_source_offsets", _source_offsets)
    for name in _INLINE_MATH:
        md.add_render_rule(name, _render_inline_math)
    for name in _BLOCK_MATH:
        md.add_render_rule(name, _render_block_math)
    md.add_render_rule("fence", _render_code)
    md.add_render_rule("code_block", _render_code)
    return md


def render_blocks(markdown: str, site: Site, copy_code: str = "Copy code") -> tuple[str, ...]:
    """The HTML of each top-level block of ``markdown`` as ``site``'s answer shows it.

    ``copy_code`` is ChatGPT's code-block button text (its page's language). The same
    markdown always gives the same strings, so a page compares them to keep what did not
    change while an answer streams."""
    return _render_blocks(markdown, site, copy_code)


@lru_cache(maxsize=64)
def _render_blocks(markdown: str, site: Site, copy_code: str) -> tuple[str, ...]:
    md = _parser()
    env: EnvType = {"fake_site": site, "fake_copy_code": copy_code}
    tokens = md.parse(markdown, env)
    return tuple(
        md.renderer.render(tokens[start:end], md.options, env).strip("\n")
        for start, end in _top_level(tokens)
    )


def _top_level(tokens: Sequence[Token]) -> list[tuple[int, int]]:
    """The [start, end) token ranges of the top-level blocks."""
    ranges: list[tuple[int, int]] = []
    start = 0
    for index, token in enumerate(tokens):
        if token.level == 0 and token.nesting <= 0:
            ranges.append((start, index + 1))
            start = index + 1
    return ranges


# -- the sites' dressing --------------------------------------------------------------------


def _source_offsets(state: StateCore) -> None:
    """ChatGPT's ``data-start``/``data-end`` on each block element: where its source lines
    begin and end, in UTF-16 units as the site's JavaScript counts them. A block the math
    plugin leaves without a line map gets the lines between its neighbours."""
    if state.env.get("fake_site") != "chatgpt":
        return
    lines = state.src.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + _utf16(line) + 1)
    previous_end = 0
    for index, token in enumerate(state.tokens):
        if token.map is None and token.level == 0 and token.type in _OFFSET_TOKENS:
            following = next((t.map[0] for t in state.tokens[index + 1 :] if t.map), len(lines))
            token.map = [previous_end, following]
        if token.map is None:
            continue
        if token.level == 0:
            previous_end = token.map[1]
        if token.type not in _OFFSET_TOKENS:
            continue
        first, last = token.map[0], token.map[1] - 1
        while last > first and not lines[last].strip():
            last -= 1
        while first < last and not lines[first].strip():
            first += 1
        token.attrSet("data-start", str(starts[first]))
        token.attrSet("data-end", str(starts[last] + _utf16(lines[last])))


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _katex(tex: str, display: bool) -> str:
    """KaTeX's output, reduced: the MathML copy whose annotation holds the TeX source, and the
    visual copy (aria-hidden), which shows the source instead of typeset glyphs."""
    shown = escapeHtml(tex)
    block = ' display="block"' if display else ""
    node = (
        '<span class="katex"><span class="katex-mathml">'
        f'<math xmlns="http://www.w3.org/1998/Math/MathML"{block}><semantics><mrow>'
        f'<mtext>{shown}</mtext></mrow><annotation encoding="application/x-tex">{shown}'
        "</annotation></semantics></math></span>"
        f'<span class="katex-html" aria-hidden="true">{shown}</span></span>'
    )
    return f'<span class="katex-display">{node}</span>' if display else node


def _render_inline_math(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return _katex(tokens[idx].content.replace("\n", " ").strip(), display=False)


def _render_block_math(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    attrs = _attrs(token)
    return f"<div{attrs}>{_katex(token.content.strip(), display=True)}</div>\n"


def _render_code(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """A code block as the site dresses it. ChatGPT: a header (language, "Copy code") inside
    the ``pre`` above the ``code`` (the header's markup is in no source: plain elements);
    Gemini: ``div.code-block`` with the language in ``.code-block-decoration`` [G2.4]."""
    token = tokens[idx]
    info = unescapeAll(token.info).strip() if token.info else ""
    language = info.split(maxsplit=1)[0] if info else ""
    lang_class = f' class="language-{escapeHtml(language)}"' if language else ""
    code = f"<code{lang_class}>{escapeHtml(token.content)}</code>"
    label = escapeHtml(language)
    if env.get("fake_site") == "gemini":
        decoration = (
            f'<div class="code-block-decoration"><span>{label}</span></div>' if language else ""
        )
        return f'<div class="code-block">{decoration}<pre>{code}</pre></div>\n'
    copy = escapeHtml(str(env.get("fake_copy_code", "Copy code")))
    header = f"<div>{f'<div>{label}</div>' if language else ''}"
    header += f'<button type="button">{copy}</button></div>'
    return f"<pre{_attrs(token)}>{header}{code}</pre>\n"


def _attrs(token: Token) -> str:
    return "".join(f' {name}="{escapeHtml(str(value))}"' for name, value in token.attrs.items())


# -- what a reader sees -----------------------------------------------------------------------


def answer_lines(markdown: str) -> list[str]:
    """The non-empty lines of text, stripped, that the rendered answer shows a reader.

    Each paragraph, heading, list item's paragraph, table row (cells joined by a tab, as
    ``innerText`` joins them) and display formula is one line (a hard break starts another);
    code blocks keep their lines; thematic breaks and images show nothing; math shows its TeX
    source; runs of whitespace are one space. What a site adds around the answer (code-block
    headers, copy buttons, KaTeX's visual copy) is not the answer's text. Comparing these
    lines with the stripped non-empty lines of an extracted answer is independent of how a
    browser lays out whitespace between blocks.
    """
    out: list[str] = []
    row: list[str] | None = None
    for token in _parser().parse(markdown, {}):
        if token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            out.append("\t".join(row))
            row = None
        elif token.type == "inline":
            shown = _shown_lines(token.children or [])
            if row is not None:
                row.append(" ".join(shown))
            else:
                out.extend(shown)
        elif token.type in ("fence", "code_block"):
            out.extend(token.content.split("\n"))
        elif token.type in _BLOCK_MATH:
            out.append(_WHITESPACE.sub(" ", token.content).strip())
    return [line.strip() for line in out if line.strip()]


def _shown_lines(children: Sequence[Token]) -> list[str]:
    """The lines inline tokens show: markers gone, images invisible, math as its TeX, a hard
    break a new line, whitespace collapsed as a browser lays it out."""
    text = ""
    for child in children:
        if child.type in ("text", "code_inline"):
            text += child.content
        elif child.type == "softbreak":
            text += " "
        elif child.type == "hardbreak":
            text += "\n"
        elif child.type in _INLINE_MATH:
            text += child.content.replace("\n", " ").strip()
    return [_WHITESPACE.sub(" ", part).strip() for part in text.split("\n")]
