"""The page's own requests of one kind, watched passively through CDP ``Network``: their
status, headers and body (docs/sites.md#answer-sources, #conversations).

``Network.enable`` only reports the page's traffic; nothing is intercepted, delayed or
changed. The domain is on only while a watch runs (left on if someone else had turned it
on), so an idle tab pays nothing. Bodies are fetched with ``Network.getResponseBody``
once a request finished. Both the answer stream of an ask and a conversation page's
read request are watched this way; what a refused request means (429, 401, a Cloudflare
403) is decided here once for both.
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

from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError, ChallengeShown, LoginRequired, RateLimited
from bridge.tasks import TaskSet
from bridge.waiting import scaled

__all__ = ["RequestRule", "RequestWatch", "WatchedRequest", "refusal", "watch_requests"]

log = logging.getLogger(__name__)

# Chrome keeps response bodies for getResponseBody up to these sizes; an answer stream of
# a very long answer (ChatGPT sends deltas, Gemini the whole text in every frame) must fit.
_MAX_RESOURCE = 64 * 1024 * 1024
_MAX_TOTAL = 128 * 1024 * 1024


class RequestRule(Protocol):
    """Which requests to watch: a pack's request entry (``bridge.providers.pack.Stream``)."""

    @property
    def format(self) -> str: ...

    def matches(self, method: str, url: str) -> bool: ...


@dataclass
class WatchedRequest:
    """One network request a watch saw: its URL, status, headers and, once it ended, its body
    or why it has none."""

    request_id: str
    url: str
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)  # names lower-cased
    #: Set when the request ended: its body read (``body``), or why not (``failed``).
    done: asyncio.Event = field(default_factory=asyncio.Event)
    body: str | None = None
    failed: str = ""


class RequestWatch:
    """Every request matching ``rule`` while the watch runs, in the order they were sent.
    ``on_body`` hears of each body as soon as it is read (before ``done`` is set)."""

    def __init__(
        self,
        tab: CdpSession,
        rule: RequestRule,
        on_body: Callable[[WatchedRequest], None] | None = None,
    ) -> None:
        self.tab = tab
        self.rule = rule
        self.requests: dict[str, WatchedRequest] = {}
        self._on_body = on_body
        self._tasks = TaskSet("request watch", log)
        #: Set when the first matching request is sent (``Network.requestWillBeSent``).
        self.any_sent = asyncio.Event()

    @property
    def newest(self) -> WatchedRequest | None:
        return next(reversed(self.requests.values()), None)

    def _sent(self, params: dict[str, Any]) -> None:
        request = params.get("request", {})
        if self.rule.matches(str(request.get("method", "")), str(request.get("url", ""))):
            rid = str(params["requestId"])
            self.requests[rid] = WatchedRequest(rid, str(request.get("url", "")))
            self.any_sent.set()

    def _response(self, params: dict[str, Any]) -> None:
        watched = self.requests.get(str(params.get("requestId")))
        if watched is not None:
            response = params.get("response", {})
            watched.status = int(response.get("status", 0))
            headers = response.get("headers", {})
            watched.headers = {str(k).lower(): str(v) for k, v in headers.items()}

    def _finished(self, params: dict[str, Any]) -> None:
        watched = self.requests.get(str(params.get("requestId")))
        if watched is not None:
            self._tasks.spawn(self._read_body(watched))

    def _failed(self, params: dict[str, Any]) -> None:
        watched = self.requests.get(str(params.get("requestId")))
        if watched is not None:
            watched.failed = str(params.get("errorText") or "failed")
            watched.done.set()

    async def _read_body(self, watched: WatchedRequest) -> None:
        try:
            result = await self.tab.send(
                "Network.getResponseBody", {"requestId": watched.request_id}, timeout=scaled(30.0)
            )
            body = str(result.get("body", ""))
            if result.get("base64Encoded"):
                body = base64.b64decode(body).decode("utf-8", errors="replace")
            watched.body = body
            if self._on_body is not None:
                self._on_body(watched)
        except BridgeError as exc:  # evicted, or the tab went: the page still shows it
            watched.failed = f"body not available: {exc}"
        finally:
            watched.done.set()

    async def finished(self, watched: WatchedRequest, wait: float) -> bool:
        """Whether ``watched`` ended within ``wait`` seconds. The wait is one the session
        rejects at once (typed) if the tab closes or the debugger goes."""
        return await self._within(watched.done, wait)

    async def sent(self, wait: float) -> bool:
        """Whether a matching request was sent since the watch began, waiting up to ``wait``
        seconds for the first one (rejected at once, like ``finished``, if the tab goes)."""
        return await self._within(self.any_sent, wait)

    async def _within(self, event: asyncio.Event, wait: float) -> bool:
        if event.is_set():
            return True
        guard = self.tab.expect_event("Network.loadingFinished", lambda _: False)
        happened = asyncio.ensure_future(event.wait())
        happened.add_done_callback(lambda _: guard.resolve({}))
        try:
            await guard.wait(wait)
        except TimeoutError:  # BridgeTimeout: not yet
            return False
        finally:
            happened.cancel()
        return True

    def close(self) -> None:
        self._tasks.cancel()


@contextlib.asynccontextmanager
async def watch_requests(
    tab: CdpSession,
    rule: RequestRule,
    on_body: Callable[[WatchedRequest], None] | None = None,
) -> AsyncIterator[RequestWatch]:
    """Watch ``rule``'s requests in ``tab`` while the block runs."""
    watch = RequestWatch(tab, rule, on_body)
    unsubscribe = [
        tab.on("Network.requestWillBeSent", watch._sent),
        tab.on("Network.responseReceived", watch._response),
        tab.on("Network.loadingFinished", watch._finished),
        tab.on("Network.loadingFailed", watch._failed),
    ]
    already = "Network" in tab.enabled
    if not already:
        await tab.send(
            "Network.enable",
            {"maxTotalBufferSize": _MAX_TOTAL, "maxResourceBufferSize": _MAX_RESOURCE},
        )
    try:
        yield watch
    finally:
        for off in unsubscribe:
            off()
        watch.close()
        if not already and tab.ended is None:
            try:
                await tab.send("Network.disable", timeout=scaled(5.0))
            except BridgeError as exc:  # the page went away meanwhile
                log.debug("Network.disable on tab %s: %s", tab.tab_id, exc)


def refusal(provider: str, watched: WatchedRequest, what: str) -> BridgeError | None:
    """What a refused request means, in any UI language: 429 a usage limit with its
    ``retry-after`` as the reset time (SITE-FACTS C5.10), 401 a lost login, 403 with
    ``cf-mitigated: challenge`` Cloudflare (C5.3); None for anything else. ``what`` names
    the request for a notice the body does not give."""
    status = watched.status or 0
    if status == 429:
        return RateLimited(
            provider,
            _detail(watched.body or "") or f"HTTP 429 {what}",
            reset=watched.headers.get("retry-after"),
        )
    if status == 401:
        return LoginRequired(provider)
    if status == 403 and watched.headers.get("cf-mitigated") == "challenge":
        return ChallengeShown(provider)
    return None


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
