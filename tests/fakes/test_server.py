"""The fake sites over plain HTTPS: routing by Host, the streams, conversations, records."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import signal
import socket
import ssl
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest

from bridge.fakes import Behaviour, FakeSites
from bridge.fakes.chatgpt import ERROR_TEXT, RATE_LIMIT_TEXT, RETRY_AFTER_S
from bridge.fakes.gemini import ERROR_CODE, HISTORY_PATH, RATE_LIMIT_CODE, STREAM_PATH
from bridge.fakes.research import RESEARCH_DONE_NOTICE, plain_report
from bridge.providers.conversations import chatgpt_conversation
from bridge.providers.streams import chatgpt_answer as parse_chatgpt
from bridge.providers.streams import gemini_answer as parse_gemini
from bridge.waiting import scaled

CHATGPT = "chatgpt.com"
GEMINI = "gemini.google.com"


# -- a plain HTTPS client that verifies the fake's certificate for the host it asks -----------


def connect(sites: FakeSites, host: str) -> http.client.HTTPSConnection:
    """A connection to the fake server that checks its certificate names ``host``."""
    context = ssl.create_default_context(cadata=sites.certificate_pem.decode())
    connection = http.client.HTTPSConnection(
        "127.0.0.1", sites.port, context=context, timeout=scaled(10.0)
    )
    raw = socket.create_connection(("127.0.0.1", sites.port), timeout=scaled(10.0))
    # Without this, Nagle's algorithm holds the request behind the TLS handshake's last write
    # until the server's delayed ACK (40 ms on Linux), as browsers avoid by setting it too.
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    connection.sock = context.wrap_socket(raw, server_hostname=host)
    return connection


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.body)


def request(
    sites: FakeSites,
    host: str,
    method: str,
    path: str,
    body: str | None = None,
    content_type: str = "application/json",
    host_header: str | None = None,
) -> Reply:
    connection = connect(sites, host)
    try:
        headers = {"Host": host_header or host}
        if body is not None:
            headers["Content-Type"] = content_type
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return Reply(
            response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        )
    finally:
        connection.close()


@contextlib.contextmanager
def ask_chatgpt(
    sites: FakeSites,
    text: str,
    conversation_id: str | None = None,
    path: str = "/backend-api/f/conversation",
) -> Iterator[http.client.HTTPResponse]:
    """POST a question as the page does (SITE-FACTS C7.1: the ``f/`` path); the stream is the
    caller's to read while open."""
    body = {
        "action": "next",
        "messages": [{"author": {"role": "user"}, "content": {"parts": [text]}}],
        "conversation_id": conversation_id,
    }
    connection = connect(sites, CHATGPT)
    try:
        connection.request(
            "POST",
            path,
            body=json.dumps(body),
            headers={"Host": CHATGPT, "Content-Type": "application/json"},
        )
        yield connection.getresponse()
    finally:
        connection.close()


def sse_events(response: http.client.HTTPResponse) -> Iterator[tuple[str, Any]]:
    """(event name, decoded data) for each server-sent event, as they arrive."""
    event, data = "message", ""
    while True:
        line = response.readline().decode("utf-8")
        if not line:
            return
        line = line.rstrip("\n")
        if line.startswith("event: "):
            event = line[len("event: ") :]
        elif line.startswith("data: "):
            data += line[len("data: ") :]
        elif not line:
            yield event, (data if data == "[DONE]" else json.loads(data))
            event, data = "message", ""


def chatgpt_answer(sites: FakeSites, text: str, conversation_id: str | None = None) -> list[Any]:
    with ask_chatgpt(sites, text, conversation_id) as response:
        assert response.status == 200
        return list(sse_events(response))


def appended_text(events: list[Any]) -> str:
    """The text the deltas append: full ops, ``{"v": …}`` shorthands and ops in batches."""
    pieces = []
    for name, data in events:
        if name != "delta" or not isinstance(data, dict):
            continue
        if isinstance(data.get("v"), str):
            pieces.append(data["v"])
        elif data.get("o") == "patch":
            pieces.extend(
                op["v"]
                for op in data["v"]
                if op["p"] == "/message/content/parts/0" and op["o"] == "append"
            )
    return "".join(pieces)


