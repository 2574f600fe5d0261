"""One ask, step by step (seed 000 §3.1 / §4.1), for either provider.

The steps are the seed's; the waiting is not. Every wait is a page-side promise that
resolves on the DOM mutation it waits for (or a CDP event), bounded by the seed's
deadline; completion is decided by the pure detectors in ``completion.py``, fed by a
MutationObserver that reports each change through ``Runtime.addBinding``. A slow poll
runs only as a safety net. A closed tab or detached debugger ends the wait at once.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields
from typing import Any

from bridge.browser import Browser
from bridge.cdp import CdpSession
from bridge.errors import (
    BridgeError,
    CommandFailed,
    InputNotAccepted,
    LoginRequired,
    ProviderError,
    ProviderErrorTurn,
    ProviderStuck,
    RateLimited,
    SendFailed,
    StepTimeout,
    TabClosed,
)
from bridge.providers.completion import (
    ChatGPTCompletion,
    ChatGPTObservation,
    GeminiCompletion,
    GeminiObservation,
    Phase,
    Verdict,
    is_suspicious_answer,
)
from bridge.providers.page_script import PAGE_JS, PAGE_VERSION
from bridge.providers.specs import PROVIDER_SPECS, AskOptions, ProgressCallback, ProviderSpec
from bridge.results import AskResult, Progress, Provider, Timings, Used
from bridge.state import StateStore
from bridge.waiting import scaled

__all__ = [
    "PAGE_JS",
    "PROVIDER_SPECS",
    "AskOptions",
    "ProgressCallback",
    "ProviderSpec",
    "connect_tab",
    "run_ask",
]

log = logging.getLogger(__name__)


class _Clock:
    def __init__(self) -> None:
        self.start = time.monotonic()
        self.mark = self.start

    def lap(self) -> float:
        now = time.monotonic()
        ms = (now - self.mark) * 1000
        self.mark = now
        return ms


@dataclass
class _Ask:
    browser: Browser
    store: StateStore
    spec: ProviderSpec
    question: str
    key: str
    options: AskOptions
    used: Used = field(default_factory=Used)
    timings: Timings = field(default_factory=Timings)
    session: CdpSession | None = None
    observations: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)

    @property
    def provider(self) -> Provider:
        return self.spec.name

    @property
    def tab(self) -> CdpSession:
        assert self.session is not None
        return self.session

    # -- page helpers ---------------------------------------------------------------

    async def page(self, call: str, *, timeout: float | None = None) -> Any:
        """Call ``window.__bridgePage.<call>`` (injecting page.js first when needed)."""
        expression = (
            f"(window.__bridgePage && window.__bridgePage.version === '{PAGE_VERSION}' "
            f"? window.__bridgePage : ({PAGE_JS}, window.__bridgePage)).{call}"
        )
        return await self.tab.evaluate(
            expression,
            await_promise=True,
            timeout=scaled(30.0) if timeout is None else timeout + scaled(5.0),
        )

    async def progress(self, phase: str, chars: int = 0) -> None:
        callback = self.options.on_progress
        if callback is None:
            return
        elapsed = time.monotonic() - self._started
        result = callback(Progress(self.provider, phase, elapsed, chars))
        if result is not None:
            await result

    # -- the steps ------------------------------------------------------------------

    async def run(self) -> AskResult:
        self._started = time.monotonic()
        clock = _Clock()
        await self.progress("connect")
        await self.connect()
        self.timings.connect_ms = clock.lap()
        await self.keep_rendering()
        initial = await self.ready()
        self.timings.wait_input_ms = clock.lap()
        await self.progress("input")
        await self.type_question()
        self.timings.input_ms = clock.lap()
        await self.progress("send")
        verdict = await self.send_and_wait(initial)
        answer, method = await self.extract()
        self.timings.wait_response_ms = clock.lap()
        self.timings.total_ms = (time.monotonic() - self._started) * 1000
        self.used.completion = verdict.reason
        self.used.extraction = method
        if verdict.used_fallback:
            self.used.fallbacks.append(f"completion:{verdict.reason}")
        if method not in {"markdown", "feedback"}:
            self.used.fallbacks.append(f"extraction:{method}")
        url = str(await self.tab.evaluate("location.href"))
        result = AskResult(
            provider=self.provider,
            question=self.question,
            answer=answer,
            url=url,
            timings=self.timings,
            used=self.used,
            session_key=self.key,
        )
        if is_suspicious_answer(answer, self.question):
            result.suspicious = True
            await self.dump("suspicious answer")
        self.store.put_session(self.key, self.provider, url, self.tab.tab_id)
        await self.progress("done", len(answer))
        return result

    async def connect(self) -> None:
        """Recorded tab, else an open tab of the site, else a new tab (seed §2.3, §9.1)."""
        entry = self.store.get_session(self.key, self.provider)
        target_url = self.spec.home_url if self.options.new_chat or entry is None else entry.url
        if entry is not None and entry.tab_id is not None:
            session = await self._try_tab(entry.tab_id)
            if session is not None:
                self.session, self.used.tab = session, "session"
        if self.session is None:
            for info in await self.browser.list_tabs():
                if info.url.startswith(self.spec.url_prefixes):
                    session = await self._try_tab(info.tab_id)
                    if session is not None:
                        self.session, self.used.tab = session, "open_tab"
                        break
        if self.session is None:
            self.session = await self._new_tab(target_url)
            self.used.tab = "new_tab"
            return
        current = str(await self.tab.evaluate("location.href"))
        if self.options.new_chat or (entry is not None and current != target_url):
            await self.tab.navigate(target_url, timeout=scaled(30.0))

    async def keep_rendering(self) -> None:
        """Seed §13 problem 4: a hidden tab renders no answer text (and no frames).

        Focus emulation makes the page render as if visible without touching the person's
        window focus, so answers stream into the DOM and progress can count characters.
        Page.bringToFront stays the last resort (``_reveal_text``).
        """
        if await self.tab.evaluate("document.visibilityState") == "hidden":
            await self.tab.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
            self.used.focus_emulated = True

    async def _try_tab(self, tab_id: int) -> CdpSession | None:
        """Attach and health-check (seed §9.1: reuse 3 s, health check 4 s)."""
        try:
            async with asyncio.timeout(scaled(7.0)):
                session = await self.browser.attach(tab_id)
                url = await session.evaluate("location.href", timeout=scaled(4.0))
        except (BridgeError, TimeoutError) as exc:
            log.info("tab %s not reusable: %s", tab_id, exc)
            return None
        if not str(url).startswith(self.spec.url_prefixes):
            return None
        return session

    async def _new_tab(self, url: str) -> CdpSession:
        last: BaseException | None = None
        for attempt in range(3):  # seed §9.2: new tab creation, at most 2 retries
            try:
                async with asyncio.timeout(scaled(30.0)):
                    return await self.browser.new_tab(url)
            except (BridgeError, TimeoutError) as exc:
                last = exc
                log.warning("new %s tab failed (attempt %d): %s", self.provider, attempt + 1, exc)
        raise ProviderError(
            self.provider,
            f"could not open a {self.provider} tab after 3 attempts: {last}. Is the site "
            "reachable from that browser?",
        ) from last

    async def ready(self) -> int:
        """Composer present and page settled; returns the initial response count."""
        wait_s = scaled(self.spec.input_wait_s)
        state = await self.page(
            f"whenReady({json.dumps(self.provider)}, {int(wait_s * 1000)})", timeout=wait_s
        )
        if state == "login":
            raise LoginRequired(self.provider)
        if state != "ready":
            await self.dump("input field never appeared")
            raise StepTimeout(self.provider, "wait for the input field", wait_s)
        # Earlier turns of an existing conversation may still be arriving (Gemini loads them
        # after its composer): wait for the page to settle before counting (seed §3.1 step 5).
        if await self.page(f"needsSettle({json.dumps(self.provider)})"):
            await self.page("quiet(250, 5000)", timeout=scaled(6.0))
        if self.provider == "gemini":
            await self._check_not_stuck()
        counts = await self.page(f"counts({json.dumps(self.provider)})")
        self._initial_users = int(counts["user"])
        return int(counts["assistant"])

    async def _check_not_stuck(self) -> None:
        """Seed §9.3: a stop button left over from a hung answer must go within 5 s."""
        gone = await self.page(f"whenStopGone({json.dumps(self.provider)}, 5000)", timeout=6.0)
        if gone != "gone":
            raise ProviderStuck(self.provider, "stuck_stop_button", 1)

    async def type_question(self) -> None:
        """Seed §5: JavaScript, then Input.insertText, then key events; verified each time."""
        quoted = json.dumps(self.question)
        name = json.dumps(self.provider)
        for phase in range(self.options.first_input_phase, self.spec.input_phases + 1):
            if phase == 1:
                await self.page(f"setInputByScript({name}, {quoted})")
            elif phase == 2:
                await self.page(f"clearInput({name})")
                await self.tab.send("Input.insertText", {"text": self.question})
            else:
                await self.page(f"clearInput({name})")
                for ch in self.question:
                    if ch == "\n":
                        await self._key("Enter", shift=True)
                    else:
                        await self.tab.send(
                            "Input.dispatchKeyEvent", {"type": "keyDown", "text": ch}
                        )
                        await self.tab.send("Input.dispatchKeyEvent", {"type": "keyUp"})
            if await self.page(f"inputHolds({name}, {quoted})"):
                self.used.input_phase = phase
                if phase > 1:
                    self.used.fallbacks.append(f"input:phase{phase}")
                return
        await self.dump("input not accepted")
        raise InputNotAccepted(
            self.provider,
            f"the {self.provider} composer did not take the question after "
            f"{self.spec.input_phases} input methods; is the page showing a dialog? "
            "Reload the tab and ask again.",
        )

    async def _key(self, key: str, *, shift: bool = False) -> None:
        base = {"key": key, "code": key, "windowsVirtualKeyCode": 13 if key == "Enter" else 0}
        if shift:
            base["modifiers"] = 8
        await self.tab.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", **base})
        if key == "Enter" and not shift:
            await self.tab.send("Input.dispatchKeyEvent", {"type": "char", "text": "\r", **base})
        await self.tab.send("Input.dispatchKeyEvent", {"type": "keyUp", **base})

    # -- send and wait ----------------------------------------------------------------

    async def send_and_wait(self, initial: int) -> Verdict:
        name = json.dumps(self.provider)
        send_wait = scaled(60.0)
        if (
            await self.page(f"whenSendEnabled({name}, {int(send_wait * 1000)})", timeout=send_wait)
            != "enabled"
        ):
            await self.dump("send button never enabled")
            raise SendFailed(self.provider, f"the {self.provider} send button never became enabled")
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        binding = f"__bridgeObs_{secrets.token_hex(6)}"
        await self.tab.send("Runtime.enable")
        await self.tab.send("Runtime.addBinding", {"name": binding})
        unsubscribe = self.tab.on(
            "Runtime.bindingCalled",
            lambda p: (
                queue.put_nowait(json.loads(p["payload"])) if p.get("name") == binding else None
            ),
        )
        try:
            started = time.monotonic()
            detector = self._detector(initial, started)
            # Subscribe before the click: the stop button's brief appearance must be seen.
            await self.page(f"watch({name}, {json.dumps(binding)})")
            send_clock = time.monotonic()
            await self._click_send()
            self.timings.send_ms = (time.monotonic() - send_clock) * 1000
            try:
                return await self._wait_for_completion(detector, queue)
            except asyncio.CancelledError:
                # The caller gave up (an MCP client cancelled): stop the answer so the next
                # ask finds the composer ready instead of a tab still generating.
                with contextlib.suppress(BaseException):
                    async with asyncio.timeout(scaled(3.0)):
                        await asyncio.shield(self.page(f"clickStop({name})"))
                raise
        finally:
            unsubscribe()
            if self.tab.ended is None:
                try:
                    await self.page("unwatch()", timeout=scaled(5.0))
                    await self.tab.send("Runtime.removeBinding", {"name": binding})
                except BridgeError:
                    pass

    def _detector(self, initial: int, started: float) -> ChatGPTCompletion | GeminiCompletion:
        timings = self.options.completion_timings
        if self.provider == "chatgpt":
            return ChatGPTCompletion(
                initial_assistant_count=initial, started_at=started, timings=timings
            )
        return GeminiCompletion(
            initial_model_response_count=initial, started_at=started, timings=timings
        )

    async def _click_send(self) -> None:
        """Seed §6.2: script click, then the CDP mouse, then Enter; confirm the turn appeared."""
        name = json.dumps(self.provider)
        confirm_s = scaled(self.spec.send_confirm_s)
        confirm = f"whenUserCountAbove({name}, {self._initial_users}, {int(confirm_s * 1000)})"
        methods: list[tuple[str, Callable[[], Awaitable[bool]]]] = [
            ("js_click", lambda: self.page(f"clickSend({name})")),
            ("cdp_mouse", self._mouse_click_send),
            ("enter", self._press_enter),
        ]
        for index, (method, action) in enumerate(methods):
            if index < self.options.first_send_method:
                continue
            if await action() and await self.page(confirm, timeout=confirm_s) == "sent":
                self.used.send_method = method
                if index:
                    self.used.fallbacks.append(f"send:{method}")
                return
        await self.dump("send failed")
        raise SendFailed(
            self.provider,
            f"the question never appeared as a {self.provider} message after clicking send, "
            "the mouse and Enter; the page may be blocked by a dialog. Reload the tab.",
        )

    async def _mouse_click_send(self) -> bool:
        target = await self.page(f"sendTarget({json.dumps(self.provider)})")
        if not target or target.get("disabled"):
            return False
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            params: dict[str, Any] = {"type": kind, "x": target["x"], "y": target["y"]}
            if kind != "mouseMoved":
                params.update(button="left", clickCount=1)
            await self.tab.send("Input.dispatchMouseEvent", params)
        return True

    async def _press_enter(self) -> bool:
        if not await self.page(f"focusInput({json.dumps(self.provider)})"):
            return False
        await self._key("Enter")
        return True

    async def _wait_for_completion(
        self, detector: ChatGPTCompletion | GeminiCompletion, queue: asyncio.Queue[dict[str, Any]]
    ) -> Verdict:
        opts = self.options
        deadline = time.monotonic() + opts.timeout
        ended = self._ended_future()
        try:
            return await self._completion_loop(detector, queue, ended, deadline)
        finally:
            ended.cancel()

    async def _completion_loop(
        self,
        detector: ChatGPTCompletion | GeminiCompletion,
        queue: asyncio.Queue[dict[str, Any]],
        ended: asyncio.Future[None],
        deadline: float,
    ) -> Verdict:
        opts = self.options
        awaiting_text_since: float | None = None
        skip_clicked = False
        verdict = detector.verdict
        while True:
            now = time.monotonic()
            if now >= deadline:
                await self.dump(f"no completion within {opts.timeout:.0f}s ({verdict.reason})")
                raise StepTimeout(
                    self.provider, f"wait for the answer ({verdict.reason})", opts.timeout
                )
            wait = min(deadline - now, scaled(opts.safety_poll_s))
            if verdict.next_deadline is not None:
                wait = min(wait, max(0.0, verdict.next_deadline - now))
            if awaiting_text_since is not None and not self.used.brought_to_front:
                wait = min(wait, max(0.0, awaiting_text_since + opts.focus_grace_s - now))
            raw = await self._next_observation(queue, ended, wait)
            if raw is None:
                now = time.monotonic()
                if verdict.next_deadline is not None and now >= verdict.next_deadline:
                    verdict = detector.tick(now)
                else:  # the safety net: read the page ourselves
                    raw = await self.page(f"observe({json.dumps(self.provider)})")
            if raw is not None:
                verdict = self._feed(detector, raw)
                chars = int(
                    raw.get("last_assistant_text_len", raw.get("last_response_text_len", 0))
                )
                await self.progress(verdict.phase.value, chars)
            self.verdicts.append(f"{verdict.phase.value}:{verdict.reason}")
            if verdict.phase is Phase.THINKING:
                self.used.thinking = True
                if (
                    opts.skip_thinking
                    and not skip_clicked
                    and raw
                    and raw.get("has_skip_thinking_button")
                ):
                    skip_clicked = bool(await self.page("clickSkipThinking()"))
                    self.used.skipped_thinking = skip_clicked
            if verdict.phase is Phase.DONE:
                return verdict
            if verdict.phase is Phase.FAILED:
                await self._raise_failure(verdict)
            if verdict.phase is Phase.STUCK:
                await self.dump(f"stuck: {verdict.reason}")
                raise ProviderStuck(self.provider, verdict.reason, 1)
            if verdict.phase is Phase.AWAITING_TEXT:
                awaiting_text_since = await self._reveal_text(awaiting_text_since)

    async def _reveal_text(self, since: float | None) -> float:
        """Seed §13 problem 4: a background tab renders no answer text.

        First emulate focus (invisible to the person), and only if the text still does not
        come, bring the tab to the front (which takes the person's focus).
        """
        now = time.monotonic()
        if since is None:
            if not self.used.focus_emulated:
                await self.tab.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
                self.used.focus_emulated = True
            return now
        if not self.used.brought_to_front and now - since >= self.options.focus_grace_s:
            await self.tab.send("Page.bringToFront")
            self.used.brought_to_front = True
        return since

    def _ended_future(self) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiter = self.tab.expect_event("Inspector.targetCrashed")

        def done(w: asyncio.Future[dict[str, Any]]) -> None:
            if fut.done():
                return
            if w.cancelled():
                return
            exc = w.exception()
            fut.set_exception(
                exc if exc is not None else TabClosed(self.tab.tab_id, "the page crashed")
            )

        waiter.future.add_done_callback(done)

        # Retrieve the error even when nobody awaits it any more; stop listening when done.
        def finished(f: asyncio.Future[None]) -> None:
            waiter.cancel()
            if not f.cancelled():
                f.exception()

        fut.add_done_callback(finished)
        return fut

    async def _next_observation(
        self, queue: asyncio.Queue[dict[str, Any]], ended: asyncio.Future[None], wait: float
    ) -> dict[str, Any] | None:
        if not queue.empty():
            return queue.get_nowait()
        getter: asyncio.Future[Any] = asyncio.ensure_future(queue.get())
        either: set[asyncio.Future[Any]] = {getter, ended}
        try:
            done, _ = await asyncio.wait(
                either, timeout=max(0.0, wait), return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            if not getter.done():
                getter.cancel()
        if ended in done:
            ended.result()  # raises TabClosed / DebuggerDetached at once
        if getter in done and not getter.cancelled():
            got: dict[str, Any] = getter.result()
            return got
        return None

    def _feed(self, detector: ChatGPTCompletion | GeminiCompletion, raw: dict[str, Any]) -> Verdict:
        # Stamped when processed, not when the page produced it: the detector needs one clock.
        now = time.monotonic()
        self.observations.append({"t": round(now - self._started, 4), **raw})
        del self.observations[:-200]  # keep the last 200 for debug dumps
        if isinstance(detector, ChatGPTCompletion):
            return detector.observe(
                ChatGPTObservation(t=now, **_fields_of(ChatGPTObservation, raw))
            )
        return detector.observe(GeminiObservation(t=now, **_fields_of(GeminiObservation, raw)))

    async def _raise_failure(self, verdict: Verdict) -> None:
        name = json.dumps(self.provider)
        notices = await self.page(f"notices({name})")
        if verdict.reason == "login_wall":
            raise LoginRequired(self.provider)
        if verdict.reason == "rate_limited":
            raise RateLimited(self.provider, notices.get("rateLimit") or "rate limit notice")
        if verdict.reason == "error_turn":
            raise ProviderErrorTurn(self.provider, notices.get("error") or "error")
        await self.dump(f"failed: {verdict.reason}")
        raise StepTimeout(self.provider, f"wait for the answer ({verdict.reason})", 0.0)

    # -- extraction -----------------------------------------------------------------

    async def extract(self) -> tuple[str, str]:
        await self.progress("extracting")
        found = await self.page(f"extract({json.dumps(self.provider)})")
        text = str(found.get("text", ""))
        if self.provider == "gemini":
            text = normalize_gemini(text)
        return text.strip(), str(found.get("method", ""))

    # -- debug ----------------------------------------------------------------------

    async def dump(self, why: str) -> None:
        """Seed §9.4: write what led here (page state, observations, screenshot)."""
        payload: dict[str, Any] = {
            "why": why,
            "provider": self.provider,
            "question": self.question,
            "sessionKey": self.key,
            "used": self.used.to_dict(),
            "timings": self.timings.to_dict(),
            "observations": self.observations[-50:],
            "verdicts": self.verdicts[-50:],
        }
        screenshot: bytes | None = None
        if self.session is not None and self.session.ended is None:
            try:
                payload["page"] = await self.page(
                    f"debugInfo({json.dumps(self.provider)})", timeout=scaled(5.0)
                )
                if payload["page"].get("visibilityState") == "hidden":
                    # A hidden tab produces no frames, so a screenshot would wait for one in vain.
                    await self.tab.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
                shot = await self.tab.send(
                    "Page.captureScreenshot", {"format": "png"}, timeout=scaled(10.0)
                )
                screenshot = base64.b64decode(shot["data"])
            except (BridgeError, CommandFailed) as exc:
                payload["pageError"] = str(exc)
        try:
            path = self.store.write_debug(self.provider, payload, screenshot)
            log.warning("%s: %s (debug dump %s)", self.provider, why, path)
        except OSError as exc:
            log.warning("could not write a debug dump: %s", exc)


def _fields_of(cls: type, raw: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)} - {"t"}
    return {k: v for k, v in raw.items() if k in names}


def normalize_gemini(text: str) -> str:
    """Seed §4.4 normalizeGeminiResponse: tidy whitespace, drop UI leftovers."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    out: list[str] = []
    in_code = False
    for line in lines:
        if line.startswith("```"):
            in_code = not in_code
        if not in_code and not line.strip() and out and not out[-1].strip():
            continue  # collapse runs of blank lines outside code
        out.append(line)
    return "\n".join(out).strip()


async def run_ask(
    browser: Browser,
    store: StateStore,
    provider: Provider,
    question: str,
    key: str,
    options: AskOptions,
) -> AskResult:
    ask = _Ask(browser, store, PROVIDER_SPECS[provider], question, key, options)
    return await ask.run()


async def connect_tab(
    browser: Browser, store: StateStore, provider: Provider, key: str, *, new_chat: bool = False
) -> CdpSession:
    """Only the connection step of an ask: the provider's tab, as an ask would find it."""
    ask = _Ask(browser, store, PROVIDER_SPECS[provider], "", key, AskOptions(new_chat=new_chat))
    await ask.connect()
    url = str(await ask.tab.evaluate("location.href"))
    store.put_session(key, provider, url, ask.tab.tab_id)
    return ask.tab
