"""Pure reply-completion detectors for the ChatGPT and Gemini web UIs.

The chrome-ai-bridge spec that bridge started from polls the page once a second with fixed
sleeps (docs/flows.md#departures). Here the core is sans-I/O instead: a driver feeds a detector
*observations* of the page (reported by a MutationObserver as the page changes), each stamped
with ``t`` on one monotonic clock, and the detector answers a :class:`Verdict`: what it believes,
why, and the ``next_deadline`` at which the verdict may change even if the page does not (the
time-based conditions). The driver owns the clock, the sleeping and the overall timeouts (8 min
response wait, 120 s text wait, docs/sites.md#timeouts); the detector owns no clock and does no
I/O, so a table of observations tests it completely.

Timestamps must be the time the driver *processed* an observation, so that observations and
``tick`` calls form one non-decreasing sequence.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, fields
from typing import Generic, NamedTuple, TypeVar

__all__ = [
    "DEFAULT_TIMINGS",
    "ChatGPTCompletion",
    "ChatGPTObservation",
    "CompletionTimings",
    "GeminiCompletion",
    "GeminiObservation",
    "Phase",
    "Verdict",
    "is_suspicious_answer",
]


class Phase(enum.Enum):
    """What a detector believes the page is doing."""

    WAITING = "waiting"  # sent, no new assistant turn yet
    THINKING = "thinking"  # ChatGPT Thinking mode in progress (docs/sites.md#chatgpt-thinking)
    STREAMING = "streaming"  # the new turn exists, the answer is still being produced
    # Completion conditions hold but the answer has no rendered text: ChatGPT renders no text
    # nodes in a background tab (docs/sites.md#background-tab) and React renders late after long
    # thinking (docs/sites.md#extraction-chatgpt).
    # The driver should bring the tab to the front; the detector keeps waiting for text.
    AWAITING_TEXT = "awaiting_text"
    DONE = "done"
    STUCK = "stuck"  # Gemini stopped mid-answer or never started (docs/sites.md#gemini-stuck)
    FAILED = "failed"  # login wall, rate limit, error turn, or no new turn in time

    @property
    def terminal(self) -> bool:
        """True for the phases after which no observation changes the verdict."""
        return self in _TERMINAL


_TERMINAL = frozenset({Phase.DONE, Phase.STUCK, Phase.FAILED})


@dataclass(frozen=True)
class Verdict:
    """A detector's answer after an observation or a tick."""

    phase: Phase
    reason: str  # short machine-readable reason, e.g. "feedback_icons", "stuck_stop_button"
    # Absolute time (the observations' clock) at which the verdict may change with no new
    # observation; None means only a new observation can change it.
    next_deadline: float | None
    # True when a fallback condition decided (or, for AWAITING_TEXT, will decide) DONE; scenarios
    # assert `noFallback` (docs/flows.md#scenario-assertions).
    used_fallback: bool


@dataclass(frozen=True)
class ChatGPTObservation:
    """One snapshot of the ChatGPT page (docs/sites.md#chatgpt, docs/sites.md#chatgpt-thinking)."""

    t: float
    user_count: int
    assistant_count: int
    has_stop_button: bool
    send_button_present: bool
    send_button_enabled: bool
    input_empty: bool
    has_skip_thinking_button: bool  # "Answer now" / "Skip thinking" / "今すぐ回答" (C4.4)
    # A thinking status shows in the newest turn: a label such as "Thinking", "Reasoning",
    # 思考中 (C4.1), or a `span.loading-shimmer` / `.result-thinking` placeholder.
    still_generating_text: bool
    thinking_complete_marker: bool  # "Thought for 12s" / 思考時間 summary in the turn (C4.2)
    last_assistant_text_len: int  # rendered text length of the newest assistant turn
    login_wall: bool = False  # login CTAs and no profile button, or an auth page (C5.1-C5.4)
    rate_limited: bool = False
    # The newest answer is an error text of the evidence ("Something went wrong…", C5.8), or
    # a "Thinking failed" / "Stopped thinking" turn with no answer (C3.6).
    error_turn: bool = False
    # The voice-mode button is in the send slot (no stop button): the composer's idle state
    # after an answer when the composer is empty (C1.11, C3.3).
    speech_button: bool = False
    action_bar: bool = False  # copy/good/bad buttons on the newest turn (C2.6); not a signal


