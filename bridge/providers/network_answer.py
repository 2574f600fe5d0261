"""The answer as the site streamed it: the provider's answer request, read through CDP's
``Network`` domain (docs/sites.md#answer-sources).

Reading is passive: ``Network.enable`` only reports the page's own traffic, nothing is
intercepted, delayed or changed, and the domain is switched off again after the ask
(unless someone else had it on), so an idle tab pays nothing. The request is recognised
by the pack's method and URL pattern (ChatGPT's ``POST /backend-api/f/conversation``,
Gemini's ``StreamGenerate``: SITE-FACTS C7.1, G7.1); its body is fetched once it has
finished and handed to the pure parsers of ``bridge.providers.streams``.

The request's status is also a signal that needs no markup and no UI language: 429 is a
usage limit (with ``retry-after``, C5.10), 401 a lost login, 403 with
``cf-mitigated: challenge`` Cloudflare (C5.3), and Gemini's wire error 1037 a usage
limit (G5.5). Those end the wait at once through ``fail``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from bridge.cdp import CdpSession
from bridge.errors import (
    BridgeError,
    BridgeTimeout,
    ChallengeShown,
    LoginRequired,
    RateLimited,
)
from bridge.providers.streams import StreamAnswer, chatgpt_answer, gemini_answer
from bridge.waiting import scaled

__all__ = ["FORMATS", "AnswerStream", "StreamRule", "answer_stream"]

log = logging.getLogger(__name__)

#: The stream formats a pack may name, and their parsers.
FORMATS: dict[str, Callable[[str], StreamAnswer | None]] = {
    "chatgpt-sse": chatgpt_answer,
    "gemini-frames": gemini_answer,
}

#: Gemini's wire codes that mean "usage limit" (1037) or "blocked for now" (1060): G5.5.
_LIMIT_CODES = {1037: "usage limit exceeded", 1060: "IP temporarily blocked"}

# Chrome keeps response bodies for getResponseBody up to these sizes; an answer stream of
# a very long answer (ChatGPT sends deltas, Gemini the whole text in every frame) must fit.
_MAX_RESOURCE = 64 * 1024 * 1024
_MAX_TOTAL = 128 * 1024 * 1024


class StreamRule(Protocol):
    """Which request carries the answer and how to read it: a pack's
    ``network.answer_stream`` entry (``bridge.providers.pack.Stream``)."""

    @property
    def format(self) -> str: ...

    def matches(self, method: str, url: str) -> bool: ...


@dataclass
class _Request:
    request_id: str
    url: str
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    failed: str = ""
    body: asyncio.Task[str | None] | None = None


class AnswerStream:
    """One ask's view of its answer request. Build with :func:`answer_stream`."""

    def __init__(
        self,
        tab: CdpSession,
        provider: str,
        rule: StreamRule,
        fail: Callable[[BridgeError], None],
    ) -> None:
        self.tab = tab
        self.provider = provider
        self.rule = rule
        self.parse = FORMATS[rule.format]
        self._fail = fail
        #: What the request's status or wire code said ends the ask (also raised by
        #: ``answer()``: the page may have shown the limit as if it were an answer).
        self.failure: BridgeError | None = None
        self.request: _Request | None = None
        self._unsubscribe: list[Callable[[], None]] = []

    # -- events ---------------------------------------------------------------------

    def _sent(self, params: dict[str, Any]) -> None:
        request = params.get("request", {})
        if self.rule.matches(str(request.get("method", "")), str(request.get("url", ""))):
            # The newest matching request is this ask's: one ask sends one question.
            self.request = _Request(str(params["requestId"]), str(request.get("url", "")))

    def _mine(self, params: dict[str, Any]) -> _Request | None:
        request = self.request
        if request is not None and params.get("requestId") == request.request_id:
            return request
        return None

    def _response(self, params: dict[str, Any]) -> None:
        request = self._mine(params)
        if request is None:
            return
        response = params.get("response", {})
        request.status = int(response.get("status", 0))
        request.headers = {str(k).lower(): str(v) for k, v in response.get("headers", {}).items()}

    def _finished(self, params: dict[str, Any]) -> None:
        request = self._mine(params)
        if request is None:
            return
        request.body = asyncio.ensure_future(self._read_body(request))
        request.body.add_done_callback(lambda _: request.finished.set())

    def _failed(self, params: dict[str, Any]) -> None:
        request = self._mine(params)
        if request is None:
            return
        request.failed = str(params.get("errorText") or "failed")
        request.finished.set()

    async def _read_body(self, request: _Request) -> str | None:
        try:
            result = await self.tab.send(
                "Network.getResponseBody", {"requestId": request.request_id}, timeout=scaled(30.0)
            )
        except BridgeError as exc:  # evicted, or the tab went: the DOM still has the answer
            request.failed = f"body not available: {exc}"
            return None
        body = str(result.get("body", ""))
        if result.get("base64Encoded"):
            body = base64.b64decode(body).decode("utf-8", errors="replace")
        self._judge(request, body)
        return body

    def _judge(self, request: _Request, body: str) -> None:
        error = self._verdict(request, body)
        if error is not None:
            self.failure = error
            self._fail(error)

    def _verdict(self, request: _Request, body: str) -> BridgeError | None:
        """Statuses and wire codes that end the ask, whatever the page shows."""
        status = request.status or 0
        if status == 429:
            return RateLimited(
                self.provider,
                _detail(body) or "HTTP 429 Too Many Requests",
                reset=request.headers.get("retry-after"),
            )
        if status == 401:
            return LoginRequired(self.provider)
        if status == 403 and request.headers.get("cf-mitigated") == "challenge":
            return ChallengeShown(self.provider)
        if status == 200:
            parsed = self.parse(body)
            if parsed is not None and parsed.error_code in _LIMIT_CODES:
                notice = f"{_LIMIT_CODES[parsed.error_code]} (error {parsed.error_code})"
                return RateLimited(self.provider, notice)
        return None

    @property
    def retry_after(self) -> str | None:
        """The answer request's ``retry-after`` when it was refused with 429 (C5.10): the
        reset time, known as soon as the response headers arrive."""
        request = self.request
        if request is None or request.status != 429:
            return None
        return request.headers.get("retry-after")

    # -- reading ----------------------------------------------------------------------

    async def answer(self, wait: float) -> tuple[StreamAnswer | None, str]:
        """The streamed answer and, when there is none, why. Waits up to ``wait`` seconds
        for the request to finish (it normally has: the page finishes after its stream)."""
        request = self.request
        if request is None:
            return None, "no answer request seen"
        if not request.finished.is_set():
            # A wait the session rejects at once if the tab closes or the debugger goes.
            guard = self.tab.expect_event("Network.loadingFinished", lambda _: False)
            finished = asyncio.ensure_future(request.finished.wait())
            finished.add_done_callback(lambda _: guard.resolve({}))
            try:
                await guard.wait(wait)
            except BridgeTimeout:
                return None, f"answer request still open after {wait:.0f}s"
            finally:
                finished.cancel()
        if request.failed and request.body is None:
            return None, request.failed
        body = await request.body if request.body is not None else None
        if self.failure is not None:
            raise self.failure
        if body is None:
            return None, request.failed or "no body"
        if request.status not in (None, 200):
            return None, f"HTTP {request.status}"
        parsed = self.parse(body)
        if parsed is None:
            return None, f"not a {self.rule.format} body"
        return parsed, ""

    async def close(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        request = self.request
        if request is not None and request.body is not None and not request.body.done():
            request.body.cancel()


@contextlib.asynccontextmanager
async def answer_stream(
    tab: CdpSession, provider: str, rule: StreamRule, fail: Callable[[BridgeError], None]
) -> AsyncIterator[AnswerStream]:
    """Watch ``tab``'s answer request for one ask; the Network domain is on only meanwhile
    (left on if it was on before: another user of the tab may rely on it)."""
    stream = AnswerStream(tab, provider, rule, fail)
    already = "Network" in tab.enabled
    for event, handler in (
        ("Network.requestWillBeSent", stream._sent),
        ("Network.responseReceived", stream._response),
        ("Network.loadingFinished", stream._finished),
        ("Network.loadingFailed", stream._failed),
    ):
        stream._unsubscribe.append(tab.on(event, handler))
    if not already:
        await tab.send(
            "Network.enable",
            {"maxTotalBufferSize": _MAX_TOTAL, "maxResourceBufferSize": _MAX_RESOURCE},
        )
    try:
        yield stream
    finally:
        await stream.close()
        if not already and tab.ended is None:
            try:
                await tab.send("Network.disable", timeout=scaled(5.0))
            except BridgeError as exc:  # the page went away meanwhile
                log.debug("Network.disable on tab %s: %s", tab.tab_id, exc)


def _detail(body: str) -> str:
    """The human text of an error body (``{"detail": {"message": ...}}`` or a string)."""
    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()[:300]
    detail = data.get("detail", data) if isinstance(data, dict) else data
    if isinstance(detail, dict):
        detail = detail.get("message") or detail.get("code") or ""
    return str(detail).strip()[:300]
