"""The answer's markdown, read out of the sites' streamed response bodies (pure: no I/O).

Each parser takes a whole response body as ``Network.getResponseBody`` returns it (the stream
may still be running, so the body can end anywhere, even inside a JSON value) and answers what
the body says so far. They never raise: garbage gives ``None`` or whatever could be read, since
the DOM remains the fallback reading (docs/sites.md#answer-sources).

- :func:`chatgpt_answer` reads ChatGPT's server-sent events in the "v1" delta encoding
  (SITE-FACTS C7.3, C7.4, C7.5; docs/sites.md#chatgpt-network).
- :func:`gemini_answer` reads Gemini's length-prefixed ``StreamGenerate`` frames
  (SITE-FACTS G7.2, G3.5, G5.5; docs/sites.md#gemini-network).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "GEMINI_ERRORS",
    "GEMINI_PREFIX",
    "StreamAnswer",
    "chatgpt_answer",
    "gemini_answer",
    "gemini_values",
    "sse_events",
]


@dataclass(frozen=True)
class StreamAnswer:
    """What an answer stream said, as far as it has arrived."""

    text: str
    """The answer's markdown exactly as the site sent it ("" if none yet)."""
    complete: bool
    """The stream itself says the answer finished (not merely that the body ended)."""
    conversation_id: str | None
    message_id: str | None
    """ChatGPT: the answer message's id. Gemini: the response id (``r_…``), else the chosen
    candidate's id (``rc_…``)."""
    error: str | None
    """An error the stream carried, as text (ChatGPT's ``{"error": …}``, Gemini's wire
    error), else None."""
    error_code: int | None
    """Gemini's wire error code (SITE-FACTS G5.5: 1037 usage limit, 1013, 1050, 1052, 1060),
    else None."""
    model: str | None = None
    """The model that answered, as the stream names it (ChatGPT's ``metadata.model_slug``,
    C7.5), else None. Gemini's stream names it too (G7.6) at no documented place."""
    images: tuple[str, ...] = ()
    """Gemini: the generated images' URLs, in order (the chosen candidate's ``[12][7][0]``,
    each image's ``[0][3][3]``: SITE-FACTS G12.6); empty for ChatGPT and for no image."""


#: Gemini's wire error codes and what the sources say they mean (SITE-FACTS G5.5).
GEMINI_ERRORS: dict[int, str] = {
    1013: "temporary error",
    1037: "usage limit exceeded",
    1050: "model inconsistent with conversation",
    1052: "model unavailable",
    1060: "IP temporarily blocked",
}

# Deeply nested garbage must not exhaust the stack, and a batch op inside a batch op inside
# ... is not a thing the site sends.
_MAX_PATCH_DEPTH = 8


# -- ChatGPT -------------------------------------------------------------------------------

_TEXT_PATH = "/message/content/parts/0"
# content_type values whose string parts are the user-visible answer (C7.5); "thoughts",
# "reasoning_recap", "code", "execution_output", ... never are (C4.5).
_ANSWER_CONTENT = ("text", "multimodal_text")
# Keys of a JSON object that mark it as an event of the conversation stream (C7.3, C7.4).
_STREAM_KEYS = frozenset({"p", "o", "v", "message", "type", "error"})


def sse_events(body: str) -> list[tuple[str, str, bool]]:
    """``(event, data, terminated)`` per server-sent event; tolerates CRLF/CR line ends and
    ``data:`` with or without its space (the SSE rules). ``terminated`` is False for a last
    event the body cut off before its blank line."""
    events: list[tuple[str, str, bool]] = []
    event = ""
    data: list[str] = []
    seen = False
    for line in body.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line:
            if seen:
                events.append((event or "message", "\n".join(data), True))
            event, data, seen = "", [], False
            continue
        if line.startswith(":"):  # an SSE comment (keep-alive)
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event, seen = value, True
        elif name == "data":
            data.append(value)
            seen = True
    if seen:
        events.append((event or "message", "\n".join(data), False))
    return events


def _pointer(path: str) -> list[str]:
    """A JSON pointer's tokens (``/message/content/parts/0`` → message, content, parts, 0)."""
    if not path:
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in path.split("/")[1:]]


