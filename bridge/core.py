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
from bridge.providers.flow import AskFlow, connect_tab, run_ask
from bridge.providers.specs import AnswerSource, AskOptions, ProgressCallback, provider_spec
from bridge.results import PROVIDERS, AskResult, BothResult, Provider
from bridge.state import StateStore, project_key
from bridge.tools.browsing import BrowserTools, ToolHub, ToolSettings

__all__ = ["Bridge"]


class Bridge:
    def __init__(
        self,
        browser: Browser,
        *,
        state_dir: Path | None = None,
        session_key: str | None = None,
        flow: AskFlow | None = None,
        tool_settings: ToolSettings | None = None,
    ) -> None:
        self.browser = browser
        self.tools = ToolHub(browser, tool_settings)
        self.store = StateStore(state_dir)
        self.session_key = session_key or project_key()
        self.flow = flow or AskFlow()
        # One ask at a time per (key, provider): they share one tab.
        self._locks: dict[tuple[str, Provider], asyncio.Lock] = {}
        # The tab a running ask uses, so diagnosis tools can look at it without waiting.
        self._asking: dict[tuple[str, Provider], CdpSession] = {}

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
        answer_source: AnswerSource = "auto",
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
            on_progress=on_progress,
            answer_source=answer_source,
        )
        slot = (key, provider)
        async with self._lock(key, provider):
            attempts = 1 + provider_spec(provider, self.store.root).stuck_retries
            try:
                for attempt in range(1, attempts + 1):
                    try:
                        result = await run_ask(
                            self.browser,
                            self.store,
                            provider,
                            question,
                            key,
                            options,
                            self.flow,
                            on_tab=lambda tab: self._asking.__setitem__(slot, tab),
                        )
                    except ProviderStuck as exc:
                        if attempt == attempts:
                            await self._record(provider, question, key, None, exc)
                            raise ProviderStuck(provider, exc.reason, attempt) from exc
                        # A hung page is not reused: start the next attempt in a fresh chat.
                        options.new_chat = True
                        continue
                    except BridgeError as exc:
                        await self._record(provider, question, key, None, exc)
                        raise
                    result.used.retries = attempt - 1
                    await self._record(provider, question, key, result, None)
                    # State that could not be read or written: said once per Bridge, in
                    # the log and in the result of the ask that met it (or the next one).
                    note = self.store.take_fault_note()
                    if note is not None:
                        result.notes.append(note)
                    return result
            finally:
                self._asking.pop(slot, None)
        raise AssertionError("unreachable")

    def browser_tools(self, client: str = "default") -> BrowserTools:
        """Browser operations on any tab (navigate, snapshot, click, …) for one client: its
        own current tab. The MCP browser tools are thin wrappers over these."""
        return self.tools.client(client)

    async def provider_tab(
        self, provider: Provider, *, session_key: str | None = None, new_chat: bool = False
    ) -> CdpSession:
        """The tab an ask would use (recorded, open or new), connected and ready to read.

        While an ask runs, this is the tab that ask uses, at once: diagnosis (snapshots,
        DOM reads) must answer during a long answer, not after it.
        """
        key = session_key or self.session_key
        asking = self._asking.get((key, provider))
        if asking is not None and asking.ended is None and not new_chat:
            return asking
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

    async def _record(
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
        try:
            await self.store.append_history_async(record)
        except OSError as exc:
            # The answer still reaches the caller; the history line is what is lost.
            self.store.report_fault("append to", self.store.history_path, exc)
