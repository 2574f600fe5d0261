"""Routes (``browser_route``) and what becomes of one paused request (pure).

A route matches URLs by a glob written as Playwright writes them (``page.route``), so
patterns from playwright-mcp prompts work: ``**`` any characters, ``*`` any but ``/``,
``{a,b}`` either, every other character itself (``?`` too: it is the query's mark). A route
either fulfils the request (status, body, content type, headers), fails it (abort), or lets
it go on with headers added or removed.

``decide`` is the one order every paused request goes through: the person's origin guard
first (``bridge.policy.origins``), then the routes, newest first, then on unchanged.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from bridge.policy.origins import OriginPolicy

__all__ = ["Decision", "Route", "decide", "glob_matches", "glob_to_regex", "parse_headers"]


def glob_to_regex(glob: str) -> str:
    """The regular expression of a Playwright URL glob (anchored at both ends)."""
    out: list[str] = ["^"]
    in_group = False
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i):
                # "**/" also matches no folder at all ("**/api" matches "/api" and "x/y/api").
                if glob.startswith("**/", i):
                    out.append("(?:.*/)?")
                    i += 3
                    continue
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
        elif c == "{" and not in_group:
            in_group = True
            out.append("(?:")
        elif c == "}" and in_group:
            in_group = False
            out.append(")")
        elif c == "," and in_group:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    if in_group:
        raise ValueError(f"pattern {glob!r}: a '{{' is never closed")
    out.append("$")
    return "".join(out)


@lru_cache(maxsize=256)
def _compiled(glob: str) -> re.Pattern[str]:
    return re.compile(glob_to_regex(glob), re.DOTALL)


def glob_matches(glob: str, url: str) -> bool:
    return _compiled(glob).match(url) is not None


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
        _compiled(self.pattern)  # a bad pattern fails when the route is made, not per request
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