def _index(container: list[Any], token: str, *, adding: bool = False) -> int | None:
    if token == "-":
        return len(container) if adding else None
    if not token.isdigit():
        return None
    index = int(token)
    limit = len(container) + (1 if adding else 0)
    return index if index < limit else None


def _child(container: Any, token: str) -> Any:
    if isinstance(container, dict):
        return container.get(token)
    if isinstance(container, list):
        index = _index(container, token)
        return None if index is None else container[index]
    return None


class _ChatGPTReader:
    """Replays the v1 delta operations onto the messages they build (C7.3)."""

    def __init__(self) -> None:
        self.messages: dict[str, dict[str, Any]] = {}  # by id, in order of their (last) add
        self.current: dict[str, Any] | None = None  # the message ops apply to: the last added
        self.last_path: str | None = None
        self.last_op: str | None = None
        self.conversation_id: str | None = None
        self.error: str | None = None
        self.stream_complete = False
        self.recognised = False

    # -- events ------------------------------------------------------------------------

    def event(self, name: str, data: str, terminated: bool) -> None:
        if name in ("delta_encoding", "delta"):
            self.recognised = True
        if data == "[DONE]":
            # A sentinel, not proof of a finished turn (C3.7).
            self.recognised = True
            return
        try:
            payload = json.loads(data)
        except ValueError:
            return  # a cut-off last event, or not JSON at all
        if not terminated and not isinstance(payload, dict):
            return  # e.g. "v1" cut from a longer string: too little to trust
        if isinstance(payload, dict):
            self.payload(payload)

    def payload(self, payload: dict[str, Any]) -> None:
        if _STREAM_KEYS.isdisjoint(payload):
            return
        self.recognised = True
        conversation = payload.get("conversation_id")
        if isinstance(conversation, str) and conversation:
            self.conversation_id = conversation
        if "error" in payload and payload["error"] is not None:
            self.error = _error_text(payload["error"])
            return
        kind = payload.get("type")
        if isinstance(kind, str):
            # Typed events (C7.4) carry no answer text; one says the stream is complete (C3.7).
            if kind == "message_stream_complete":
                self.stream_complete = True
            return
        if "p" not in payload and "o" not in payload and "v" not in payload:
            message = payload.get("message")
            if isinstance(message, dict):  # the older non-delta shape: the whole message
                self.add(message)
            return
        self.delta(payload)

    def delta(self, payload: dict[str, Any]) -> None:
        value = payload.get("v")
        if "p" not in payload and "o" not in payload:
            if isinstance(value, dict) and isinstance(value.get("message"), dict):
                self.apply("", "add", value, 0)  # `{v: {message: …}}` is an add (C7.3)
                return
            path, op = self.last_path, self.last_op
            if isinstance(value, str) and not _shorthand_target(path, op):
                # A bare `{"v": "text"}` with nothing sensible to repeat: the sources read it
                # as an append to the text (C7.3).
                path, op = _TEXT_PATH, "append"
        else:
            path, op = payload.get("p", self.last_path), payload.get("o", self.last_op)
        if isinstance(path, str) and isinstance(op, str):
            self.apply(path, op, value, 0)

    # -- operations --------------------------------------------------------------------

    def apply(self, path: str, op: str, value: Any, depth: int) -> None:
        if depth > _MAX_PATCH_DEPTH:
            return
        if op == "patch" and path == "" and isinstance(value, list):
            for sub in value:
                if isinstance(sub, dict):
                    sub_path = sub.get("p", self.last_path)
                    sub_op = sub.get("o", self.last_op)
                    if isinstance(sub_path, str) and isinstance(sub_op, str):
                        self.apply(sub_path, sub_op, sub.get("v"), depth + 1)
            return
        if op != "patch":
            self.last_path, self.last_op = path, op
        if path == "" and op in ("add", "replace"):
            if isinstance(value, dict):
                conversation = value.get("conversation_id")
                if isinstance(conversation, str) and conversation:
                    self.conversation_id = conversation
                message = value.get("message")
                if isinstance(message, dict):
                    self.add(message)
            return
        if self.current is None:
            return
        tokens = _pointer(path)
        if not tokens:
            return
        if tokens == ["message"]:
            if op in ("add", "replace") and isinstance(value, dict):
                self.add(value)
            return
        root: dict[str, Any] = {"message": self.current}
        parent: Any = root
        for token in tokens[:-1]:
            parent = _child(parent, token)
            if parent is None:
                return
        _operate(parent, tokens[-1], op, value)

    def add(self, message: dict[str, Any]) -> None:
        key = message.get("id")
        key = key if isinstance(key, str) else f"#{len(self.messages)}"
        self.messages.pop(key, None)
        self.messages[key] = message
        self.current = message

    # -- the answer --------------------------------------------------------------------

    def answer(self) -> StreamAnswer:
        found: dict[str, Any] | None = None
        for message in self.messages.values():
            if _is_answer(message):
                found = message
        if found is None:
            return StreamAnswer(
                "", self.stream_complete, self.conversation_id, None, self.error, None
            )
        status = _plain(found.get("status"))
        finished = isinstance(status, str) and status.startswith("finished")
        message_id = found.get("id")
        metadata = found.get("metadata")
        model = _plain(metadata.get("model_slug")) if isinstance(metadata, dict) else None
        return StreamAnswer(
            text=_message_text(found),
            complete=finished or self.stream_complete,
            conversation_id=self.conversation_id,
            message_id=message_id if isinstance(message_id, str) else None,
            error=self.error,
            error_code=None,
            model=model if isinstance(model, str) and model else None,
        )