@contextlib.contextmanager
def ask_gemini(
    sites: FakeSites, text: str, conversation_id: str | None = None
) -> Iterator[http.client.HTTPResponse]:
    conversation = f"c_{conversation_id}" if conversation_id else ""
    inner = [[text, 0, None, None, None, None, 0], ["en"], [conversation, "", ""]]
    body = "f.req=" + quote(json.dumps([None, json.dumps(inner)])) + "&at=token"
    connection = connect(sites, GEMINI)
    try:
        connection.request(
            "POST",
            STREAM_PATH + "?rt=c",
            body=body,
            headers={"Host": GEMINI, "Content-Type": "application/x-www-form-urlencoded"},
        )
        yield connection.getresponse()
    finally:
        connection.close()


def gemini_answer(
    sites: FakeSites, text: str, conversation_id: str | None = None
) -> tuple[int, str]:
    with ask_gemini(sites, text, conversation_id) as response:
        return response.status, response.read().decode("utf-8")


def gemini_frames(text: str) -> list[Any]:
    """Split a Gemini response into its frames, checking the UTF-16 length prefixes: n counts
    the code units after the digits, both newlines included (SITE-FACTS G7.2, HYG)."""
    assert text.startswith(")]}'\n\n")
    rest = text[len(")]}'\n\n") :]
    frames = []
    while rest:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        units = int(rest[:digits])
        encoded = rest[digits:].encode("utf-16-le")
        frame = encoded[: units * 2].decode("utf-16-le")
        rest = encoded[units * 2 :].decode("utf-16-le")
        assert frame.startswith("\n") and frame.endswith("\n")
        frames.append(json.loads(frame))
    return frames


def page_config(html: str) -> dict[str, Any]:
    start = html.index('<script id="fake-config" type="application/json">') + len(
        '<script id="fake-config" type="application/json">'
    )
    return dict(json.loads(html[start : html.index("</script>", start)]))


# -- serving ------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", [CHATGPT, GEMINI])
def test_the_certificate_names_both_hosts(fakes: FakeSites, host: str) -> None:
    assert request(fakes, host, "GET", "/__fake/static/common.js").status == 200


def test_the_certificate_names_no_other_host(fakes: FakeSites) -> None:
    with pytest.raises(ssl.SSLCertVerificationError):
        connect(fakes, "example.com")


@pytest.mark.parametrize(
    ("host", "path", "title"),
    [
        (CHATGPT, "/", "ChatGPT"),
        (CHATGPT, "/c/6740f3a2-0000-4000-8000-000000000000", "ChatGPT"),
        (GEMINI, "/app", "Gemini"),
        (GEMINI, "/app/1a2b3c4d5e6f7a8b", "Gemini"),
    ],
)
def test_each_host_serves_its_own_pages(fakes: FakeSites, host: str, path: str, title: str) -> None:
    reply = request(fakes, host, "GET", path)
    assert reply.status == 200
    assert f"<title>{title}</title>" in reply.text
    assert page_config(reply.text)["site"] == title.lower()


def test_gemini_root_redirects_to_app(fakes: FakeSites) -> None:
    reply = request(fakes, GEMINI, "GET", "/")
    assert (reply.status, reply.headers["location"]) == (302, "/app")


@pytest.mark.parametrize(
    ("host_header", "path"),
    [("example.com", "/"), (CHATGPT, "/app"), (GEMINI, "/c/abc"), ("chatgpt.com.evil", "/")],
)
def test_anything_else_is_not_found(fakes: FakeSites, host_header: str, path: str) -> None:
    assert request(fakes, CHATGPT, "GET", path, host_header=host_header).status == 404


def test_a_host_header_with_the_port_still_routes(fakes: FakeSites) -> None:
    reply = request(fakes, CHATGPT, "GET", "/", host_header=f"chatgpt.com:{fakes.port}")
    assert reply.status == 200


