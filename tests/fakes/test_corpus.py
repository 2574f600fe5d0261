"""The markdown-fidelity corpus: what it covers, and that every answer survives both sites'
wire encodings (bridge.fakes.wire) and the network parsers (bridge.providers.streams)."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from bridge.fakes.corpus import CorpusAnswer, corpus
from bridge.fakes.wire import chatgpt_body, gemini_body
from bridge.providers.streams import chatgpt_answer, gemini_answer

ANSWERS = corpus()
BY_NAME = {answer.name: answer for answer in ANSWERS}

_FENCE = re.compile(r"^ *(`{3,}|~{3,})(?P<info>[^\s`]*)", re.MULTILINE)
_TABLE_RULE = re.compile(r"^\|? *:?-{3,}:? *(\| *:?-{3,}:? *)+\|? *$", re.MULTILINE)
_JAPANESE = re.compile(r"[\u3040-\u30ff]")


def having(pattern: str, flags: int = re.MULTILINE) -> list[CorpusAnswer]:
    compiled = re.compile(pattern, flags)
    return [answer for answer in ANSWERS if compiled.search(answer.markdown)]


def fence_languages(markdown: str) -> set[str]:
    """The info strings of the opening fences (every other fence line closes a block)."""
    languages = set()
    open_fence: str | None = None
    for match in _FENCE.finditer(markdown):
        marker = match.group(1)
        if open_fence is None:
            open_fence = marker
            languages.add(match["info"].lower())
        elif marker[0] == open_fence[0] and len(marker) >= len(open_fence) and not match["info"]:
            open_fence = None
    return languages


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


# -- the corpus itself ----------------------------------------------------------------------------


def test_the_corpus_is_large_sorted_and_uniquely_named() -> None:
    names = [answer.name for answer in ANSWERS]
    assert len(ANSWERS) >= 40
    assert names == sorted(names)
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"\d{2}-[a-z0-9-]+", name) for name in names)
    files = [
        entry.name
        for entry in resources.files("bridge.fakes.corpus").iterdir()
        if entry.name.endswith(".md")
    ]
    assert len(files) >= 44


def test_each_answer_has_its_question_and_exact_markdown() -> None:
    for answer in ANSWERS:
        assert answer.question.strip() == answer.question and answer.question, answer.name
        assert "-->" not in answer.question
        assert answer.markdown and not answer.markdown.startswith("<!-- question:"), answer.name
    # Read exactly: the rest of the file after the question line, nothing added or stripped.
    raw = resources.files("bridge.fakes.corpus").joinpath("01-one-word.md").read_bytes()
    assert raw.decode("utf-8").split("\n", 1)[1] == BY_NAME["01-one-word"].markdown == "Yes."
    assert BY_NAME["40-hard-line-breaks"].markdown.count("  \n") >= 2  # trailing spaces kept


def test_fenced_code_in_many_languages_and_without_one() -> None:
    languages = set().union(*(fence_languages(answer.markdown) for answer in ANSWERS))
    expected = {"python", "javascript", "typescript", "rust", "go", "bash", "sql", "java", "cpp"}
    assert expected | {"json", "yaml"} <= languages
    assert len(languages - {""}) >= 6
    assert "" in languages  # a fence with no language
    assert having(r"^````")  # a longer fence wrapping a fence
    assert having(r"^~~~")  # tilde fences
    assert having(r"^ {4,}```")  # fences inside list items
    assert having(r"^ {4,}\S", re.MULTILINE)  # indented code / deep nesting


def test_code_that_looks_like_markup() -> None:
    assert having(r"`[^`\n]*\$\{[^`\n]*`")  # template literals with backticks in code
    assert having(r"``` `` `code` `` ```")
    assert having(r"<script>")
    assert having(r"^#include <")
    assert having(r"^ *- not a list$")  # list-looking lines inside a fence
    assert having(r"^# Backup summary$")  # a heading-looking line inside code


def test_tables() -> None:
    tables = having(_TABLE_RULE.pattern)
    assert len(tables) >= 8
    assert having(r"^\|? *:-{3,}:? *\|")  # left or centre alignment colons
    assert having(r"-{3,}: *\|")  # right alignment
    assert having(r"^\|.*`[^`]*\\\|[^`]*`.*\|$")  # an escaped pipe inside code in a cell
    assert having(r"^\| *[^|\s][^|]*\| *\| *[^|]+\|$")  # an empty cell


def test_lists() -> None:
    assert having(r"^ {4,}[-*] ")  # three levels of bullets
    assert having(r"^ {6,}\d+\. ")  # ordered inside unordered, three deep
    assert having(r"^- \*\*Phase")  # unordered at the top
    assert having(r"^- \[ \] ") and having(r"^- \[x\] ")  # task lists
    assert having(r"^ +- \[[ x]\] ")  # nested tasks
    assert having(r"^\* ")  # "*" bullets, as Gemini writes them


def test_quotes_headings_and_rules() -> None:
    assert having(r"^> > ")  # nested quotes
    assert having(r"^> > > ")  # three deep
    assert having(r"^> ### ")  # a heading inside a quote
    for level in range(1, 5):
        assert having(rf"^{'#' * level} \S"), level
    assert having(r"^---$") and having(r"^\*\*\*$") and having(r"^___$")


def test_inline_styles_links_and_images() -> None:
    assert having(r"(?<![*\w])\*[^*\s][^*\n]*\*(?!\*)")  # emphasis
    assert having(r"\*\*[^*\n]+\*\*")  # strong
    assert having(r"\*\*\*[^*\n]+\*\*\*")  # both
    assert having(r"~~[^~\n]+~~")  # strikethrough
    assert having(r"`[^`\n]+`")  # inline code
    assert having(r"\[[^\]\n]+\]\(https?://")  # links
    assert having(r"<https?://[^>\s]+>")  # autolinks
    assert having(r"(?<![<(])https://pypi\.org/project/requests/")  # a bare URL
    assert having(r"!\[[^\]\n]*\]\(https?://")  # images
    assert having(r"\[!\[")  # a linked image
    assert having(r"^\[[a-z0-9]+\]: https?://")  # reference links


def test_math() -> None:
    assert having(r"(?<![$\\])\$[^$\s][^$\n]*\$(?!\$)")  # inline $…$
    assert having(r"\\\(.+?\\\)")  # inline \(…\)
    assert having(r"^\$\$$") and having(r"\$\$[^$\n]+\$\$")  # display $$…$$
    assert having(r"^\\\[$")  # display \[…\]
    assert having(r"\\begin\{aligned\}")


def test_entities_special_characters_and_emoji() -> None:
    assert having(r"&lt;") and having(r"&amp;") and having(r"&#x27;")
    assert having(r"(?<!`)a < b && b > c")  # bare < and & in text
    assert having(r"\\\*not italic\\\*")  # escaped markup
    emoji = [a for a in ANSWERS if any(ord(ch) >= 0x1F300 for ch in a.markdown)]
    assert len(emoji) >= 5
    assert having("\u200d")  # joined emoji sequences
    assert having("[\U0001d400-\U0001d7ff]")  # astral letters outside emoji
    assert having("\t")  # a literal tab


def test_japanese_answers() -> None:
    japanese = [a for a in ANSWERS if _JAPANESE.search(a.markdown)]
    assert len(japanese) >= 4
    with_code_and_table = [
        a for a in japanese if "```" in a.markdown and _TABLE_RULE.search(a.markdown)
    ]
    assert with_code_and_table
    assert any(_JAPANESE.search(a.question) for a in japanese)


def test_long_and_short_answers() -> None:
    long = [a for a in ANSWERS if len(a.markdown) > 50_000]
    assert len(long) >= 2
    for answer in long:
        lines = answer.markdown.split("\n")
        # Ordinary, varied markdown: not one line repeated.
        assert len(set(lines)) > len(lines) // 4, answer.name
        assert len(fence_languages(answer.markdown) - {""}) >= 4, answer.name
        assert _TABLE_RULE.search(answer.markdown), answer.name
    assert any(_JAPANESE.search(a.markdown) for a in long)
    one_word = [a for a in ANSWERS if len(a.markdown.split()) == 1]
    one_line = [a for a in ANSWERS if "\n" not in a.markdown.strip()]
    assert one_word and len(one_line) >= 3


def test_answers_that_contain_their_question() -> None:
    echoing = [a for a in ANSWERS if a.question in a.markdown]
    assert len(echoing) >= 2


# -- round trips ------------------------------------------------------------------------------------


def _chunk_size(answer: CorpusAnswer, size: int) -> int:
    # Gemini resends the whole text in every chunk, so very long answers go in ~40 chunks.
    return max(size, len(answer.markdown) // 40)


@pytest.mark.parametrize("answer", ANSWERS, ids=[a.name for a in ANSWERS])
@pytest.mark.parametrize("size", [1, 7, 24])
def test_every_answer_survives_the_chatgpt_stream(answer: CorpusAnswer, size: int) -> None:
    size = size if len(answer.markdown) < 10_000 else _chunk_size(answer, size)
    body = chatgpt_body(chunks(answer.markdown, size), thinking_seconds=2, title=answer.question)
    parsed = chatgpt_answer(body)
    assert parsed is not None
    assert (parsed.text, parsed.complete, parsed.error) == (answer.markdown, True, None)
    half = chatgpt_answer(body[: len(body) // 2])
    assert half is not None and answer.markdown.startswith(half.text) and not half.complete


@pytest.mark.parametrize("answer", ANSWERS, ids=[a.name for a in ANSWERS])
@pytest.mark.parametrize("size", [7, 24])
def test_every_answer_survives_the_gemini_stream(answer: CorpusAnswer, size: int) -> None:
    body = gemini_body(chunks(answer.markdown, _chunk_size(answer, size)))
    parsed = gemini_answer(body)
    assert parsed is not None
    assert (parsed.text, parsed.complete, parsed.error_code) == (answer.markdown, True, None)
    half = gemini_answer(body[: len(body) // 2])
    assert half is not None and answer.markdown.startswith(half.text)