def _shorthand_target(path: str | None, op: str | None) -> bool:
    """Whether repeating ``(path, op)`` for a bare ``{"v": …}`` writes into the content."""
    return (
        isinstance(path, str)
        and path.startswith("/message/content/")
        and op in ("append", "replace")
    )


class _Text:
    """A string built by appends, kept as pieces: a long answer arrives in thousands of
    appends (C7.3), and joining once at the end keeps reading linear."""

    __slots__ = ("pieces",)

    def __init__(self, *pieces: str) -> None:
        self.pieces = list(pieces)

    def __str__(self) -> str:
        return "".join(self.pieces)


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, _Text) else value


def _appended(current: Any, value: Any) -> Any:
    if current is None:
        return value
    if isinstance(value, str):
        if isinstance(current, _Text):
            current.pieces.append(value)
            return current
        if isinstance(current, str):
            return _Text(current, value)
    if isinstance(current, list):
        return current + value if isinstance(value, list) else [*current, value]
    if isinstance(current, dict) and isinstance(value, dict):
        return {**current, **value}  # e.g. /message/metadata gaining finish_details
    return current


def _changed(current: Any, op: str, value: Any) -> Any:
    """``current`` after ``op`` (append, replace, truncate) with ``value``."""
    if op == "replace":
        return value
    if op == "append":
        return _appended(current, value)
    current = _plain(current)
    if op == "truncate" and isinstance(value, int) and isinstance(current, str | list):
        return current[: max(value, 0)]
    return current


def _operate(parent: Any, token: str, op: str, value: Any) -> None:
    """One JSON-patch-like operation on ``parent[token]``; anything that does not fit is
    skipped (a garbled op must not spoil what was read)."""
    if isinstance(parent, dict):
        if op == "add":
            parent[token] = value
        elif op == "remove":
            parent.pop(token, None)
        elif op in ("append", "replace", "truncate"):
            parent[token] = _changed(parent.get(token), op, value)
    elif isinstance(parent, list):
        index = _index(parent, token, adding=op != "remove")
        if index is None:
            return
        if op == "add":
            parent.insert(index, value)
        elif op == "remove":
            del parent[index]
        elif op in ("append", "replace", "truncate"):
            if index == len(parent):  # one past the end: a new part
                parent.append(None)
            parent[index] = _changed(parent[index], op, value)


def _is_answer(message: dict[str, Any]) -> bool:
    """The user-visible assistant text (C7.5, C4.5): not thoughts, recaps, code or tool
    traffic, not the analysis/commentary channels, not hidden, addressed to all."""
    author = message.get("author")
    if not isinstance(author, dict) or author.get("role") != "assistant":
        return False
    content = message.get("content")
    if not isinstance(content, dict) or content.get("content_type") not in _ANSWER_CONTENT:
        return False
    if message.get("channel") not in (None, "final"):
        return False
    metadata = message.get("metadata")
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return False
    return message.get("recipient") in (None, "all")


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list):
        return ""
    return "".join(str(part) for part in parts if isinstance(part, str | _Text))