def test_pages_read_their_settings_from_the_default_behaviour(fakes: FakeSites) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(locale="ja", input_kind="textarea", hydration_ms=250))
    fakes.chatgpt.queue(Behaviour(locale="en", state="logged_out"))  # per question only
    reply = request(fakes, CHATGPT, "GET", "/")
    assert '<html lang="ja"' in reply.text
    config = page_config(reply.text)
    assert config["locale"] == "ja"
    assert config["inputKind"] == "textarea"
    assert config["hydrationMs"] == 250
    assert config["loggedOut"] is False
    assert page_config(request(fakes, GEMINI, "GET", "/app").text)["locale"] == "en"


def test_responses_are_not_held_back_by_nagle(fakes: FakeSites) -> None:
    # Regression: a listener without IPPROTO_TCP got no TCP_NODELAY, and every response
    # waited ~40 ms for a delayed ACK. Ten round trips take far less than one such wait each.
    connection = connect(fakes, CHATGPT)
    try:
        started = time.perf_counter()
        for _ in range(10):
            connection.request("GET", "/__fake/static/common.js", headers={"Host": CHATGPT})
            connection.getresponse().read()
        assert time.perf_counter() - started < 0.3
    finally:
        connection.close()


def test_static_scripts_are_served_and_nothing_else(fakes: FakeSites) -> None:
    reply = request(fakes, CHATGPT, "GET", "/__fake/static/chatgpt.js")
    assert reply.status == 200
    assert reply.headers["content-type"].startswith("text/javascript")
    for path in [
        "/__fake/static/chatgpt.html",
        "/__fake/static/..%2Fserver.py",
        "/__fake/static/x.js",
    ]:
        assert request(fakes, CHATGPT, "GET", path).status == 404, path


# -- ChatGPT ------------------------------------------------------------------------------------


def test_chatgpt_streams_the_answer_as_server_sent_events(fakes: FakeSites) -> None:
    before = time.time()
    with ask_chatgpt(fakes, "Explain TCP and UDP") as response:
        assert response.status == 200
        assert response.getheader("content-type", "").startswith("text/event-stream")
        question_id = response.getheader("x-fake-question-id")
        events = list(sse_events(response))
    [record] = fakes.chatgpt.records
    assert record.id == question_id
    assert record.text == "Explain TCP and UDP"
    assert before <= record.received_at <= time.time()
    # SITE-FACTS C7.3/C7.4: the encoding, then the resume token first.
    assert events[0] == ("delta_encoding", "v1")
    assert events[1][1]["type"] == "resume_conversation_token"
    name, added = events[2]
    assert (name, added["o"]) == ("delta", "add")
    message = added["v"]["message"]
    assert message["id"] == record.id
    assert (message["content"], message["status"], message["channel"]) == (
        {"content_type": "text", "parts": [""]},
        "in_progress",
        "final",
    )
    assert added["v"]["conversation_id"] == record.conversation_id
    assert events[3][1]["type"] == "message_marker"
    assert events[4][1] == {
        "p": "/message/content/parts/0",
        "o": "append",
        "v": record.answer[: Behaviour().chunk_chars],
    }
    assert events[5][1]["type"] == "title_generation"  # a new chat gets a title
    assert set(events[6][1]) == {"v"}  # then the shorthand
    assert appended_text(events) == record.answer
    patch = events[-4][1]
    assert {"p": "/message/status", "o": "replace", "v": "finished_successfully"} in patch["v"]
    assert {"p": "/message/end_turn", "o": "replace", "v": True} in patch["v"]
    assert events[-3][1]["type"] == "server_ste_metadata"
    assert events[-2][1]["type"] == "message_stream_complete"
    assert events[-1] == ("message", "[DONE]")
    assert record.first_token_at is None  # only a page reports what it showed