@dataclass(frozen=True)
class GeminiObservation:
    """One snapshot of the Gemini page (docs/sites.md#completion-gemini, docs/sites.md#gemini)."""

    t: float
    user_count: int
    model_response_count: int
    has_stop_button: bool
    # The mic slot is idle: composer present and empty, neither send nor stop button. No mic
    # selector is evidenced (G1.4 only says mic and send swap), so the page tells by behaviour.
    has_mic_button: bool
    # "Good response" / "Bad response" (良い回答 / 悪い回答) buttons in the newest response (G2.6).
    has_feedback_buttons: bool
    send_button_enabled: bool
    input_empty: bool
    last_response_text_len: int
    login_wall: bool = False
    rate_limited: bool = False  # the newest reply is a limit notice (G5.5)
    error_turn: bool = False  # the newest reply is an error text of the evidence (G5.4)
    response_complete: bool = False  # `.response-footer.complete` in the newest response (G2.7)
    # The newest reply is a Deep Think placeholder ("I'm on it", "generating your response",
    # "check back later", G10.2): it may look finished, but the answer is still to come.
    placeholder_reply: bool = False


@dataclass(frozen=True)
class CompletionTimings:
    """Durations in seconds; the defaults are the spec's (docs/sites.md#timeouts)."""

    chatgpt_fallback_s: float = 5.0  # docs/sites.md#completion-chatgpt condition 3
    chatgpt_thinking_fallback_s: float = 10.0  # docs/sites.md#completion-chatgpt condition 4
    # docs/sites.md#completion-gemini condition 3: the spec's "textStableCount >= 5" at 1 s
    # polling = text unchanged for 5 s.
    gemini_text_stable_s: float = 5.0
    gemini_fallback_s: float = 10.0  # docs/sites.md#completion-gemini condition 4 (FB)
    gemini_stuck_s: float = 30.0  # docs/sites.md#gemini-stuck: stop stays, no text progress
    gemini_no_response_s: float = 30.0  # docs/sites.md#timeouts: no new response -> STUCK
    new_turn_s: float = 30.0  # docs/sites.md#timeouts: no new ChatGPT turn -> FAILED

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise ValueError(
                    f"{field.name} must be a finite number >= 0 seconds, got {value!r}"
                )


DEFAULT_TIMINGS = CompletionTimings()


class _Condition(NamedTuple):
    """One completion condition evaluated against the latest observation."""

    reason: str
    holds: bool  # the condition's non-time parts hold
    holds_from: float | None = None  # time-based conditions also need `now >= holds_from`
    fallback: bool = False


_Obs = TypeVar("_Obs", ChatGPTObservation, GeminiObservation)


def _failure(
    obs: ChatGPTObservation | GeminiObservation, *, new_answer: bool, limit_in_answer: bool
) -> str | None:
    """What ends the wait with no answer: these mean none is coming however long we wait
    (docs/flows.md#known-problem-5). An error turn, and a limit notice that is the answer
    itself (Gemini, G5.5), are about the newest answer: one left from before sending (an
    existing conversation that ended in an error or a limit) says nothing about this question.
    """
    if obs.login_wall:
        return "login_wall"
    if obs.rate_limited and (new_answer or not limit_in_answer):
        return "rate_limited"
    if obs.error_turn and new_answer:
        return "error_turn"
    return None


def _decide(
    conditions: list[_Condition], now: float, text_len: int, deadlines: list[float]
) -> Verdict:
    """First condition that holds at `now` wins (list order is priority); else STREAMING."""
    for condition in conditions:
        if not condition.holds:
            continue
        if condition.holds_from is not None and now < condition.holds_from:
            # Only time is missing: the driver must come back then even if the page is silent.
            deadlines.append(condition.holds_from)
            continue
        if text_len > 0:
            return Verdict(Phase.DONE, condition.reason, None, condition.fallback)
        # "Done" with no rendered text is not an answer yet (docs/sites.md#extraction-chatgpt,
        # docs/sites.md#background-tab). A pending higher-priority condition may still take over
        # the reason while we wait for text.
        return Verdict(
            Phase.AWAITING_TEXT, condition.reason, min(deadlines, default=None), condition.fallback
        )
    return Verdict(Phase.STREAMING, "streaming", min(deadlines, default=None), False)