def _error_text(error: Any) -> str:
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        for key in ("message", "detail", "code"):
            if isinstance(error.get(key), str):
                return str(error[key])
    return json.dumps(error, ensure_ascii=False)


def chatgpt_answer(body: str) -> StreamAnswer | None:
    """The answer a ChatGPT conversation stream carries so far; None if ``body`` is not one.

    The stream is SSE in delta encoding "v1" (SITE-FACTS C7.3): messages are added
    (``{"p":"","o":"add","v":{"message":…}}`` or ``{"v":{"message":…}}``), then changed by
    ``append``/``replace`` ops on paths like ``/message/content/parts/0``, a bare ``{"v":…}``
    repeating the last path and op, and ``patch`` batching ops. The answer is the last
    user-visible assistant text message (C7.5, C4.5); it is complete once its status is
    patched to ``finished…`` or ``message_stream_complete`` arrives (C3.7; ``[DONE]`` alone
    is not enough).
    """
    try:
        reader = _ChatGPTReader()
        for name, data, terminated in sse_events(body):
            try:
                reader.event(name, data, terminated)
            except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
                continue  # one garbled event spoils nothing else
        return reader.answer() if reader.recognised else None
    except Exception:  # never raise on what a site sends: the DOM is the fallback
        return None


# -- Gemini ---------------------------------------------------------------------------------

GEMINI_PREFIX = ")]}'"
_LENGTH = re.compile(r"\d+")
_NON_SPACE = re.compile(r"\S")
_DECODER = json.JSONDecoder()


def _skip_space(text: str, pos: int) -> int:
    found = _NON_SPACE.search(text, pos)
    return found.start() if found else len(text)


def _after_units(text: str, start: int, units: int) -> int | None:
    """The index ``units`` UTF-16 code units (JavaScript's string length) after ``start``;
    None if ``text`` ends first or the count ends inside a surrogate pair."""
    if units == 0:
        return start
    # n code units span at most n code points; encode that much and cut it at n units.
    encoded = text[start : start + units].encode("utf-16-le", "surrogatepass")
    if len(encoded) < 2 * units:
        return None
    cut = encoded[: 2 * units].decode("utf-16-le", "surrogatepass")
    end = start + len(cut)
    return end if cut[-1] == text[end - 1] else None


def gemini_values(content: str) -> list[Any]:
    """The JSON values of the frames in ``content`` (the body after ``)]}'``).

    A frame is ``<n>\\n<json>\\n`` where n counts the UTF-16 code units after the digits,
    both newlines included (HYG's ``parse_response_by_frame``, SITE-FACTS G7.2). Where a
    declared length does not land on a frame boundary, the next JSON value is read as it
    stands; a value the body cut off (the stream still running) ends the reading.
    """
    values: list[Any] = []
    pos = _skip_space(content, 0)
    while pos < len(content):
        start = pos
        digits = _LENGTH.match(content, pos)
        if digits is not None:
            start = digits.end()
            end = _after_units(content, start, int(digits.group(0)))
            if end is not None:
                try:
                    values.append(json.loads(content[start:end]))
                except (ValueError, RecursionError):
                    pass  # not a frame boundary: read the value itself below
                else:
                    pos = _skip_space(content, end)
                    continue
        try:
            value, end = _DECODER.raw_decode(content, _skip_space(content, start))
        except (ValueError, RecursionError):
            break
        values.append(value)
        pos = _skip_space(content, end)
    return values


def _nested(data: Any, *path: int) -> Any:
    for index in path:
        if not isinstance(data, list) or not -len(data) <= index < len(data):
            return None
        data = data[index]
    return data


