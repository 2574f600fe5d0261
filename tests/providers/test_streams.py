"""The network answer parsers (bridge.providers.streams) against bodies shaped like the sites'.

Hand-written bodies follow the evidence rows they cite (SITE-FACTS C7.x for ChatGPT, G7.2,
G3.5, G5.5 for Gemini); the round trips run the fakes' encoders (bridge.fakes.wire) with
arbitrary text and chunkings.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bridge.fakes.wire import (
    ChatGPTWire,
    GeminiWire,
    chatgpt_body,
    chatgpt_events,
    frame,
    gemini_body,
    gemini_frames,
)
from bridge.providers.streams import GEMINI_ERRORS, StreamAnswer, chatgpt_answer, gemini_answer

CONVERSATION = "69746530-f660-8320-b0e2-d72cf1713eac"
ANSWER_ID = "1ac371aa-db18-4f31-b125-dc5dd071f01b"


# -- helpers -----------------------------------------------------------------------------------


def event(data: Any, name: str | None = None) -> str:
    head = f"event: {name}\n" if name else ""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"{head}data: {payload}\n\n"


def message(
    message_id: str,
    role: str = "assistant",
    content_type: str = "text",
    parts: list[Any] | None = None,
    *,
    status: str = "in_progress",
    channel: str | None = None,
    recipient: str = "all",
    metadata: dict[str, Any] | None = None,
    **content: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {"content_type": content_type, **content}
    if parts is not None:
        body["parts"] = parts
    return {
        "id": message_id,
        "author": {"role": role, "name": None, "metadata": {}},
        "content": body,
        "status": status,
        "end_turn": None,
        "metadata": metadata or {},
        "recipient": recipient,
        "channel": channel,
    }


def add(msg: dict[str, Any], *, short: bool = False) -> str:
    """The add of a message: ``{"p":"","o":"add","v":{…}}``, or ``{"v":{message}}`` (C7.3)."""
    value = {"message": msg, "conversation_id": CONVERSATION, "error": None}
    return event(value if short else {"p": "", "o": "add", "v": value}, "delta")


def append(text: str, *, short: bool = False) -> str:
    op = {"v": text} if short else {"p": "/message/content/parts/0", "o": "append", "v": text}
    return event(op, "delta")


PREAMBLE = event('"v1"', "delta_encoding") + event(
    {
        "type": "resume_conversation_token",
        "kind": "topic",
        "token": "x.y.z",
        "conversation_id": CONVERSATION,
    }
)
FINISH = event(
    {
        "p": "",
        "o": "patch",
        "v": [
            {"p": "/message/status", "o": "replace", "v": "finished_successfully"},
            {"p": "/message/end_turn", "o": "replace", "v": True},
            {
                "p": "/message/metadata",
                "o": "append",
                "v": {"is_complete": True, "finish_details": {"type": "stop"}},
            },
        ],
    },
    "delta",
)
COMPLETE = event({"type": "message_stream_complete", "conversation_id": CONVERSATION})
DONE = "data: [DONE]\n\n"

# The shape of a public capture of a real stream (chatgpt.com, 2026-01): a hidden system
# message, the user's message, typed events, the answer added with the short form, a marker,
# the full append then shorthands with a title in between, the final patch, the server's
# metadata, message_stream_complete and [DONE] (SITE-FACTS C7.3, C7.4, C7.5, C3.7).
REAL_TEXT = "Here’s a list of 20 famous people:\n\n1. **Albert Einstein** – physicist"
REAL_BODY = (
    PREAMBLE
    + add(
        message(
            "5e636020",
            role="system",
            parts=[""],
            status="finished_successfully",
            metadata={"is_visually_hidden_from_conversation": True},
        )
    ).replace('{"p": "", "o": "add", ', '{"p": "", "o": "add", "c": 0, ')
    + add(
        message("7256f482", role="user", parts=["give me a list"], status="finished_successfully"),
        short=True,
    )
    + event(
        {
            "type": "input_message",
            "input_message": {"id": "7256f482"},
            "conversation_id": CONVERSATION,
        }
    )
    + add(message(ANSWER_ID, parts=[""], metadata={"model_slug": "gpt-5-2"}), short=True)
    + event(
        {
            "type": "message_marker",
            "conversation_id": CONVERSATION,
            "message_id": ANSWER_ID,
            "marker": "user_visible_token",
            "event": "first",
        }
    )
    + append("Here’s a")
    + append(" list of 20 famous people", short=True)
    + event(
        {"type": "title_generation", "title": "Famous People List", "conversation_id": CONVERSATION}
    )
    + append(":\n\n1. **Albert Einstein** – physicist", short=True)
    + FINISH
    + event(
        {
            "type": "server_ste_metadata",
            "metadata": {"message_id": ANSWER_ID},
            "conversation_id": CONVERSATION,
        }
    )
    + COMPLETE
    + DONE
)


def hyg_frames(body: str) -> list[Any]:
    """Split a Gemini body strictly by HYG's rule (SITE-FACTS G7.2): n counts the UTF-16 code
    units after the digits, both newlines included; every frame must land exactly."""
    assert body.startswith(")]}'\n\n")
    rest = body[len(")]}'\n\n") :]
    values = []
    while rest:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        assert digits, rest[:40]
        units = int(rest[:digits])
        encoded = rest[digits:].encode("utf-16-le")
        chunk = encoded[: units * 2].decode("utf-16-le")
        rest = encoded[units * 2 :].decode("utf-16-le")
        assert chunk.startswith("\n") and chunk.endswith("\n"), chunk[-40:]
        values.append(json.loads(chunk))
    return values


def reply(
    text: str | None,
    *,
    final: bool = False,
    cid: str = "c_abc",
    rid: str = "r_def",
    rcid: str = "rc_ghi",
    inner_tail: list[Any] | None = None,
) -> list[Any]:
    """A wrb.fr reply part: inner [1] = [cid, rid], candidate [0] = rcid, [1][0] = the text,
    [8][0] == 2 when final (G7.2, G3.5)."""
    candidate: list[Any] = [rcid, [text]]
    if final:
        candidate += [None] * 6 + [[2]]
    inner: list[Any] = [None, [cid, rid], None, None, [candidate], *(inner_tail or [])]
    return ["wrb.fr", None, json.dumps(inner, ensure_ascii=False)]


def gemini(*frames_: list[Any]) -> str:
    return ")]}'\n\n" + "".join(frame(f) for f in frames_)


TRAILER = [["di", 80], ["af.httprm", 79, "-5383267747995074321", 35]]


# -- ChatGPT: the evidence's shapes ----------------------------------------------------------------


def test_a_stream_shaped_like_the_real_one_gives_the_answer() -> None:
    answer = chatgpt_answer(REAL_BODY)
    assert answer == StreamAnswer(
        REAL_TEXT, True, CONVERSATION, ANSWER_ID, None, None, model="gpt-5-2"
    )


def test_the_full_add_form_and_shorthand_appends_c7_3() -> None:
    body = PREAMBLE + add(message(ANSWER_ID, parts=[""])) + append("Hel") + append("lo", short=True)
    assert chatgpt_answer(body) == StreamAnswer("Hello", False, CONVERSATION, ANSWER_ID, None, None)


def test_crlf_line_ends_and_data_without_a_space_are_read() -> None:
    crlf = REAL_BODY.replace("\n", "\r\n")
    tight = REAL_BODY.replace("data: ", "data:").replace("event: ", "event:")
    for body in (crlf, tight, REAL_BODY.replace("\n", "\r")):
        parsed = chatgpt_answer(body)
        assert parsed is not None and (parsed.text, parsed.complete) == (REAL_TEXT, True)


def test_appends_inside_a_batch_and_shorthands_after_it_c7_3() -> None:
    batch = event(
        {
            "p": "",
            "o": "patch",
            "v": [
                {"p": "/message/content/parts/0", "o": "append", "v": " b"},
                {"p": "/message/content/parts/0", "o": "append", "v": " c"},
            ],
        },
        "delta",
    )
    body = (
        PREAMBLE
        + add(message(ANSWER_ID, parts=[""]))
        + append("a")
        + batch
        + append(" d", short=True)
    )
    parsed = chatgpt_answer(body)
    assert parsed is not None and parsed.text == "a b c d"


def test_a_shorthand_after_a_batch_that_ended_elsewhere_still_appends_text() -> None:
    metadata = event(
        {
            "p": "",
            "o": "patch",
            "v": [
                {"p": "/message/content/parts/0", "o": "append", "v": "b"},
                {"p": "/message/metadata", "o": "append", "v": {"citations": []}},
            ],
        },
        "delta",
    )
    body = (
        PREAMBLE
        + add(message(ANSWER_ID, parts=[""]))
        + append("a")
        + metadata
        + append("c", short=True)
    )
    parsed = chatgpt_answer(body)
    assert parsed is not None and parsed.text == "abc"


def test_a_replace_of_the_text_replaces_it() -> None:
    replace = event({"p": "/message/content/parts/0", "o": "replace", "v": "new"}, "delta")
    body = PREAMBLE + add(message(ANSWER_ID, parts=[""])) + append("old") + replace
    parsed = chatgpt_answer(body)
    assert parsed is not None and parsed.text == "new"


def test_status_finished_completes_without_stream_complete_c3_7() -> None:
    body = PREAMBLE + add(message(ANSWER_ID, parts=[""])) + append("x") + FINISH
    parsed = chatgpt_answer(body)
    assert parsed is not None and parsed.complete


def test_a_status_op_alone_with_any_finished_value_completes_c7_3() -> None:
    status = event(
        {"p": "/message/status", "o": "replace", "v": "finished_partial_completion"}, "delta"
    )
    parsed = chatgpt_answer(PREAMBLE + add(message(ANSWER_ID, parts=[""])) + append("x") + status)
    assert parsed is not None and parsed.complete


def test_message_stream_complete_completes_c3_7() -> None:
    body = PREAMBLE + add(message(ANSWER_ID, parts=[""])) + append("x") + COMPLETE
    parsed = chatgpt_answer(body)
    assert parsed is not None and parsed.complete


def test_done_alone_is_not_a_finished_turn_c3_7() -> None:
    body = PREAMBLE + add(message(ANSWER_ID, parts=[""])) + append("x") + DONE
    parsed = chatgpt_answer(body)
    assert parsed is not None and (parsed.text, parsed.complete) == ("x", False)


def test_thoughts_and_the_recap_are_never_the_answer_c4_5() -> None:
    thoughts = message(
        "t1", content_type="thoughts", thoughts=[], metadata={"reasoning_status": "is_reasoning"}
    )
    grow = event(
        {
            "p": "/message/content/thoughts",
            "o": "append",
            "v": [{"summary": "Plan", "content": "I should…"}],
        },
        "delta",
    )
    recap = message(
        "r1",
        content_type="reasoning_recap",
        content="Thought for 4s",
        status="finished_successfully",
        metadata={"finished_duration_sec": 4},
    )
    only_thinking = PREAMBLE + add(thoughts) + grow + add(recap)
    parsed = chatgpt_answer(only_thinking)
    assert parsed == StreamAnswer("", False, CONVERSATION, None, None, None)
    body = (
        only_thinking
        + add(message(ANSWER_ID, parts=[""], channel="final"))
        + append("The answer")
        + FINISH
    )
    parsed = chatgpt_answer(body)
    assert parsed is not None and (parsed.text, parsed.message_id) == ("The answer", ANSWER_ID)


@pytest.mark.parametrize(
    "other",
    [
        message("m", parts=["analysis text"], channel="analysis"),
        message("m", parts=["progress note"], channel="commentary"),
        message("m", parts=["hidden"], metadata={"is_visually_hidden_from_conversation": True}),
        message("m", content_type="code", text="print(1)", recipient="python"),
        message("m", parts=["to a tool"], recipient="web.run"),
        message("m", role="tool", content_type="execution_output", text="1"),
        message("m", role="user", parts=["the question"]),
        message("m", role="system", parts=["system prompt"]),
    ],
    ids=["analysis", "commentary", "hidden", "code", "tool-call", "tool-output", "user", "system"],
)
def test_messages_that_are_not_the_answer_are_skipped_c7_5(other: dict[str, Any]) -> None:
    """A non-answer message after the answer does not replace it (C7.5, C4.5)."""
    text_op = event({"p": "/message/content/parts/0", "o": "append", "v": " more"}, "delta")
    body = PREAMBLE + add(message(ANSWER_ID, parts=["answer"])) + add(other) + text_op + COMPLETE
    parsed = chatgpt_answer(body)
    assert parsed is not None and (parsed.text, parsed.message_id) == ("answer", ANSWER_ID)


def test_the_last_user_visible_message_is_the_answer() -> None:
    body = (
        PREAMBLE
        + add(message("first", parts=["Searching…"], status="finished_successfully"))
        + add(message("tool", content_type="code", text="search('x')", recipient="web.run"))
        + add(message(ANSWER_ID, parts=[""], channel="final"))
        + append("Found it.")
    )
    parsed = chatgpt_answer(body)
    assert parsed is not None and (parsed.text, parsed.message_id, parsed.complete) == (
        "Found it.",
        ANSWER_ID,
        False,  # the earlier message was finished, not this one
    )


def test_multimodal_text_string_parts_are_the_answer_c7_5() -> None:
    pointer = {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"}
    msg = message(ANSWER_ID, content_type="multimodal_text", parts=[pointer, "A cat."])
    parsed = chatgpt_answer(PREAMBLE + add(msg))
    assert parsed is not None and parsed.text == "A cat."


def test_the_older_whole_message_events_are_read() -> None:
    """Before delta encoding each event carried the whole message so far."""
    body = "".join(
        event(
            {
                "message": message(ANSWER_ID, parts=[text], status=status),
                "conversation_id": CONVERSATION,
                "error": None,
            }
        )
        for text, status in [
            ("He", "in_progress"),
            ("Hello", "in_progress"),
            ("Hello!", "finished_successfully"),
        ]
    )
    assert chatgpt_answer(body + DONE) == StreamAnswer(
        "Hello!", True, CONVERSATION, ANSWER_ID, None, None
    )


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (
            "Something went wrong while generating the response.",
            "Something went wrong while generating the response.",
        ),
        ({"message": "Too many requests", "code": "rate_limit_exceeded"}, "Too many requests"),
    ],
)
def test_an_error_event_is_reported(error: Any, text: str) -> None:
    body = (
        PREAMBLE
        + add(message(ANSWER_ID, parts=[""]))
        + event({"error": error, "conversation_id": CONVERSATION})
        + DONE
    )
    assert chatgpt_answer(body) == StreamAnswer("", False, CONVERSATION, ANSWER_ID, text, None)


def test_a_null_error_is_no_error() -> None:
    parsed = chatgpt_answer(REAL_BODY + event({"error": None}))
    assert parsed is not None and parsed.error is None


@pytest.mark.parametrize(
    "body",
    [
        "",
        "<!DOCTYPE html><html><body>Just a moment...</body></html>",
        '{"detail": {"message": "You\'ve reached our limit", "code": "rate_limit_exceeded"}}',
        ')]}\'\n\n25\n[["e",4,null,null,215]]\n',
        'data: {"unrelated": 1}\n\n',
        ": keep-alive\n\n",
    ],
    ids=["empty", "html", "json-429", "gemini", "unrelated-sse", "comment-only"],
)
def test_what_is_not_a_conversation_stream_is_none(body: str) -> None:
    assert chatgpt_answer(body) is None


def test_the_preamble_alone_is_a_stream_with_no_answer_yet() -> None:
    assert chatgpt_answer(PREAMBLE) == StreamAnswer("", False, CONVERSATION, None, None, None)


def test_every_truncation_of_a_stream_reads_a_prefix_of_the_answer() -> None:
    """getResponseBody on a running stream can cut anywhere, even inside an event."""
    for cut in range(len(REAL_BODY) + 1):
        parsed = chatgpt_answer(REAL_BODY[:cut])
        if parsed is None:
            assert cut < len(PREAMBLE)
            continue
        assert REAL_TEXT.startswith(parsed.text), cut
        assert not parsed.complete or parsed.text == REAL_TEXT, cut


def test_a_cut_last_event_that_is_still_whole_json_counts() -> None:
    body = PREAMBLE + add(message(ANSWER_ID, parts=[""])) + append("abc").removesuffix("\n\n")
    parsed = chatgpt_answer(body)
    assert parsed is not None and parsed.text == "abc"


@pytest.mark.parametrize(
    "garbage",
    [
        'event: delta\ndata: {"p": "/message/content/parts/0", "o": "append", "v": 5}\n\n',
        'event: delta\ndata: {"p": "/message/content/parts/9", "o": "replace", "v": "x"}\n\n',
        'event: delta\ndata: {"p": 3, "o": [], "v": null}\n\n',
        'event: delta\ndata: {"p": "", "o": "patch", "v": [1, "x", {"p": "/a/b/c"}]}\n\n',
        'event: delta\ndata: {"p": "/message/content/parts/-", "o": "remove"}\n\n',
        'event: delta\ndata: {"p": "/message", "o": "replace", "v": 7}\n\n',
        'event: delta\ndata: {"p": "/message/content/parts/0", "o": "truncate", "v": 2}\n\n',
        "event: delta\ndata: " + "[" * 100_000 + "\n\n",
        'event: delta\ndata: {"v": {"message": 3}}\n\n',
        'data: {"type": 5}\n\n',
    ],
)
def test_garbled_events_never_raise(garbage: str) -> None:
    body = (
        PREAMBLE
        + add(message(ANSWER_ID, parts=[""]))
        + append("ok")
        + garbage
        + append("!", short=True)
    )
    parsed = chatgpt_answer(body)
    assert parsed is not None and parsed.text.startswith("o")


@given(st.text())
@example('data: {"v": "x"}\n\ndata: [DONE]')
@example('event: delta\ndata: {"p":"","o":"add","v":{"message":{"author":{"role":"assistant"}}}}')
def test_arbitrary_text_never_raises(body: str) -> None:
    parsed = chatgpt_answer(body)
    assert parsed is None or isinstance(parsed.text, str)


# -- ChatGPT: round trips through the fake's encoder -------------------------------------------

# Any markdown, including astral characters, CR, NUL and lone line ends.
TEXTS = st.text(st.characters(codec="utf-8"), max_size=400)


@st.composite
def chunked(draw: st.DrawFn, texts: st.SearchStrategy[str] = TEXTS) -> list[str]:
    """A text cut into arbitrary chunks (some possibly empty)."""
    text = draw(texts)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=30)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(chunked(), st.integers(0, 6), st.booleans())
def test_chatgpt_round_trip(chunks: list[str], batch_every: int, thinking: bool) -> None:
    body = chatgpt_body(
        chunks,
        conversation_id=CONVERSATION,
        message_id=ANSWER_ID,
        thinking_seconds=3 if thinking else None,
        title="A title",
        batch_every=batch_every,
    )
    assert chatgpt_answer(body) == StreamAnswer(
        "".join(chunks), True, CONVERSATION, ANSWER_ID, None, None, model="gpt-5-thinking"
    )


@settings(max_examples=200)
@given(chunked(), st.data())
def test_chatgpt_truncated_round_trip_reads_a_prefix(
    chunks: list[str], data: st.DataObject
) -> None:
    text = "".join(chunks)
    events = chatgpt_events(chunks, conversation_id=CONVERSATION, message_id=ANSWER_ID)
    body = "".join(events)
    # A share of the body, not an offset: its length varies (messages carry create_time).
    cut = data.draw(st.integers(0, 10_000)) * len(body) // 10_000
    parsed = chatgpt_answer(body[:cut])
    if parsed is not None:
        assert text.startswith(parsed.text)
        assert not parsed.complete or parsed.text == text
    # Cut at an event boundary, the reading is exactly the text appended so far.
    steps = data.draw(st.integers(0, len(events)))
    parsed = chatgpt_answer("".join(events[:steps]))
    if steps >= 2:  # the preamble, then the answer's add
        assert parsed is not None
        assert parsed.text == "".join(chunks[: steps - 2])


# -- Gemini: the evidence's shapes -----------------------------------------------------------------


def test_a_captured_error_body_gives_its_wire_code_g5_5() -> None:
    """A public capture of a real StreamGenerate error (lengths as the site wrote them)."""
    body = (
        ")]}'\n\n121\n"
        '[["wrb.fr",null,null,null,null,[3,null,[["type.googleapis.com/assistant.boq.bard.'
        'application.BardErrorInfo",[1003]]]]]]\n'
        '56\n[["di",80],["af.httprm",79,"-5383267747995074321",35]]\n25\n[["e",4,null,null,215]]\n'
    )
    assert hyg_frames(body)  # the HYG rule holds on the site's own output
    assert gemini_answer(body) == StreamAnswer("", False, None, None, "Gemini error 1003", 1003)


def test_reply_chunks_carry_the_whole_text_g7_2() -> None:
    body = gemini(
        [reply("")],  # the empty placeholder
        [reply("Hello")],
        [reply("Hello, wor")],
        [reply("Hello, world! 😀", final=True)],
        TRAILER,
        [["e", 4, None, None, 999]],
    )
    assert gemini_answer(body) == StreamAnswer(
        "Hello, world! 😀", True, "c_abc", "r_def", None, None
    )


def test_the_latest_non_empty_text_wins_g7_2() -> None:
    parsed = gemini_answer(gemini([reply("Hello")], [reply("")], [reply(None)]))
    assert parsed is not None and parsed.text == "Hello"


def test_without_a_finished_candidate_it_is_not_complete_g3_5() -> None:
    parsed = gemini_answer(gemini([reply("Hello")], TRAILER))
    assert parsed is not None and (parsed.text, parsed.complete) == ("Hello", False)


def test_a_string_at_inner_25_marks_the_final_chunk_g3_5() -> None:
    parsed = gemini_answer(gemini([reply("Done", inner_tail=[None] * 20 + ["saved"])]))
    assert parsed is not None and parsed.complete


def test_the_candidate_id_stands_in_when_there_is_no_response_id() -> None:
    parsed = gemini_answer(gemini([reply("x", rid="")]))
    assert parsed is not None and parsed.message_id == "rc_ghi"


@pytest.mark.parametrize("code", sorted(GEMINI_ERRORS))
def test_wire_error_codes_g5_5(code: int) -> None:
    wire = GeminiWire("c_abc", "r_def", "rc_ghi")
    body = wire.prefix() + wire.error(code) + wire.trailer()
    assert hyg_frames(body)
    parsed = gemini_answer(body)
    assert parsed is not None
    assert (parsed.error_code, parsed.error) == (
        code,
        f"Gemini error {code}: {GEMINI_ERRORS[code]}",
    )


def test_generated_image_urls_come_from_the_candidate_g12_6() -> None:
    wire = GeminiWire("c_abc", "r_def", "rc_ghi")
    url = "https://lh3.googleusercontent.com/rd-gg-dl/AIgg1=s1024-rj"
    images = [
        (url, "a cat, AI generated", "http://googleusercontent.com/image_generation_content/0")
    ]
    body = wire.prefix() + wire.placeholder() + wire.chunk("Here.", final=True, images=images)
    parsed = gemini_answer(body + wire.trailer())
    assert parsed is not None and parsed.complete
    assert (parsed.text, parsed.images) == ("Here.", (url,))
    plain = gemini_answer(wire.prefix() + wire.chunk("No image.", final=True))
    assert plain is not None and plain.images == ()


def test_an_error_status_without_a_code_is_still_an_error() -> None:
    parsed = gemini_answer(gemini([["wrb.fr", None, None, None, None, [7]]]))
    assert parsed is not None and (parsed.error_code, parsed.error) == (
        None,
        "Gemini request failed (status 7)",
    )


def test_an_error_after_some_text_keeps_the_text() -> None:
    error = ["wrb.fr", None, None, None, None, [8, None, [["x", [1037]]]]]
    parsed = gemini_answer(gemini([reply("Partial")], [error]))
    assert parsed is not None and (parsed.text, parsed.error_code) == ("Partial", 1037)


@pytest.mark.parametrize(
    "length",
    [
        lambda text: len(text.encode("utf-8")),  # bytes
        lambda text: len(text),  # code points
        lambda text: len(text) - 1,  # without the newline after the digits
        lambda text: 3,  # nonsense
    ],
    ids=["bytes", "code-points", "one-newline", "nonsense"],
)
def test_lengths_that_miss_the_frame_boundary_fall_back_to_the_json(length: Any) -> None:
    frames_ = [
        [reply("")],
        [reply("Grüße 😀 from 日本")],
        [reply("Grüße 😀 from 日本!", final=True)],
        TRAILER,
    ]
    body = ")]}'\n\n"
    for f in frames_:
        text = "\n" + json.dumps(f, ensure_ascii=False) + "\n"
        body += f"{length(text)}{text}"
    parsed = gemini_answer(body)
    assert parsed is not None and (parsed.text, parsed.complete) == ("Grüße 😀 from 日本!", True)


def test_frames_without_lengths_are_read_too() -> None:
    body = (
        ")]}'\n"
        + json.dumps([reply("one")])
        + "\n"
        + json.dumps([reply("one two", final=True)])
        + "\n"
    )
    parsed = gemini_answer(body)
    assert parsed is not None and (parsed.text, parsed.complete) == ("one two", True)


def test_every_truncation_reads_a_prefix_of_the_answer() -> None:
    text = "答え 😀 with **markdown**\n\n" * 3
    body = gemini_body([text[:5], text[5:20], text[20:]])
    for cut in range(len(body) + 1):
        parsed = gemini_answer(body[:cut])
        if parsed is None:
            assert cut < 4
            continue
        assert text.startswith(parsed.text), cut
        assert not parsed.complete or parsed.text == text


@pytest.mark.parametrize(
    "body",
    [
        "",
        'event: delta_encoding\ndata: "v1"\n\n',
        "<html></html>",
        ")]}",
        # batchexecute (history RPC hNvQHb) answers carry their rpc id at part[1] (G7.4).
        ")]}'\n\n" + frame([["wrb.fr", "hNvQHb", '[["q", "a"]]', None, None, None, "generic"]]),
    ],
    ids=["empty", "chatgpt", "html", "cut-prefix", "batchexecute"],
)
def test_what_is_not_a_stream_generate_body_is_none(body: str) -> None:
    assert gemini_answer(body) is None


def test_the_prefix_alone_is_a_body_with_no_answer_yet() -> None:
    assert gemini_answer(")]}'\n\n") == StreamAnswer("", False, None, None, None, None)


@pytest.mark.parametrize(
    "part",
    [
        ["wrb.fr", None, "not json"],
        ["wrb.fr", None, "[1, 2, 3, 4, 5]"],
        ["wrb.fr", None, '[null, 5, null, null, [[1, [2]], "x"]]'],
        ["wrb.fr", None, "[" * 100_000],
        ["wrb.fr"],
        ["wrb.fr", None, None, None, None, "not a list"],
        ["wrb.fr", None, None, None, None, [3, None, [[None, [True]]]]],
        {"wrb.fr": 1},
        "wrb.fr",
        [],
    ],
)
def test_garbled_parts_never_raise(part: Any) -> None:
    parsed = gemini_answer(gemini([reply("ok")], [part], [reply("ok!")]))
    assert parsed is not None and parsed.text == "ok!"


@given(st.text())
@example(")]}'\n\n99999999999999999999\n[]")
@example(")]}'" + "[" * 50_000)
def test_arbitrary_gemini_bodies_never_raise(tail: str) -> None:
    for body in (tail, ")]}'\n\n" + tail):
        parsed = gemini_answer(body)
        assert parsed is None or isinstance(parsed.text, str)


# -- Gemini: round trips through the fake's encoder --------------------------------------------


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(chunked())
def test_gemini_round_trip(chunks: list[str]) -> None:
    body = gemini_body(chunks, conversation_id="c_1", response_id="r_2", candidate_id="rc_3")
    # The UTF-16 length rule holds for every frame, astral characters included (G7.2).
    values = hyg_frames(body)
    assert [part[0] for part in values[-2]] == ["di", "af.httprm"]
    text = "".join(chunks)
    assert gemini_answer(body) == StreamAnswer(text, True, "c_1", "r_2", None, None)


@settings(max_examples=200)
@given(chunked(), st.data())
def test_gemini_truncated_round_trip_reads_a_prefix(chunks: list[str], data: st.DataObject) -> None:
    text = "".join(chunks)
    steps = gemini_frames(chunks)
    body = "".join(steps)
    cut = data.draw(st.integers(0, len(body)))
    parsed = gemini_answer(body[:cut])
    if parsed is not None:
        assert text.startswith(parsed.text)
        assert not parsed.complete or parsed.text == text
    # Cut at a frame boundary, the reading is the text sent so far (or "" before any).
    upto = data.draw(st.integers(1, len(steps)))
    parsed = gemini_answer("".join(steps[:upto]))
    assert parsed is not None
    sent = "".join(chunks[: upto - 1])
    assert parsed.text == sent or (parsed.text == "" and not sent)


def test_the_answering_model_is_read_from_the_message_metadata() -> None:
    """C7.5: the answer message's ``metadata.model_slug`` names the model that answered."""
    wire = ChatGPTWire("c-1", model="gpt-5-5-instant")
    body = wire.preamble() + wire.answer_start("m-1") + wire.append("Hi.") + wire.finish()
    answer = chatgpt_answer(body)
    assert answer is not None and answer.model == "gpt-5-5-instant"
    unnamed = chatgpt_answer(body.replace('"model_slug": "gpt-5-5-instant", ', ""))
    assert unnamed is not None and unnamed.model is None and unnamed.text == "Hi."