class _Detector(Generic[_Obs]):
    """Clock bookkeeping and terminality shared by both providers."""

    def __init__(self, *, initial_count: int, started_at: float, timings: CompletionTimings):
        if initial_count < 0:
            raise ValueError(f"initial count must be >= 0, got {initial_count}")
        if not math.isfinite(started_at):
            raise ValueError(f"started_at must be finite, got {started_at!r}")
        self._initial = initial_count
        self._started_at = started_at
        self._timings = timings
        self._now = started_at
        self._last: _Obs | None = None
        self._saw_stop = False
        # When the newest answer's (count, text length) last changed; the stability conditions
        # measure from here. The first observation is the baseline: nothing was seen before it.
        self._text_signature: tuple[int, int] | None = None
        self._text_changed_at = started_at
        self._verdict = self._evaluate(started_at)

    @property
    def verdict(self) -> Verdict:
        """The verdict after the last observation or tick."""
        return self._verdict

    @property
    def saw_stop_button(self) -> bool:
        """Whether any observation showed the stop button (the spec's `sawStopButton`,
        docs/flows.md#completion)."""
        return self._saw_stop

    def observe(self, obs: _Obs) -> Verdict:
        """Feed one observation of the page taken at `obs.t`; return the new verdict."""
        self._advance(obs.t, "observation")
        if self._verdict.phase.terminal:
            return self._verdict
        if obs.has_stop_button:
            self._saw_stop = True
        signature = self._signature(obs)
        if signature != self._text_signature:
            self._text_signature = signature
            self._text_changed_at = obs.t
        self._absorb(obs)
        self._last = obs
        self._verdict = self._evaluate(obs.t)
        return self._verdict

    def tick(self, now: float) -> Verdict:
        """Re-evaluate the time-based conditions at `now` against the last observation."""
        self._advance(now, "tick")
        if not self._verdict.phase.terminal:
            self._verdict = self._evaluate(now)
        return self._verdict

    def _advance(self, t: float, what: str) -> None:
        if not t >= self._now:  # also rejects NaN
            raise ValueError(
                f"{what} at t={t!r} is earlier than t={self._now!r} already seen: observations "
                "and ticks must carry non-decreasing times from one monotonic clock"
            )
        self._now = t

    def _absorb(self, obs: _Obs) -> None:
        """Hook for provider-specific tracking; runs before `_evaluate`."""

    def _signature(self, obs: _Obs) -> tuple[int, int]:
        raise NotImplementedError

    def _evaluate(self, now: float) -> Verdict:
        raise NotImplementedError


