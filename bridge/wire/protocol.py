"""The relay <-> extension wire protocol, as pure functions and data (no I/O).

Both sides speak JSON text frames. The extension mirrors this module in
``extension/protocol.js``; ``PROTOCOL_VERSION`` must change on both sides whenever a
command, event or field changes, and the hello handshake refuses a mismatch with a
message that names both versions.

Frames:
- extension -> relay, first frame: ``{"method": "hello", "params": {"protocolVersion", ...}}``
- relay -> extension: ``{"method": "welcome", "params": {...}}`` or ``{"method": "refused",
  "params": {"message": ...}}`` followed by a close.
- relay -> extension commands: ``{"id": int, "method": <COMMANDS>, "params": {...}}``
- extension -> relay replies: ``{"id": int, "result": {...}}`` or
  ``{"id": int, "error": {"code": str, "message": str}}``
- extension -> relay events (no id): ``{"method": <EVENTS>, "params": {...}}``
- relay -> extension, answer to a frame it could not understand:
  ``{"id": int | None, "error": {"code": "malformed", "message": ...}}`` (and the extension's
  answer to a command it could not understand, the same shape the other way)

Error replies are never answered, by either side. A message carrying an ``"error"`` key is an
error reply whatever else it holds: with a usable id it fails that request (a body that is
not ``{code, message}`` still does, as ``malformed``); without one (``{"id": null, "error":
...}``, a peer's answer to a frame it could not read) it decodes as an ``ErrorNotice`` to log.
Only a frame that is neither a reply nor an event (nor, for the extension, a command) is
answered as malformed, so two peers can never ping-pong errors at each other.

Version 3 added the ``downloadInfo`` command (where the newest download of a URL is saved)
``createTab``'s ``ownWindow`` (a tab in an unfocused window of its own), ``listTabs``'
``targetId`` and the ``tabCreated`` event (every new tab, with its opener: popups).
Version 4 added the ``timeCdpCommand`` command (the extension times a CDP command itself: the
floor under a round trip, for the benchmarks) and the extension's sending of the replies to
one frame's commands as one frame.

Version 5 put the trust handshake in front of everything (``bridge.wire.trust``): ``hello`` carries
only the version, a nonce and the mode; the relay's ``challenge`` proves it knows the person's
secret; the extension's ``prove`` proves it too and only then names its browser; ``welcome``
follows. It added the relay's ``serving`` notice (this link serves, or waits on standby while
another browser serves), the ``claim`` event (the person chose this browser in the popup) and
the ``tabShared`` event (the person shared a tab with bridge, or stopped).

Version 6 added the ``groupTab`` command (put a tab in its client's Chrome tab group).

Batches (version 2): either side may send a JSON array of such messages as one frame. Both
sides batch only while several commands are in flight, so a lone round trip pays nothing,
and many in flight share frames (fewer wake-ups and IPC hops per command).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from bridge.wire.trust import NONCE_RE

__all__ = [
    "COMMANDS",
    "EVENTS",
    "PROTOCOL_VERSION",
    "Command",
    "ErrorInfo",
    "ErrorNotice",
    "Event",
    "Hello",
    "Opening",
    "ProtocolError",
    "Reply",
    "decode_batch",
    "decode_command",
    "decode_from_extension",
    "encode",
    "encode_batch",
    "encode_command",
    "encode_malformed",
    "parse_hello",
    "parse_prove",
    "version_mismatch_message",
]

PROTOCOL_VERSION: Final = 6

COMMANDS: Final = frozenset(
    {
        "listTabs",
        "createTab",
        "attachTab",
        "detachTab",
        "closeTab",
        "activateTab",
        "downloadInfo",
        "groupTab",
        "timeCdpCommand",
        "cdpCommand",
        "ping",
    }
)
EVENTS: Final = frozenset(
    {
        "hello",
        "prove",
        "claim",
        "cdpEvent",
        "tabDetached",
        "tabUpdated",
        "tabRemoved",
        "tabCreated",
        "tabShared",
    }
)
#: Handshake modes of ``hello``: prove the secret, or pair (learn it by a one-time code).
HELLO_MODES: Final = ("key", "pair")

# The biggest integer both JSON sides represent exactly (JavaScript's Number.MAX_SAFE_INTEGER).
_MAX_ID: Final = 2**53 - 1


class ProtocolError(ValueError):
    """A frame that does not follow the protocol.

    ``request_id`` is the frame's id when it had a usable one, so the peer can match
    the error reply to its request.
    """

    def __init__(self, message: str, request_id: int | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id


@dataclass(frozen=True)
class ErrorInfo:
    """An error reply's body: a stable code and a message."""

    code: str
    message: str


@dataclass(frozen=True)
class Reply:
    """The extension's answer to a command: its result or its error."""

    id: int
    result: dict[str, Any] | None = None
    error: ErrorInfo | None = None


