"""What differs between the providers, as data and small hooks, and the options of one ask.

Everything provider-specific on the Python side lives in a ``ProviderSpec``, built from the
provider's pack (bridge.providers.pack, docs/sites.md#provider-packs): URLs, deadlines
(docs/sites.md#timeouts), which input methods the composer tries
(docs/sites.md#input-fallbacks), whether a stuck answer is retried; plus Python hooks: the
completion detector, how an answer is tidied. The flow itself never asks "is this Gemini?".
The page-side differences live in the same packs, read by page.js.

``PROVIDER_SPECS[provider]`` (or :func:`provider_spec` with a state directory) builds the spec
from the pack as it is now: an edited override (``<state dir>/packs/<provider>.json``) applies
to the next ask, and a broken one raises ``PackError``.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal, TypedDict

from bridge.providers.completion import (
    ChatGPTCompletion,
    ChatGPTObservation,
    CompletionTimings,
    GeminiCompletion,
    GeminiObservation,
    Verdict,
)
from bridge.providers.pack import Pack, load_pack
from bridge.providers.results import PROVIDERS, Progress, Provider

__all__ = [
    "PROVIDER_SPECS",
    "AskOptions",
    "CompletionDetector",
    "ProgressCallback",
    "ProviderSpec",
    "Where",
    "normalize_gemini",
    "provider_spec",
    "spec_from_pack",
]

AnswerSource = Literal["auto", "network", "copy", "dom"]
ProgressCallback = Callable[[Progress], Awaitable[None] | None]


class CompletionDetector:
    """A pure detector fed the page's raw observations (dicts from page.js ``observe``)."""

    def __init__(
        self,
        detector: ChatGPTCompletion | GeminiCompletion,
        observation: type[ChatGPTObservation] | type[GeminiObservation],
        text_len_key: str,
    ) -> None:
        self._detector = detector
        self._observation = observation
        self._names = {f.name for f in fields(observation)} - {"t"}
        self.text_len_key = text_len_key

    @property
    def verdict(self) -> Verdict:
        return self._detector.verdict

    def observe(self, t: float, raw: dict[str, Any]) -> Verdict:
        known = {k: v for k, v in raw.items() if k in self._names}
        return self._detector.observe(self._observation(t=t, **known))  # type: ignore[arg-type]

    def tick(self, now: float) -> Verdict:
        return self._detector.tick(now)

    def chars(self, raw: dict[str, Any]) -> int:
        """Characters of the answer so far, as the observation reports them."""
        return int(raw.get(self.text_len_key, 0))


def _chatgpt_detector(
    initial: int, started: float, timings: CompletionTimings
) -> CompletionDetector:
    return CompletionDetector(
        ChatGPTCompletion(initial_assistant_count=initial, started_at=started, timings=timings),
        ChatGPTObservation,
        "last_assistant_text_len",
    )


def _gemini_detector(
    initial: int, started: float, timings: CompletionTimings
) -> CompletionDetector:
    return CompletionDetector(
        GeminiCompletion(initial_model_response_count=initial, started_at=started, timings=timings),
        GeminiObservation,
        "last_response_text_len",
    )


def _as_is(text: str) -> str:
    return text


def normalize_gemini(text: str) -> str:
    """Tidy whitespace Gemini's rendering leaves (docs/sites.md#extraction-gemini)."""
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


@dataclass(frozen=True)
class ProviderSpec:
    """What differs per provider, as data and hooks (from its pack): URLs, timeouts, the methods
    tried in order, the completion detector."""

    name: Provider
    home_url: str
    url_prefixes: tuple[str, ...]
    input_wait_s: float  # docs/sites.md#timeouts "input field wait"
    send_confirm_s: float  # docs/sites.md#timeouts "message send confirmation"
    #: Composer input methods tried in order, by name (bridge.providers.composer).
    input_methods: tuple[str, ...]
    new_detector: Callable[[int, float, CompletionTimings], CompletionDetector]
    #: Extraction steps that are the first choice; any other counts as a fallback.
    primary_extractions: frozenset[str]
    #: The provider's pack this spec was built from (selectors, texts, ``pack.network``…).
    pack: Pack
    normalize_answer: Callable[[str], str] = _as_is
    #: A stop button left from a hung answer must go first (docs/sites.md#gemini-stuck).
    checks_stuck_before_asking: bool = False
    #: How often a stuck answer is retried in a new chat (docs/sites.md#gemini-stuck).
    stuck_retries: int = 0


@dataclass(frozen=True)
class _Hooks:
    """What a provider needs besides its pack: Python code."""

    new_detector: Callable[[int, float, CompletionTimings], CompletionDetector]
    normalize_answer: Callable[[str], str] = _as_is


_HOOKS: dict[Provider, _Hooks] = {
    "chatgpt": _Hooks(_chatgpt_detector),
    "gemini": _Hooks(_gemini_detector, normalize_gemini),
}