class ChatGPTCompletion(_Detector[ChatGPTObservation]):
    """Decides when ChatGPT has finished answering (docs/sites.md#completion-chatgpt,
    docs/sites.md#extraction-chatgpt, docs/sites.md#chatgpt-thinking)."""

    def __init__(
        self,
        *,
        initial_assistant_count: int,
        started_at: float,
        timings: CompletionTimings = DEFAULT_TIMINGS,
    ) -> None:
        super().__init__(
            initial_count=initial_assistant_count, started_at=started_at, timings=timings
        )

    def _signature(self, obs: ChatGPTObservation) -> tuple[int, int]:
        return (obs.assistant_count, obs.last_assistant_text_len)

    def _evaluate(self, now: float) -> Verdict:
        timings, obs = self._timings, self._last
        # docs/sites.md#timeouts: the new assistant turn must appear within 30 s of sending,
        # else sending failed.
        no_turn_at = self._started_at + timings.new_turn_s
        if obs is None:
            if now >= no_turn_at:
                return Verdict(Phase.FAILED, "no_new_turn", None, False)
            return Verdict(Phase.WAITING, "awaiting_new_turn", no_turn_at, False)
        new_answer = obs.assistant_count > self._initial
        # ChatGPT shows limits in dialogs and toasts, not as the answer (C5.9).
        if (failure := _failure(obs, new_answer=new_answer, limit_in_answer=False)) is not None:
            return Verdict(Phase.FAILED, failure, None, False)

        # docs/sites.md#chatgpt-thinking: Thinking is in progress while a skip control shows
        # ("Answer now", C4.4), or while a thinking status shows in the turn (C4.1) and no
        # "Thought for Ns" summary (C4.2) says it finished. Nothing completes then: an early
        # completion would capture the intermediate thinking state.
        thinking = obs.has_skip_thinking_button or (
            obs.still_generating_text and not obs.thinking_complete_marker
        )
        thinking_reason = (
            "skip_thinking_button" if obs.has_skip_thinking_button else "still_generating"
        )
        # docs/flows.md#initial-count: only a turn beyond the count taken before sending can be
        # our answer; an existing conversation's last answer must never complete the wait.
        if obs.assistant_count <= self._initial:
            if now >= no_turn_at:
                return Verdict(Phase.FAILED, "no_new_turn", None, False)
            if thinking:
                return Verdict(Phase.THINKING, thinking_reason, no_turn_at, False)
            return Verdict(Phase.WAITING, "awaiting_new_turn", no_turn_at, False)
        if thinking:
            return Verdict(Phase.THINKING, thinking_reason, None, False)

        stop_gone = not obs.has_stop_button
        # docs/sites.md#completion-chatgpt condition 4 (the Thinking-mode fallback) does not
        # require the stop button to be gone, since it exists for a stop button that never goes
        # away. Taken literally it would cut off any answer that streams for more than 10 s, so
        # when the stop button is still present we also require the answer's text to have stopped
        # changing for that long.
        thinking_fallback_at = self._started_at + timings.chatgpt_thinking_fallback_s
        if obs.has_stop_button:
            stable_at = self._text_changed_at + timings.chatgpt_thinking_fallback_s
            thinking_fallback_at = max(thinking_fallback_at, stable_at)
        ended = stop_gone and self._saw_stop
        conditions = [
            # The site's own idle state (C1.11, C3.3): the stop button was seen and is gone, and
            # the voice-mode button is back in the send slot of the empty composer.
            _Condition("speech_button_back", ended and obs.speech_button and obs.input_empty),
            # Condition 1 (docs/sites.md#completion-chatgpt): the composer is back (stop button
            # replaced by an enabled send).
            _Condition(
                "stop_gone_send_enabled",
                stop_gone and obs.send_button_present and obs.send_button_enabled,
            ),
            # Condition 2: ChatGPT shows a voice button instead of send when the input is
            # empty, so "stop seen then gone, input empty" ends a reply even when the voice
            # button is not recognised.
            _Condition("stop_seen_then_gone", ended and obs.input_empty),
            # Condition 3: the stop button may never have been observed (fast replies).
            _Condition(
                "fallback_5s",
                stop_gone and obs.input_empty,
                self._started_at + timings.chatgpt_fallback_s,
                fallback=True,
            ),
            # Condition 4 (see above).
            _Condition(
                "fallback_thinking_10s", obs.input_empty, thinking_fallback_at, fallback=True
            ),
        ]
        return _decide(conditions, now, obs.last_assistant_text_len, [])


