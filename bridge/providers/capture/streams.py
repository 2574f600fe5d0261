"""The answer request's framing in a capture (pure): the site's stream with the person's text
replaced, rebuilt into a body the parsers read as they read the real one
(docs/captures.md#the-format).

Every string becomes a placeholder of its length, except the framing the parsers read, which
is chosen by its *place* in the stream, never by how the value looks (an answer "OK" looks
like a token): ChatGPT's operation names, paths, event types, roles, statuses, content types
and channels (SITE-FACTS C7.3–C7.5: what ``bridge.providers.streams`` reads), the value a
delta writes to one of those fields, the SSE event names; Gemini's part tags and rpc ids
(G7.2). Ids become pseudonyms of their shape (the same id, the same pseudonym), URLs keep
their host. Numbers, booleans and keys stay: they carry no one's words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bridge.providers.capture.findings import Finding
from bridge.providers.capture.sanitize import Pseudonyms, looks_like_id, placeholder, url_shape
from bridge.providers.streams import GEMINI_PREFIX, StreamAnswer, gemini_values, sse_events

__all__ = ["check_stream", "event_shape", "rebuild_body", "sanitize_stream", "summarize"]

_TOKEN = re.compile(r"^[A-Za-z0-9_./:+-]{0,64}$")
#: ChatGPT keys whose string values are the stream's framing (C7.3–C7.5).
_FRAMING_KEYS = frozenset(
    {"o", "p", "type", "content_type", "role", "status", "recipient", "channel", "model_slug"}
)
#: A delta writing to a path ending in one of these writes framing, not text.
_FRAMING_FIELDS = frozenset({"status", "content_type", "role", "recipient", "channel", "end_turn"})
_SENTINELS = frozenset({"[DONE]"})
_SHAPE_DEPTH = 5


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _text(value: str) -> str:
    """A string of no known place: a URL keeps its scheme and host (a parser may keep only
    https URLs, G12.6) and its path becomes x's (a cited page's path names what was asked
    about); anything else keeps only its length (an id in no known place is replaced like
    text: what looks like an id may be someone's words, and its length is what a parser may
    count)."""
    if value.startswith("https://"):
        host, slash, rest = value[len("https://") :].partition("/")
        return f"https://{host.split('@')[-1]}{slash}{placeholder(rest)}"
    return placeholder(value)


# -- ChatGPT ----------------------------------------------------------------------------------


class _ChatGPT:
    """Walks ChatGPT's events in order, tracking the last path as the reader does (a bare
    ``{"v": …}`` repeats it, C7.3)."""

    def __init__(self, ids: Pseudonyms) -> None:
        self.ids = ids
        self.last_path: str | None = None

    def value(self, value: Any, key: str | None, path: str | None) -> Any:
        if isinstance(value, Mapping):
            return self.mapping(value)
        if isinstance(value, list):
            return [self.value(v, None, path) for v in value]
        if not isinstance(value, str):
            return value
        if key in _FRAMING_KEYS and _TOKEN.match(value):
            return value
        if key is not None and (key == "id" or key.endswith("_id")):
            # An empty id stays empty: the reader treats "" as no id at all.
            return self.ids(value) if value else value
        if key == "v" and path is not None:
            field = path.rsplit("/", 1)[-1]
            if field in _FRAMING_FIELDS and _TOKEN.match(value):
                return value
            if field == "id" or field.endswith("_id"):
                return self.ids(value)
        return _text(value)

    def mapping(self, data: Mapping[str, Any]) -> dict[str, Any]:
        path = data.get("p")
        if isinstance(path, str):
            self.last_path = path
        # Only a "v" beside its own "p" is judged by that path. A bare {"v": "…"} after a
        # status write is read by the parser as text appended to the answer (C7.3), so
        # keeping it by the last path would keep the person's words when they look like a
        # token ("OK", "finished").
        here = path if isinstance(path, str) else None
        return {str(k): self.value(v, str(k), here) for k, v in data.items()}


def _chatgpt_events(body: str, ids: Pseudonyms) -> list[dict[str, Any]]:
    walker = _ChatGPT(ids)
    events: list[dict[str, Any]] = []
    for name, data, _ in sse_events(body):
        event = name if _TOKEN.match(name) else placeholder(name)
        if data in _SENTINELS:
            events.append({"event": event, "raw": data})
            continue
        try:
            payload = json.loads(data)
        except ValueError:
            events.append({"event": event, "raw": placeholder(data)})
            continue
        if name == "delta_encoding" and isinstance(payload, str) and _TOKEN.match(payload):
            events.append({"event": event, "data": payload})  # "v1": the encoding's name
            continue
        events.append({"event": event, "data": walker.value(payload, None, None)})
    return events


# -- Gemini -----------------------------------------------------------------------------------


def _gemini_id(path: tuple[int, ...]) -> bool:
    """The places of ids in a reply chunk (G7.2): ``[1][0]`` the conversation, ``[1][1]`` the
    response, ``[4][k][0]`` each candidate."""
    return path in ((1, 0), (1, 1)) or (len(path) == 3 and path[0] == 4 and path[2] == 0)


def _gemini_value(value: Any, ids: Pseudonyms, path: tuple[int, ...] | None = ()) -> Any:
    """``path``: where ``value`` stands in a reply chunk's inner JSON (None elsewhere)."""
    if isinstance(value, list):
        return [
            _gemini_value(v, ids, None if path is None else (*path, i)) for i, v in enumerate(value)
        ]
    if isinstance(value, Mapping):
        return {str(k): _gemini_value(v, ids, None) for k, v in value.items()}
    if isinstance(value, str):
        if path is not None and _gemini_id(path):
            return ids(value)
        return _text(value)
    return value


