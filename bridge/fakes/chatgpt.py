"""The fake ``chatgpt.com``: its pages, its conversation API and its server-sent event stream.

The answer travels the way the real site sends it: the page POSTs the question to
``/backend-api/conversation`` and reads a ``text/event-stream`` response in ChatGPT's "v1" delta
encoding (a message is added, then its text is appended to chunk by chunk, then its status is
patched to finished), so a later driver can read answers from the network as well as the DOM.
The response header ``x-fake-question-id`` names the question's record so the page can report
what it showed; it is the only fake-specific part of the exchange.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route, Router

from bridge.fakes.controller import QuestionRecord, SiteController
from bridge.fakes.pages import common_routes, page_response
from bridge.fakes.streaming import Live, chunks

__all__ = ["ERROR_TEXT", "RATE_LIMIT_TEXT", "chatgpt_app"]

ERROR_TEXT = (
    "Something went wrong while generating the response. If this issue persists please "
    "contact us through our help center at help.openai.com."
)
RATE_LIMIT_TEXT = "You've reached our limit of messages per hour. Please try again later."
_MODEL = "gpt-5-thinking"
_TEXT_PATH = "/message/content/parts/0"


def _sse(data: Any, event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"{head}data: {payload}\n\n"


def _message(
    message_id: str, content: dict[str, Any], metadata: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "id": message_id,
        "author": {"role": "assistant", "name": None, "metadata": {}},
        "create_time": time.time(),
        "content": content,
        "status": "in_progress",
        "end_turn": None,
        "metadata": {"model_slug": _MODEL, **(metadata or {})},
        "recipient": "all",
    }


def _add(message: dict[str, Any], conversation_id: str) -> str:
    delta = {"p": "", "o": "add", "v": {"message": message, "conversation_id": conversation_id}}
    return _sse(delta, "delta")


def _finish(status: str = "finished_successfully") -> str:
    patch = [
        {"p": "/message/status", "o": "replace", "v": status},
        {"p": "/message/end_turn", "o": "replace", "v": True},
    ]
    return _sse({"p": "", "o": "patch", "v": patch}, "delta")


async def _answer_stream(
    record: QuestionRecord, controller: SiteController, live: Live
) -> AsyncIterator[str]:
    behaviour = record.behaviour
    conversation_id = record.conversation_id
    interval = behaviour.chunk_interval_ms / 1000
    yield _sse('"v1"', "delta_encoding")
    if behaviour.state == "error_turn":
        yield _add(_message(record.id, {"content_type": "text", "parts": [""]}), conversation_id)
        await live.pause(interval)
        yield _sse({"error": ERROR_TEXT, "conversation_id": conversation_id})
        yield _sse("[DONE]")
        return
    if behaviour.thinking_ms:
        thoughts_id = str(uuid.uuid4())
        thinking = {"reasoning_status": "is_reasoning"}
        yield _add(_message(thoughts_id, {"content_type": "thoughts"}, thinking), conversation_id)
        started = time.monotonic()
        try:
            await live.pause(behaviour.thinking_ms / 1000, live.skip_event(record.id))
        finally:  # also when the page goes away mid-thought
            live.forget(record.id)
        seconds = max(1, round(time.monotonic() - started))
        recap = {"content_type": "reasoning_recap", "content": f"Thought for {seconds}s"}
        ended = {"reasoning_status": "reasoning_ended", "finished_duration_sec": seconds}
        yield _add(_message(str(uuid.uuid4()), recap, ended), conversation_id)
    yield _add(_message(record.id, {"content_type": "text", "parts": [""]}), conversation_id)
    sent = ""
    for chunk in chunks(record.answer, behaviour.chunk_chars):
        if await live.pause(interval):
            return
        # After the first append the real stream abbreviates: no path or op means "same again".
        yield _sse({"v": chunk} if sent else {"p": _TEXT_PATH, "o": "append", "v": chunk}, "delta")
        sent += chunk
        controller.answer_sent(record, sent)
        if behaviour.state == "stuck":
            await live.hold()
            return
    yield _finish()
    yield _sse({"type": "message_stream_complete", "conversation_id": conversation_id})
    yield _sse("[DONE]")


def _question_text(body: dict[str, Any]) -> str:
    message = body["messages"][-1]
    return "\n".join(str(part) for part in message["content"]["parts"])


def chatgpt_app(controller: SiteController, live: Live) -> Router:
    """The ASGI app answering for ``chatgpt.com``."""

    async def page(request: Request) -> Response:
        return page_response("chatgpt", controller.behaviour)

    async def conversation_history(request: Request) -> Response:
        conversation_id = request.path_params["conversation_id"]
        exchanges = controller.conversation(conversation_id)
        if exchanges is None:
            return JSONResponse({"detail": "Unable to load conversation"}, status_code=404)
        messages = []
        for index, exchange in enumerate(exchanges):
            messages.append({"id": f"u{index}", "role": "user", "text": exchange.question})
            if exchange.answer is not None:
                messages.append({"id": f"a{index}", "role": "assistant", "text": exchange.answer})
        return JSONResponse({"conversation_id": conversation_id, "messages": messages})

    async def ask(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
            text = _question_text(body)
        except (ValueError, KeyError, IndexError, TypeError):
            return JSONResponse({"detail": "bad request"}, status_code=400)
        if controller.behaviour.state == "logged_out":
            return JSONResponse({"detail": "Unauthorized"}, status_code=401)
        record = controller.open_question(text, body.get("conversation_id"))
        headers = {"x-fake-question-id": record.id, "cache-control": "no-cache"}
        if record.behaviour.state == "rate_limited":
            detail = {"message": RATE_LIMIT_TEXT, "code": "rate_limit_exceeded"}
            return JSONResponse({"detail": detail}, status_code=429, headers=headers)
        if record.behaviour.state == "logged_out":
            return JSONResponse({"detail": "Unauthorized"}, status_code=401, headers=headers)
        return StreamingResponse(
            _answer_stream(record, controller, live),
            media_type="text/event-stream; charset=utf-8",
            headers=headers,
        )

    async def skip_thinking(request: Request) -> Response:
        """ "Skip thinking": the real endpoint is not public; this one ends the thinking pause."""
        try:
            question_id = str(json.loads(await request.body())["message_id"])
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"detail": "bad request"}, status_code=400)
        return JSONResponse({"skipped": live.skip(question_id)})

    routes: list[BaseRoute] = [
        Route("/", page, methods=["GET"]),
        Route("/c/{conversation_id}", page, methods=["GET"]),
        Route("/backend-api/conversation", ask, methods=["POST"]),
        Route("/backend-api/conversation/skip_thinking", skip_thinking, methods=["POST"]),
        Route("/backend-api/conversation/{conversation_id}", conversation_history, methods=["GET"]),
        *common_routes(controller),
    ]
    return Router(routes=routes)
