"""Tables of page-observation sequences, and properties, for the pure completion detectors.

Times are simulated seconds: nothing here sleeps. `started_at` is 0 and the timings are the
defaults (docs/sites.md#timeouts) unless a row says otherwise.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.providers.completion import (
    ChatGPTCompletion,
    ChatGPTObservation,
    CompletionTimings,
    GeminiCompletion,
    GeminiObservation,
    Phase,
    Verdict,
    is_suspicious_answer,
)


@dataclasses.dataclass(frozen=True)
class Tick:
    """A step where the driver re-evaluates at `now` without a new observation."""

    now: float


Step = ChatGPTObservation | GeminiObservation | Tick


def cg(t: float, **changes: Any) -> ChatGPTObservation:
    """A ChatGPT page mid-answer: new turn present, stop button showing, some text streamed."""
    base = ChatGPTObservation(
        t=t,
        user_count=1,
        assistant_count=1,
        has_stop_button=True,
        send_button_present=False,
        send_button_enabled=False,
        input_empty=True,
        has_skip_thinking_button=False,
        still_generating_text=False,
        thinking_complete_marker=False,
        last_assistant_text_len=10,
    )
    return dataclasses.replace(base, **changes)


def gm(t: float, **changes: Any) -> GeminiObservation:
    """A Gemini page mid-answer: new response present, stop button showing, some text streamed."""
    base = GeminiObservation(
        t=t,
        user_count=1,
        model_response_count=1,
        has_stop_button=True,
        has_mic_button=False,
        has_feedback_buttons=False,
        send_button_enabled=False,
        input_empty=True,
        last_response_text_len=10,
    )
    return dataclasses.replace(base, **changes)


# The composer after a reply: stop button replaced by an enabled send button.
COMPOSER_BACK = {"has_stop_button": False, "send_button_present": True, "send_button_enabled": True}
STOP_GONE = {"has_stop_button": False}


def run(detector: ChatGPTCompletion | GeminiCompletion, steps: Sequence[Step]) -> Verdict:
    verdict = detector.verdict
    for step in steps:
        if isinstance(step, Tick):
            verdict = detector.tick(step.now)
        elif isinstance(detector, ChatGPTCompletion):
            assert isinstance(step, ChatGPTObservation)
            verdict = detector.observe(step)
        else:
            assert isinstance(step, GeminiObservation)
            verdict = detector.observe(step)
    return verdict


def chatgpt(initial: int = 0) -> ChatGPTCompletion:
    return ChatGPTCompletion(initial_assistant_count=initial, started_at=0.0)


def gemini(initial: int = 0) -> GeminiCompletion:
    return GeminiCompletion(initial_model_response_count=initial, started_at=0.0)


# Rows: (initial count, steps, phase, reason, used_fallback, next_deadline).
CHATGPT_ROWS = [
    pytest.param(
        0, [cg(1), cg(2, **COMPOSER_BACK)], Phase.DONE, "stop_gone_send_enabled", False, None,
        id="condition1_stop_gone_send_enabled",
    ),
    pytest.param(
        0, [cg(1, **COMPOSER_BACK)], Phase.DONE, "stop_gone_send_enabled", False, None,
        id="condition1_needs_no_stop_button_sighting",
    ),
    pytest.param(
        0, [cg(1), cg(2, **STOP_GONE)], Phase.DONE, "stop_seen_then_gone", False, None,
        id="condition2_stop_seen_then_gone_input_empty",
    ),
    pytest.param(
        0, [cg(1), cg(2, has_stop_button=False, input_empty=False)],
        Phase.STREAMING, "streaming", False, None,
        id="condition2_needs_empty_input",
    ),
    pytest.param(
        0, [cg(1, **STOP_GONE)], Phase.STREAMING, "streaming", False, 5.0,
        id="stop_never_seen_waits_for_fallback_deadline",
    ),
    pytest.param(
        0, [cg(1, **STOP_GONE), Tick(5)], Phase.DONE, "fallback_5s", True, None,
        id="condition3_fallback_after_5s",
    ),
    pytest.param(
        0, [cg(6, **STOP_GONE)], Phase.DONE, "fallback_5s", True, None,
        id="condition3_first_observation_after_5s",
    ),
    pytest.param(
        0, [cg(1), Tick(11)], Phase.DONE, "fallback_thinking_10s", True, None,
        id="condition4_stale_stop_button_text_unchanged_10s",
    ),
    pytest.param(
        0, [cg(1), cg(9, last_assistant_text_len=20), Tick(12)],
        Phase.STREAMING, "streaming", False, 19.0,
        id="condition4_does_not_cut_off_streaming_text",
    ),
    pytest.param(
        0, [cg(1, **STOP_GONE, input_empty=False), Tick(60)],
        Phase.STREAMING, "streaming", False, None,
        id="fallbacks_need_empty_input",
    ),
    pytest.param(
        3, [cg(1, assistant_count=3, **COMPOSER_BACK, last_assistant_text_len=500), Tick(29)],
        Phase.WAITING, "awaiting_new_turn", False, 30.0,
        id="existing_conversation_old_answer_never_completes",
    ),
    pytest.param(
        3, [cg(1, assistant_count=2, **COMPOSER_BACK), Tick(29)],
        Phase.WAITING, "awaiting_new_turn", False, 30.0,
        id="fewer_turns_than_initial_never_completes",
    ),
    pytest.param(
        3, [cg(1), cg(2, assistant_count=3, **STOP_GONE), Tick(30)],
        Phase.FAILED, "no_new_turn", False, None,
        id="no_new_turn_within_30s_fails",
    ),
    pytest.param(
        0, [Tick(30)], Phase.FAILED, "no_new_turn", False, None,
        id="no_observation_at_all_fails_at_30s",
    ),
    pytest.param(
        0, [cg(1), cg(2, **COMPOSER_BACK, has_skip_thinking_button=True), Tick(60)],
        Phase.THINKING, "skip_thinking_button", False, None,
        id="skip_button_blocks_completion_with_stop_gone_and_send_enabled",
    ),
    pytest.param(
        0, [cg(1), cg(2, **COMPOSER_BACK, still_generating_text=True), Tick(60)],
        Phase.THINKING, "still_generating", False, None,
        id="still_generating_text_blocks_completion",
    ),
    pytest.param(
        0,
        [cg(1), cg(2, **COMPOSER_BACK, still_generating_text=True, thinking_complete_marker=True)],
        Phase.DONE, "stop_gone_send_enabled", False, None,
        id="thinking_time_marker_overrides_stale_generating_text",
    ),
    pytest.param(
        0,
        [
            cg(1, **COMPOSER_BACK, has_skip_thinking_button=True, thinking_complete_marker=True),
            Tick(60),
        ],
        Phase.THINKING, "skip_thinking_button", False, None,
        id="thinking_time_marker_does_not_override_skip_button",
    ),
    pytest.param(
        0, [cg(1, has_skip_thinking_button=True, **STOP_GONE), cg(20, **COMPOSER_BACK)],
        Phase.DONE, "stop_gone_send_enabled", False, None,
        id="thinking_then_composer_back_completes",
    ),
    pytest.param(
        0, [cg(1, assistant_count=0, has_skip_thinking_button=True)],
        Phase.THINKING, "skip_thinking_button", False, 30.0,
        id="thinking_before_new_turn_keeps_turn_deadline",
    ),
    pytest.param(
        0, [cg(1), cg(2, **STOP_GONE, last_assistant_text_len=0)],
        Phase.AWAITING_TEXT, "stop_seen_then_gone", False, None,
        id="background_tab_no_text_awaits_text",
    ),
    pytest.param(
        0,
        [
            cg(1),
            cg(2, **STOP_GONE, last_assistant_text_len=0),
            cg(3, **STOP_GONE, last_assistant_text_len=120),
        ],
        Phase.DONE, "stop_seen_then_gone", False, None,
        id="background_tab_text_arrives_then_done",
    ),
    pytest.param(
        0,
        [
            cg(1),
            cg(2, **STOP_GONE, last_assistant_text_len=0),
            cg(3, **STOP_GONE, last_assistant_text_len=0, has_skip_thinking_button=True),
        ],
        Phase.THINKING, "skip_thinking_button", False, None,
        id="awaiting_text_returns_to_thinking_on_skip_button",
    ),
    pytest.param(
        0, [cg(1, **STOP_GONE, last_assistant_text_len=0), Tick(5)],
        Phase.AWAITING_TEXT, "fallback_5s", True, None,
        id="fallback_without_text_awaits_text",
    ),
    pytest.param(
        0, [cg(1, login_wall=True, rate_limited=True, assistant_count=0)],
        Phase.FAILED, "login_wall", False, None,
        id="login_wall_fails_before_any_turn",
    ),
    pytest.param(
        0, [cg(1), cg(2, rate_limited=True)], Phase.FAILED, "rate_limited", False, None,
        id="rate_limit_fails",
    ),
    pytest.param(
        1, [cg(1, assistant_count=1, rate_limited=True)], Phase.FAILED, "rate_limited", False,
        None, id="rate_limit_dialog_fails_before_any_new_turn",
    ),
    pytest.param(
        0, [cg(1), cg(2, **COMPOSER_BACK, error_turn=True)],
        Phase.FAILED, "error_turn", False, None,
        id="error_turn_fails_even_when_composer_is_back",
    ),
    # C1.11 / C3.3: after a reply the voice-mode button is back in the send slot of the empty
    # composer, and the send button is not in the DOM at all.
    pytest.param(
        0, [cg(1), cg(2, **STOP_GONE, speech_button=True)],
        Phase.DONE, "speech_button_back", False, None,
        id="speech_button_back_after_stop",
    ),
    pytest.param(
        0, [cg(1, **STOP_GONE, speech_button=True)],
        Phase.STREAMING, "streaming", False, 5.0,
        id="speech_button_needs_stop_button_sighting",
    ),
    pytest.param(
        0, [cg(1), cg(2, **STOP_GONE, speech_button=True, input_empty=False)],
        Phase.STREAMING, "streaming", False, None,
        id="speech_button_needs_empty_composer",
    ),
    pytest.param(
        0, [cg(1), cg(2, **STOP_GONE, speech_button=True, has_skip_thinking_button=True)],
        Phase.THINKING, "skip_thinking_button", False, None,
        id="speech_button_does_not_end_thinking",
    ),
    pytest.param(
        0, [cg(1), cg(2, **STOP_GONE, speech_button=True, last_assistant_text_len=0)],
        Phase.AWAITING_TEXT, "speech_button_back", False, None,
        id="speech_button_back_without_text_awaits_text",
    ),
    pytest.param(
        1, [cg(1, error_turn=True), cg(2, assistant_count=1, error_turn=True)],
        Phase.WAITING, "awaiting_new_turn", False, 30.0,
        id="error_turn_of_an_earlier_answer_is_not_this_answer",
    ),
    pytest.param(
        1, [cg(1, assistant_count=1, error_turn=True), cg(2, assistant_count=2, error_turn=True)],
        Phase.FAILED, "error_turn", False, None,
        id="error_turn_of_the_new_answer_fails",
    ),
    pytest.param(
        0, [cg(1, **COMPOSER_BACK), cg(2, login_wall=True), Tick(100)],
        Phase.DONE, "stop_gone_send_enabled", False, None,
        id="done_is_terminal",
    ),
    pytest.param(
        0, [cg(1, error_turn=True), cg(2, **COMPOSER_BACK), Tick(100)],
        Phase.FAILED, "error_turn", False, None,
        id="failed_is_terminal",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("initial", "steps", "phase", "reason", "fallback", "deadline"), CHATGPT_ROWS
)
def test_chatgpt_table(
    initial: int,
    steps: list[Step],
    phase: Phase,
    reason: str,
    fallback: bool,
    deadline: float | None,
) -> None:
    assert run(chatgpt(initial), steps) == Verdict(phase, reason, deadline, fallback)


GEMINI_ROWS = [
    pytest.param(
        0,
        [gm(1), gm(2, **STOP_GONE, has_feedback_buttons=True, has_mic_button=True,
                   send_button_enabled=True)],
        Phase.DONE, "feedback_icons", False, None,
        id="condition0_feedback_icons_outranks_others",
    ),
    # G10.2: Deep Think's placeholder reply looks finished (footer complete, stop gone, mic
    # back, text stable long past the fallbacks) but is still running; its answer then ends it.
    pytest.param(
        0,
        [gm(1), gm(2, **STOP_GONE, response_complete=True, has_mic_button=True,
                   has_feedback_buttons=True, placeholder_reply=True), Tick(60.0)],
        Phase.STREAMING, "deep_think_placeholder", False, None,
        id="deep_think_placeholder_is_running",
    ),
    pytest.param(
        0,
        [gm(1), gm(2, **STOP_GONE, response_complete=True, placeholder_reply=True),
         gm(90, last_response_text_len=500),
         gm(91, **STOP_GONE, response_complete=True, last_response_text_len=900)],
        Phase.DONE, "feedback_icons", False, None,
        id="deep_think_answer_after_placeholder_completes",
    ),
    # G2.7: the footer of a finished response gets `.complete`.
    pytest.param(
        0, [gm(1), gm(2, **STOP_GONE, response_complete=True, has_mic_button=True)],
        Phase.DONE, "feedback_icons", False, None,
        id="condition0_response_footer_complete",
    ),
    pytest.param(
        0, [gm(1, response_complete=True)],
        Phase.STREAMING, "streaming", False, 31.0,
        id="condition0_needs_the_stop_button_gone",
    ),
    pytest.param(
        0, [gm(1), gm(2, **STOP_GONE, has_mic_button=True, send_button_enabled=True)],
        Phase.DONE, "mic_button", False, None,
        id="condition1_mic_button",
    ),
    pytest.param(
        0, [gm(1), gm(2, **STOP_GONE, send_button_enabled=True)],
        Phase.DONE, "stop_gone_send_enabled", False, None,
        id="condition2_send_enabled_input_empty",
    ),
    pytest.param(
        0, [gm(1), gm(2, **STOP_GONE, send_button_enabled=True, input_empty=False)],
        Phase.STREAMING, "streaming", False, 6.0,
        id="condition2_needs_empty_input",
    ),
    pytest.param(
        0, [gm(1), gm(2, **STOP_GONE), Tick(6)], Phase.DONE, "text_stable", True, None,
        id="condition3_text_stable_5s",
    ),
    pytest.param(
        0, [gm(1), gm(2, **STOP_GONE), gm(5, **STOP_GONE, last_response_text_len=30), Tick(9)],
        Phase.STREAMING, "streaming", False, 10.0,
        id="condition3_clock_restarts_when_text_changes",
    ),
    pytest.param(
        0, [gm(1, **STOP_GONE, has_feedback_buttons=True)],
        Phase.STREAMING, "streaming", False, 6.0,
        id="conditions0to2_need_stop_button_sighting",
    ),
    pytest.param(
        0,
        [
            gm(1, **STOP_GONE),
            gm(5, **STOP_GONE, last_response_text_len=20),
            gm(9, **STOP_GONE, last_response_text_len=30),
            Tick(10),
        ],
        Phase.DONE, "fallback_10s", True, None,
        id="fb_after_10s_without_stop_button",
    ),
    pytest.param(
        0,
        [
            gm(1),
            gm(2, **STOP_GONE),
            gm(6, **STOP_GONE, last_response_text_len=20),
            gm(9.5, **STOP_GONE, last_response_text_len=30),
            Tick(10),
        ],
        Phase.STREAMING, "streaming", False, 14.5,
        id="fb_not_when_stop_button_was_seen",
    ),
    pytest.param(
        2,
        [
            gm(1, model_response_count=2),
            gm(2, model_response_count=2, **STOP_GONE, has_feedback_buttons=True,
               has_mic_button=True, send_button_enabled=True),
            Tick(29),
        ],
        Phase.WAITING, "awaiting_new_response", False, 30.0,
        id="existing_conversation_old_response_never_completes",
    ),
    pytest.param(
        0, [gm(1, model_response_count=0, **STOP_GONE), Tick(30)],
        Phase.STUCK, "stuck_no_response", False, None,
        id="stuck_no_response_after_30s",
    ),
    pytest.param(
        0, [Tick(30)], Phase.STUCK, "stuck_no_response", False, None,
        id="stuck_no_response_without_any_observation",
    ),
    pytest.param(
        0, [gm(1), gm(5, last_response_text_len=20), Tick(35)],
        Phase.STUCK, "stuck_stop_button", False, None,
        id="stuck_stop_button_without_text_progress",
    ),
    pytest.param(
        0, [gm(1), gm(20, last_response_text_len=20), Tick(49)],
        Phase.STREAMING, "streaming", False, 50.0,
        id="stop_button_with_text_progress_not_stuck",
    ),
    pytest.param(
        0, [gm(1), gm(2, **STOP_GONE, input_empty=False), gm(3), Tick(32)],
        Phase.STREAMING, "streaming", False, 33.0,
        id="stuck_clock_restarts_when_stop_button_reappears",
    ),
    pytest.param(
        1, [gm(0, model_response_count=1), Tick(30)],
        Phase.STUCK, "stuck_stop_button", False, None,
        id="hung_previous_session_reports_stuck_stop_button",
    ),
    pytest.param(
        0, [gm(1), gm(2, **STOP_GONE, has_feedback_buttons=True, last_response_text_len=0)],
        Phase.AWAITING_TEXT, "feedback_icons", False, None,
        id="no_rendered_text_awaits_text",
    ),
    pytest.param(
        0,
        [
            gm(1),
            gm(2, **STOP_GONE, has_feedback_buttons=True, last_response_text_len=0),
            gm(3, **STOP_GONE, has_feedback_buttons=True, last_response_text_len=50),
        ],
        Phase.DONE, "feedback_icons", False, None,
        id="text_arrives_then_done",
    ),
    pytest.param(
        0, [gm(1, login_wall=True, model_response_count=0)],
        Phase.FAILED, "login_wall", False, None,
        id="login_wall_fails",
    ),
    pytest.param(
        0, [gm(1), gm(2, rate_limited=True, error_turn=True)],
        Phase.FAILED, "rate_limited", False, None,
        id="rate_limit_fails_and_outranks_error_turn",
    ),
    pytest.param(
        0, [gm(1), gm(2, **STOP_GONE, has_feedback_buttons=True, error_turn=True)],
        Phase.FAILED, "error_turn", False, None,
        id="error_turn_fails_even_with_feedback_icons",
    ),
    pytest.param(
        1, [gm(1, model_response_count=1, error_turn=True, **STOP_GONE)],
        Phase.WAITING, "awaiting_new_response", False, 30.0,
        id="error_reply_of_an_earlier_response_is_not_this_answer",
    ),
    pytest.param(
        1, [gm(1, model_response_count=1, rate_limited=True, **STOP_GONE)],
        Phase.WAITING, "awaiting_new_response", False, 30.0,
        id="limit_reply_of_an_earlier_response_is_not_this_answer",
    ),
    pytest.param(
        1, [gm(1, model_response_count=2, rate_limited=True)],
        Phase.FAILED, "rate_limited", False, None,
        id="limit_reply_as_the_new_response_fails",
    ),
    pytest.param(
        0, [gm(1), gm(2, **STOP_GONE, has_mic_button=True), gm(3, login_wall=True), Tick(99)],
        Phase.DONE, "mic_button", False, None,
        id="done_is_terminal",
    ),
    pytest.param(
        0, [gm(1), Tick(31), gm(32, **STOP_GONE, has_feedback_buttons=True)],
        Phase.STUCK, "stuck_stop_button", False, None,
        id="stuck_is_terminal",
    ),
    pytest.param(
        0, [gm(10, **STOP_GONE, input_empty=False, last_response_text_len=0)],
        Phase.AWAITING_TEXT, "fallback_10s", True, 15.0,
        id="awaiting_text_keeps_deadline_of_pending_higher_priority_condition",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("initial", "steps", "phase", "reason", "fallback", "deadline"), GEMINI_ROWS
)
def test_gemini_table(
    initial: int,
    steps: list[Step],
    phase: Phase,
    reason: str,
    fallback: bool,
    deadline: float | None,
) -> None:
    assert run(gemini(initial), steps) == Verdict(phase, reason, deadline, fallback)


# Rows: (detector factory, observations, deadline they produce, phase and reason at it).
DEADLINE_ROWS = [
    pytest.param(chatgpt, [], 30.0, Phase.FAILED, "no_new_turn", id="chatgpt_new_turn"),
    pytest.param(
        chatgpt, [cg(1, **STOP_GONE)], 5.0, Phase.DONE, "fallback_5s", id="chatgpt_fallback_5s"
    ),
    pytest.param(
        chatgpt, [cg(3)], 13.0, Phase.DONE, "fallback_thinking_10s", id="chatgpt_fallback_10s"
    ),
    pytest.param(gemini, [], 30.0, Phase.STUCK, "stuck_no_response", id="gemini_no_response"),
    pytest.param(
        gemini, [gm(2, **STOP_GONE)], 7.0, Phase.DONE, "text_stable", id="gemini_text_stable"
    ),
    pytest.param(
        gemini,
        [gm(1, **STOP_GONE), gm(4, **STOP_GONE, last_response_text_len=99)],
        9.0,
        Phase.DONE,
        "text_stable",
        id="gemini_text_stable_from_last_change",
    ),
    pytest.param(
        gemini, [gm(4)], 34.0, Phase.STUCK, "stuck_stop_button", id="gemini_stuck_stop_button"
    ),
]


@pytest.mark.parametrize(("factory", "observations", "deadline", "phase", "reason"), DEADLINE_ROWS)
def test_tick_at_next_deadline_flips_verdict_and_not_before(
    factory: Any, observations: list[Step], deadline: float, phase: Phase, reason: str
) -> None:
    detector = factory()
    before = run(detector, observations)
    assert before.next_deadline == deadline
    assert detector.tick(deadline - 0.001) == before
    after = detector.tick(deadline)
    assert (after.phase, after.reason) == (phase, reason)


def test_tiny_timings_are_honoured() -> None:
    timings = CompletionTimings(chatgpt_fallback_s=0.05, new_turn_s=0.2)
    detector = ChatGPTCompletion(initial_assistant_count=0, started_at=100.0, timings=timings)
    assert detector.observe(cg(100.01, **STOP_GONE)).next_deadline == 100.05
    assert detector.tick(100.05).reason == "fallback_5s"


def test_saw_stop_button_tracks_sightings() -> None:
    detector = gemini()
    detector.observe(gm(1, **STOP_GONE))
    assert not detector.saw_stop_button
    detector.observe(gm(2))
    assert detector.saw_stop_button


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param([cg(5), cg(4)], id="observation_before_previous_observation"),
        pytest.param([cg(5), Tick(4.9)], id="tick_before_previous_observation"),
        pytest.param([Tick(5), cg(4)], id="observation_before_previous_tick"),
        pytest.param([cg(-1)], id="observation_before_start"),
        pytest.param([cg(1, **COMPOSER_BACK), cg(0.5)], id="even_after_terminal_verdict"),
        pytest.param([Tick(float("nan"))], id="nan_time"),
    ],
)
def test_time_never_moves_backwards(steps: list[Step]) -> None:
    with pytest.raises(ValueError, match="non-decreasing"):
        run(chatgpt(), steps)


def test_equal_timestamps_are_accepted() -> None:
    detector = gemini()
    run(detector, [gm(1), gm(1), Tick(1), gm(1, **STOP_GONE, has_mic_button=True)])
    assert detector.verdict.phase is Phase.DONE


@pytest.mark.parametrize(
    "changes",
    [{"gemini_stuck_s": -1.0}, {"new_turn_s": float("inf")}, {"chatgpt_fallback_s": float("nan")}],
    ids=["negative", "infinite", "nan"],
)
def test_timings_reject_nonsense(changes: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="finite number"):
        CompletionTimings(**changes)


def test_negative_initial_count_is_rejected() -> None:
    with pytest.raises(ValueError, match="initial count"):
        chatgpt(initial=-1)


@pytest.mark.parametrize(
    ("answer", "question", "suspicious"),
    [
        pytest.param("", "How?", True, id="empty"),
        pytest.param(" \n\t ", "How?", True, id="whitespace_only"),
        pytest.param("\ufeff\u3000", "How?", True, id="js_trim_removes_bom_and_ideographic_space"),
        pytest.param("\x1c", "How?", False, id="js_trim_keeps_info_separator"),
        pytest.param("", "OK", True, id="empty_before_ok_question"),
        pytest.param("ok", " OK ", False, id="question_ok_accepts_anything"),
        pytest.param("ok", "ok", True, id="question_ok_is_case_sensitive"),
        pytest.param("four", "What is 2+2?", True, id="digits_in_question_not_in_answer"),
        pytest.param("It is 4.", "What is 2+2?", False, id="digits_in_both"),
        pytest.param("four", "What is ٢+٢?", False, id="js_digit_class_is_ascii_only"),
        pytest.param(" Ok\n", "Explain recursion", True, id="bare_ok_any_case"),
        pytest.param("ok.", "Explain recursion", False, id="ok_with_punctuation"),
        pytest.param("o\u212a", "Explain recursion", False, id="kelvin_sign_is_not_k"),
        pytest.param("Recursion is...", "Explain recursion", False, id="normal_answer"),
    ],
)
def test_is_suspicious_answer(answer: str, question: str, suspicious: bool) -> None:
    assert is_suspicious_answer(answer, question) is suspicious


# --- properties ------------------------------------------------------------------------------

PROPERTY_SETTINGS = settings(max_examples=300, deadline=None, database=None)
COUNTS = st.integers(0, 3)
TEXT_LENGTHS = st.sampled_from([0, 0, 1, 40])
RARELY = st.integers(0, 14).map(lambda n: n == 0)  # failure flags would otherwise end most runs
GAPS = st.one_of(st.sampled_from([0.0, 0.5, 1.0, 5.0, 10.0, 30.0]), st.floats(0, 40))

CHATGPT_OBSERVATIONS = st.builds(
    ChatGPTObservation,
    t=st.just(0.0),
    user_count=COUNTS,
    assistant_count=COUNTS,
    has_stop_button=st.booleans(),
    send_button_present=st.booleans(),
    send_button_enabled=st.booleans(),
    input_empty=st.booleans(),
    has_skip_thinking_button=st.booleans(),
    still_generating_text=st.booleans(),
    thinking_complete_marker=st.booleans(),
    last_assistant_text_len=TEXT_LENGTHS,
    login_wall=RARELY,
    rate_limited=RARELY,
    error_turn=RARELY,
    speech_button=st.booleans(),
    action_bar=st.booleans(),
)
GEMINI_OBSERVATIONS = st.builds(
    GeminiObservation,
    t=st.just(0.0),
    user_count=COUNTS,
    model_response_count=COUNTS,
    has_stop_button=st.booleans(),
    has_mic_button=st.booleans(),
    has_feedback_buttons=st.booleans(),
    send_button_enabled=st.booleans(),
    input_empty=st.booleans(),
    last_response_text_len=TEXT_LENGTHS,
    login_wall=RARELY,
    rate_limited=RARELY,
    error_turn=RARELY,
    response_complete=st.booleans(),
)


def sequences(observations: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Step]]:
    """Observations and ticks (None) at non-decreasing times, starting at started_at = 0."""

    def stamp(gaps_and_steps: list[tuple[float, Any]]) -> list[Step]:
        now, steps = 0.0, []
        for gap, step in gaps_and_steps:
            now += gap
            steps.append(Tick(now) if step is None else dataclasses.replace(step, t=now))
        return steps

    step = st.one_of(st.none(), observations)
    return st.lists(st.tuples(GAPS, step), max_size=30).map(stamp)


def check_common_invariants(
    detector: ChatGPTCompletion | GeminiCompletion, steps: list[Step]
) -> list[tuple[Verdict, Step, ChatGPTObservation | GeminiObservation | None]]:
    """Run `steps`, checking what holds for both providers; return (verdict, step, last obs)."""
    history = []
    previous = detector.verdict
    last_obs: ChatGPTObservation | GeminiObservation | None = None
    for step in steps:
        now = step.now if isinstance(step, Tick) else step.t
        if not isinstance(step, Tick):
            last_obs = step
        verdict = run(detector, [step])
        if previous.phase.terminal:
            assert verdict == previous, "terminal phases stay terminal"
            continue
        if verdict.next_deadline is not None:
            assert verdict.next_deadline > now
            assert not verdict.phase.terminal
            # The verdict holds until its deadline with no new observation, then changes.
            probe = copy.deepcopy(detector)
            midway = now + (verdict.next_deadline - now) / 2
            if midway < verdict.next_deadline:
                assert probe.tick(midway) == verdict
            assert probe.tick(verdict.next_deadline) != verdict
        else:
            assert copy.deepcopy(detector).tick(now + 10_000.0) == verdict
        if verdict.used_fallback:
            assert verdict.phase in (Phase.DONE, Phase.AWAITING_TEXT)
        history.append((verdict, step, last_obs))
        previous = verdict
    last_time = max([0.0] + [s.now if isinstance(s, Tick) else s.t for s in steps])
    with pytest.raises(ValueError):
        detector.tick(last_time - 0.5)
    return history


@PROPERTY_SETTINGS
@given(initial=COUNTS, steps=sequences(CHATGPT_OBSERVATIONS))
def test_chatgpt_invariants(initial: int, steps: list[Step]) -> None:
    for verdict, _step, obs in check_common_invariants(chatgpt(initial), steps):
        if verdict.reason == "error_turn":
            assert isinstance(obs, ChatGPTObservation) and obs.assistant_count > initial
        if verdict.reason == "speech_button_back":
            assert isinstance(obs, ChatGPTObservation)
            assert obs.speech_button and obs.input_empty and not obs.has_stop_button
        if verdict.phase is not Phase.DONE:
            continue
        assert isinstance(obs, ChatGPTObservation), "DONE needs an observation"
        assert obs.assistant_count > initial
        assert not obs.has_skip_thinking_button
        assert not (obs.still_generating_text and not obs.thinking_complete_marker)
        assert obs.last_assistant_text_len > 0
        assert verdict.used_fallback == verdict.reason.startswith("fallback")


@PROPERTY_SETTINGS
@given(initial=COUNTS, steps=sequences(GEMINI_OBSERVATIONS))
def test_gemini_invariants(initial: int, steps: list[Step]) -> None:
    for verdict, _step, obs in check_common_invariants(gemini(initial), steps):
        if verdict.reason in ("error_turn", "rate_limited"):
            assert isinstance(obs, GeminiObservation) and obs.model_response_count > initial
        if verdict.phase is Phase.DONE:
            assert isinstance(obs, GeminiObservation), "DONE needs an observation"
            assert obs.model_response_count > initial
            assert not obs.has_stop_button
            assert obs.last_response_text_len > 0
            assert verdict.used_fallback == (verdict.reason in ("text_stable", "fallback_10s"))
        if verdict.reason == "stuck_stop_button":
            assert isinstance(obs, GeminiObservation)
            assert obs.has_stop_button


@PROPERTY_SETTINGS
@given(
    answer=st.text(max_size=8),
    question=st.text(max_size=8),
    padding=st.text(alphabet=" \t\n\r\u00a0\u3000\ufeff\u2028", max_size=3),
)
def test_is_suspicious_answer_ignores_js_whitespace_padding(
    answer: str, question: str, padding: str
) -> None:
    padded = is_suspicious_answer(padding + answer + padding, padding + question + padding)
    assert padded == is_suspicious_answer(answer, question)