def _wire_code(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


class _GeminiReader:
    def __init__(self) -> None:
        self.text = ""
        self.complete = False
        self.conversation_id: str | None = None
        self.message_id: str | None = None
        self.error: str | None = None
        self.error_code: int | None = None
        self.images: tuple[str, ...] = ()
        self.replies = 0  # StreamGenerate's wrb.fr parts (rpc id null)
        self.others = 0  # batchexecute's (an rpc id such as hNvQHb)

    def part(self, part: Any) -> None:
        if not isinstance(part, list) or not part or part[0] != "wrb.fr":
            return  # the "di"/"af.httprm" trailer, the "e" end frame, …
        if len(part) > 1 and part[1] is not None:
            self.others += 1
            return
        self.replies += 1
        self.wire_error(part)
        payload = _nested(part, 2)
        if not isinstance(payload, str):
            return
        try:
            inner = json.loads(payload)
        except ValueError:
            return
        self.reply(inner)

    def wire_error(self, part: list[Any]) -> None:
        """The error code at ``part[5][2][0][1][0]`` (G5.5; wrapped in a ``BardErrorInfo``
        entry); a status at ``part[5][0]`` without one still means the request failed."""
        status = _nested(part, 5)
        if not isinstance(status, list):
            return
        code = _wire_code(_nested(part, 5, 2, 0, 1, 0))
        if code is not None:
            self.error_code = code
            meaning = GEMINI_ERRORS.get(code)
            self.error = f"Gemini error {code}" + (f": {meaning}" if meaning else "")
        elif self.error is None:
            self.error = f"Gemini request failed (status {_nested(status, 0)})"

    def reply(self, inner: Any) -> None:
        ids = _nested(inner, 1)
        if isinstance(_nested(ids, 0), str) and ids[0]:
            self.conversation_id = ids[0]
        if isinstance(_nested(inner, 25), str):  # the final, saved-to-history chunk (G3.5)
            self.complete = True
        candidates = _nested(inner, 4)
        if not isinstance(candidates, list):
            return
        for candidate in candidates:
            if _nested(candidate, 8, 0) == 2:  # a finished candidate (G3.5)
                self.complete = True
        first = _nested(candidates, 0)
        generated = _nested(first, 12, 7, 0)  # G12.6: the generated images
        if isinstance(generated, list):
            urls = (_nested(image, 0, 3, 3) for image in generated)
            found = tuple(u for u in urls if isinstance(u, str) and u.startswith("https://"))
            if found:
                self.images = found
        text = _nested(first, 1, 0)
        if isinstance(text, str) and text:
            # Every chunk carries the whole text so far; early ones may be empty (G7.2).
            self.text = text
        response = _nested(ids, 1)
        candidate_id = _nested(first, 0)
        if isinstance(response, str) and response:
            self.message_id = response
        elif isinstance(candidate_id, str) and candidate_id and self.message_id is None:
            self.message_id = candidate_id

    def answer(self) -> StreamAnswer:
        return StreamAnswer(
            self.text,
            self.complete,
            self.conversation_id,
            self.message_id,
            self.error,
            self.error_code,
            images=self.images,
        )


def gemini_answer(body: str) -> StreamAnswer | None:
    """The answer a Gemini ``StreamGenerate`` body carries so far; None if ``body`` is not one.

    The body is ``)]}'`` and length-prefixed frames (SITE-FACTS G7.2); reply chunks are
    ``[["wrb.fr", null, "<inner JSON>"]]``, each with the whole text so far at inner
    ``[4][0][1][0]`` and ``[cid, rid]`` at inner ``[1]``. The answer is the latest non-empty
    text, exactly as sent (card placeholders included); it is complete when a candidate has
    ``[8][0] == 2`` or inner ``[25]`` is a string (G3.5). A wire error code
    (``part[5][2][0][1][0]``, G5.5) is reported in ``error_code``. A ``batchexecute`` body
    (``wrb.fr`` parts with an rpc id) is not a StreamGenerate body.
    """
    try:
        stripped = body.lstrip()
        if not stripped.startswith(GEMINI_PREFIX):
            return None
        reader = _GeminiReader()
        for value in gemini_values(stripped[len(GEMINI_PREFIX) :]):
            parts = value if isinstance(value, list) else [value]
            for part in parts:
                try:
                    reader.part(part)
                except (ValueError, TypeError, KeyError, IndexError, RecursionError):
                    continue
        if reader.others and not reader.replies:
            return None
        return reader.answer()
    except Exception:  # never raise on what a site sends: the DOM is the fallback
        return None
