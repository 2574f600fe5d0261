"""The state one ask carries through its steps (tab, composer, completion, extraction, dumps)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bridge.cdp.browser import Browser
from bridge.cdp.page_script import PageScript
from bridge.cdp.session import CdpSession
from bridge.providers.ask_script import provider_page
from bridge.providers.network_answer import AnswerStream
from bridge.providers.results import Progress, Provider, Timings, Used
from bridge.providers.specs import AskOptions, ProviderSpec
from bridge.store.state import StateStore

if TYPE_CHECKING:
    from bridge.providers.places import Place

__all__ = ["AskContext"]


@dataclass
class AskContext:
    """One ask's state as it goes through the steps (tab, composer, completion, extraction)."""

    browser: Browser
    store: StateStore
    spec: ProviderSpec
    question: str
    key: str
    options: AskOptions
    used: Used = field(default_factory=Used)
    timings: Timings = field(default_factory=Timings)
    started: float = field(default_factory=time.monotonic)
    session: CdpSession | None = None
    script: PageScript | None = None
    observations: list[dict[str, Any]] = field(default_factory=list)  # the last 200, for dumps
    verdicts: list[str] = field(default_factory=list)
    initial_users: int = 0
    #: The answer request as the site sent it (docs/sites.md#answer-sources), watched
    #: from just before sending; None for a provider whose pack names no stream.
    stream: AnswerStream | None = None
    #: Where the ask goes (bridge.providers.places), checked before the browser is touched;
    #: None for the session's conversation or a new chat.
    place: Place | None = None

    @property
    def provider(self) -> Provider:
        return self.spec.name

    @property
    def tab(self) -> CdpSession:
        assert self.session is not None, "the tab step has not run"
        return self.session

    @property
    def page(self) -> PageScript:
        if self.script is None or self.script.tab is not self.session:
            self.script = provider_page(self.tab, self.store.root)
        return self.script

    async def progress(self, phase: str, chars: int = 0) -> None:
        callback = self.options.on_progress
        if callback is None:
            return
        result = callback(Progress(self.provider, phase, time.monotonic() - self.started, chars))
        if result is not None:
            await result