@dataclass(frozen=True)
class ErrorNotice:
    """An error reply no request can be matched to (``{"id": null, "error": ...}``).

    The peer could not read something we sent. Log it; never answer it: an answer would be
    another error reply to the peer, and a peer answering that in turn never stops.
    """

    code: str
    message: str


@dataclass(frozen=True)
class Event:
    """A message from the extension that answers no command (tab and CDP events, the handshake)."""

    method: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Command:
    """A relay command as the extension receives it (the tests' stand-in extension decodes it)."""

    id: int
    method: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Opening:
    """The first frame of a link: the extension's version, nonce and handshake mode."""

    protocol_version: int
    nonce: str
    mode: str


@dataclass(frozen=True)
class Hello:
    """Who the extension is, as it says once it has proved the secret (``prove``)."""

    protocol_version: int
    extension_version: str
    instance_id: str
    user_agent: str


# Compact separators: fewer bytes per frame on the hot path. One encoder for every frame
# (json.dumps builds a new one per call when given options).
_encode: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def encode(obj: dict[str, Any]) -> str:
    return _encode(obj)


def encode_command(request_id: int, method: str, params: dict[str, Any] | None = None) -> str:
    if method not in COMMANDS:
        raise ProtocolError(f"unknown command {method!r}; known: {', '.join(sorted(COMMANDS))}")
    return encode({"id": request_id, "method": method, "params": params or {}})


def encode_malformed(request_id: int | None, message: str) -> str:
    return encode({"id": request_id, "error": {"code": "malformed", "message": message}})


def encode_batch(messages: list[str]) -> str:
    """One frame for encoded messages: the message itself, or a JSON array of them."""
    return messages[0] if len(messages) == 1 else "[" + ",".join(messages) + "]"


def _load_json(frame: str | bytes) -> Any:
    if isinstance(frame, bytes):
        try:
            frame = frame.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"frame is not UTF-8: {exc}") from None
    try:
        return json.loads(frame)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ProtocolError(f"frame is not JSON: {exc}") from None


def _load(frame: str | bytes) -> dict[str, Any]:
    return _as_message(_load_json(frame))


def _as_message(obj: Any) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ProtocolError(f"frame must be a JSON object, got {type(obj).__name__}")
    return obj


def _valid_id(value: Any) -> int | None:
    # bool is an int subclass in Python; true/false are not ids.
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_ID:
        return value
    return None


def _params(obj: dict[str, Any], request_id: int | None) -> dict[str, Any]:
    params = obj.get("params", {})
    if not isinstance(params, dict):
        raise ProtocolError("'params' must be an object", request_id)
    return params


_EVENT_FIELDS: Final[dict[str, dict[str, tuple[type, ...]]]] = {
    # field name -> accepted types; a leading "?" in the name marks optional fields
    "hello": {"protocolVersion": (int,)},
    "prove": {
        "proof": (str,),
        "?extensionVersion": (str,),
        "?instanceId": (str,),
        "?userAgent": (str,),
    },
    "claim": {},
    "tabShared": {"tabId": (int,), "shared": (bool,), "?url": (str,), "?title": (str,)},
    "cdpEvent": {"tabId": (int,), "method": (str,), "?params": (dict,), "?sessionId": (str,)},
    "tabDetached": {"tabId": (int,), "reason": (str,), "?tabExists": (bool,)},
    "tabUpdated": {"tabId": (int,), "?url": (str,), "?title": (str,), "?status": (str,)},
    "tabRemoved": {"tabId": (int,)},
    "tabCreated": {"tabId": (int,), "?openerTabId": (int,), "?url": (str,), "?targetId": (str,)},
}


def _check_fields(method: str, params: dict[str, Any]) -> None:
    for name, types in _EVENT_FIELDS[method].items():
        optional = name.startswith("?")
        key = name.lstrip("?")
        if key not in params:
            if optional:
                continue
            raise ProtocolError(f"event {method!r} lacks required field {key!r}")
        value = params[key]
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            wanted = "/".join(t.__name__ for t in types)
            raise ProtocolError(f"event {method!r} field {key!r} must be {wanted}")


def decode_batch(frame: str | bytes) -> list[Reply | Event | ErrorNotice | ProtocolError]:
    """Decode a frame from the extension: one message or a batch of them.

    Each element decodes on its own: a malformed element becomes a ProtocolError in its
    place, and the others still count. A frame that is not JSON at all raises.
    """
    obj = _load_json(frame)
    if not isinstance(obj, list):
        try:
            return [_decode_message(_as_message(obj))]
        except ProtocolError as exc:
            return [exc]
    if not obj:
        return [ProtocolError("a batch must hold at least one message")]
    out: list[Reply | Event | ErrorNotice | ProtocolError] = []
    for item in obj:
        try:
            out.append(_decode_message(_as_message(item)))
        except ProtocolError as exc:
            out.append(exc)
    return out


