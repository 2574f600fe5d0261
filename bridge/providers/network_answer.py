"""The answer as the site streamed it: the provider's answer request, read through CDP's
``Network`` domain (docs/sites.md#answer-sources).

The request is recognised by the pack's method and URL pattern (ChatGPT's
``POST /backend-api/f/conversation``, Gemini's ``StreamGenerate``: SITE-FACTS C7.1, G7.1)
and watched passively (``bridge.providers.request_watch``); its body is handed to the
pure parsers of ``bridge.providers.streams``.

The request's status is also a signal that needs no markup and no UI language: a refusal
(429, 401, a Cloudflare 403: ``request_watch.refusal``) or Gemini's wire error 1037 (a
usage limit, G5.5) ends the wait at once through ``fail``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError, RateLimited
from bridge.providers.request_watch import (
    RequestRule,
    RequestWatch,
    WatchedRequest,
    refusal,
    watch_requests,
)
from bridge.providers.streams import StreamAnswer, chatgpt_answer, gemini_answer

__all__ = ["FORMATS", "AnswerStream", "answer_stream"]

#: The stream formats a pack may name, and their parsers.
FORMATS: dict[str, Callable[[str], StreamAnswer | None]] = {
    "chatgpt-sse": chatgpt_answer,
    "gemini-frames": gemini_answer,
}

#: Gemini's wire codes that mean "usage limit" (1037) or "blocked for now" (1060): G5.5.
_LIMIT_CODES = {1037: "usage limit exceeded", 1060: "IP temporarily blocked"}


class AnswerStream:
    """One ask's view of its answer request (the newest matching one: one ask sends one
    question). Build with :func:`answer_stream`."""

    def __init__(
        self, provider: str, rule: RequestRule, fail: Callable[[BridgeError], None]
    ) -> None:
        self.provider = provider
        self.parse = FORMATS[rule.format]
        self.format = rule.format
        self._fail = fail
        self.watch: RequestWatch | None = None
        #: What the request's status or wire code said ends the ask (also raised by
        #: ``answer()``: the page may have shown the limit as if it were an answer).
        self.failure: BridgeError | None = None

    def _judge(self, watched: WatchedRequest) -> None:
        """Statuses and wire codes that end the ask, whatever the page shows."""
        error = refusal(self.provider, watched, "Too Many Requests")
        if error is None and watched.status == 200:
            parsed = self.parse(watched.body or "")
            if parsed is not None and parsed.error_code in _LIMIT_CODES:
                notice = f"{_LIMIT_CODES[parsed.error_code]} (error {parsed.error_code})"
                error = RateLimited(self.provider, notice)
        if error is not None:
            self.failure = error
            self._fail(error)

    @property
    def request(self) -> WatchedRequest | None:
        return self.watch.newest if self.watch is not None else None

    @property
    def retry_after(self) -> str | None:
        """The answer request's ``retry-after`` when it was refused with 429 (C5.10): the
        reset time, known as soon as the response headers arrive."""
        request = self.request
        if request is None or request.status != 429:
            return None
        return request.headers.get("retry-after")

    async def answer(self, wait: float) -> tuple[StreamAnswer | None, str]:
        """The streamed answer and, when there is none, why. Waits up to ``wait`` seconds
        for the request to finish (it normally has: the page finishes after its stream)."""
        request = self.request
        if request is None or self.watch is None:
            return None, "no answer request seen"
        if not await self.watch.finished(request, wait):
            return None, f"answer request still open after {wait:.0f}s"
        if self.failure is not None:
            raise self.failure
        if request.body is None:
            return None, request.failed or "no body"
        if request.status not in (None, 200):
            return None, f"HTTP {request.status}"
        parsed = self.parse(request.body)
        if parsed is None:
            return None, f"not a {self.format} body"
        return parsed, ""


@contextlib.asynccontextmanager
async def answer_stream(
    tab: CdpSession, provider: str, rule: RequestRule, fail: Callable[[BridgeError], None]
) -> AsyncIterator[AnswerStream]:
    """Watch ``tab``'s answer request for one ask."""
    stream = AnswerStream(provider, rule, fail)
    async with watch_requests(tab, rule, on_body=stream._judge) as watch:
        stream.watch = watch
        yield stream
