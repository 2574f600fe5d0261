"""What differs between the providers (seed 000 §9.1 timeouts, §5 input phases) and the
options of one ask."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bridge.providers.completion import CompletionTimings
from bridge.results import Progress, Provider

__all__ = ["PROVIDER_SPECS", "AskOptions", "ProgressCallback", "ProviderSpec"]

ProgressCallback = Callable[[Progress], Awaitable[None] | None]


@dataclass(frozen=True)
class ProviderSpec:
    name: Provider
    home_url: str
    url_prefixes: tuple[str, ...]
    input_wait_s: float  # seed §9.1 "input field wait"
    send_confirm_s: float  # seed §9.1 "message send confirmation"
    input_phases: int  # seed §5: 3 for ChatGPT, 2 for Gemini


PROVIDER_SPECS: dict[Provider, ProviderSpec] = {
    "chatgpt": ProviderSpec(
        "chatgpt",
        "https://chatgpt.com/",
        ("https://chatgpt.com/", "https://chat.openai.com/"),
        input_wait_s=30.0,
        send_confirm_s=15.0,
        input_phases=3,
    ),
    "gemini": ProviderSpec(
        "gemini",
        "https://gemini.google.com/app",
        ("https://gemini.google.com/",),
        input_wait_s=15.0,
        send_confirm_s=8.0,
        input_phases=2,
    ),
}


@dataclass
class AskOptions:
    new_chat: bool = False
    timeout: float = 480.0  # seed §9.1: response completion wait, 8 min
    skip_thinking: bool = False  # click ChatGPT's "Skip thinking" instead of waiting it out
    first_input_phase: int = 1  # tests start later phases to prove the fallbacks work
    first_send_method: int = 0  # likewise for send: 0 script click, 1 CDP mouse, 2 Enter
    completion_timings: CompletionTimings = field(default_factory=CompletionTimings)
    safety_poll_s: float = 5.0  # re-read the page this often even if no mutation arrives
    focus_grace_s: float = 2.0  # after focus emulation, how long before bringToFront
    on_progress: ProgressCallback | None = None
