"""What of a page may go into a capture (pure): the person's text never, the site's
structure always (docs/captures.md#what-is-kept-what-is-replaced).

The primitives every part of a capture uses: text becomes its length class or a placeholder
of its length, ids become pseudonyms of the same shape (the same id always the same
pseudonym, so a parser that matches ids across events still can), URLs keep their host and
the shape of their path.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = [
    "LENGTH_CLASSES",
    "Pseudonyms",
    "length_class",
    "looks_like_id",
    "placeholder",
    "url_shape",
]

#: Upper bounds of the length classes 1.. (0 is empty; above the last bound is the last + 1).
LENGTH_CLASSES = (8, 32, 128, 512, 2048)

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
# A token with a letter prefix and an id after it: Gemini's c_…, r_…, rc_… (G7.2), WEB:…
_PREFIXED = re.compile(r"^([A-Za-z]{1,4}[_:])([0-9A-Za-z_-]{6,})$")
_HEXISH = re.compile(r"^[0-9a-f]{12,}$", re.I)
_DIGITS = re.compile(r"\d")


def length_class(n: int) -> int:
    """0 for empty, then 1 (1–8 characters), 2 (9–32), 3 (33–128), 4 (129–512),
    5 (513–2048), 6 (more): enough to tell a label from a paragraph from an answer, not
    enough to tell one text from another."""
    if n <= 0:
        return 0
    for index, bound in enumerate(LENGTH_CLASSES, start=1):
        if n <= bound:
            return index
    return len(LENGTH_CLASSES) + 1


def placeholder(text: str) -> str:
    """A stand-in of the same length (in UTF-16 code units, as JavaScript counts): lengths
    are kept where a parser or a detector counts them."""
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    return "x" * units


def looks_like_id(value: str) -> bool:
    """A UUID, a long hex string, a prefixed id (``c_9f…``), or a token of 12+ characters
    with digits in it: an identifier, never UI text."""
    if _UUID.match(value) or _HEXISH.match(value) or _PREFIXED.match(value):
        return True
    return len(value) >= 12 and " " not in value and len(_DIGITS.findall(value)) >= 3


class Pseudonyms:
    """Consistent stand-ins for ids: the same id always gets the same pseudonym, of the same
    shape (a UUID stays a UUID, ``c_<hex>`` keeps its prefix and length)."""

    def __init__(self) -> None:
        self._known: dict[str, str] = {}

    def __call__(self, value: str) -> str:
        known = self._known.get(value)
        if known is not None:
            return known
        n = len(self._known) + 1
        if _UUID.match(value):
            made = f"00000000-0000-4000-8000-{n:012d}"
        else:
            prefixed = _PREFIXED.match(value)
            prefix, rest = (prefixed.group(1), prefixed.group(2)) if prefixed else ("", value)
            digits = str(n)
            made = prefix + "0" * max(0, len(rest) - len(digits)) + digits
        self._known[value] = made
        return made


def _segment(segment: str) -> str:
    return ":id" if looks_like_id(segment) or (segment.isdigit() and len(segment) > 3) else segment


def url_shape(url: str) -> str:
    """``scheme://host/path`` with id-like path segments as ``:id`` and the query reduced to
    its parameter names (``?bl&rt``); fragments dropped. Not a URL: its placeholder."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return placeholder(url)
    if not parts.scheme or not parts.netloc:
        if url.startswith("/"):  # a path of the page's own site
            path = "/".join(_segment(s) for s in parts.path.split("/"))
            return path + _query_names(parts.query)
        return placeholder(url)
    path = "/".join(_segment(s) for s in parts.path.split("/"))
    return f"{parts.scheme}://{parts.hostname or ''}{path}{_query_names(parts.query)}"


def _query_names(query: str) -> str:
    if not query:
        return ""
    names = [pair.partition("=")[0] for pair in query.split("&") if pair]
    return "?" + "&".join(n for n in names if n)
