"""The one facade everything drives: ``Bridge.ask`` and ``Bridge.ask_both``.

The MCP tools, the CLI, the pytest fixtures and the scenario harness all call these; no
second code path exists for tests.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

from bridge.browser import Browser
from bridge.cdp import CdpSession
from bridge.errors import BridgeError, ProviderStuck
from bridge.providers.completion import CompletionTimings
from bridge.providers.driver import AskOptions, ProgressCallback, connect_tab, run_ask
from bridge.results import PROVIDERS, AskResult, BothResult, Provider
from bridge.state import StateStore, project_key

__all__ = ["STUCK_RETRIES", "Bridge"]

STUCK_RETRIES = 2  # seed 000 §9.2: a stuck Gemini is retried at most twice


class Bridge:
    def __init__(
        self,
        browser: Browser,
        *,
        state_dir: Path | None = None,
        session_key: str | None = None,
        completion_timings: CompletionTimings | None = None,
    ) -> None:
        self.browser = browser
        self.store = StateStore(state_dir)
        self.session_key = session_key or project_key()
        self.completion_timings = completion_timings or CompletionTimings()
        # One ask at a time per (key, provider): they share one tab.
        self._locks: dict[tuple[str, Provider], asyncio.Lock] = {}

    def _lock(self, key: str, provider: Provider) -> asyncio.Lock:
        return self._locks.setdefault((key, provider), asyncio.Lock())

    async def ask(
        self,
        provider: Provider,
        question: str,
        *,
        new_chat: bool = False,
        timeout: float | None = None,
        session_key: str | None = None,
        skip_thinking: bool = False,
        on_progress: ProgressCallback | None = None,
        first_input_phase: int = 1,
    ) -> AskResult:
        """Ask one provider through its web UI; a typed BridgeError says what went wrong."""
        if provider not in PROVIDERS:
            raise ValueError(f"unknown provider {provider!r}: use one of {', '.join(PROVIDERS)}")
        if not question.strip():
            raise ValueError("the question is empty")
        key = session_key or self.session_key
        options = AskOptions(
            new_chat=new_chat,
            timeout=480.0 if timeout is None else timeout,
            skip_thinking=skip_thinking,
            first_input_phase=first_input_phase,
            completion_timings=self.completion_timings,
            on_progress=on_progress,
        )
        async with self._lock(key, provider):
            attempts = 1 + (STUCK_RETRIES if provider == "gemini" else 0)
            for attempt in range(1, attempts + 1):
                try:
                    result = await run_ask(
                        self.browser, self.store, provider, question, key, options
                    )
                except ProviderStuck as exc:
                    if attempt == attempts:
                        self._record(provider, question, key, None, exc)
                        raise ProviderStuck(provider, exc.reason, attempt) from exc
                    # A hung page is not reused: start the next attempt in a fresh chat.
                    options.new_chat = True
                    continue
                except BridgeError as exc:
                    self._record(provider, question, key, None, exc)
                    raise
                result.used.retries = attempt - 1
                self._record(provider, question, key, result, None)
                return result
        raise AssertionError("unreachable")

    async def provider_tab(
        self, provider: Provider, *, session_key: str | None = None, new_chat: bool = False
    ) -> CdpSession:
        """The tab an ask would use (recorded, open or new), connected and ready to read."""
        key = session_key or self.session_key
        async with self._lock(key, provider):
            return await connect_tab(self.browser, self.store, provider, key, new_chat=new_chat)

    async def ask_both(
        self,
        question: str,
        *,
        new_chat: bool = False,
        timeout: float | None = None,
        session_key: str | None = None,
        providers: Sequence[Provider] = PROVIDERS,
        on_progress: ProgressCallback | None = None,
    ) -> BothResult:
        """Ask every provider at once; each side's answer or error, never one hiding the other."""
        started = time.monotonic()
        outcomes = await asyncio.gather(
            *(
                self.ask(
                    p,
                    question,
                    new_chat=new_chat,
                    timeout=timeout,
                    session_key=session_key,
                    on_progress=on_progress,
                )
                for p in providers
            ),
            return_exceptions=True,
        )
        return BothResult.from_outcomes(providers, outcomes, (time.monotonic() - started) * 1000)

    def _record(
        self,
        provider: Provider,
        question: str,
        key: str,
        result: AskResult | None,
        error: BridgeError | None,
    ) -> None:
        record: dict[str, object] = {"project": key, "provider": provider, "question": question}
        if result is not None:
            record.update(
                answer=result.answer,
                url=result.url,
                timings=result.timings.to_dict(),
                outcome="ok",
                used=result.used.to_dict(),
            )
        elif error is not None:
            record.update(outcome=error.code, error=str(error))
        self.store.append_history(record)
