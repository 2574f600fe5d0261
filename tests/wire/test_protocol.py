"""The wire protocol as data: round trips, and every malformed frame is a ProtocolError."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.wire import protocol, trust
from bridge.wire.protocol import Command, ErrorInfo, ErrorNotice, Event, ProtocolError, Reply

json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
ids = st.integers(0, 2**53 - 1)


@given(ids, st.sampled_from(sorted(protocol.COMMANDS)), json_objects)
def test_command_round_trip(request_id: int, method: str, params: dict[str, Any]) -> None:
    frame = protocol.encode_command(request_id, method, params)
    assert protocol.decode_command(frame) == Command(request_id, method, params)


@given(ids, json_objects)
def test_result_reply_round_trip(request_id: int, result: dict[str, Any]) -> None:
    frame = json.dumps({"id": request_id, "result": result})
    assert protocol.decode_from_extension(frame) == Reply(request_id, result=result)


@given(ids, st.text(max_size=10), st.text(max_size=30))
def test_error_reply_round_trip(request_id: int, code: str, message: str) -> None:
    frame = json.dumps({"id": request_id, "error": {"code": code, "message": message}})
    assert protocol.decode_from_extension(frame) == Reply(
        request_id, error=ErrorInfo(code, message)
    )


@given(st.integers(0, 2**31), st.text(min_size=1, max_size=30), json_objects)
def test_cdp_event_round_trip(tab_id: int, method: str, params: dict[str, Any]) -> None:
    body = {"tabId": tab_id, "method": method, "params": params, "sessionId": "S1"}
    frame = protocol.encode({"method": "cdpEvent", "params": body})
    assert protocol.decode_from_extension(frame) == Event("cdpEvent", body)


@given(st.binary(max_size=64) | st.text(max_size=64) | json_values.map(json.dumps))
@pytest.mark.reliability(5)
def test_anything_decodes_or_raises_protocol_error(frame: str | bytes) -> None:
    # The relay's guarantee rests on this: no frame can raise anything but ProtocolError.
    try:
        msg = protocol.decode_from_extension(frame)
    except ProtocolError:
        return
    assert isinstance(msg, Reply | Event | ErrorNotice)


@pytest.mark.parametrize(
    ("frame", "says"),
    [
        pytest.param("not json", "not JSON", id="not-json"),
        pytest.param("[1, 2]", "JSON object", id="array"),
        pytest.param('{"id": -1, "result": {}}', "non-negative integer", id="negative-id"),
        pytest.param('{"id": true, "result": {}}', "non-negative integer", id="bool-id"),
        pytest.param('{"id": 3}', "'result' or 'error'", id="reply-without-body"),
        pytest.param('{"id": 3, "result": 5}', "'result' must be an object", id="scalar-result"),
        pytest.param('{"method": "nope"}', "unknown event", id="unknown-event"),
        pytest.param('{"method": "cdpEvent", "params": {"tabId": "7"}}', "tabId", id="tab-id-type"),
        pytest.param('{"method": "tabDetached", "params": {"tabId": 1}}', "reason", id="no-reason"),
        pytest.param('{"params": {}}', "'method'", id="neither"),
        pytest.param(b"\xff\xfe", "UTF-8", id="not-utf8"),
    ],
)
def test_malformed_frames_say_what_is_wrong(frame: str | bytes, says: str) -> None:
    with pytest.raises(ProtocolError, match=says):
        protocol.decode_from_extension(frame)


def test_error_keeps_the_request_id_when_it_had_one() -> None:
    with pytest.raises(ProtocolError) as info:
        protocol.decode_from_extension('{"id": 9, "result": "x"}')
    assert info.value.request_id == 9


@pytest.mark.reliability(27)
def test_hello_with_another_version_names_both_versions() -> None:
    event = Event("hello", {"protocolVersion": protocol.PROTOCOL_VERSION + 1})
    with pytest.raises(ProtocolError) as info:
        protocol.parse_hello(event)
    message = str(info.value)
    assert f"relay speaks {protocol.PROTOCOL_VERSION}" in message
    assert f"extension speaks {protocol.PROTOCOL_VERSION + 1}" in message


def test_hello_of_this_version_opens_the_handshake_and_names_nothing_of_the_browser() -> None:
    nonce = trust.new_nonce()
    opening = protocol.parse_hello(
        Event("hello", {"protocolVersion": protocol.PROTOCOL_VERSION, "nonce": nonce})
    )
    assert opening == protocol.Opening(protocol.PROTOCOL_VERSION, nonce, "key")


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"nonce": "short"},
        {"nonce": "x" * 44},
        {"nonce": "a" * 42 + "!"},
        {"nonce": 7},
        {"nonce": "a" * 43, "mode": "trust-me"},
    ],
)
def test_hello_without_a_fresh_nonce_or_with_an_unknown_mode_is_refused(
    params: dict[str, object],
) -> None:
    event = Event("hello", {"protocolVersion": protocol.PROTOCOL_VERSION, **params})
    with pytest.raises(ProtocolError):
        protocol.parse_hello(event)


def test_prove_carries_the_proof_then_who_the_browser_is() -> None:
    proof, hello = protocol.parse_prove(
        Event("prove", {"proof": "p", "instanceId": "abc", "extensionVersion": 1})
    )
    assert proof == "p" and hello.instance_id == "abc" and hello.extension_version == ""
    with pytest.raises(ProtocolError, match="must 'prove'"):
        protocol.parse_prove(Event("claim", {}))


def test_unknown_command_is_refused_before_sending() -> None:
    with pytest.raises(ProtocolError, match="unknown command"):
        protocol.encode_command(1, "formatDisk")


def test_extension_mirrors_the_protocol_version() -> None:
    from bridge.wire.extension import extension_dir

    js = (extension_dir() / "protocol.js").read_text()
    assert f"export const PROTOCOL_VERSION = {protocol.PROTOCOL_VERSION};" in js


def test_a_batch_decodes_every_message_and_marks_the_bad_ones() -> None:
    frame = json.dumps(
        [
            {"id": 1, "result": {"a": 1}},
            {"method": "tabRemoved", "params": {"tabId": 4}},
            {"id": "x", "result": {}},
            {"id": 2, "error": {"code": "cdp_error", "message": "nope"}},
        ]
    )
    decoded = protocol.decode_batch(frame)
    assert decoded[0] == Reply(1, result={"a": 1})
    assert decoded[1] == Event("tabRemoved", {"tabId": 4})
    assert isinstance(decoded[2], ProtocolError)
    assert decoded[3] == Reply(2, error=ErrorInfo("cdp_error", "nope"))


def test_an_empty_batch_is_malformed() -> None:
    [only] = protocol.decode_batch("[]")
    assert isinstance(only, ProtocolError) and "at least one" in str(only)


@given(st.lists(st.tuples(ids, json_objects), min_size=1, max_size=6))
def test_encode_batch_round_trips_through_decode_batch(
    replies: list[tuple[int, dict[str, Any]]],
) -> None:
    frame = protocol.encode_batch([protocol.encode({"id": i, "result": r}) for i, r in replies])
    assert protocol.decode_batch(frame) == [Reply(i, result=r) for i, r in replies]


@given(st.binary(max_size=64) | st.text(max_size=64) | json_values.map(json.dumps))
def test_any_batch_decodes_to_messages_or_errors(frame: str | bytes) -> None:
    try:
        decoded = protocol.decode_batch(frame)
    except ProtocolError:
        return  # not JSON at all
    assert decoded and all(
        isinstance(m, Reply | Event | ErrorNotice | ProtocolError) for m in decoded
    )


def test_tab_detached_says_whether_the_tab_still_exists() -> None:
    event = protocol.decode_from_extension(
        '{"method": "tabDetached", "params": {"tabId": 3, "reason": "target_closed", "tabExists": true}}'
    )
    assert event == Event("tabDetached", {"tabId": 3, "reason": "target_closed", "tabExists": True})
    with pytest.raises(ProtocolError, match="tabExists"):
        protocol.decode_from_extension(
            '{"method": "tabDetached", "params": {"tabId": 3, "reason": "x", "tabExists": 1}}'
        )


# -- error replies are never answered (no error ping-pong between relay and extension) -----------


def test_an_error_reply_without_a_usable_id_is_a_notice_not_a_malformed_frame() -> None:
    # What the extension answers a frame it could not read with; answering it back as
    # "malformed" is how the relay and the extension used to ping-pong errors forever.
    frame = '{"id": null, "error": {"code": "malformed", "message": "frame is not JSON"}}'
    assert protocol.decode_from_extension(frame) == ErrorNotice("malformed", "frame is not JSON")
    assert protocol.decode_batch(frame) == [ErrorNotice("malformed", "frame is not JSON")]


@pytest.mark.parametrize(
    "frame",
    [
        '{"error": {"code": "x", "message": "no id at all"}}',
        '{"id": "7", "error": {"code": "x", "message": "a string id"}}',
        '{"id": -1, "error": "a string body"}',
        '{"id": null, "error": 5}',
        '{"id": null, "error": null, "method": "cdpEvent"}',
        '{"id": null, "result": 5, "error": {}}',
    ],
)
def test_every_error_reply_without_a_usable_id_is_a_notice(frame: str) -> None:
    assert isinstance(protocol.decode_from_extension(frame), ErrorNotice)


def test_an_error_reply_with_a_bad_body_still_fails_its_request_as_malformed() -> None:
    reply = protocol.decode_from_extension('{"id": 3, "error": {"code": 1}}')
    assert isinstance(reply, Reply) and reply.id == 3 and reply.error is not None
    assert reply.error.code == "malformed" and "code: string" in reply.error.message


@given(st.one_of(st.none(), json_values), json_values)
def test_no_message_with_an_error_key_is_ever_malformed(request_id: Any, error: Any) -> None:
    """The relay answers only ProtocolErrors, so nothing carrying "error" may become one."""
    frame = json.dumps({"id": request_id, "error": error})
    [decoded] = protocol.decode_batch(frame)
    assert isinstance(decoded, Reply | ErrorNotice)
    batch = protocol.decode_batch(json.dumps([{"id": request_id, "error": error}, 7]))
    assert isinstance(batch[0], Reply | ErrorNotice) and isinstance(batch[1], ProtocolError)