def test_chatgpt_batches_some_appends_and_the_parser_reads_them_all(fakes: FakeSites) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(chunk_chars=5, chunk_interval_ms=0))
    with ask_chatgpt(fakes, "Explain the OSI model") as response:
        body = response.read().decode("utf-8")
    [record] = fakes.chatgpt.records
    assert '"o": "patch", "v": [{"p": "/message/content/parts/0", "o": "append"' in body
    parsed = parse_chatgpt(body)
    assert parsed is not None
    assert (parsed.text, parsed.complete, parsed.message_id) == (record.answer, True, record.id)
    assert parsed.conversation_id == record.conversation_id


def test_the_legacy_send_path_still_answers(fakes: FakeSites) -> None:
    with ask_chatgpt(fakes, "Hello", path="/backend-api/conversation") as response:
        assert response.status == 200
        body = response.read().decode("utf-8")
    parsed = parse_chatgpt(body)
    assert parsed is not None and parsed.text == fakes.chatgpt.records[0].answer


def test_chatgpt_streams_chunks_of_the_set_size(fakes: FakeSites) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(chunk_chars=7, chunk_interval_ms=0))
    events = chatgpt_answer(fakes, "What is DNS?")
    pieces = [d["v"] for n, d in events if n == "delta" and isinstance(d.get("v"), str)]
    assert len(pieces) > 3
    assert all(len(piece) == 7 for piece in pieces[:-1])
    assert 0 < len(pieces[-1]) <= 7


def test_queued_behaviours_are_used_once_in_order_then_the_default(fakes: FakeSites) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(answer="default"))
    fakes.chatgpt.queue(Behaviour(answer="first"), Behaviour(answer="second"))
    answers = [appended_text(chatgpt_answer(fakes, f"question {i}")) for i in range(4)]
    assert answers == ["first", "second", "default", "default"]
    assert [r.answer for r in fakes.chatgpt.records] == answers


def test_chatgpt_thinks_before_it_answers(fakes: FakeSites) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(thinking_ms=30))
    events = chatgpt_answer(fakes, "Design a shortest path algorithm")
    added = [d["v"]["message"] for n, d in events if isinstance(d, dict) and d.get("o") == "add"]
    kinds = [message["content"]["content_type"] for message in added]
    assert kinds == ["thoughts", "reasoning_recap", "text"]
    assert added[1]["metadata"]["finished_duration_sec"] >= 1
    assert appended_text(events) == fakes.chatgpt.records[0].answer


def test_skip_thinking_ends_the_thinking_phase_at_once(fakes: FakeSites) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(thinking_ms=600_000))  # far beyond the socket timeout
    with ask_chatgpt(fakes, "Explain recursion in detail") as response:
        question_id = response.getheader("x-fake-question-id")
        events = sse_events(response)
        for _name, data in events:
            if isinstance(data, dict) and data.get("o") == "add":
                assert data["v"]["message"]["content"]["content_type"] == "thoughts"
                break
        skip = request(
            fakes,
            CHATGPT,
            "POST",
            "/backend-api/conversation/skip_thinking",
            json.dumps({"message_id": question_id}),
        )
        assert skip.json() == {"skipped": True}
        rest = list(events)  # would time out (socket timeout) if thinking went on
    assert rest[-1] == ("message", "[DONE]")
    assert appended_text(rest) == fakes.chatgpt.records[0].answer


def test_skip_thinking_for_a_question_not_thinking_says_so(fakes: FakeSites) -> None:
    reply = request(
        fakes,
        CHATGPT,
        "POST",
        "/backend-api/conversation/skip_thinking",
        json.dumps({"message_id": "not-thinking"}),
    )
    assert reply.json() == {"skipped": False}


def test_a_rate_limited_question_gets_the_limit_message(fakes: FakeSites) -> None:
    fakes.chatgpt.queue(Behaviour(state="rate_limited"))
    with ask_chatgpt(fakes, "Hello") as response:
        assert response.status == 429
        assert response.getheader("retry-after") == str(RETRY_AFTER_S)  # SITE-FACTS C5.10
        assert json.loads(response.read())["detail"]["message"] == RATE_LIMIT_TEXT
        question_id = response.getheader("x-fake-question-id")
    [record] = fakes.chatgpt.records
    assert (record.id, record.answer) == (question_id, "")


