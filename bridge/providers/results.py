"""What an ask returns: the answer, where it lives, how long each step took, what was used.

Key naming rule for every dict bridge *outputs* (these ``to_dict()`` results, so the MCP
tools' structured results and ``python -m bridge ask`` JSON; ``history.jsonl`` lines; the
scenario run report; debug dumps; benchmark reports): keys are ``snake_case``, as in Python
and in the MCP tools' parameters (``new_chat``), with units as suffixes (``total_ms``).
camelCase stays only where a format is someone else's: the relay <-> extension wire
protocol and CDP (JavaScript's names), and the scenario file format (upstream
chrome-ai-bridge's, docs/flows.md#scenario-format; ``noFallback``, ``maxTotalMs``, ...),
which is an input. A check in the run report is named after the scenario field it checks
(``"name": "maxTotalMs"``): a value, not a key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from bridge.errors import BridgeError

__all__ = ["PROVIDERS", "AskResult", "BothResult", "Progress", "Provider", "Timings", "Used"]

Provider = Literal["chatgpt", "gemini"]
PROVIDERS: tuple[Provider, ...] = ("chatgpt", "gemini")


@dataclass
class Timings:
    """Milliseconds per step (docs/flows.md#timings)."""

    connect_ms: float = 0.0
    wait_input_ms: float = 0.0
    input_ms: float = 0.0
    send_ms: float = 0.0
    wait_response_ms: float = 0.0
    total_ms: float = 0.0

    def to_dict(self) -> dict[str, float]:
        return {
            "connect_ms": round(self.connect_ms, 1),
            "wait_input_ms": round(self.wait_input_ms, 1),
            "input_ms": round(self.input_ms, 1),
            "send_ms": round(self.send_ms, 1),
            "wait_response_ms": round(self.wait_response_ms, 1),
            "total_ms": round(self.total_ms, 1),
        }


@dataclass
class Used:
    """How the answer was obtained; scenario assertions (noFallback) read this."""

    tab: str = ""  # "session" (recorded tab reused), "open_tab" (found), "new_tab"
    input_phase: int = 0  # 1 = JavaScript, 2 = Input.insertText, 3 = key events
    send_method: str = ""  # "js_click", "cdp_mouse", "enter"
    #: What confirmed the send (docs/sites.md#sent): "turn+request" (the new user turn and
    #: the pack's answer request), or "turn" for a pack that names no answer request.
    sent: str = ""
    completion: str = ""  # the detector's reason, e.g. "stop_gone_send_enabled"
    #: Where the answer came from (docs/sites.md#answer-sources): "network" (the site's
    #: own stream), "copy" (the turn's copy action) or "dom" (the rendered page).
    extraction: str = ""
    extraction_step: str = ""  # which step of the DOM reading found the text, e.g. "markdown"
    fallbacks: list[str] = field(default_factory=list)  # every fallback taken, by name
    thinking: bool = False  # ChatGPT Thinking mode was seen
    skipped_thinking: bool = False
    retries: int = 0  # Gemini stuck retries
    focus_emulated: bool = False  # background tab: Emulation.setFocusEmulationEnabled
    brought_to_front: bool = False  # background tab: Page.bringToFront was needed
    #: The files sent with the question (docs/sites.md#attachments): each one's ``name``,
    #: ``bytes``, ``sent_as`` ("inline" in the question, "upload" through the site's
    #: control) and the ``method`` that uploaded it.
    attachments: list[dict[str, Any]] = field(default_factory=list)
    #: The mode asked in (docs/sites.md#modes), once the page showed it chosen:
    #: ``requested``, the picker item's ``id`` and ``label``, and ``how`` ("already", "chosen").
    mode: dict[str, str] = field(default_factory=dict)
    #: The model that answered, as the site's answer stream names it (ChatGPT's
    #: ``metadata.model_slug``, SITE-FACTS C7.5); "" when the stream does not say.
    model: str = ""
    #: Where it was asked (docs/sites.md#where), once the page showed it: ``kind``
    #: ("conversation", "project", "gpt", "gem", "temporary"), ``id`` and ``url``; empty
    #: for the session's conversation or a new chat.
    place: dict[str, Any] = field(default_factory=dict)
    #: Asked in a temporary chat: nothing was recorded in the sessions.
    temporary: bool = False
    #: ChatGPT's thinking effort, once the page showed it chosen (docs/sites.md#effort):
    #: ``requested``, the row's ``label``, the ``tier`` it means, the composer pill's text
    #: (``shown``) and ``how`` ("already", "chosen"); empty when none was asked for.
    effort: dict[str, str] = field(default_factory=dict)
    #: Gemini's Deep Think was on (its chip shown) when the question was sent, whether this
    #: ask turned it on or found it on (left on by the person or an earlier ask).
    deep_think: bool = False
    #: What the answer generated, saved (docs/sites.md#outputs): each one's ``kind``
    #: ("image", "file"), saved ``name``, ``path``, ``bytes`` and ``mime``.
    outputs: list[dict[str, Any]] = field(default_factory=list)
    #: Deep Research (docs/sites.md#research), empty when not asked for: ``state`` ("done":
    #: the report is the answer; "questions": the site's clarifying questions are),
    #: ``sources`` ([{title, url}] the report cites), ``started`` ("button": bridge pressed the
    #: plan's start control; "countdown": the site started it by itself; "" before), and
    #: ``answered`` (the person's answers to clarifying questions were sent).
    research: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AskResult:
    """What an ask returns: the answer as markdown, where it was asked, how long each step took
    and how it was done (``used``)."""

    provider: Provider
    question: str
    answer: str  # text, code blocks kept as fenced blocks
    url: str  # the conversation URL
    timings: Timings
    used: Used
    session_key: str
    suspicious: bool = False  # docs/flows.md#suspicious-answer; a debug dump was written
    #: What the caller should know beside the answer, e.g. that state could not be recorded
    #: (said once per Bridge). Only in ``to_dict()`` when there is something to say.
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "provider": self.provider,
            "answer": self.answer,
            "url": self.url,
            "timings": self.timings.to_dict(),
            "used": self.used.to_dict(),
            "session_key": self.session_key,
            "suspicious": self.suspicious,
        }
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass
class BothResult:
    """Each side's result or error; one side's failure never hides the other's answer."""

    results: dict[Provider, AskResult]
    errors: dict[Provider, BridgeError]
    wall_ms: float

    @classmethod
    def from_outcomes(
        cls, providers: Sequence[Provider], outcomes: Sequence[object], wall_ms: float
    ) -> BothResult:
        """Sort ``asyncio.gather(..., return_exceptions=True)`` outcomes into answers and errors.

        Anything that is neither an answer nor a BridgeError (a bug, a cancellation) is raised.
        """
        results: dict[Provider, AskResult] = {}
        errors: dict[Provider, BridgeError] = {}
        for provider, outcome in zip(providers, outcomes, strict=True):
            if isinstance(outcome, AskResult):
                results[provider] = outcome
            elif isinstance(outcome, BridgeError):
                errors[provider] = outcome
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                raise TypeError(f"unexpected outcome for {provider}: {outcome!r}")
        return cls(results, errors, wall_ms)

    @property
    def all_ok(self) -> bool:
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"wall_ms": round(self.wall_ms, 1)}
        for provider, result in self.results.items():
            out[provider] = result.to_dict()
        for provider, error in self.errors.items():
            out[provider] = {"error": {"code": error.code, "message": str(error)}}
        return out


@dataclass(frozen=True)
class Progress:
    """Reported while waiting for an answer (MCP progress notifications read it)."""

    provider: Provider
    phase: str  # connect | input | send | waiting | thinking | streaming | extracting | done
    # (Deep Research adds research_setup before the input and research while it runs:
    # docs/sites.md#research)
    elapsed_s: float
    chars: int  # characters of the answer so far (0 until it streams)
