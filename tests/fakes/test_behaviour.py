"""The fake sites' answers are pure functions of the question, so tests can assert exactly."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.fakes.behaviour import (
    Behaviour,
    answer_lines,
    answer_markdown,
    asks_for_code,
    keywords,
)


def test_the_same_question_always_gets_the_same_answer() -> None:
    question = "Explain the difference between TCP and UDP"
    assert answer_markdown(question) == answer_markdown(question)
    assert answer_markdown(question) != answer_markdown(question + " please")


def test_the_answer_restates_the_questions_keywords() -> None:
    answer = answer_markdown("Explain the difference between TCP and UDP")
    assert answer.startswith("Here is an answer about difference, TCP and UDP.")
    for word in ("difference", "TCP", "UDP"):
        assert f"- **{word}**: the key point about {word}." in answer


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the capital of France?", ["capital", "France"]),
        ("TCP tcp Tcp", ["TCP"]),
        ("TypeScriptの型ガードの書き方を教えて", ["TypeScript", "型ガード"]),
        ("a an the", []),
    ],
)
def test_keywords_are_content_words_in_order_without_repeats(
    question: str, expected: list[str]
) -> None:
    assert keywords(question) == expected


def test_a_question_without_keywords_still_gets_an_answer() -> None:
    assert answer_markdown("Why?").startswith("Here is an answer about question.")


def test_japanese_questions_get_japanese_phrasing() -> None:
    answer = answer_markdown("再帰について詳しく説明して")
    assert answer.startswith("「再帰」「説明」についてお答えします。")


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Write a function that reverses a list", "python"),
        ("Show me JavaScript code to debounce a handler", "javascript"),
        ("Write a bash script that counts lines", "bash"),
        ("再帰のコードを書いて", "python"),
    ],
)
def test_a_question_asking_for_code_gets_a_fenced_block(question: str, language: str) -> None:
    assert asks_for_code(question)
    answer = answer_markdown(question)
    assert f"\n```{language}\n" in answer
    assert answer.count("```") == 2


def test_a_question_not_asking_for_code_gets_no_code_block() -> None:
    question = "What are the three primary colors?"
    assert not asks_for_code(question)
    assert "```" not in answer_markdown(question)


def test_long_answers_are_tens_of_kilobytes_and_each_part_differs() -> None:
    answer = answer_markdown("Explain caching strategies", Behaviour(length="long"))
    assert 20_000 < len(answer.encode()) < 100_000
    assert answer.count("## Part ") > 50
    parts = answer.split("## Part ")[1:]
    assert len(set(parts)) == len(parts)


def test_long_answers_keep_the_short_answers_content() -> None:
    question = "Write Python code to merge two sorted lists"
    short = answer_markdown(question)
    long = answer_markdown(question, Behaviour(length="long"))
    head = short.rsplit("\n\nReference:", 1)[0]
    assert long.startswith(head)
    assert long.endswith(short.rsplit("\n\n", 1)[1])


def test_an_answer_set_per_test_is_used_verbatim() -> None:
    assert answer_markdown("anything", Behaviour(answer="Exactly **this**.")) == "Exactly **this**."


def test_every_answer_ends_with_a_reference_unique_to_the_question() -> None:
    first = answer_markdown("one question").rsplit("\n", 1)[1]
    second = answer_markdown("another question").rsplit("\n", 1)[1]
    assert first.startswith("Reference: fake-")
    assert first != second


@pytest.mark.parametrize(
    ("markdown", "lines"),
    [
        ("One\ntwo\n\nThree", ["One two", "Three"]),
        ("# Title\n\nText with **bold** and `code`.", ["Title", "Text with bold and code."]),
        ("- a\n- **b**\n\n1. c\n2. d", ["a", "b", "c", "d"]),
        ("```python\ndef f():\n\n    return 1\n```", ["def f():", "return 1"]),
        ("Intro\n```\nunterminated code", ["Intro", "unterminated code"]),
        ("", []),
        # Nested lists: one line per item, whatever the depth or marker.
        ("- a\n  - b\n    1. c\n* d", ["a", "b", "c", "d"]),
        ("1. a\n\n   more of a\n2. b", ["a", "more of a", "b"]),
        ("- [ ] open\n- [x] done", ["open", "done"]),
        # Tables: a row is its cells joined by a tab, as innerText joins them.
        ("| a | b |\n|:-|-:|\n| 1 | `x \\| y` |\n| only |", ["a\tb", "1\tx | y", "only"]),
        ("a | b\nnot a delimiter", ["a | b not a delimiter"]),
        ("> quoted\n> > deeper\n\n---\n\nafter", ["quoted", "deeper", "after"]),
        # Inline: markers go, links keep their text, images show nothing, math its TeX.
        (
            "*em* _em_ ~~del~~ snake_case [link](u) ![img](i.png) <https://a.b>",
            ["em em del snake_case link https://a.b"],
        ),
        ("$x^2$ and \\(y\\), $5 and $10", ["x^2 and y, $5 and $10"]),
        ("$$\nE = mc^2\n$$\n\\[\na\nb\n\\]\n$$c$$", ["E = mc^2", "a b", "c"]),
        ("&lt;b&gt; &amp; `&amp;` \\*x\\*", ["<b> & &amp; *x*"]),
        # Hard breaks split a paragraph; soft ones do not.
        ("one  \ntwo\\\nthree\nfour", ["one", "two", "three four"]),
        # Indented code (tabs to stops of 4), never inside a paragraph.
        ("text\n\n    code\n\tmore\n\nend", ["text", "code", "more", "end"]),
        ("text\n    continued", ["text continued"]),
        ("# Title #\n#tag", ["Title", "#tag"]),
    ],
)
def test_answer_lines_are_the_text_a_reader_sees(markdown: str, lines: list[str]) -> None:
    assert answer_lines(markdown) == lines


def test_german_is_a_locale() -> None:
    assert Behaviour(locale="de").locale == "de"


@given(st.text(max_size=200))
def test_any_question_gets_a_deterministic_answer_with_visible_lines(question: str) -> None:
    answer = answer_markdown(question)
    assert answer == answer_markdown(question)
    lines = answer_lines(answer)
    assert lines[-1].startswith("Reference: fake-")
    assert all(line and line == line.strip() for line in lines)


@pytest.mark.parametrize(
    "changes",
    [
        {"state": "sleepy"},
        {"locale": "fr"},
        {"input_kind": "div"},
        {"length": "medium"},
        {"chunk_chars": 0},
        {"chunk_interval_ms": -1},
        {"thinking_ms": -1},
        {"hydration_ms": -5},
    ],
)
def test_invalid_behaviours_are_refused(changes: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        dataclasses.replace(Behaviour(), **changes)  # type: ignore[arg-type]


def test_default_behaviour_is_fast() -> None:
    behaviour = Behaviour()
    assert behaviour.thinking_ms == 0
    assert behaviour.hydration_ms == 0
    assert behaviour.state == "ok"
    chunks = len(answer_markdown("Explain TCP and UDP")) / behaviour.chunk_chars
    assert chunks * behaviour.chunk_interval_ms < 500