def test_an_error_turn_streams_an_error(fakes: FakeSites) -> None:
    fakes.chatgpt.queue(Behaviour(state="error_turn"))
    events = chatgpt_answer(fakes, "Hello")
    errors = [data for _name, data in events if isinstance(data, dict) and "error" in data]
    assert errors == [{"error": ERROR_TEXT, "conversation_id": errors[0]["conversation_id"]}]
    assert appended_text(events) == ""
    assert events[-1] == ("message", "[DONE]")
    assert not any(
        isinstance(d, dict) and d.get("type") == "message_stream_complete" for _, d in events
    )


def test_a_logged_out_site_refuses_questions(fakes: FakeSites) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(state="logged_out"))
    assert page_config(request(fakes, CHATGPT, "GET", "/").text)["loggedOut"] is True
    with ask_chatgpt(fakes, "Hello") as response:
        assert response.status == 401
    assert fakes.chatgpt.records == []


def test_chatgpt_keeps_each_conversation(fakes: FakeSites) -> None:
    chatgpt_answer(fakes, "first question")
    conversation_id = fakes.chatgpt.records[0].conversation_id
    chatgpt_answer(fakes, "second question", conversation_id)
    chatgpt_answer(fakes, "elsewhere", "no-such-conversation")
    first, second, elsewhere = fakes.chatgpt.records
    assert second.conversation_id == conversation_id
    assert elsewhere.conversation_id not in (conversation_id, "no-such-conversation")
    history = request(fakes, CHATGPT, "GET", f"/backend-api/conversation/{conversation_id}")
    assert {"mapping", "current_node"} <= set(history.json())  # C7.8's shape
    assert [(t.role, t.markdown) for t in chatgpt_conversation(history.text) or []] == [
        ("user", "first question"),
        ("assistant", first.answer.strip()),
        ("user", "second question"),
        ("assistant", second.answer.strip()),
    ]
    missing = request(fakes, CHATGPT, "GET", "/backend-api/conversation/no-such-conversation")
    assert missing.status == 404


def test_a_created_conversation_serves_its_earlier_turns(fakes: FakeSites) -> None:
    conversation_id = fakes.chatgpt.create_conversation([("q1", "a1"), ("q2", "a2")])
    read = request(fakes, CHATGPT, "GET", f"/backend-api/conversation/{conversation_id}")
    turns = chatgpt_conversation(read.text) or []
    assert [t.markdown for t in turns] == ["q1", "a1", "q2", "a2"]
    listed = request(fakes, CHATGPT, "GET", "/backend-api/conversations?offset=0&limit=28")
    assert listed.json()["items"] == [{"id": conversation_id, "title": "q1"}]  # C7.9
    assert fakes.gemini.conversation(conversation_id) is None  # each site has its own


# -- Gemini -------------------------------------------------------------------------------------


def test_gemini_streams_length_prefixed_frames_of_the_whole_answer_so_far(
    fakes: FakeSites,
) -> None:
    answer = "答え 😀 with **markdown**\n\n" * 5  # UTF-16 lengths differ from code points
    fakes.gemini.set_behaviour(Behaviour(answer=answer, chunk_chars=9, chunk_interval_ms=0))
    with ask_gemini(fakes, "Explain recursion") as response:
        assert response.status == 200
        assert response.getheader("transfer-encoding") == "chunked"
        question_id = response.getheader("x-fake-question-id")
        body = response.read().decode("utf-8")
        frames = gemini_frames(body)
    [record] = fakes.gemini.records
    assert record.id == question_id
    texts = []
    finals = []
    for frame in frames[:-2]:
        kind, _, payload = frame[0]
        assert kind == "wrb.fr"
        inner = json.loads(payload)
        assert inner[1] == [f"c_{record.conversation_id}", f"r_{record.id}"]
        assert inner[4][0][0] == f"rc_{record.id}"
        texts.append(inner[4][0][1][0])
        finals.append(len(inner[4][0]) > 8 and inner[4][0][8] == [2])
    # G7.2: an empty placeholder first, then the whole text so far each time; G3.5: the last
    # chunk's candidate is marked finished.
    assert texts[0] == ""
    assert texts[1:] == [answer[: 9 * (i + 1)] for i in range(len(texts) - 1)]
    assert texts[-1] == answer
    assert finals == [False] * (len(finals) - 1) + [True]
    assert [part[0] for part in frames[-2]] == ["di", "af.httprm"]
    assert frames[-1][0][0] == "e"
    parsed = parse_gemini(body)
    assert parsed is not None
    assert (parsed.text, parsed.complete, parsed.error_code) == (answer, True, None)
    assert parsed.conversation_id == f"c_{record.conversation_id}"


