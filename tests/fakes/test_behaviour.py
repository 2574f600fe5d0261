"""The fake sites' answers: realistic corpus texts chosen for the question (or, asked for, about
something else), deterministic so tests can assert exactly."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.fakes.behaviour import (
    Behaviour,
    answer_lines,
    answer_markdown,
    asks_for_code,
    chosen_answer,
    keywords,
)
from bridge.fakes.corpus import corpus

BY_NAME = {answer.name: answer for answer in corpus()}


def test_the_same_question_always_gets_the_same_answer() -> None:
    question = "Explain the difference between TCP and UDP"
    assert answer_markdown(question) == answer_markdown(question)
    assert answer_markdown(question) != answer_markdown(question + " please")


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("Explain the difference between TCP and UDP", "15-table-alignment"),
        ("How do I merge two dictionaries in Python?", "56-python-merge-dicts"),
        ("Explain Python decorators in one sentence.", "54-python-decorators"),
        ("What is a Python context manager?", "53-python-with-statement"),
        ("Explain Rust lifetimes briefly.", "06-rust-lifetimes"),
        ("Pythonで非同期にファイルを読む方法を教えてください。", "48-python-async-files-japanese"),
    ],
)
def test_the_answer_is_the_corpus_text_about_the_question(question: str, name: str) -> None:
    """Not the question's words handed back: a text written for (nearly) that question."""
    assert chosen_answer(question).name == name
    answer = answer_markdown(question)
    assert answer.startswith(BY_NAME[name].markdown + "\n\nReference: fake-")
    assert not answer.startswith("Here is an answer")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the capital of France?", ["capital", "France"]),
        ("TCP tcp Tcp", ["TCP"]),
        ("TypeScriptの型ガードの書き方を教えて", ["TypeScript", "型ガード"]),
        ("a an the", []),
        ("Explain Python decorators in one sentence, briefly", ["Python", "decorators"]),
    ],
)
def test_keywords_are_content_words_in_order_without_repeats(
    question: str, expected: list[str]
) -> None:
    assert keywords(question) == expected


def test_a_question_without_keywords_still_gets_a_whole_answer() -> None:
    answer = answer_markdown("Why?")
    assert answer.startswith(chosen_answer("Why?").markdown)
    assert len(answer) > 100


def test_japanese_questions_get_japanese_answers() -> None:
    for question in ("再帰について詳しく説明して", "富士山の高さは？", "量子コンピュータとは"):
        assert re.search(r"[\u3040-\u30ff]", chosen_answer(question).question), question
    assert chosen_answer("富士山の高さは？").name == "31-japanese-short"


@pytest.mark.parametrize(
    "question",
    [
        "Write a function that reverses a list",
        "Show me JavaScript code to debounce a handler",
        "Write a bash script that counts lines",
        "再帰のコードを書いて",
    ],
)
def test_a_question_asking_for_code_gets_a_fenced_block(question: str) -> None:
    assert asks_for_code(question)
    assert "\n```" in answer_markdown(question)


def test_an_off_topic_answer_is_a_whole_answer_about_something_else() -> None:
    question = "How do I merge two dictionaries in Python?"
    on = answer_markdown(question)
    off = answer_markdown(question, Behaviour(off_topic=True))
    assert off == answer_markdown(question, Behaviour(off_topic=True))  # deterministic
    assert off != on and off.endswith(on.rsplit("\n\n", 1)[1])  # same reference line
    text = off.lower()
    assert len(off) > 300
    assert not any(word in text for word in ("python", "merg", "dictionar"))
    # In the question's language, as a confused site would still answer.
    japanese = "Pythonで非同期にファイルを読む方法を教えてください。"
    off_ja = chosen_answer(japanese, off_topic=True)
    assert re.search(r"[\u3040-\u30ff]", off_ja.markdown) and "ファイル" not in off_ja.markdown


def test_long_answers_are_the_chosen_answer_then_tens_of_kilobytes() -> None:
    question = "Write Python code to merge two sorted lists"
    short = answer_markdown(question)
    long = answer_markdown(question, Behaviour(length="long"))
    assert 20_000 < len(long.encode()) < 100_000
    head, reference = short.rsplit("\n\n", 1)
    assert long.startswith(head + "\n\n# Backend engineering handbook")
    assert long.endswith("\n\n" + reference)
    japanese = answer_markdown("再帰について説明して", Behaviour(length="long"))
    assert "# バックエンド開発ガイド" in japanese


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


# No deadline: the first example loads the corpus and builds the markdown parser, and a busy
# machine makes any one example slow; the property is about the answers, not their speed.
@settings(deadline=None)
@given(st.text(max_size=200), st.booleans())
def test_any_question_gets_a_deterministic_answer_with_visible_lines(
    question: str, off_topic: bool
) -> None:
    behaviour = Behaviour(off_topic=off_topic)
    answer = answer_markdown(question, behaviour)
    assert answer == answer_markdown(question, behaviour)
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
    # Most chosen answers stream within half a second at the default pace.
    typical = sorted(len(a.markdown) for a in corpus())[len(corpus()) // 2]
    assert typical / behaviour.chunk_chars * behaviour.chunk_interval_ms < 500
