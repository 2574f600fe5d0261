"""Routes (``browser_route``) and what becomes of one paused request (pure).

A route matches URLs by a glob written as Playwright writes them (``page.route``), so
patterns from playwright-mcp prompts work: ``**`` any characters, ``*`` any but ``/``,
``{a,b}`` either, every other character itself (``?`` too: it is the query's mark). Matched
by a small automaton in time linear in the URL, never a backtracking regular expression: the
URL is the page's to choose, and a slow match would hold every paused request of the tab. A route
either fulfils the request (status, body, content type, headers), fails it (abort), or lets
it go on with headers added or removed.

``decide`` is the one order every paused request goes through: the person's origin guard
first (``bridge.policy.origins``), then the routes, newest first, then on unchanged.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from bridge.policy.origins import OriginPolicy

__all__ = ["MAX_ALTERNATIVES", "Decision", "Route", "decide", "glob_matches", "parse_headers"]


#: At most this many patterns one glob's ``{a,b}`` groups expand to.
MAX_ALTERNATIVES = 64

Token = tuple[str, str]  # ("lit", char) | ("star", "") | ("any", "") | ("anyslash", "")


@lru_cache(maxsize=256)
def _alternatives(glob: str) -> tuple[tuple[Token, ...], ...]:
    """The glob as token lists, one per combination of its ``{a,b}`` choices. ValueError for
    an unclosed group, or more combinations than ``MAX_ALTERNATIVES``."""
    parts: list[list[list[Token]]] = []  # each part: its choices (a literal run: one choice)
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "{":
            end = glob.find("}", i)
            if end < 0:
                raise ValueError(f"pattern {glob!r}: a '{{' is never closed")
            parts.append([_tokens(choice) for choice in glob[i + 1 : end].split(",")])
            i = end + 1
            continue
        j = i
        while j < len(glob) and glob[j] != "{":
            j += 1
        parts.append([_tokens(glob[i:j])])
        i = j
    combos: list[list[Token]] = [[]]
    for choices in parts:
        combos = [combo + choice for combo in combos for choice in choices]
        if len(combos) > MAX_ALTERNATIVES:
            raise ValueError(f"pattern {glob!r}: more than {MAX_ALTERNATIVES} {{a,b}} choices")
    return tuple(tuple(combo) for combo in combos)


def _tokens(text: str) -> list[Token]:
    out: list[Token] = []
    i = 0
    while i < len(text):
        if text.startswith("**/", i):
            out.append(("anyslash", ""))  # "**/" also matches no folder at all
            i += 3
        elif text.startswith("**", i):
            out.append(("any", ""))
            i += 2
        elif text[i] == "*":
            out.append(("star", ""))
            i += 1
        else:
            out.append(("lit", text[i]))
            i += 1
    return out


def _closure(tokens: tuple[Token, ...], states: set[tuple[int, bool]]) -> set[tuple[int, bool]]:
    """Add the states reached without reading: a wildcard may match nothing."""
    todo = list(states)
    while todo:
        i, inner = todo.pop()
        if i < len(tokens) and not inner and tokens[i][0] != "lit" and (i + 1, False) not in states:
            states.add((i + 1, False))
            todo.append((i + 1, False))
    return states


def _matches(tokens: tuple[Token, ...], url: str) -> bool:
    """Whether ``url`` is all of the token list: the states of its automaton, advanced one
    character at a time (time linear in the URL: a page's long URL cannot stall the loop
    that answers paused requests, as a backtracking regular expression could)."""
    states = _closure(tokens, {(0, False)})
    for ch in url:
        after: set[tuple[int, bool]] = set()
        for i, _inner in states:
            if i == len(tokens):
                continue
            kind, lit = tokens[i]
            if kind == "lit":
                if ch == lit:
                    after.add((i + 1, False))
            elif kind == "star":
                if ch != "/":
                    after.add((i, False))
            elif kind == "any":
                after.add((i, False))
            else:  # anyslash: inside its ".*", left by a "/"
                after.add((i, True))
                if ch == "/":
                    after.add((i + 1, False))
        if not after:
            return False
        states = _closure(tokens, after)
    return (len(tokens), False) in states


def glob_matches(glob: str, url: str) -> bool:
    """Whether ``url`` matches the Playwright URL glob (the whole of it)."""
    return any(_matches(tokens, url) for tokens in _alternatives(glob))


def parse_headers(lines: list[str] | None) -> dict[str, str]:
    """playwright-mcp's ``"Name: Value"`` lines -> a dict; ValueError for a line without a
    name or with a line break (a header injected into the next one)."""
    headers: dict[str, str] = {}
    for line in lines or []:
        name, colon, value = line.partition(":")
        if not colon or not name.strip() or any(ch in line for ch in "\r\n\0"):
            raise ValueError(f'header {line!r}: write "Name: Value" on one line')
        headers[name.strip()] = value.strip()
    return headers


@dataclass(frozen=True)
class Route:
    """One route of one client (``owner``). With neither ``status`` nor ``body`` nor
    ``abort`` it lets the request go on with ``headers`` added and ``remove_headers`` gone."""

    pattern: str
    owner: str = ""
    status: int | None = None
    body: str | None = None
    content_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    remove_headers: tuple[str, ...] = ()
    abort: bool = False

    def __post_init__(self) -> None:
        _alternatives(self.pattern)  # a bad pattern fails when the route is made, not later
        if self.status is not None and not 100 <= self.status <= 599:
            raise ValueError(f"status {self.status}: an HTTP status is 100 to 599")

    def matches(self, url: str) -> bool:
        return glob_matches(self.pattern, url)

    @property
    def fulfils(self) -> bool:
        return self.status is not None or self.body is not None

    def describe(self) -> str:
        details: list[str] = []
        if self.abort:
            details.append("abort")
        if self.status is not None:
            details.append(f"status={self.status}")
        if self.body is not None:
            shown = self.body if len(self.body) <= 50 else self.body[:50] + "..."
            details.append(f"body={shown}")
        if self.content_type:
            details.append(f"contentType={self.content_type}")
        if self.headers:
            details.append(f"headers={self.headers}")
        if self.remove_headers:
            details.append(f"removeHeaders={','.join(self.remove_headers)}")
        return self.pattern + (f" ({', '.join(details)})" if details else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "status": self.status,
            "body": self.body,
            "contentType": self.content_type,
            "headers": self.headers,
            "removeHeaders": list(self.remove_headers),
            "abort": self.abort,
        }


Kind = Literal["continue", "block", "abort", "fulfill", "headers"]


@dataclass(frozen=True)
class Decision:
    """What to answer a paused request: the CDP command and its parameters."""

    kind: Kind
    method: str
    params: dict[str, Any]
    reason: str = ""


def decide(
    request_id: str,
    url: str,
    request_headers: dict[str, Any],
    origins: OriginPolicy,
    routes: list[Route],
) -> Decision:
    """The answer to one paused request: blocked by origin, then the newest matching route,
    else on unchanged."""
    refusal = origins.refusal(url)
    if refusal is not None:
        return Decision(
            "block",
            "Fetch.failRequest",
            {"requestId": request_id, "errorReason": "BlockedByClient"},
            refusal,
        )
    for route in reversed(routes):
        if not route.matches(url):
            continue
        if route.abort:
            return Decision(
                "abort", "Fetch.failRequest", {"requestId": request_id, "errorReason": "Failed"}
            )
        if route.fulfils:
            headers = dict(route.headers)
            if route.content_type:
                headers["Content-Type"] = route.content_type
            body = (route.body or "").encode()
            return Decision(
                "fulfill",
                "Fetch.fulfillRequest",
                {
                    "requestId": request_id,
                    "responseCode": route.status or 200,
                    "responseHeaders": [{"name": k, "value": v} for k, v in headers.items()],
                    "body": base64.b64encode(body).decode("ascii"),
                },
            )
        if route.headers or route.remove_headers:
            removed = {h.lower() for h in route.remove_headers}
            merged = {k: str(v) for k, v in request_headers.items() if k.lower() not in removed}
            for name, value in route.headers.items():
                merged = {k: v for k, v in merged.items() if k.lower() != name.lower()}
                merged[name] = value
            return Decision(
                "headers",
                "Fetch.continueRequest",
                {
                    "requestId": request_id,
                    "headers": [{"name": k, "value": v} for k, v in merged.items()],
                },
            )
    return Decision("continue", "Fetch.continueRequest", {"requestId": request_id})