QUESTION_FOR_RESEARCH = "Research the history of Python decorators."


def test_gemini_keeps_each_conversation(fakes: FakeSites) -> None:
    gemini_answer(fakes, "first")
    conversation_id = fakes.gemini.records[0].conversation_id
    assert len(conversation_id) == 16
    gemini_answer(fakes, "second", conversation_id)
    assert fakes.gemini.records[1].conversation_id == conversation_id
    call = [[["hNvQHb", json.dumps([f"c_{conversation_id}", 10]), None, "generic"]]]
    reply = request(
        fakes,
        GEMINI,
        "POST",
        HISTORY_PATH + "?rpcids=hNvQHb",
        "f.req=" + quote(json.dumps(call)),
        "application/x-www-form-urlencoded",
    )
    [frame] = gemini_frames(reply.text)
    turns = json.loads(frame[0][2])
    assert turns == [[r.text, r.answer] for r in fakes.gemini.records]


def test_a_reopened_gemini_chat_shows_a_finished_research_as_plan_notice_and_report(
    fakes: FakeSites,
) -> None:
    """G11.6: reopened later, a finished research's messages are the plan, the completion
    notice and the report (the turn's fourth element); one still running shows its plan."""
    gemini_answer(fakes, QUESTION_FOR_RESEARCH)
    [record] = fakes.gemini.records
    fakes.gemini.update_record(record.id, research="plan", research_started_at=time.time())

    def turns() -> list[Any]:
        call = [[["hNvQHb", json.dumps([f"c_{record.conversation_id}", 10]), None, "generic"]]]
        reply = request(
            fakes,
            GEMINI,
            "POST",
            HISTORY_PATH + "?rpcids=hNvQHb",
            "f.req=" + quote(json.dumps(call)),
            "application/x-www-form-urlencoded",
        )
        [frame] = gemini_frames(reply.text)
        return list(json.loads(frame[0][2]))

    assert turns() == [[record.text, record.answer]]  # running: the plan only
    fakes.gemini.update_record(record.id, research_done_at=time.time())
    report, _ = plain_report(record.text)
    assert turns() == [[record.text, record.answer, True, [RESEARCH_DONE_NOTICE, report]]]


def wire_error(body: str) -> int:
    """The wire error code of a Gemini error body, where SITE-FACTS G5.5 puts it."""
    [error, trailer, end] = gemini_frames(body)
    assert [part[0] for part in trailer] == ["di", "af.httprm"]
    assert end[0][0] == "e"
    [part] = error
    assert part[:5] == ["wrb.fr", None, None, None, None]
    return int(part[5][2][0][1][0])


def test_a_gemini_error_is_an_error_frame(fakes: FakeSites) -> None:
    fakes.gemini.queue(Behaviour(state="error_turn"))
    status, body = gemini_answer(fakes, "Hello")
    assert (status, wire_error(body)) == (200, ERROR_CODE)
    parsed = parse_gemini(body)
    assert parsed is not None
    assert (parsed.text, parsed.complete, parsed.error_code) == ("", False, ERROR_CODE)


def test_gemini_rate_limited_and_logged_out(fakes: FakeSites) -> None:
    fakes.gemini.queue(Behaviour(state="rate_limited"))
    status, body = gemini_answer(fakes, "Hello")
    # G5.5: the usage limit is wire error 1037 inside the usual HTTP 200 stream.
    assert (status, wire_error(body), RATE_LIMIT_CODE) == (200, 1037, 1037)
    fakes.gemini.set_behaviour(Behaviour(state="logged_out"))
    assert gemini_answer(fakes, "Hello")[0] == 401
    assert len(fakes.gemini.records) == 1


