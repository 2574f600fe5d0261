"""What a fake site does for a question: the settings, and the deterministic answer text.

This module is pure (no I/O, no clock) so the answers can be asserted exactly: the same question
and settings always give the same markdown, and :func:`answer_lines` says which lines of text a
reader of the rendered page sees, using the same GFM subset the pages render
(``static/common.js``): paragraphs, headings, nested and task lists, fenced and indented code,
tables, blockquotes, breaks, math, and inline markup.
"""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Behaviour",
    "InputKind",
    "Length",
    "Locale",
    "Markup",
    "State",
    "answer_lines",
    "answer_markdown",
    "asks_for_code",
    "keywords",
]

State = Literal["ok", "logged_out", "rate_limited", "error_turn", "stuck", "challenge"]
Locale = Literal["en", "ja", "de"]
InputKind = Literal["prosemirror", "textarea"]
Markup = Literal["current", "newest"]
Length = Literal["short", "long"]

_STATES = ("ok", "logged_out", "rate_limited", "error_turn", "stuck", "challenge")
_LOCALES = ("en", "ja", "de")
_INPUT_KINDS = ("prosemirror", "textarea")
_MARKUPS = ("current", "newest")
_LENGTHS = ("short", "long")


@dataclass(frozen=True)
class Behaviour:
    """How a fake site behaves, for the page as a whole or for one question.

    The defaults keep a test suite fast: a short answer streamed in about a quarter of a second,
    no thinking phase, no hydration delay. ``locale``, ``input_kind``, ``hydration_ms`` and the
    ``logged_out`` state are read by the page when it loads (from the site's default behaviour);
    the other fields drive each answer (from the queue, else the default).
    """

    answer: str | None = None
    """Exact markdown to answer with; ``None`` derives it from the question."""
    length: Length = "short"
    """``"long"`` makes the derived answer tens of kilobytes."""
    chunk_chars: int = 24
    """Characters per streamed chunk (the site's "token")."""
    chunk_interval_ms: int = 15
    """Pause between chunks, i.e. the streaming speed."""
    duration_ms: int | None = None
    """How long the answer streams, in site time: its chunks spread evenly over it instead of
    ``chunk_interval_ms`` apart. ``duration_ms=180_000`` is a three-minute answer; a site's
    ``time_scale`` (:class:`~bridge.fakes.SiteController`) makes it take a fraction of that."""
    thinking_ms: int = 0
    """ChatGPT's Thinking phase before the answer streams; 0 means no thinking phase."""
    hydration_ms: int = 0
    """How long after load the composer appears."""
    state: State = "ok"
    """``ok`` answers. ``logged_out`` (read at page load): ChatGPT keeps its composer (guest mode)
    and shows "Log in" / "Sign up for free"; Gemini shows a "Sign in" link instead of the input;
    as a queued behaviour the site refuses the question with 401. ``rate_limited``: ChatGPT's
    send gets HTTP 429 and the page shows its limit dialog; Gemini's stream carries wire error
    1037 and the page shows the limit as the model's reply. ``error_turn``: "Something went
    wrong" as the answer's own text (ChatGPT adds a regenerate button). ``stuck``: the first
    chunk streams, then nothing:
    the stop button stays and the answer never completes; Gemini's hung UI also ignores Stop.
    ``challenge``: Cloudflare's "Just a moment…" interstitial instead of the site (read at page
    load; docs/sites.md#challenge: documented for ChatGPT only, served by both fakes alike)."""
    locale: Locale = "en"
    """The UI language. ``de`` changes only the texts with evidence (ChatGPT's limit sentence
    with "Nutzungslimit", "Erneut versuchen"); the rest stays English."""
    input_kind: InputKind = "prosemirror"
    """ChatGPT's input: a ProseMirror-style contenteditable, or a plain textarea."""
    markup: Markup = "current"
    """ChatGPT's message attribute (read at page load): ``current`` is
    ``data-message-author-role`` [C2.3]; ``newest`` is ``data-message-role``, the markup
    seen in late September 2026 [C2.10]: a site change as the packs must absorb it
    (an override in the state directory, no release; docs/sites.md#provider-packs)."""
    mode_sticks: bool = True
    """Whether a choice in the site's mode picker takes (read at page load). ``False`` is a
    picker whose choice does not hold (a mode the account may not use): the menu closes and
    the mode stays as it was, so a driver must look, not trust its own click."""
    upload_ms: int = 0
    """How long the fake server takes to accept each uploaded file (``POST /__fake/upload``),
    read from the default behaviour: the time a page shows the file as uploading."""
    upload_consent: bool = False
    """Gemini only (read at page load): the profile's first upload asks consent first
    ("Creating content from images and files", Cancel/Agree, SITE-FACTS G5.3) and opens no
    file chooser until Agree, which the page remembers in its localStorage."""

    def __post_init__(self) -> None:
        _check_choice("state", self.state, _STATES)
        _check_choice("locale", self.locale, _LOCALES)
        _check_choice("input_kind", self.input_kind, _INPUT_KINDS)
        _check_choice("markup", self.markup, _MARKUPS)
        _check_choice("length", self.length, _LENGTHS)
        if self.upload_ms < 0:
            raise ValueError(f"upload_ms must not be negative, not {self.upload_ms}")
        if self.chunk_chars < 1:
            raise ValueError(f"chunk_chars must be at least 1, not {self.chunk_chars}")
        for name in ("chunk_interval_ms", "thinking_ms", "hydration_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, not {getattr(self, name)}")
        if self.duration_ms is not None and self.duration_ms < 0:
            raise ValueError(f"duration_ms must not be negative, not {self.duration_ms}")

    def chunk_pause_ms(self, answer_chars: int) -> float:
        """The pause before each chunk of an answer ``answer_chars`` long, in site time: the
        chunk interval, or ``duration_ms`` shared out over the chunks."""
        if self.duration_ms is None:
            return float(self.chunk_interval_ms)
        count = max(1, -(-answer_chars // self.chunk_chars))
        return self.duration_ms / count


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, not {value!r}")


_STOPWORD_TEXT = """
a an and are about any can could does explain for from give how into is it its me my of on
or please show tell than that the their them then there these this those to use using was
what when where which who why will with would write you your in be do by as at if so not
but all also some more most very just like make between after before over under each
every other has have had been being were should shall may might must
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
# Japanese has no spaces: runs of katakana and kanji are its content words, hiragana is mostly
# grammar (particles, endings), so it separates them.
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_+#-]*|[\u30a0-\u30ff\u3400-\u9fff]{2,}")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_CODE_WORDS = re.compile(
    r"\b(code|function|implement\w*|script|program|snippet|class|regex|algorithm)\b"
    r"|コード|関数|実装|プログラム|スクリプト",
    re.IGNORECASE,
)
_LANGUAGES = ("python", "javascript", "typescript", "rust", "go", "bash", "sql", "java")
_MAX_KEYWORDS = 8
_LONG_TARGET_CHARS = 30_000


def keywords(question: str) -> list[str]:
    """The question's content words, in order, without repeats (what an answer restates)."""
    seen: set[str] = set()
    found: list[str] = []
    for match in _WORD.finditer(question):
        word = match.group(0).strip("-")
        key = word.lower()
        if key in seen or key in _STOPWORDS or (len(word) < 3 and word.isascii()):
            continue
        seen.add(key)
        found.append(word)
        if len(found) == _MAX_KEYWORDS:
            break
    return found


def asks_for_code(question: str) -> bool:
    """Whether the question asks for code, in which case the answer holds a fenced block."""
    return _CODE_WORDS.search(question) is not None


def answer_markdown(question: str, behaviour: Behaviour | None = None) -> str:
    """The markdown a fake site answers ``question`` with: ``behaviour.answer`` if set, else
    a deterministic function of the question (short, or tens of kilobytes when ``length`` is
    ``"long"``), ending with a reference line unique to the question."""
    behaviour = behaviour or Behaviour()
    if behaviour.answer is not None:
        return behaviour.answer
    words = keywords(question) or ["question"]
    japanese = _CJK.search(question) is not None
    blocks = [_intro(words, japanese), _points(words, japanese)]
    if asks_for_code(question):
        blocks.append(_code_block(question, words))
    if behaviour.length == "long":
        blocks.extend(_long_sections(words, japanese))
    blocks.append(f"Reference: {_reference(question)}")
    return "\n\n".join(blocks)


def _reference(question: str) -> str:
    return "fake-" + hashlib.sha1(question.encode("utf-8")).hexdigest()[:12]


def _intro(words: list[str], japanese: bool) -> str:
    if japanese:
        return "".join(f"「{w}」" for w in words) + "についてお答えします。"
    listed = ", ".join(words[:-1]) + (" and " if len(words) > 1 else "") + words[-1]
    return f"Here is an answer about {listed}."


def _points(words: list[str], japanese: bool) -> str:
    if japanese:
        return "\n".join(f"- **{w}**: {w}の要点です。" for w in words)
    return "\n".join(f"- **{w}**: the key point about {w}." for w in words)


def _code_block(question: str, words: list[str]) -> str:
    lowered = question.lower()
    language = next((lang for lang in _LANGUAGES if re.search(rf"\b{lang}\b", lowered)), "python")
    ascii_words = [re.sub(r"[^a-z0-9_]", "_", w.lower()) for w in words if w.isascii()]
    name = "_".join(ascii_words[:3]) or "answer"
    quoted = ", ".join(f'"{w}"' for w in words)
    if language == "python":
        body = f"def {name}():\n    return [{quoted}]\n\n\nprint({name}())"
    elif language in ("javascript", "typescript"):
        body = f"function {name}() {{\n  return [{quoted}];\n}}\n\nconsole.log({name}());"
    elif language == "bash":
        body = f"{name}() {{\n  echo {' '.join(words)}\n}}\n\n{name}"
    elif language == "sql":
        body = f"SELECT {', '.join(repr(w) for w in words)};"
    else:
        body = f"// {name}\n// {', '.join(words)}"
    return f"```{language}\n{body}\n```"


def _long_sections(words: list[str], japanese: bool) -> list[str]:
    sections: list[str] = []
    size = 0
    index = 0
    while size < _LONG_TARGET_CHARS:
        word = words[index % len(words)]
        index += 1
        if japanese:
            text = (
                f"## 第{index}部: {word}\n\n"
                f"{word}について、第{index}の観点から説明します。"
                f"この段落は長い回答を作るための決まった文章で、番号は{index}です。\n\n"
                f"1. {word}の第一の点（{index}）\n2. {word}の第二の点（{index}）"
            )
        else:
            text = (
                f"## Part {index}: {word}\n\n"
                f"Part {index} looks at {word} from another side. This paragraph is fixed text "
                f"that makes the answer long, and its number is {index}, so every part differs "
                f"from the others and a truncated extraction shows where it stopped.\n\n"
                f"1. First point about {word} ({index})\n2. Second point about {word} ({index})"
            )
        sections.append(text)
        size += len(text) + 2
    return sections


# -- what a reader sees: the GFM subset of static/common.js, rule for rule ----------------------
#
# Blocks: paragraphs (soft breaks become spaces; two trailing spaces or a backslash break the
# line), ATX headings, fenced code (``` or ~~~; an unclosed fence runs to the end), indented
# code (4 columns, leading tabs to stops of 4), display math ($$ or \[ on its own line, or a
# whole line $$…$$), thematic breaks, blockquotes, lists (bullet or ordered, nested by
# indentation to the item's content column, task items), pipe tables. Inline: code spans,
# math, images, links, <autolinks>, strong, em, del, backslash escapes, &entities; in text.
# Not supported, in both: setext headings (a ``---`` line is always a break), raw HTML (shown
# as text), reference links.

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")
_HR = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_HEADING_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_QUOTE = re.compile(r"^ {0,3}> ?")
_LIST_ITEM = re.compile(r"^( {0,3})([-*+]|[0-9]{1,9}[.)])(?:( +)(.*))?$")
_TASK = re.compile(r"^\[([ xX])\](?:[ \t]+|$)")
_MATH_OPEN = re.compile(r"^ {0,3}(\$\$|\\\[)[ \t]*$")
_MATH_LINE = re.compile(r"^ {0,3}(?:\$\$(.*\S.*)\$\$|\\\[(.*\S.*)\\\])[ \t]*$")
_DELIMITER_CELL = re.compile(r"^:?-+:?$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_INLINE = re.compile(
    "|".join(
        [
            r"(?<!`)(?P<tick>`+)(?!`)(?P<code>.+?)(?<!`)(?P=tick)(?!`)",
            r"\\\((?P<math_paren>.+?)\\\)",
            r"\$\$(?P<math_dollars>.+?)\$\$",
            r"(?<![\\$])\$(?P<math_dollar>[^\s$](?:[^$]*?[^\s$\\])?)\$(?![0-9$])",
            r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^()\s]*)(?:\s+\"[^\"]*\")?\)",
            r"\[(?P<label>[^\]]+)\]\((?P<href>[^()\s]*)(?:\s+\"[^\"]*\")?\)",
            r"<(?P<autolink>https?://[^>\s]+)>",
            r"\*\*(?=\S)(?P<strong>.+?)(?<=\S)\*\*",
            r"__(?=\S)(?P<strong2>.+?)(?<=\S)__",
            r"~~(?=\S)(?P<dele>.+?)(?<=\S)~~",
            r"\*(?=[^\s*])(?P<em>.+?)(?<=[^\s*])\*",
            r"(?<![A-Za-z0-9])_(?=[^\s_])(?P<em2>.+?)(?<=[^\s_])_(?![A-Za-z0-9])",
            r"\\(?P<escaped>[!-/:-@\[-`{-~])",
        ]
    )
)
# What a browser collapses in normal flow (not NBSP, not the ideographic space).
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_BACKSLASH_BREAK = re.compile(r"(?<!\\)(?:\\\\)*\\$")
_LEAD = re.compile(r"^[ \t]*")
_WHITESPACE = re.compile(r"[ \t\n\r\f]+")


def _plain_text(text: str) -> str:
    return _ENTITY.sub(lambda m: html.unescape(m.group(0)), text)


def _plain_inline(text: str) -> str:
    """The text inline markdown shows: markers gone, entities decoded, images invisible, math
    as its TeX; a hard break stays a newline."""
    shown: list[str] = []
    last = 0
    for match in _INLINE.finditer(text):
        shown.append(_plain_text(text[last : match.start()]))
        shown.append(_plain_span(match))
        last = match.end()
    shown.append(_plain_text(text[last:]))
    return "".join(shown)


def _plain_span(match: re.Match[str]) -> str:
    groups = match.groupdict()
    if groups["code"] is not None:
        return str(groups["code"])
    for name in ("math_paren", "math_dollars", "math_dollar"):
        if groups[name] is not None:
            return str(groups[name]).replace("\n", " ").strip()
    if groups["alt"] is not None:
        return ""
    if groups["label"] is not None:
        return _plain_inline(groups["label"])
    if groups["autolink"] is not None:
        return str(groups["autolink"])
    if groups["escaped"] is not None:
        return str(groups["escaped"])
    inner = next(
        groups[name]
        for name in ("strong", "strong2", "dele", "em", "em2")
        if groups[name] is not None
    )
    return _plain_inline(inner)


def _shown_lines(inline: str) -> list[str]:
    """The rendered lines of inline text (more than one after hard breaks), with whitespace
    collapsed as a browser lays it out."""
    return [_WHITESPACE.sub(" ", part).strip() for part in _plain_inline(inline).split("\n")]


def _shown(inline: str) -> str:
    return " ".join(_shown_lines(inline))


def _join_paragraph(lines: list[str]) -> str:
    """A paragraph as one inline text: soft breaks are spaces, hard ones newlines."""
    text = ""
    for index, line in enumerate(lines):
        part = line.strip()
        separator = " "
        if index < len(lines) - 1:
            if line.endswith("  "):
                separator = "\n"
            elif _BACKSLASH_BREAK.search(part):
                part = part[:-1].rstrip()
                separator = "\n"
        text += part + (separator if index < len(lines) - 1 else "")
    return text


def _expand_tabs(text: str) -> str:
    lead = _LEAD.match(text)
    assert lead is not None
    if "\t" not in lead.group(0):
        return text
    column = 0
    for char in lead.group(0):
        column = column + 4 - column % 4 if char == "\t" else column + 1
    return " " * column + text[lead.end() :]


@dataclass(frozen=True)
class _Marker:
    kind: str
    content_indent: int
    content: str


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _fence(text: str) -> re.Match[str] | None:
    fence = _FENCE.match(text)
    if fence and fence.group(2)[0] == "`" and "`" in fence.group(3):
        return None
    return fence


def _list_marker(text: str) -> _Marker | None:
    if _HR.match(text):
        return None
    match = _LIST_ITEM.match(text)
    if not match:
        return None
    indent = len(match.group(1))
    marker = match.group(2)
    ordered = marker[0].isdigit()
    spaces, rest = match.group(3), match.group(4)
    if spaces is None:
        content_indent, content = indent + len(marker) + 1, ""
    elif len(spaces) > 4:
        content_indent, content = indent + len(marker) + 1, spaces[1:] + rest
    else:
        content_indent, content = indent + len(marker) + len(spaces), rest
    kind = ("o" + marker[-1]) if ordered else ("u" + marker)
    return _Marker(kind, content_indent, content)


def _cells(row: str) -> list[str]:
    text = row.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [cell.strip().replace("\\|", "|") for cell in _CELL_SPLIT.split(text)]


def _table_starts(lines: list[str], i: int) -> bool:
    if i + 1 >= len(lines) or "|" not in lines[i]:
        return False
    delimiter = lines[i + 1]
    if "-" not in delimiter or _indent(delimiter) > 3:
        return False
    cells = _cells(delimiter)
    return all(_DELIMITER_CELL.match(c) for c in cells) and len(cells) == len(_cells(lines[i]))


def _starts_other_block(text: str) -> bool:
    return bool(
        _fence(text)
        or _HR.match(text)
        or _HEADING.match(text)
        or _QUOTE.match(text)
        or _MATH_OPEN.match(text)
        or _MATH_LINE.match(text)
        or _list_marker(text)
    )


def _block_starts(lines: list[str], i: int) -> bool:
    return _starts_other_block(lines[i]) or _table_starts(lines, i)


def _drop_indent(text: str, count: int) -> str:
    return text[min(count, _indent(text)) :]


def _block_lines(lines: list[str]) -> list[str]:
    """The rendered lines of the blocks in ``lines`` (container prefixes already removed)."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        text = lines[i]
        if not text.strip():
            i += 1
            continue
        if _indent(text) >= 4:
            body: list[str] = []
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) >= 4):
                body.append(_drop_indent(lines[i], 4).strip())
                i += 1
            out.extend(body)
            continue
        fence = _fence(text)
        if fence:
            indent, marker = len(fence.group(1)), fence.group(2)
            i += 1
            while i < len(lines):
                close = _FENCE_CLOSE.match(lines[i])
                if close and close.group(1)[0] == marker[0] and len(close.group(1)) >= len(marker):
                    i += 1
                    break
                out.append(_drop_indent(lines[i], indent).strip())
                i += 1
            continue
        math_line = _MATH_LINE.match(text)
        if math_line:
            out.append(_WHITESPACE.sub(" ", math_line.group(1) or math_line.group(2)).strip())
            i += 1
            continue
        math_open = _MATH_OPEN.match(text)
        if math_open:
            closer = "$$" if math_open.group(1) == "$$" else "\\]"
            body = []
            i += 1
            while i < len(lines):
                inner = lines[i].rstrip()
                i += 1
                if inner.endswith(closer):
                    body.append(inner[: -len(closer)])
                    break
                body.append(lines[i - 1])
            out.append(_WHITESPACE.sub(" ", "\n".join(body)).strip())
            continue
        if _HR.match(text):
            i += 1
            continue
        heading = _HEADING.match(text)
        if heading:
            out.append(_shown(_HEADING_CLOSE.sub("", heading.group(2) or "").strip()))
            i += 1
            continue
        if _QUOTE.match(text):
            inner_lines: list[str] = []
            while i < len(lines):
                prefix = _QUOTE.match(lines[i])
                if not prefix:
                    break
                inner_lines.append(lines[i][prefix.end() :])
                i += 1
            out.extend(_block_lines(inner_lines))
            continue
        if _table_starts(lines, i):
            header = _cells(text)
            rows = [header]
            i += 2
            while (
                i < len(lines)
                and lines[i].strip()
                and "|" in lines[i]
                and not _starts_other_block(lines[i])
            ):
                cells = _cells(lines[i])
                rows.append([cells[n] if n < len(cells) else "" for n in range(len(header))])
                i += 1
            out.extend("\t".join(_shown(cell) for cell in row).strip() for row in rows)
            continue
        marker = _list_marker(text)
        if marker:
            i = _list_lines(lines, i, marker, out)
            continue
        paragraph = [text]
        i += 1
        while i < len(lines) and lines[i].strip() and not _block_starts(lines, i):
            paragraph.append(lines[i])
            i += 1
        out.extend(_shown_lines(_join_paragraph(paragraph)))
    return out


def _list_lines(lines: list[str], i: int, first: _Marker, out: list[str]) -> int:
    """Append a list's lines to ``out``; return the index after the list."""
    while i < len(lines):
        marker = _list_marker(lines[i])
        if not marker or marker.kind != first.kind:
            break
        content = marker.content
        task = _TASK.match(content)
        if task:
            content = content[task.end() :]
        item = [content]
        j = i + 1
        while j < len(lines):
            text = lines[j]
            if not text.strip():
                k = j
                while k < len(lines) and not lines[k].strip():
                    k += 1
                if k < len(lines) and _indent(lines[k]) >= marker.content_indent:
                    item.extend("" for _ in range(j, k))
                    j = k
                    continue
                break
            if _indent(text) >= marker.content_indent:
                item.append(_drop_indent(text, marker.content_indent))
                j += 1
                continue
            if item[-1].strip() and not _block_starts(lines, j):  # lazy continuation
                item.append(text.lstrip(" "))
                j += 1
                continue
            break
        out.extend(_block_lines(item))
        i = j
        k = i
        while k < len(lines) and not lines[k].strip():
            k += 1
        if k > i and k < len(lines):
            following = _list_marker(lines[k])
            if following and following.kind == first.kind:
                i = k
                continue
            break
    return i


def answer_lines(markdown: str) -> list[str]:
    """The non-empty lines of text, stripped, that the rendered answer shows a reader.

    The same GFM subset the fake pages render (``static/common.js``): each paragraph, heading,
    list item's paragraph, table row (cells joined by a tab, as ``innerText`` joins them) and
    display formula is one line; code blocks keep their lines; thematic breaks and images show
    nothing; math shows its TeX source without delimiters; runs of whitespace are one space.
    What a site adds around the answer (code-block headers, copy buttons, KaTeX's visual copy)
    is not the answer's text. Comparing these lines with the stripped non-empty lines of an
    extracted answer is independent of how a browser lays out whitespace between blocks.
    """
    lines = [_expand_tabs(line) for line in markdown.split("\n")]
    return [line.strip() for line in _block_lines(lines) if line.strip()]