def spec_from_pack(name: Provider, pack: Pack) -> ProviderSpec:
    """A provider's spec: its pack's URLs and flow switches plus its Python hooks."""
    hooks = _HOOKS[name]
    flow, urls = pack.flow, pack.urls
    return ProviderSpec(
        name,
        urls.home.value,
        urls.tab_prefixes.value,
        input_wait_s=flow.input_wait_s.value,
        send_confirm_s=flow.send_confirm_s.value,
        input_methods=flow.input_methods.value,
        new_detector=hooks.new_detector,
        # The pack's first extraction step is the first choice; the others are fallbacks.
        primary_extractions=frozenset(flow.extraction_steps.value[:1]),
        pack=pack,
        normalize_answer=hooks.normalize_answer,
        checks_stuck_before_asking=flow.checks_stuck_before_asking.value,
        stuck_retries=flow.stuck_retries.value,
    )


_specs: dict[tuple[Provider, str], ProviderSpec] = {}
_specs_lock = threading.Lock()


def provider_spec(name: Provider, state_dir: Path | None = None) -> ProviderSpec:
    """``name``'s spec from its pack as it is now (the override under ``state_dir``, default
    :func:`bridge.store.state.default_state_dir`, merged in). Cheap to call for every ask."""
    pack = load_pack(name, state_dir)
    key = (name, pack.fingerprint)
    with _specs_lock:
        spec = _specs.get(key)
        if spec is None:
            spec = _specs[key] = spec_from_pack(name, pack)
        return spec


class _ProviderSpecs(Mapping[Provider, ProviderSpec]):
    """``PROVIDER_SPECS[name]``: the spec from the current pack (default state directory)."""

    def __getitem__(self, name: Provider) -> ProviderSpec:
        if name not in PROVIDERS:
            raise KeyError(name)
        return provider_spec(name)

    def __iter__(self) -> Iterator[Provider]:
        return iter(PROVIDERS)

    def __len__(self) -> int:
        return len(PROVIDERS)


PROVIDER_SPECS: Mapping[Provider, ProviderSpec] = _ProviderSpecs()


class Where(TypedDict):
    """Where an ask goes, as the callers pass it on (docs/sites.md#where; ``AskOptions``)."""

    conversation: str | None
    project: str | None
    gpt: str | None
    gem: str | None
    temporary: bool


@dataclass
class AskOptions:
    """What a caller decides about one ask."""

    new_chat: bool = False
    timeout: float = 480.0  # docs/sites.md#timeouts: response completion wait, 8 min
    skip_thinking: bool = False  # click ChatGPT's "Skip thinking" instead of waiting it out
    on_progress: ProgressCallback | None = None
    #: Where the answer is read from (docs/sites.md#answer-sources): "auto" is network,
    #: then copy, then DOM, each checked against the page; naming one source returns its
    #: reading unchecked (how bridge.bench.fidelity measures each).
    answer_source: AnswerSource = "auto"
    #: The site's mode to ask in (docs/sites.md#modes): an item of its picker, by id or
    #: label ("thinking", "gpt-5-5-instant", "Pro"); None asks in the mode the page has.
    mode: str | None = None
    #: Where to ask (docs/sites.md#where, bridge.providers.places): a conversation to continue
    #: (its URL on the provider's site, or its bare id); a ChatGPT ``project`` (g-p-<32 hex>
    #: or its URL) or ``gpt`` (g-<id> or its URL); a Gemini ``gem`` (its id or URL). Each is
    #: checked against the page before anything is typed.
    conversation: str | None = None
    project: str | None = None
    gpt: str | None = None
    gem: str | None = None
    #: Ask in a temporary chat (ChatGPT ``?temporary-chat=true``, Gemini's temporary-chat
    #: button); nothing is recorded in the sessions, and no remembered conversation continues.
    temporary: bool = False
    #: ChatGPT's thinking effort (docs/sites.md#effort): a tier of its Effort submenu by
    #: label or by any name of that tier ("high", "extended", "Extra High", "max", "pro");
    #: None asks at the tier the page has.
    effort: str | None = None
    #: Gemini's Deep Think, turned on in the Tools drawer and confirmed by its chip
    #: (docs/sites.md#effort); False leaves the page as it is.
    deep_think: bool = False
    #: Where generated images and files are saved (docs/sites.md#outputs): a folder the
    #: person named, already checked and resolved by the facade; None saves them under
    #: ``<state dir>/outputs/<outputs_id>/``.
    outputs_dir: str | None = None
    #: The folder name under ``<state dir>/outputs`` (a job's id); None makes a new one.
    outputs_id: str | None = None
    #: Deep Research (docs/sites.md#research): started in the site's own control (ChatGPT's
    #: composer "+" menu, Gemini's Tools) and confirmed armed before anything is typed; the
    #: ask then waits for the finished report (markdown with its sources), which takes many
    #: minutes (RESEARCH_TIMEOUT_S is the default wait).
    research: bool = False
    #: The person's answers to the site's clarifying questions, sent as the next message
    #: only when given; without them a clarifying turn ends the ask with the site's
    #: questions as the answer (``used.research["state"] == "questions"``).
    research_answers: str | None = None