def test_stop_ends_a_stuck_stream_and_the_server() -> None:
    sites = FakeSites()
    sites.start()
    try:
        sites.gemini.set_behaviour(Behaviour(state="stuck", chunk_interval_ms=0))
        with ask_gemini(sites, "Will this finish?") as response:
            assert response.getheader("x-fake-state") == "stuck"
            # The prefix, the empty placeholder and the first chunk: two lines each.
            head = b"".join(response.readline() for _ in range(6)).decode()
            [placeholder, frame] = gemini_frames(head)
            [record] = sites.gemini.records
            assert json.loads(placeholder[0][2])[4][0][1][0] == ""
            assert json.loads(frame[0][2])[4][0][1][0] == record.answer[: Behaviour().chunk_chars]
            stopped = threading.Thread(target=sites.stop)
            stopped.start()
            rest = response.read().decode()  # the server ends the held stream as it stops
        stopped.join(scaled(10.0))
        assert not stopped.is_alive()
        assert not sites.running
        assert '"e"' not in rest  # it was cut, not completed
        parsed = parse_gemini(head + rest)
        assert parsed is not None and not parsed.complete
    finally:
        sites.stop()


# -- records ------------------------------------------------------------------------------------


def report(sites: FakeSites, host: str, body: dict[str, Any]) -> Reply:
    return request(sites, host, "POST", "/__fake/report", json.dumps(body))


def test_page_reports_fill_the_record_and_the_first_report_wins(fakes: FakeSites) -> None:
    chatgpt_answer(fakes, "Hello")
    question_id = fakes.chatgpt.records[0].id
    for event, at in [("first_token", 1.0), ("first_token", 9.0), ("text_visible", 1.5)]:
        assert (
            report(fakes, CHATGPT, {"question_id": question_id, "event": event, "at": at}).status
            == 200
        )
    body = {"question_id": question_id, "event": "complete", "at": 2.0, "stopped": True}
    assert report(fakes, CHATGPT, body).status == 200
    [record] = fakes.chatgpt.records
    assert (record.first_token_at, record.text_visible_at, record.completed_at) == (1.0, 1.5, 2.0)
    assert record.stopped


def test_bad_reports_are_refused(fakes: FakeSites) -> None:
    assert (
        report(fakes, CHATGPT, {"question_id": "nope", "event": "complete", "at": 1}).status == 404
    )
    assert report(fakes, CHATGPT, {"question_id": "x", "event": "done", "at": 1}).status == 400
    assert report(fakes, CHATGPT, {"event": "complete"}).status == 400
    # A report names a question of its own site.
    chatgpt_answer(fakes, "Hello")
    question_id = fakes.chatgpt.records[0].id
    assert (
        report(fakes, GEMINI, {"question_id": question_id, "event": "complete", "at": 1}).status
        == 404
    )


def test_wait_for_record_wakes_when_a_report_arrives(fakes: FakeSites) -> None:
    chatgpt_answer(fakes, "Hello")
    question_id = fakes.chatgpt.records[0].id
    body = {"question_id": question_id, "event": "complete", "at": 3.0}
    reporter = threading.Thread(target=report, args=(fakes, CHATGPT, body))
    reporter.start()
    record = fakes.chatgpt.wait_for_record(lambda r: r.completed_at is not None, scaled(10.0))
    reporter.join()
    assert record.completed_at == 3.0


def test_wait_for_record_times_out(fakes: FakeSites) -> None:
    with pytest.raises(TimeoutError, match="no gemini record"):
        fakes.gemini.wait_for_record(lambda r: True, 0.05)


async def test_wait_for_record_async_leaves_the_loop_free(fakes: FakeSites) -> None:
    waiting = asyncio.ensure_future(
        fakes.gemini.wait_for_record_async(lambda r: r.text == "async", scaled(10.0))
    )
    await asyncio.to_thread(gemini_answer, fakes, "async")
    record = await waiting
    assert record.site == "gemini"
    with pytest.raises(TimeoutError):
        await fakes.gemini.wait_for_record_async(lambda r: r.text == "never", 0.05)


