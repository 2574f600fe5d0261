"""The fake sites' answer streams, encoded the way the real sites send them.

The shapes come from the evidence, not from what a parser happens to accept, so the fakes
exercise every reader of the network (the fake pages, ``bridge.providers.streams``) with what
the real sites send:

- ChatGPT (:class:`ChatGPTWire`): server-sent events in delta encoding "v1" (SITE-FACTS C7.3):
  the ``delta_encoding`` preamble, a ``resume_conversation_token`` first (C7.4), the answer
  message ``add``-ed (C7.5), its text ``append``-ed with the full path and op first and the
  bare ``{"v": …}`` shorthand after, some appends inside a ``patch`` batch, a final batch
  patching ``/message/status`` to ``finished_successfully`` and ``/message/end_turn``, then
  ``message_stream_complete`` and ``data: [DONE]`` (C3.7). Thinking adds a "thoughts" and a
  "reasoning_recap" message first (C4.5). docs/sites.md#chatgpt-network.
- Gemini (:class:`GeminiWire`): ``)]}'`` and length-prefixed frames whose length counts the
  UTF-16 code units after the digits, both newlines included (G7.2, HYG's
  ``parse_response_by_frame``); ``wrb.fr`` chunks with the inner JSON as a string, each with
  the whole text so far, an empty placeholder first, ``[8] == [2]`` on the last candidate
  (G3.5), the ``di``/``af.httprm`` trailer; errors as a ``wrb.fr`` part with the code at
  ``[5][2][0][1][0]`` (G5.5). docs/sites.md#gemini-network.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BARD_ERROR_INFO",
    "DONE",
    "GEMINI_PREFIX",
    "TEXT_PATH",
    "ChatGPTWire",
    "GeminiWire",
    "chatgpt_body",
    "chatgpt_events",
    "frame",
    "gemini_body",
    "gemini_frames",
    "sse",
    "utf16_length",
]

TEXT_PATH = "/message/content/parts/0"
DONE = "data: [DONE]\n\n"
GEMINI_PREFIX = ")]}'\n\n"
#: The type URL wrapping Gemini's wire error codes (public captured bodies; SITE-FACTS G5.5
#: gives the code's place, ``part[5][2][0][1][0]``).
BARD_ERROR_INFO = "type.googleapis.com/assistant.boq.bard.application.BardErrorInfo"
_MODEL = "gpt-5-thinking"


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


# -- ChatGPT --------------------------------------------------------------------------------


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event; ``data`` goes as it is if a string, else as JSON."""
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"{head}data: {payload}\n\n"


def _token(conversation_id: str) -> str:
    """A JWT-shaped resume token, as the real one is (C7.4); nothing reads its contents."""
    claims = json.dumps({"conversation_id": conversation_id, "kind": "topic"}).encode()
    body = base64.urlsafe_b64encode(claims).decode().rstrip("=")
    return f"eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.{body}.fake-signature"


