"""Choosing the answer's source (pure): network, then copy, then the DOM, each believed only
when the page's own text agrees with it (docs/sites.md#answer-sources)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bridge.providers.answer_sources import (
    AGREEMENT_THRESHOLD,
    Candidate,
    agreement,
    choose,
    words,
)

MARKDOWN = (
    "## Deep copy\n\nUse `structuredClone` for **plain** data, see "
    "[MDN](https://developer.mozilla.org/).\n\n| k | v |\n|---|---|\n| a | 1 |\n\n"
    "```js\nconst b = structuredClone(a);\n```"
)
# What the page shows of it: markup gone, every word kept (link targets are not shown).
RENDERED = "Deep copy\nUse structuredClone for plain data, see MDN.\nk v\na 1\nconst b = structuredClone(a);"


def test_the_rendered_words_are_all_in_the_source() -> None:
    assert agreement(MARKDOWN, RENDERED) == 1.0


def test_another_answer_does_not_agree() -> None:
    other = "Python's deepcopy copies nested objects; use it for plain data structures."
    assert agreement(other, RENDERED) < AGREEMENT_THRESHOLD


def test_japanese_is_compared_character_by_character() -> None:
    # Markup splits runs of kanji differently in the source and the rendering.
    assert words("**深い**コピー") == words("深いコピー")
    assert agreement("**深い**コピーを使う", "深いコピーを使う") == 1.0
    assert agreement("浅いコピー", "深いコピーを使う") < AGREEMENT_THRESHOLD


def test_a_blank_page_contradicts_nothing() -> None:
    assert agreement("anything", "") == 1.0


def test_network_wins_when_the_page_agrees() -> None:
    choice = choose(
        [Candidate("network", MARKDOWN), Candidate("copy", "x"), Candidate("dom", RENDERED)],
        RENDERED,
    )
    assert (choice.source, choice.text, choice.rejected) == ("network", MARKDOWN, ())


def test_each_rejected_source_says_why_and_the_next_one_wins() -> None:
    choice = choose(
        [
            Candidate("network", "", why_not="no answer request seen"),
            Candidate("copy", "a different answer entirely"),
            Candidate("dom", RENDERED),
        ],
        RENDERED,
    )
    assert choice.source == "dom"
    assert choice.text == RENDERED
    assert choice.rejected[0] == ("network", "no answer request seen")
    assert choice.rejected[1][0] == "copy"
    assert "disagrees with the page" in choice.rejected[1][1]


def test_an_unfinished_stream_is_not_the_answer() -> None:
    choice = choose(
        [Candidate("network", MARKDOWN, complete=False), Candidate("copy", MARKDOWN)], RENDERED
    )
    assert choice.source == "copy"
    assert choice.rejected == (("network", "incomplete"),)


def test_without_a_dom_candidate_the_rendered_text_is_the_last_resort() -> None:
    choice = choose([Candidate("network", "")], RENDERED)
    assert (choice.source, choice.text) == ("dom", RENDERED)


@given(st.text(min_size=1))
def test_a_source_always_agrees_with_itself(text: str) -> None:
    assert agreement(text, text) == 1.0


@given(st.lists(st.sampled_from(["**", "`", "#", "| ", "- ", "> ", "\n", "_"])), st.text())
def test_markup_around_the_words_never_lowers_agreement(marks: list[str], text: str) -> None:
    marked = "".join(marks) + text + "".join(reversed(marks))
    assert agreement(marked, text) == 1.0


def test_words_the_page_repeats_count_once() -> None:
    # Typeset math carries its source two or three times over (MathML, annotation, glyphs).
    assert agreement("Euler: $e^{i\\pi}+1=0$", "Euler: e^{i\\pi}+1=0 e^{i\\pi}+1=0") == 1.0