def _gemini_part(part: Any, ids: Pseudonyms) -> Any:
    """``["wrb.fr", rpc id, "<inner JSON>", …]`` (G7.2): the tag and the rpc id kept, the
    payload kept as JSON with its strings replaced."""
    if not isinstance(part, list) or not part or not isinstance(part[0], str):
        return _gemini_value(part, ids, None)
    out: list[Any] = [part[0] if _TOKEN.match(part[0]) else placeholder(part[0])]
    for index, item in enumerate(part[1:], start=1):
        if index == 1 and isinstance(item, str) and _TOKEN.match(item):
            out.append(item)  # the rpc id (batchexecute's), a name of the site's API
        elif index == 2 and isinstance(item, str):
            try:
                inner = json.loads(item)
            except ValueError:
                out.append(_text(item))
            else:
                out.append({"$json": _gemini_value(inner, ids)})
        else:
            out.append(_gemini_value(item, ids, None))
    return out


def _gemini_frames(body: str, ids: Pseudonyms) -> list[dict[str, Any]]:
    stripped = body.lstrip()
    if not stripped.startswith(GEMINI_PREFIX):
        return [{"raw": placeholder(body)}] if body else []
    frames = []
    for value in gemini_values(stripped[len(GEMINI_PREFIX) :]):
        parts = value if isinstance(value, list) else [value]
        frames.append({"frame": [_gemini_part(p, ids) for p in parts]})
    return frames


# -- the stream -------------------------------------------------------------------------------


