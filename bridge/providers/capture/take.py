"""Taking a capture during an ask (I/O): the page at four moments, the answer request's
framing and the completion signals, with the person's content removed (docs/captures.md).

A capture rides along an ordinary ask: :class:`CaptureRecorder` wraps the ask's flow
(``AskFlow``) so that the first input method takes the ``ready`` page, the first send method
the ``typed`` page (the send button is there only once the composer holds text, C1.10), the
answer request's response headers the ``answering`` page (the stop button shows by then:
C1.7, G1.5), and the end of the completion wait the ``done`` page. Nothing is added to the
ask's own steps: every moment is an event the ask already waits for. A failed ask is captured
too (that is when a capture matters most): :meth:`CaptureRecorder.build` takes the error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from bridge import __version__
from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError
from bridge.providers.capture.dom import content_selectors, entry_matches, sanitize_nodes
from bridge.providers.capture.matching import call_capture
from bridge.providers.capture.sanitize import Pseudonyms, url_shape
from bridge.providers.capture.signals import signals_from
from bridge.providers.capture.streams import sanitize_stream, summarize
from bridge.providers.completion import Verdict
from bridge.providers.completion_loop import CompletionSettings, CompletionStrategy, Observations
from bridge.providers.composer import InputMethod, SendMethod
from bridge.providers.context import AskContext
from bridge.providers.flow import AskFlow
from bridge.providers.network_answer import FORMATS, AnswerStream
from bridge.providers.results import AskResult
from bridge.providers.specs import CompletionDetector, ProviderSpec
from bridge.waiting import scaled

__all__ = ["CAPTURE_VERSION", "PHASES", "CaptureRecorder"]

log = logging.getLogger(__name__)

CAPTURE_VERSION = 1
#: The moments a capture shows, in the order they happen.
PHASES = ("ready", "typed", "answering", "done")
#: How long the answering page waits for the answer request's response headers.
_RESPONSE_WAIT_S = 30.0
#: How long the done page waits for the answer request's body (it has normally ended).
_BODY_WAIT_S = 10.0


class CaptureRecorder:
    """Records one ask of ``spec``'s provider; :meth:`flow` gives the ask its flow,
    :meth:`build` the capture afterwards."""

    def __init__(self, spec: ProviderSpec, *, source: str = "live") -> None:
        self.spec = spec
        self.source = source
        pack = spec.pack
        self.selectors: dict[str, tuple[str, ...]] = {
            name: tuple(entry.css) for name, entry in pack.selectors.items()
        }
        self.content = content_selectors(self.selectors)
        self.css = list(dict.fromkeys(c for css in self.selectors.values() for c in css))
        self.pages: dict[str, tuple[float, dict[str, Any]]] = {}
        self.missing: dict[str, str] = {}  # phase -> why it could not be taken
        self.sent_at: float | None = None
        self.initial_answers = 0
        #: Whether the answering page was read while the answer request was still open.
        self.during_answer = False
        self._reading_answering = False
        self.ctx: AskContext | None = None
        self.stream: AnswerStream | None = None
        self.browser_version = ""
        self.worlds: dict[int, int] = {}  # tab id -> capture.js's isolated world

    # -- the ask's flow, wrapped -------------------------------------------------------

    def flow(self, base: AskFlow) -> AskFlow:
        """``base`` with the capture's moments hooked in: before the input methods (the ready
        page), before the send methods (the typed page), around the completion wait (the
        answering and done pages). A Deep Research ask waits its own way and gets neither
        of the last two."""
        inputs = [
            InputMethod(m.name, m.phase, self._preceded(m.apply, self._before_input))
            for m in base.inputs_for(self.spec)
        ]
        sends = [
            SendMethod(m.name, self._preceded(m.apply, self._before_send))
            for m in base.send_methods
        ]
        return replace(
            base,
            input_methods=inputs,
            send_methods=sends,
            completion=self._completion(base.completion),
        )

    def _preceded(
        self,
        apply: Callable[[AskContext], Awaitable[Any]],
        before: Callable[[AskContext], Awaitable[None]],
    ) -> Callable[[AskContext], Awaitable[Any]]:
        """``apply`` with ``before`` run first (``before`` decides whether it has work)."""

        async def wrapped(ctx: AskContext) -> Any:
            await before(ctx)
            return await apply(ctx)

        return wrapped

    async def _before_input(self, ctx: AskContext) -> None:
        self.ctx = ctx
        if "ready" not in self.pages and "ready" not in self.missing:
            await self.take(ctx, "ready")
            try:
                found = await call_capture(ctx.tab, "browser", (), worlds=self.worlds)
                self.browser_version = str(found.get("browser") or "")
            except BridgeError as exc:
                log.debug("capture: the browser's version: %s", exc)

    async def _before_send(self, ctx: AskContext) -> None:
        if self.sent_at is not None:
            return  # a later send method: the question was typed once, sent once
        await self.take(ctx, "typed")
        # The answers already on the page, as the detector was told (composer.ready's
        # count): the typed page's matches of the pack's assistant_message.
        typed = self.pages.get("typed")
        if typed is not None:
            matches = typed[1].get("matches", {})
            found = [matches.get(c) for c in self.selectors.get("assistant_message", ())]
            self.initial_answers = max((len(m) for m in found if isinstance(m, list)), default=0)
        self.sent_at = time.monotonic()

    def _completion(self, inner: CompletionStrategy) -> CompletionStrategy:
        async def completion(
            ctx: AskContext,
            detector: CompletionDetector,
            reports: Observations,
            settings: CompletionSettings,
        ) -> Verdict:
            self.ctx = ctx
            self.stream = ctx.stream  # the ask lets go of it once answered: kept for build()
            answering = asyncio.ensure_future(self._answering(ctx))
            try:
                verdict = await inner(ctx, detector, reports, settings)
            except asyncio.CancelledError:
                answering.cancel()
                raise
            except BridgeError:
                await self._done(ctx, answering)
                raise
            await self._done(ctx, answering)
            return verdict

        return completion

    async def _answering(self, ctx: AskContext) -> None:
        """The page once the answer request's response has begun; marked ``during_answer``
        only if the request was still open when the page had been read (a short answer
        may end first, and then the page shows its end, not its middle)."""
        stream = ctx.stream
        watch = stream.watch if stream is not None else None
        if watch is None:
            self.missing["answering"] = "the pack names no answer request"
            return
        ended: set[str] = set()
        stop_listening = ctx.tab.on(
            "Network.loadingFinished", lambda p: ended.add(str(p.get("requestId")))
        )
        waiter = ctx.tab.expect_event(
            "Network.responseReceived", lambda p: str(p.get("requestId")) in watch.requests
        )
        try:
            request = watch.newest
            if request is None or request.status is None:
                await waiter.wait(scaled(_RESPONSE_WAIT_S))
            self._reading_answering = True  # from here on it is one read: let it finish
            await self.take(ctx, "answering")
            request = watch.newest
            self.during_answer = (
                request is not None
                and request.request_id not in ended
                and not request.done.is_set()
            )
        except TimeoutError:
            self.missing["answering"] = "no response to the answer request"
        except BridgeError as exc:
            self.missing["answering"] = str(exc)
        finally:
            waiter.close()
            stop_listening()

    async def _done(self, ctx: AskContext, answering: asyncio.Future[None]) -> None:
        if not answering.done() and not self._reading_answering:
            # The answer ended before its response was seen (or the wait failed first).
            answering.cancel()
            self.missing.setdefault("answering", "the answer ended before it could be taken")
        with contextlib.suppress(asyncio.CancelledError):
            await answering
        await self.take(ctx, "done")
        stream = ctx.stream
        request = stream.request if stream is not None else None
        if stream is not None and stream.watch is not None and request is not None:
            with contextlib.suppress(BridgeError):
                await stream.watch.finished(request, scaled(_BODY_WAIT_S))

    async def take(self, ctx: AskContext, phase: str) -> None:
        """One page of the ask's tab (raw: reduced by :meth:`build`)."""
        await self.take_tab(ctx.tab, phase)

    async def take_tab(self, tab: CdpSession, phase: str) -> None:
        """One page of ``tab``, as capture.js reports it."""
        try:
            raw = await call_capture(tab, "capture", self.css, self.content, worlds=self.worlds)
        except BridgeError as exc:
            self.missing[phase] = str(exc)
            return
        self.missing.pop(phase, None)
        self.pages[phase] = (time.monotonic(), raw)

    async def after_failure(self) -> None:
        """A failed ask's page as it was (a send that did not take, an answer that never
        came): the ``done`` page, if the completion wait did not take it."""
        ctx = self.ctx
        if ctx is None or "done" in self.pages or ctx.session is None or ctx.tab.ended:
            return
        await self.take(ctx, "done")

    # -- the capture -------------------------------------------------------------------

    def build(
        self,
        question: str,
        result: AskResult | None = None,
        error: BridgeError | None = None,
        *,
        versions: Mapping[str, str | int] | None = None,
        outcome: str | None = None,
    ) -> dict[str, Any]:
        """The capture of the recorded ask (docs/captures.md), the person's content removed:
        the question and the answer are what no kept string may share text with.
        ``outcome``: what happened when there was no ask to say it (a page that showed no
        composer)."""
        ctx = self.ctx
        answer = result.answer if result is not None else ""
        secrets = [s for s in (question, answer) if s.strip()]
        sent = self.sent_at if self.sent_at is not None else time.monotonic()
        phases: dict[str, Any] = {}
        kept: set[str] = set()
        lang = browser_language = url = ""
        for phase in PHASES:
            if phase not in self.pages:
                continue
            at, raw = self.pages[phase]
            nodes, texts = sanitize_nodes(raw.get("nodes", []), secrets=secrets)
            kept.update(texts)
            phases[phase] = {
                "t_ms": round((at - sent) * 1000),
                **({"during_answer": self.during_answer} if phase == "answering" else {}),
                "truncated": bool(raw.get("truncated")),
                "nodes": nodes,
                "entries": entry_matches(self.selectors, raw.get("matches", {}), nodes),
            }
            self.browser_version = self.browser_version or str(raw.get("browser") or "")
            url = url_shape(str(raw.get("url") or "")) if raw.get("url") else url
            lang = str(raw.get("lang") or lang)
            browser_language = str(raw.get("browserLanguage") or browser_language)
        if result is not None:
            url = url_shape(result.url)
        capture: dict[str, Any] = {
            "bridge_capture": CAPTURE_VERSION,
            "provider": self.spec.name,
            "taken_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "source": self.source,
            "site": {"url": url, "ui_language": lang, "browser_language": browser_language},
            "versions": {
                "bridge": __version__,
                "pack": self.spec.pack.version,
                "browser": self.browser_version,
                **dict(versions or {}),
            },
            "ask": {
                "outcome": outcome
                or ("answered" if result is not None else (error.code if error else "")),
                "completion": result.used.completion if result is not None else "",
                "question_chars": len(question),
                "answer_chars": len(answer),
                "answer_source": result.used.extraction if result is not None else "",
            },
            "phases": phases,
            "missing": dict(self.missing),
            "stream": self._stream(),
            "signals": signals_from(
                list(ctx.observations) if ctx is not None else [],
                sent_at_s=sent - ctx.started if ctx is not None else 0.0,
                initial_answers=self.initial_answers,
                verdicts=list(ctx.verdicts) if ctx is not None else [],
            ),
            "kept_texts": sorted(kept),
        }
        return capture

    def _stream(self) -> dict[str, Any] | None:
        stream = self.stream
        request = stream.request if stream is not None else None
        if stream is None or request is None:
            return None
        rule = self.spec.pack.stream_rule
        body = request.body or ""
        captured = sanitize_stream(
            stream.format,
            method=rule.method,
            url=request.url,
            status=request.status,
            content_type=request.headers.get("content-type"),
            body=body,
            pseudonyms=Pseudonyms(),
        )
        captured["parsed"] = summarize(FORMATS[stream.format](body) if body else None)
        return captured


def selectors_of(spec: ProviderSpec) -> dict[str, Sequence[str]]:
    """The pack's selectors as a capture and its check use them: entry -> CSS list."""
    return {name: tuple(entry.css) for name, entry in spec.pack.selectors.items()}