def test_reset_restores_defaults_and_forgets_everything(fakes: FakeSites) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(locale="ja"))
    fakes.chatgpt.queue(Behaviour(answer="queued"))
    chatgpt_answer(fakes, "Hello")
    conversation_id = fakes.chatgpt.records[0].conversation_id
    fakes.chatgpt.queue(Behaviour(answer="left over"))
    fakes.chatgpt.reset()
    assert fakes.chatgpt.behaviour == Behaviour()
    assert fakes.chatgpt.records == []
    assert fakes.chatgpt.conversation(conversation_id) is None
    assert appended_text(chatgpt_answer(fakes, "Hello")) != "left over"


# -- lifecycle ----------------------------------------------------------------------------------


def test_start_stop_and_the_chromium_flags() -> None:
    with FakeSites() as sites:
        port = sites.port
        assert port > 0
        assert sites.running
        assert sites.chromium_args() == [
            f"--host-resolver-rules=MAP chatgpt.com 127.0.0.1:{port}, "
            f"MAP gemini.google.com 127.0.0.1:{port}, "
            f"MAP lh3.googleusercontent.com 127.0.0.1:{port}",
            "--ignore-certificate-errors",
        ]
        with pytest.raises(RuntimeError):
            sites.start()
    sites.stop()  # idempotent
    assert not sites.running
    with pytest.raises(RuntimeError):
        _ = sites.port
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=scaled(5.0)).close()


async def test_python_m_bridge_fakes_prints_the_flags_and_stops_on_ctrl_c() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge.fakes",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = process.stdout, process.stderr
    assert stdout is not None and stderr is not None
    try:
        printed: list[str] = []
        while not printed or not printed[-1].startswith("Never add"):
            line = await asyncio.wait_for(stdout.readline(), scaled(20.0))
            assert line, (await stderr.read()).decode()
            printed.append(line.decode().strip())
        port = int(printed[0].split("127.0.0.1:")[1].split(":")[0])
        assert printed[2].startswith("chromium --user-data-dir=")
        assert f"'--host-resolver-rules=MAP chatgpt.com 127.0.0.1:{port}, " in printed[2]
        assert "--ignore-certificate-errors https://chatgpt.com/" in printed[2]
        process.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(process.wait(), scaled(20.0)) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


# -- the pages' markdown renderer ---------------------------------------------------------------


def test_render_serves_each_site_s_markup_per_top_level_block(fakes: FakeSites) -> None:
    markdown = "Intro\n\n```py\nx = 1\n```"
    chatgpt = request(fakes, CHATGPT, "POST", "/__fake/render", json.dumps({"markdown": markdown}))
    assert chatgpt.status == 200
    [paragraph, code] = chatgpt.json()["blocks"]
    assert paragraph == '<p data-start="0" data-end="5">Intro</p>'
    assert code.startswith('<pre data-start="7" data-end="22"><div><div>py</div><button')
    # The site defaults to the host's; a page may name the other and its own button text.
    body = {"markdown": markdown, "site": "chatgpt", "copy_code": "コードをコピーする"}
    gemini = request(fakes, GEMINI, "POST", "/__fake/render", json.dumps(body)).json()
    assert "コードをコピーする" in gemini["blocks"][1]
    plain = request(fakes, GEMINI, "POST", "/__fake/render", json.dumps({"markdown": markdown}))
    assert plain.json()["blocks"][1].startswith('<div class="code-block">')


def test_bad_render_requests_are_refused(fakes: FakeSites) -> None:
    for body in ("not json", "[]", json.dumps({"markdown": 1}), json.dumps({"site": "chatgpt"})):
        assert request(fakes, CHATGPT, "POST", "/__fake/render", body).status == 400, body
    unknown = json.dumps({"markdown": "x", "site": "bard"})
    assert request(fakes, CHATGPT, "POST", "/__fake/render", unknown).status == 400