class GeminiCompletion(_Detector[GeminiObservation]):
    """Decides when Gemini has finished answering, or is stuck (docs/sites.md#completion-gemini,
    docs/sites.md#timeouts, docs/sites.md#gemini-stuck)."""

    def __init__(
        self,
        *,
        initial_model_response_count: int,
        started_at: float,
        timings: CompletionTimings = DEFAULT_TIMINGS,
    ) -> None:
        # Set before the base initialiser, which evaluates the first verdict.
        self._stop_since: float | None = None
        super().__init__(
            initial_count=initial_model_response_count, started_at=started_at, timings=timings
        )

    def _signature(self, obs: GeminiObservation) -> tuple[int, int]:
        return (obs.model_response_count, obs.last_response_text_len)

    def _absorb(self, obs: GeminiObservation) -> None:
        # The stuck check (docs/sites.md#gemini-stuck) measures how long the stop button has
        # *continuously* stayed; it restarts each time the button reappears.
        if not obs.has_stop_button:
            self._stop_since = None
        elif self._stop_since is None:
            self._stop_since = obs.t

    def _evaluate(self, now: float) -> Verdict:
        timings, obs = self._timings, self._last
        # A new response within 30 s (docs/sites.md#timeouts), else stuck_no_response
        # (docs/sites.md#gemini-stuck).
        no_response_at = self._started_at + timings.gemini_no_response_s
        if obs is None:
            if now >= no_response_at:
                return Verdict(Phase.STUCK, "stuck_no_response", None, False)
            return Verdict(Phase.WAITING, "awaiting_new_response", no_response_at, False)
        new_answer = obs.model_response_count > self._initial
        # Gemini's limit notice is its reply (G5.5): only a new reply can be this ask's.
        if (failure := _failure(obs, new_answer=new_answer, limit_in_answer=True)) is not None:
            return Verdict(Phase.FAILED, failure, None, False)

        deadlines: list[float] = []
        if obs.has_stop_button and self._stop_since is not None:
            # stuck_stop_button (docs/sites.md#gemini-stuck): the stop button stays while the
            # text makes no progress (a hung previous session keeps it up too). Measured from the
            # later of the last text change and the button's appearance, so a slow start is not
            # "stuck".
            stuck_at = max(self._text_changed_at, self._stop_since) + timings.gemini_stuck_s
            if now >= stuck_at:
                return Verdict(Phase.STUCK, "stuck_stop_button", None, False)
            deadlines.append(stuck_at)

        # docs/flows.md#initial-count: only a response beyond the count taken before sending
        # can be ours; an existing conversation's last response must never complete the wait.
        if obs.model_response_count <= self._initial:
            if now >= no_response_at:
                return Verdict(Phase.STUCK, "stuck_no_response", None, False)
            deadlines.append(no_response_at)
            return Verdict(Phase.WAITING, "awaiting_new_response", min(deadlines), False)

        # G10.2: Deep Think's placeholder reply is running, however finished it looks (footer,
        # stop gone, text stable): no condition may end the wait on it.
        if obs.placeholder_reply:
            next_deadline = min(deadlines, default=None)
            return Verdict(Phase.STREAMING, "deep_think_placeholder", next_deadline, False)

        # docs/sites.md#completion-gemini conditions in priority order. 0-2 need the stop button
        # to have been seen and gone (generation started and ended); 3 and FB are the fallbacks
        # when it never was seen.
        ended = self._saw_stop and not obs.has_stop_button
        conditions = [
            # Condition 0: the response says it is done: its footer gets `.complete` (G2.7) or
            # it shows its Good/Bad response buttons (G2.6). The reason keeps its old name.
            _Condition(
                "feedback_icons", ended and (obs.response_complete or obs.has_feedback_buttons)
            ),
            # Condition 1: the mic slot is idle again (by behaviour, see GeminiObservation).
            _Condition("mic_button", ended and obs.has_mic_button),
            _Condition(  # ★★☆ condition 2
                "stop_gone_send_enabled", ended and obs.send_button_enabled and obs.input_empty
            ),
            _Condition(  # ★☆☆ condition 3: textStableCount >= 5 at 1 s polling
                "text_stable",
                not obs.has_stop_button,
                self._text_changed_at + timings.gemini_text_stable_s,
                fallback=True,
            ),
            _Condition(  # FB: elapsed > 10 s and the stop button was never seen
                "fallback_10s",
                not self._saw_stop and not obs.has_stop_button,
                self._started_at + timings.gemini_fallback_s,
                fallback=True,
            ),
        ]
        return _decide(conditions, now, obs.last_response_text_len, deadlines)


# JavaScript's String.prototype.trim() set (WhiteSpace + LineTerminator), which differs from
# Python's str.strip(): JS trims U+FEFF but not the U+001C-U+001F separators or U+0085.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_ASCII_DIGIT = re.compile(r"[0-9]")  # JS \d is ASCII-only; Python's \d also matches e.g. "٣"
_JUST_OK = re.compile(r"ok", re.IGNORECASE | re.ASCII)  # JS /i: no Kelvin sign "K" for k


def is_suspicious_answer(answer: str, question: str) -> bool:
    """The spec's `isSuspiciousAnswer` (docs/flows.md#suspicious-answer), ported exactly: True
    when the answer looks like no answer.

    Empty answers, an answer without digits to a question with digits, and a bare "ok" are
    suspicious; anything goes when the question itself is exactly "OK".
    """
    trimmed = answer.strip(_JS_WHITESPACE)
    if not trimmed:
        return True
    if question.strip(_JS_WHITESPACE) == "OK":
        return False
    if _ASCII_DIGIT.search(question) and not _ASCII_DIGIT.search(trimmed):
        return True
    return _JUST_OK.fullmatch(trimmed) is not None
