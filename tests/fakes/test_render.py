"""The answer markup: markdown-it-py's HTML, dressed as each fake site dresses it."""

from __future__ import annotations

from bridge.fakes.render import answer_lines, render_blocks


def test_each_top_level_block_is_one_string_nested_blocks_stay_inside() -> None:
    blocks = render_blocks("# Title\n\n- a\n  - b\n\n> quote\n> - item\n\n---", "gemini")
    assert [block.split(">", 1)[0] for block in blocks] == ["<h1", "<ul", "<blockquote", "<hr /"]
    assert "<ul>\n<li>b</li>\n</ul>" in blocks[1]  # the library's own markup and whitespace


def test_chatgpt_blocks_carry_their_source_offsets_in_utf16_units() -> None:
    # The emoji is two UTF-16 units, as the site's JavaScript counts; \[…\] blocks, which the
    # math plugin leaves without a line map, get the lines between their neighbours.
    markdown = "Hi 😀\n\n- one\n- two\n\n\\[\nx\n\\]\n\nend"
    blocks = render_blocks(markdown, "chatgpt")
    assert blocks[0] == '<p data-start="0" data-end="5">Hi 😀</p>'
    assert blocks[1].startswith(
        '<ul data-start="7" data-end="18">\n<li data-start="7" data-end="12">'
    )
    assert blocks[2].startswith('<div data-start="20" data-end="27"><span class="katex-display">')
    assert blocks[3] == '<p data-start="29" data-end="32">end</p>'
    assert "data-start" not in "".join(render_blocks(markdown, "gemini"))


def test_code_blocks_are_dressed_as_each_site_dresses_them() -> None:
    markdown = "```python title\nprint('<b>')\n```\n\n    indented"
    chatgpt = render_blocks(markdown, "chatgpt", "Copy code")
    assert chatgpt[0] == (
        '<pre data-start="0" data-end="32"><div><div>python</div>'
        '<button type="button">Copy code</button></div>'
        "<code class=\"language-python\">print('&lt;b&gt;')\n</code></pre>"
    )
    assert chatgpt[1].endswith(
        '<div><button type="button">Copy code</button></div><code>indented\n</code></pre>'
    )
    gemini = render_blocks(markdown, "gemini")
    assert gemini[0].startswith(
        '<div class="code-block"><div class="code-block-decoration"><span>python</span></div>'
        '<pre><code class="language-python">'
    )
    assert gemini[1] == '<div class="code-block"><pre><code>indented\n</code></pre></div>'


def test_math_is_katex_markup_with_the_tex_in_an_annotation() -> None:
    [block] = render_blocks("Inline $a<b$ and \\(c\\).", "gemini")
    assert block.count('<span class="katex">') == 2
    assert '<annotation encoding="application/x-tex">a&lt;b</annotation>' in block
    assert 'aria-hidden="true">c</span>' in block
    [display] = render_blocks("$$\nE = mc^2\n$$", "gemini")
    assert display.startswith('<div><span class="katex-display"><span class="katex">')
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in display


def test_raw_html_is_text_and_gfm_extensions_are_on() -> None:
    [html] = render_blocks("<script>alert(1)</script> and <b>x</b>", "gemini")
    assert "<script>" not in html and "&lt;script&gt;" in html
    [table, tasks, strike] = render_blocks(
        "| a | b |\n|:-|-:|\n| 1 | 2 |\n\n- [x] done\n\n~~old~~ https://example.org", "gemini"
    )
    assert '<th style="text-align:right">b</th>' in table
    assert '<input class="task-list-item-checkbox" disabled="" type="checkbox" checked="">' in tasks
    assert "<s>old</s>" in strike and '<a href="https://example.org">' in strike


def test_answer_lines_follow_the_library_s_reading() -> None:
    # CommonMark, not a subset of our own: a setext heading, and a ** the flanking rules leave
    # literal (it closes between a bracket and a letter).
    assert answer_lines("Title\n---\n\ntext") == ["Title", "text"]
    assert answer_lines("量子：**量子（キュービット）**は") == ["量子：**量子（キュービット）**は"]
    assert answer_lines("| a | b |\n|---|---|\n| `x` | [y](u) |") == ["a\tb", "x\ty"]