@dataclass
class ChatGPTWire:
    """The events of one ChatGPT answer stream, produced in order by its methods.

    Each method returns the text of one or more events, so a server can pause between them
    (the site's cadence) and a test can join them into a whole body.
    """

    conversation_id: str
    title: str | None = None
    """Sent as a ``title_generation`` event after the first text: new chats get one (C7.4)."""
    batch_every: int = 5
    """Every n-th append after the first travels inside a ``patch`` batch (C7.3)."""
    model: str = _MODEL
    _count: int = 0
    _appends: int = 0
    _full_next: bool = True
    _message_id: str = ""

    def preamble(self) -> str:
        """``delta_encoding`` "v1", then the ``resume_conversation_token`` event (C7.3, C7.4)."""
        token = {
            "type": "resume_conversation_token",
            "kind": "topic",
            "token": _token(self.conversation_id),
            "conversation_id": self.conversation_id,
        }
        return sse('"v1"', "delta_encoding") + sse(token)

    def message(
        self,
        message_id: str,
        content: dict[str, Any],
        metadata: dict[str, Any] | None = None,
        *,
        status: str = "in_progress",
        channel: str | None = None,
    ) -> dict[str, Any]:
        """An assistant message with the fields the real ones carry (C7.5)."""
        return {
            "id": message_id,
            "author": {"role": "assistant", "name": None, "metadata": {}},
            "create_time": time.time(),
            "update_time": None,
            "content": content,
            "status": status,
            "end_turn": None,
            "weight": 1.0,
            "metadata": {
                "citations": [],
                "content_references": [],
                "message_type": "next",
                "model_slug": self.model,
                "default_model_slug": "auto",
                **(metadata or {}),
            },
            "recipient": "all",
            "channel": channel,
        }

    def add(self, message: dict[str, Any]) -> str:
        """The ``add`` of a whole message, with the stream's running count ``c`` (C7.3)."""
        value = {
            "message": message,
            "conversation_id": self.conversation_id,
            "error": None,
            "error_code": None,
        }
        event = {"p": "", "o": "add", "v": value, "c": self._count}
        self._count += 1
        return sse(event, "delta")

    def thoughts(self, message_id: str) -> str:
        """The Thinking phase's message: content_type "thoughts" (C4.5), never the answer."""
        content = {"content_type": "thoughts", "thoughts": [], "source_analysis_msg_id": ""}
        return self.add(self.message(message_id, content, {"reasoning_status": "is_reasoning"}))

    def recap(self, message_id: str, seconds: int) -> str:
        """ "Thought for Ns": content_type "reasoning_recap" (C4.5), never the answer."""
        content = {"content_type": "reasoning_recap", "content": f"Thought for {seconds}s"}
        metadata = {"reasoning_status": "reasoning_ended", "finished_duration_sec": seconds}
        return self.add(self.message(message_id, content, metadata, status="finished_successfully"))

    def answer_start(self, message_id: str) -> str:
        """The add of the user-visible answer message (text, parts [""], channel "final"),
        then the ``message_marker`` that its first visible token follows (C7.4, C4.5)."""
        self._message_id = message_id
        self._appends = 0
        self._full_next = True
        content = {"content_type": "text", "parts": [""]}
        marker = {
            "type": "message_marker",
            "conversation_id": self.conversation_id,
            "message_id": message_id,
            "marker": "user_visible_token",
            "event": "first",
        }
        return self.add(self.message(message_id, content, channel="final")) + sse(marker)

    def append(self, text: str) -> str:
        """One piece of the answer's text: full path and op first and after a batch, the
        bare ``{"v": …}`` shorthand otherwise, every ``batch_every``-th inside a batch."""
        index = self._appends
        self._appends += 1
        op = {"p": TEXT_PATH, "o": "append", "v": text}
        if index and self.batch_every and index % self.batch_every == 0:
            event = sse({"p": "", "o": "patch", "v": [op]}, "delta")
            self._full_next = True  # a shorthand after a batch would be ambiguous
        elif self._full_next:
            event = sse(op, "delta")
            self._full_next = False
        else:
            event = sse({"v": text}, "delta")
        if index == 0 and self.title is not None:
            title = {
                "type": "title_generation",
                "title": self.title,
                "conversation_id": self.conversation_id,
            }
            event += sse(title)
        return event

    def finish(self) -> str:
        """The final batch (status finished, end of turn, finish details), the server's
        metadata, ``message_stream_complete`` and ``[DONE]`` (C3.7, C7.3, C7.4)."""
        patch = [
            {"p": "/message/status", "o": "replace", "v": "finished_successfully"},
            {"p": "/message/end_turn", "o": "replace", "v": True},
            {
                "p": "/message/metadata",
                "o": "append",
                "v": {
                    "is_complete": True,
                    "finish_details": {"type": "stop", "stop_tokens": [200002]},
                },
            },
        ]
        metadata = {
            "type": "server_ste_metadata",
            "metadata": {
                "model_slug": self.model,
                "message_id": self._message_id,
                "tool_invoked": False,
                "is_first_turn": self.title is not None,
            },
            "conversation_id": self.conversation_id,
        }
        complete = {"type": "message_stream_complete", "conversation_id": self.conversation_id}
        return (
            sse({"p": "", "o": "patch", "v": patch}, "delta") + sse(metadata) + sse(complete) + DONE
        )

    def error(self, text: str) -> str:
        """An error event (``{"error": …}``) and the end of the stream."""
        return sse({"error": text, "conversation_id": self.conversation_id}) + DONE


def chatgpt_events(
    chunks: Iterable[str],
    *,
    conversation_id: str = "6740f3a2-0000-4000-8000-000000000000",
    message_id: str = "a1b2c3d4-0000-4000-8000-000000000001",
    thinking_seconds: int | None = None,
    title: str | None = None,
    batch_every: int = 5,
) -> list[str]:
    """A whole ChatGPT answer stream as its steps, the answer being ``"".join(chunks)``."""
    wire = ChatGPTWire(conversation_id, title=title, batch_every=batch_every)
    events = [wire.preamble()]
    if thinking_seconds is not None:
        events.append(wire.thoughts(f"{message_id}-thoughts"))
        events.append(wire.recap(f"{message_id}-recap", thinking_seconds))
    events.append(wire.answer_start(message_id))
    events.extend(wire.append(chunk) for chunk in chunks)
    events.append(wire.finish())
    return events


