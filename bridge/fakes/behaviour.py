"""What a fake site does for a question: the settings, and the deterministic answer text.

This module is pure (no I/O, no clock) so the answers can be asserted exactly: the same question
and settings always give the same markdown, and :func:`answer_lines` says which lines of text a
reader of the rendered page sees, using the same markdown subset the pages render
(``static/markdown.js``): paragraphs, ``#`` headings, ``-``/``1.`` lists, fenced code, ``**bold**``
and `` `code` `` inline.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Behaviour",
    "InputKind",
    "Length",
    "Locale",
    "State",
    "answer_lines",
    "answer_markdown",
    "asks_for_code",
    "keywords",
]

State = Literal["ok", "logged_out", "rate_limited", "error_turn", "stuck", "challenge"]
Locale = Literal["en", "ja"]
InputKind = Literal["prosemirror", "textarea"]
Length = Literal["short", "long"]

_STATES = ("ok", "logged_out", "rate_limited", "error_turn", "stuck", "challenge")
_LOCALES = ("en", "ja")
_INPUT_KINDS = ("prosemirror", "textarea")
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
    thinking_ms: int = 0
    """ChatGPT's Thinking phase before the answer streams; 0 means no thinking phase."""
    hydration_ms: int = 0
    """How long after load the composer appears."""
    state: State = "ok"
    """``ok`` answers. ``logged_out``: a login wall instead of the composer (read at page load;
    as a queued behaviour the site refuses the question with 401 and the page shows the wall).
    ``rate_limited``: the site's limit message instead of an answer. ``error_turn``: "Something
    went wrong" (ChatGPT adds a Retry button). ``stuck``: the first chunk streams, then nothing:
    the stop button stays and the answer never completes; Gemini's hung UI also ignores Stop.
    ``challenge``: Cloudflare's "Just a moment…" interstitial instead of the site (read at page
    load; docs/sites.md#challenge: documented for ChatGPT only, served by both fakes alike)."""
    locale: Locale = "en"
    input_kind: InputKind = "prosemirror"
    """ChatGPT's input: a ProseMirror-style contenteditable, or a plain textarea."""

    def __post_init__(self) -> None:
        _check_choice("state", self.state, _STATES)
        _check_choice("locale", self.locale, _LOCALES)
        _check_choice("input_kind", self.input_kind, _INPUT_KINDS)
        _check_choice("length", self.length, _LENGTHS)
        if self.chunk_chars < 1:
            raise ValueError(f"chunk_chars must be at least 1, not {self.chunk_chars}")
        for name in ("chunk_interval_ms", "thinking_ms", "hydration_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, not {getattr(self, name)}")


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


_FENCE = re.compile(r"^```")
_HEADING = re.compile(r"^#{1,6}\s+(?P<text>.*)$")
_LIST_ITEM = re.compile(r"^(?:[-*]|\d+\.)\s+(?P<text>.*)$")
_INLINE_MARKUP = re.compile(r"\*\*(.+?)\*\*|`([^`]+)`")


def _plain_inline(text: str) -> str:
    return _INLINE_MARKUP.sub(lambda m: m.group(1) or m.group(2), text)


def answer_lines(markdown: str) -> list[str]:
    """The non-empty lines of text, stripped, that the rendered markdown shows a reader.

    Comparing these with the stripped non-empty lines of an extracted answer is independent of
    how a browser lays out whitespace between blocks. Paragraph lines join with a space, as
    markdown's soft line breaks do.
    """
    lines: list[str] = []
    paragraph: list[str] = []
    in_code = False

    def flush() -> None:
        if paragraph:
            lines.append(_plain_inline(" ".join(paragraph)).strip())
            paragraph.clear()

    for raw in markdown.split("\n"):
        if _FENCE.match(raw):
            flush()
            in_code = not in_code
            continue
        if in_code:
            lines.append(raw.strip())
            continue
        if not raw.strip():
            flush()
            continue
        block = _HEADING.match(raw) or _LIST_ITEM.match(raw)
        if block:
            flush()
            lines.append(_plain_inline(block.group("text")).strip())
            continue
        paragraph.append(raw.strip())
    flush()
    return [line for line in lines if line]