def decode_from_extension(frame: str | bytes) -> Reply | Event | ErrorNotice:
    """Decode one frame holding one message, or raise ProtocolError saying what is wrong."""
    return _decode_message(_load(frame))


def _decode_message(obj: dict[str, Any]) -> Reply | Event | ErrorNotice:
    # Hot path first: a well-formed result reply needs no further checks.
    result = obj.get("result")
    if type(result) is dict and len(obj) == 2:
        rid = obj.get("id")
        if type(rid) is int and 0 <= rid <= _MAX_ID:
            return Reply(rid, result=result)
    if "error" in obj:
        # An error reply, never answered (see the module docstring), so it never raises.
        request_id = _valid_id(obj.get("id"))
        info = _error_info(obj["error"])
        if request_id is None:
            return ErrorNotice(info.code, info.message)
        return Reply(request_id, error=info)
    if "id" in obj:
        request_id = _valid_id(obj["id"])
        if request_id is None:
            raise ProtocolError(f"'id' must be a non-negative integer, got {obj['id']!r}")
        if "result" in obj:
            result = obj["result"]
            if result is None:
                result = {}
            if not isinstance(result, dict):
                raise ProtocolError("'result' must be an object", request_id)
            return Reply(request_id, result=result)
        raise ProtocolError("a reply needs 'result' or 'error'", request_id)
    method = obj.get("method")
    if not isinstance(method, str):
        raise ProtocolError("a frame needs an 'id' (reply) or a string 'method' (event)")
    if method not in EVENTS:
        raise ProtocolError(f"unknown event {method!r}")
    params = _params(obj, None)
    _check_fields(method, params)
    return Event(method, params)


def _error_info(err: Any) -> ErrorInfo:
    if isinstance(
        err, str
    ):  # tolerate the looser shape of BrowserForce-style relays (docs/protocol.md#errors)
        return ErrorInfo("error", err)
    if (
        isinstance(err, dict)
        and isinstance(err.get("code"), str)
        and isinstance(err.get("message"), str)
    ):
        return ErrorInfo(err["code"], err["message"])
    shown = json.dumps(err, ensure_ascii=False)[:200]
    return ErrorInfo("malformed", f"'error' must be {{code: string, message: string}}, got {shown}")


def decode_command(frame: str | bytes) -> Command:
    """Decode a relay -> extension command (used by the Python stand-in extension in tests)."""
    obj = _load(frame)
    request_id = _valid_id(obj.get("id"))
    if request_id is None:
        raise ProtocolError(f"'id' must be a non-negative integer, got {obj.get('id')!r}")
    method = obj.get("method")
    if not isinstance(method, str) or method not in COMMANDS:
        raise ProtocolError(f"unknown command {method!r}", request_id)
    return Command(request_id, method, _params(obj, request_id))


def version_mismatch_message(extension_version: int) -> str:
    return (
        f"protocol version mismatch: relay speaks {PROTOCOL_VERSION}, extension speaks "
        f"{extension_version}. Reload the extension from the bridge checkout you are running "
        "(chrome://extensions -> bridge -> reload) so both come from the same version."
    )


def parse_hello(event: Event) -> Opening:
    """Check the first frame of a connection; ProtocolError if it is not a compatible hello.

    The version is checked first, so an extension of another version is told to reload
    whatever else its hello holds."""
    if event.method != "hello":
        raise ProtocolError(f"the first frame must be 'hello', got {event.method!r}")
    p = event.params
    version = p["protocolVersion"]
    if version != PROTOCOL_VERSION:
        raise ProtocolError(version_mismatch_message(version))
    nonce, mode = p.get("nonce"), p.get("mode", "key")
    if not isinstance(nonce, str) or not NONCE_RE.fullmatch(nonce):
        raise ProtocolError("hello needs a 'nonce': 32 random bytes in base64url")
    if mode not in HELLO_MODES:
        raise ProtocolError(f"hello 'mode' must be one of {', '.join(HELLO_MODES)}")
    return Opening(version, nonce, str(mode))


def parse_prove(event: Event) -> tuple[str, Hello]:
    """The extension's proof and who it says it is; ProtocolError if the frame is not that."""
    if event.method != "prove":
        raise ProtocolError(f"after the challenge the extension must 'prove', not {event.method!r}")
    p = event.params

    def text(key: str) -> str:
        value = p.get(key, "")
        return value if isinstance(value, str) else ""

    hello = Hello(PROTOCOL_VERSION, text("extensionVersion"), text("instanceId"), text("userAgent"))
    return str(p["proof"]), hello
