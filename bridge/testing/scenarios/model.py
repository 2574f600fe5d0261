"""The typed scenario: what a scenario file says, after loading. Pure data and templates.

The format is upstream chrome-ai-bridge's ``test-scenarios.json`` (docs/flows.md#scenario-format;
``loader.py`` reads it), so upstream's own file loads unchanged::

    {"version": "1.0.0", "scenarios": [{"id": "chatgpt-new-chat", "name": "...",
      "provider": "chatgpt", "tags": ["smoke", "chatgpt"],
      "question": {"template": "How do I read files asynchronously in Python? ID:{{timestamp}}"},
      "setup": {"instruction": "...", "requireExistingTab": true},
      "assertions": {"minAnswerLength": 20, "relevanceThreshold": 0.2}}]}

Everything beyond the base format is optional: ``description``, ``expect`` (what the outcome must
be: a typed error, the tab reused, ...), ``ask`` (skipThinking, timeoutMs), ``setup.primer``
and ``setup.extensionConnected``, ``fakeOnly``/``liveOnly`` (a reason), and ``fake``: how
the fake sites behave, in their own Python names, plus fake-only ``expect``/``assertions``.
Live runs ignore ``fake`` entirely.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from bridge.errors import BridgeError
from bridge.providers.completion import CompletionTimings
from bridge.providers.results import PROVIDERS, Provider

if TYPE_CHECKING:
    from bridge.fakes.behaviour import Behaviour

__all__ = [
    "ASSERTION_NAMES",
    "TEMPLATE_VARIABLES",
    "VARIABLE",
    "AskSettings",
    "Assertions",
    "Expect",
    "FakeSetup",
    "FakeSite",
    "Scenario",
    "ScenarioFile",
    "ScenarioProvider",
    "Setup",
    "error_codes",
    "render_question",
    "template_variables",
]

ScenarioProvider = Literal["chatgpt", "gemini", "both"]

ASSERTION_NAMES = (
    "bothMustSucceed",
    "minAnswerLength",
    "relevanceThreshold",
    "maxTotalMs",
    "noFallback",
    "noEmptyMarkdown",
)
TEMPLATE_VARIABLES = ("timestamp", "date", "id")
VARIABLE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


@dataclass(frozen=True)
class Assertions:
    """docs/flows.md#scenario-assertions. ``None``/``False`` means "not checked", as in the
    upstream suite's runner."""

    both_must_succeed: bool = False
    min_answer_length: int | None = None
    relevance_threshold: float | None = None
    max_total_ms: float | None = None
    no_fallback: bool = False
    no_empty_markdown: bool = False
    given: frozenset[str] = field(default=frozenset(), compare=False)
    """The attributes the file set explicitly (what an override replaces)."""

    def overridden_by(self, other: Assertions | None) -> Assertions:
        """These assertions with every field ``other`` sets replaced (fake-mode overrides)."""
        if other is None:
            return self
        changes = {name: getattr(other, name) for name in other.given}
        return replace(self, **changes, given=self.given | other.given)


@dataclass(frozen=True)
class Expect:
    """What the outcome must be, beyond the quality assertions; ``None`` = unchecked."""

    errors: Mapping[Provider, str] = field(default_factory=dict)
    """Provider -> the typed error code its ask must end with (others must answer)."""
    error_message: tuple[str, ...] = ()
    """Substrings every expected error's message must contain (case-insensitive)."""
    tab: str | None = None
    same_conversation: bool = False
    thinking: bool | None = None
    skipped_thinking: bool | None = None
    retries: int | None = None
    brought_to_front: bool | None = None
    focus_emulated: bool | None = None
    input_phase: int | None = None
    completion: str | None = None
    code_block: bool = False
    given: frozenset[str] = field(default=frozenset(), compare=False)

    def overridden_by(self, other: Expect) -> Expect:
        changes: dict[str, Any] = {name: getattr(other, name) for name in other.given}
        if "errors" in other.given:
            changes["errors"] = {**self.errors, **other.errors}
        return replace(self, **changes, given=self.given | other.given)


@dataclass(frozen=True)
class FakeSite:
    """One fake site's behaviour: ``default`` from the page's load on, ``queue`` per question."""

    default: Behaviour | None = None
    queue: tuple[Behaviour, ...] = ()


@dataclass(frozen=True)
class FakeSetup:
    sites: Mapping[Provider, FakeSite] = field(default_factory=dict)
    completion_timings: CompletionTimings | None = None
    expect: Expect = field(default_factory=Expect)
    assertions: Assertions | None = None


@dataclass(frozen=True)
class Setup:
    instruction: str | None = None
    """Shown to a person running live (the upstream suite prints it before the scenario)."""
    require_existing_tab: bool = False
    """Ask in an existing chat: a primer question opens it first, in both modes."""
    primer: str | None = None
    """The primer question's template (a default following docs/flows.md#forbidden-questions
    when absent)."""
    extension_connected: bool = True
    """False: ask through a relay no extension can reach (docs/flows.md#known-problem-6)."""


@dataclass(frozen=True)
class AskSettings:
    skip_thinking: bool = False
    timeout_ms: float | None = None


@dataclass(frozen=True)
class Scenario:
    id: str
    name: str
    provider: ScenarioProvider
    template: str
    tags: tuple[str, ...] = ()
    description: str | None = None
    setup: Setup = field(default_factory=Setup)
    assertions: Assertions = field(default_factory=Assertions)
    expect: Expect = field(default_factory=Expect)
    ask: AskSettings = field(default_factory=AskSettings)
    fake: FakeSetup = field(default_factory=FakeSetup)
    fake_only: str | None = None
    live_only: str | None = None
    line: int = 1
    """Where the scenario starts in its file (1-based), for pytest's report locations."""

    @property
    def providers(self) -> tuple[Provider, ...]:
        return PROVIDERS if self.provider == "both" else (self.provider,)

    def assertions_for(self, *, live: bool) -> Assertions:
        return self.assertions if live else self.assertions.overridden_by(self.fake.assertions)

    def expect_for(self, *, live: bool) -> Expect:
        return self.expect if live else self.expect.overridden_by(self.fake.expect)


@dataclass(frozen=True)
class ScenarioFile:
    source: str
    version: str | None
    scenarios: tuple[Scenario, ...]


def error_codes() -> frozenset[str]:
    """Every ``code`` a typed bridge error can carry (what ``expect.error`` may name)."""
    codes: set[str] = set()
    pending: list[type[BridgeError]] = [BridgeError]
    while pending:
        cls = pending.pop()
        codes.add(cls.code)
        pending.extend(cls.__subclasses__())
    return frozenset(codes)


# -- templates ------------------------------------------------------------------------------


def template_variables(now: datetime, scenario_id: str) -> dict[str, str]:
    """``{{timestamp}}`` as the upstream suite makes it (``Date.now().toString(36)``), and friends
    (docs/flows.md#scenario-format)."""
    millis = int(now.timestamp() * 1000)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while millis:
        millis, rest = divmod(millis, 36)
        out = digits[rest] + out
    return {"timestamp": out or "0", "date": now.date().isoformat(), "id": scenario_id}


def render_question(template: str, variables: Mapping[str, str]) -> str:
    """Fill ``{{name}}`` placeholders (every occurrence; unknown names were rejected at load)."""
    return VARIABLE.sub(lambda m: variables.get(m.group(1), ""), template)
