"""What differs between the providers, as data and small hooks, and the options of one ask.

Everything provider-specific on the Python side lives in a ``ProviderSpec``: URLs,
deadlines (docs/sites.md#timeouts), which input methods the composer tries
(docs/sites.md#input-fallbacks), the completion detector, how an answer is tidied, which
extraction steps count as first choice. The flow itself never asks "is this Gemini?".
The page-side differences live in page.js's provider objects in the same spirit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, fields
from typing import Any

from bridge.providers.completion import (
    ChatGPTCompletion,
    ChatGPTObservation,
    CompletionTimings,
    GeminiCompletion,
    GeminiObservation,
    Verdict,
)
from bridge.results import Progress, Provider

__all__ = [
    "PROVIDER_SPECS",
    "AskOptions",
    "CompletionDetector",
    "ProgressCallback",
    "ProviderSpec",
    "normalize_gemini",
]

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
    normalize_answer: Callable[[str], str] = _as_is
    #: A stop button left from a hung answer must go first (docs/sites.md#gemini-stuck).
    checks_stuck_before_asking: bool = False
    #: How often a stuck answer is retried in a new chat (docs/sites.md#gemini-stuck).
    stuck_retries: int = 0


PROVIDER_SPECS: dict[Provider, ProviderSpec] = {
    "chatgpt": ProviderSpec(
        "chatgpt",
        "https://chatgpt.com/",
        ("https://chatgpt.com/", "https://chat.openai.com/"),
        input_wait_s=30.0,
        send_confirm_s=15.0,
        input_methods=("script", "insert_text", "key_events"),
        new_detector=_chatgpt_detector,
        primary_extractions=frozenset({"markdown"}),
    ),
    "gemini": ProviderSpec(
        "gemini",
        "https://gemini.google.com/app",
        ("https://gemini.google.com/",),
        input_wait_s=15.0,
        send_confirm_s=8.0,
        input_methods=("script", "insert_text"),
        new_detector=_gemini_detector,
        primary_extractions=frozenset({"feedback"}),
        normalize_answer=normalize_gemini,
        checks_stuck_before_asking=True,
        stuck_retries=2,
    ),
}


@dataclass
class AskOptions:
    """What a caller decides about one ask."""

    new_chat: bool = False
    timeout: float = 480.0  # docs/sites.md#timeouts: response completion wait, 8 min
    skip_thinking: bool = False  # click ChatGPT's "Skip thinking" instead of waiting it out
    on_progress: ProgressCallback | None = None
