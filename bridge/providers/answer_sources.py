"""Which of an answer's sources to return (pure): the site's network stream, the turn's own
copy action, or the rendered DOM (docs/sites.md#answer-sources).

The network stream carries the site's own markdown, byte for byte; the copy action gives
the markdown the site itself puts on the clipboard; converting the rendered DOM back to
markdown loses what rendering dropped (link targets, math source, fence languages a site
does not label). So the order is network, copy, DOM. A source is only believed when the
page agrees with it: a stream read from the wrong request, or a copy of the wrong turn,
must not become the answer. The check compares the *words* of the rendered text with the
candidate's words: rendering removes markup but keeps every word, so nearly all of the
rendered words must be found in the candidate.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "AGREEMENT_THRESHOLD",
    "Candidate",
    "Choice",
    "Source",
    "agreement",
    "choose",
    "words",
]

Source = Literal["network", "copy", "dom"]

#: The share of the page's words a candidate must contain to be believed. Rendering keeps
#: words; what it changes (list markers, table pipes, math typeset) rarely makes a word.
AGREEMENT_THRESHOLD = 0.9

# A word: a run of letters or digits in alphabetic scripts (not "_": it is markup too), or
# a single CJK character (Japanese has no spaces, and markup such as **…** splits runs
# differently in the source than in the rendered text).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_WORD = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")


def words(text: str) -> Counter[str]:
    """The multiset of words of ``text``, case-folded."""
    return Counter(match.group(0).casefold() for match in _WORD.finditer(text))


def agreement(candidate: str, rendered: str) -> float:
    """The share of the distinct words of ``rendered`` (the page's text) that ``candidate``
    contains, 0..1; 1.0 when the page shows nothing to compare.

    Distinct words, not counts: a page may show a word more often than the source has it
    (typeset math carries its text two or three times), never a word the source lacks."""
    seen = set(words(rendered))
    if not seen:
        return 1.0
    have = words(candidate)
    return sum(1 for word in seen if word in have) / len(seen)


@dataclass(frozen=True)
class Candidate:
    """One source's reading of the answer ("" when the source had nothing)."""

    source: Source
    text: str
    complete: bool = True
    why_not: str = ""  # set when the source could not be read at all


@dataclass(frozen=True)
class Choice:
    """The answer text chosen among the sources, which source gave it, and why the others lost."""

    text: str
    source: Source
    #: Sources tried before the chosen one, each with why it lost (for ``used.fallbacks``
    #: and debug dumps).
    rejected: tuple[tuple[Source, str], ...] = ()
    agreement: float = 1.0


def choose(candidates: list[Candidate], rendered: str) -> Choice:
    """The first candidate the page agrees with, in the order given; the DOM's reading
    (the last candidate, ``rendered`` itself) when none does."""
    rejected: list[tuple[Source, str]] = []
    for candidate in candidates:
        if candidate.source == "dom":
            return Choice(candidate.text, "dom", tuple(rejected), 1.0)
        if candidate.why_not:
            rejected.append((candidate.source, candidate.why_not))
            continue
        if not candidate.text.strip():
            rejected.append((candidate.source, "empty"))
            continue
        if not candidate.complete:
            rejected.append((candidate.source, "incomplete"))
            continue
        score = agreement(candidate.text, rendered)
        if score < AGREEMENT_THRESHOLD:
            rejected.append((candidate.source, f"disagrees with the page ({score:.2f})"))
            continue
        return Choice(candidate.text, candidate.source, tuple(rejected), score)
    return Choice(rendered, "dom", tuple(rejected), 1.0)