def chatgpt_body(chunks: Iterable[str], **options: Any) -> str:
    """The whole response body of :func:`chatgpt_events`."""
    return "".join(chatgpt_events(chunks, **options))


# -- Gemini ---------------------------------------------------------------------------------


def utf16_length(text: str) -> int:
    """``text``'s length as JavaScript counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def frame(payload: Any) -> str:
    """One length-prefixed frame: ``<n>\\n<json>\\n``, n counting the UTF-16 code units after
    the digits, both newlines included (G7.2, HYG's ``parse_response_by_frame``)."""
    text = f"\n{_json(payload)}\n"
    return f"{utf16_length(text)}{text}"


@dataclass
class GeminiWire:
    """The frames of one Gemini ``StreamGenerate`` response, produced in order.

    Ids go on the wire as the site writes them: ``c_…`` conversation, ``r_…`` response,
    ``rc_…`` chosen candidate (G7.2).
    """

    conversation_id: str
    response_id: str
    candidate_id: str
    _sent: int = field(default=0)

    def _frame(self, payload: Any) -> str:
        text = frame(payload)
        self._sent += utf16_length(text)
        return text

    def prefix(self) -> str:
        """The anti-JSON-hijacking prefix the body starts with (G7.2)."""
        return GEMINI_PREFIX

    def placeholder(self) -> str:
        """The empty chunk that precedes the text (G7.2: use the latest non-empty)."""
        return self.chunk("")

    def chunk(
        self, text: str, *, final: bool = False, images: Sequence[tuple[str, str, str]] = ()
    ) -> str:
        """A reply chunk carrying the *whole* text so far; the final one marks its
        candidate finished (``[8] == [2]``) and sets inner ``[25]`` (G3.5). ``images``
        (url, alt, id) go at the candidate's ``[12][7][0]``, each with its URL at
        ``[0][3][3]``, alt at ``[0][3][2]`` and id at ``[1][0]`` (G12.6)."""
        candidate: list[Any] = [self.candidate_id, [text]]
        inner: list[Any] = [None, [self.conversation_id, self.response_id], None, None, [candidate]]
        if final:
            candidate.extend([None] * 6 + [[2]])
            inner.extend([None] * 20 + [f"final_{self.response_id}"])
        if images:
            candidate.extend([None] * (12 - len(candidate)))
            listed = [
                [[None, None, None, [None, None, alt, url]], [ident]] for url, alt, ident in images
            ]
            candidate.append([None] * 7 + [[listed]])
        return self._frame([["wrb.fr", None, _json(inner)]])

    def error(self, code: int, status: int = 3) -> str:
        """A ``wrb.fr`` part with no reply and the wire error ``code`` at
        ``[5][2][0][1][0]`` (G5.5), e.g. 1037 usage limit, 1013 temporary error."""
        detail = [status, None, [[BARD_ERROR_INFO, [code]]]]
        return self._frame([["wrb.fr", None, None, None, None, detail]])

    def trailer(self) -> str:
        """The ``di``/``af.httprm`` trailer (G7.2), then the ``e`` frame that ends the body
        (it carries a count of what was sent, as captured bodies' do)."""
        end = self._frame([["di", 80], ["af.httprm", 79, "-5383267747995074321", 35]])
        return end + self._frame([["e", 4, None, None, self._sent]])


def gemini_frames(
    chunks: Iterable[str],
    *,
    conversation_id: str = "c_1a2b3c4d5e6f7a8b",
    response_id: str = "r_0123456789abcdef",
    candidate_id: str = "rc_fedcba9876543210",
) -> list[str]:
    """A whole Gemini answer body as its steps, the answer being ``"".join(chunks)``: each
    chunk carries the text so far, the last one marked final."""
    wire = GeminiWire(conversation_id, response_id, candidate_id)
    pieces = list(chunks)
    steps = [wire.prefix() + wire.placeholder()]
    sent = ""
    for index, piece in enumerate(pieces):
        sent += piece
        steps.append(wire.chunk(sent, final=index == len(pieces) - 1))
    if not pieces:
        steps.append(wire.chunk("", final=True))
    steps.append(wire.trailer())
    return steps


def gemini_body(chunks: Iterable[str], **options: Any) -> str:
    """The whole response body of :func:`gemini_frames`."""
    return "".join(gemini_frames(chunks, **options))