def sanitize_stream(
    format: str,
    *,
    method: str,
    url: str,
    status: int | None,
    content_type: str | None,
    body: str,
    pseudonyms: Pseudonyms | None = None,
) -> dict[str, Any]:
    """The Stream of docs/captures.md (without ``parsed``): the request's framing, its events
    with every text replaced."""
    ids = pseudonyms or Pseudonyms()
    events = _gemini_frames(body, ids) if format == "gemini-frames" else _chatgpt_events(body, ids)
    return {
        "method": method,
        "url": url_shape(url),
        "status": status,
        "content_type": content_type,
        "format": format,
        "events": events,
    }


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _unwrap(value: Any) -> Any:
    """A ``{"$json": …}`` back into the string of JSON it stands for."""
    if isinstance(value, Mapping):
        if set(value) == {"$json"}:
            return _json(_unwrap(value["$json"]))
        return {k: _unwrap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    return value


def rebuild_body(stream: Mapping[str, Any], events: Sequence[Any] | None = None) -> str:
    """The body ``events`` (default: all of the stream's) stand for, framed as the site
    frames it: server-sent events, or ``)]}'`` and length-prefixed frames whose length counts
    the UTF-16 code units after the digits, both newlines included (G7.2)."""
    chosen = list(stream.get("events", [])) if events is None else list(events)
    if stream.get("format") == "gemini-frames":
        out = [GEMINI_PREFIX, "\n"]
        for event in chosen:
            if not isinstance(event, Mapping) or "frame" not in event:
                continue
            payload = _json(_unwrap(event["frame"]))
            out.append(f"{_utf16(payload) + 2}\n{payload}\n")
        return "".join(out)
    lines: list[str] = []
    for event in chosen:
        if not isinstance(event, Mapping):
            continue
        name = str(event.get("event") or "message")
        if name != "message":
            lines.append(f"event: {name}")
        data = event["raw"] if "raw" in event else _json(event.get("data"))
        lines.extend(f"data: {line}" for line in str(data).split("\n"))
        lines.append("")
    return "\n".join(lines) + ("\n" if lines else "")


def summarize(answer: StreamAnswer | None) -> dict[str, Any]:
    """What a parser read, without the text: its length (UTF-16 code units, as placeholders
    keep it), whether it is complete, whether the ids came, the error if any."""
    if answer is None:
        return {"read": False}
    return {
        "read": True,
        "text_chars": _utf16(answer.text),
        "complete": answer.complete,
        "conversation_id": answer.conversation_id is not None,
        "message_id": answer.message_id is not None,
        "error": answer.error_code if answer.error_code is not None else bool(answer.error),
        "images": len(answer.images),
    }


def event_shape(event: Any, depth: int = 0) -> str:
    """A short signature of an event's structure: keys, the framing kept verbatim (operation
    names, paths, types), ``str``/``num``/``bool`` for the rest."""
    if depth > _SHAPE_DEPTH:
        return "…"
    if isinstance(event, Mapping):
        inner = ",".join(f"{k}:{event_shape(v, depth + 1)}" for k, v in event.items())
        return "{" + inner + "}"
    if isinstance(event, list):
        kinds = list(dict.fromkeys(event_shape(v, depth + 1) for v in event[:8]))
        return "[" + ",".join(kinds) + ("…" if len(event) > 8 else "") + "]"
    if isinstance(event, str):
        content = not event or set(event) <= {"x"} or event.startswith(("0000", "https://"))
        return "str" if content or looks_like_id(event) else json.dumps(event)
    if isinstance(event, bool):
        return "bool"
    if isinstance(event, int | float):
        return "num"
    return "null"


def _text_units(value: Any) -> int:
    """How much placeholder text an event carries (where an answer's words would be)."""
    if isinstance(value, Mapping):
        return sum(_text_units(v) for v in value.values())
    if isinstance(value, list):
        return sum(_text_units(v) for v in value)
    if isinstance(value, str) and value and set(value) <= {"x"}:
        return len(value)
    return 0


def check_stream(
    stream: Mapping[str, Any], parse: Callable[[str], StreamAnswer | None]
) -> list[Finding]:
    """The parser on the rebuilt body reads what it read on the real one; if not, the
    event where it stops following is named with its shape."""
    expected = dict(stream.get("parsed") or {})
    got = summarize(parse(rebuild_body(stream)))
    keys = [k for k in expected if k in got] or list(got)
    if all(got.get(k) == expected.get(k) for k in keys):
        what = (
            f"reads {got.get('text_chars')} characters"
            + (", complete" if got.get("complete") else "")
            if got.get("read")
            else "reads no answer"
        )
        return [
            Finding(
                "stream",
                "stream",
                True,
                f"the {stream.get('format')} parser {what}, as when captured",
            )
        ]
    events = list(stream.get("events", []))
    culprit = _where_it_stops(stream, events, parse)
    differs = ", ".join(
        f"{k} {got.get(k)!r} (captured {expected.get(k)!r})"
        for k in keys
        if got.get(k) != expected.get(k)
    )
    if culprit is None:
        subject, where = "stream", "no single event explains it"
    else:
        subject = f"stream event {culprit}"
        where = f"it stops following at event {culprit}: {event_shape(events[culprit])[:300]}"
    return [
        Finding(
            "stream",
            subject,
            False,
            f"the {stream.get('format')} parser reads {differs}; {where}. The site's stream "
            "changed: bridge.providers.streams must learn it (keep this capture as its test)",
        )
    ]


def _where_it_stops(
    stream: Mapping[str, Any], events: Sequence[Any], parse: Callable[[str], StreamAnswer | None]
) -> int | None:
    """Once the answer has begun to grow, the first event carrying text that did not make it
    grow (an operation the parser no longer reads); failing that, the first event after the
    last one that changed what the parser read (a completion or an id it no longer sees)."""
    previous = summarize(None)
    last_change = -1
    grown: list[int] = []
    quiet: list[int] = []
    for index in range(len(events)):
        now = summarize(parse(rebuild_body(stream, events[: index + 1])))
        if now.get("text_chars", 0) > previous.get("text_chars", 0):
            grown.append(index)
        elif _text_units(events[index]):
            quiet.append(index)
        if now != previous:
            last_change = index
            previous = now
    expected = stream.get("parsed", {}).get("text_chars")
    if isinstance(expected, int) and previous.get("text_chars") != expected:
        missing = expected - int(previous.get("text_chars") or 0)
        # The event that carried exactly the text the parser missed, else the first
        # text-carrying one that did not grow the answer once it had begun.
        exact = [i for i in quiet if _text_units(events[i]) == missing]
        after = [i for i in quiet if grown and i > grown[0]]
        if exact or after:
            return (exact or after)[0]
    return last_change + 1 if last_change + 1 < len(events) else None
