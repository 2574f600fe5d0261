"""The fake ``chatgpt.com``: its pages, its conversation API and its server-sent event stream.

The answer travels the way the real site sends it: the page POSTs the question to
``/backend-api/f/conversation`` (SITE-FACTS C7.1; the legacy ``/backend-api/conversation`` still
answers for now) and reads a ``text/event-stream`` response in ChatGPT's "v1" delta encoding,
encoded by :mod:`bridge.fakes.wire` as the evidence describes it (C7.3, C7.4, C3.7;
docs/sites.md#chatgpt-network), so drivers can read answers from the network as well as the
DOM. A usage limit is HTTP 429 with ``retry-after`` (C5.10). The response header
``x-fake-question-id`` names the question's record so the page can report what it showed; it
is the only fake-specific part of the exchange.
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
from bridge.fakes.wire import ChatGPTWire

__all__ = ["ERROR_TEXT", "RATE_LIMIT_TEXT", "RETRY_AFTER_S", "chatgpt_app"]

ERROR_TEXT = (
    "Something went wrong while generating the response. If this issue persists please "
    "contact us through our help center at help.openai.com."
)
RATE_LIMIT_TEXT = "You've reached our limit of messages per hour. Please try again later."
RETRY_AFTER_S = 60
"""What the fake's 429 says in ``retry-after`` (SITE-FACTS C5.10)."""


async def _answer_stream(
    record: QuestionRecord, controller: SiteController, live: Live, title: str | None
) -> AsyncIterator[str]:
    behaviour = record.behaviour
    interval = behaviour.chunk_interval_ms / 1000
    wire = ChatGPTWire(record.conversation_id, title=title)
    yield wire.preamble()
    if behaviour.state == "error_turn":
        yield wire.answer_start(record.id)
        await live.pause(interval)
        yield wire.error(ERROR_TEXT)
        return
    if behaviour.thinking_ms:
        yield wire.thoughts(str(uuid.uuid4()))
        started = time.monotonic()
        try:
            await live.pause(behaviour.thinking_ms / 1000, live.skip_event(record.id))
        finally:  # also when the page goes away mid-thought
            live.forget(record.id)
        seconds = max(1, round(time.monotonic() - started))
        yield wire.recap(str(uuid.uuid4()), seconds)
    yield wire.answer_start(record.id)
    sent = ""
    for chunk in chunks(record.answer, behaviour.chunk_chars):
        if await live.pause(interval):
            return
        yield wire.append(chunk)
        sent += chunk
        controller.answer_sent(record, sent)
        if behaviour.state == "stuck":
            await live.hold()
            return
    yield wire.finish()


def _title(question: str) -> str:
    """A chat title made of the question's first words (the real one is generated)."""
    words = question.split()
    return " ".join(words[:6]) or "New chat"


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
        # C7.2: a new chat's request has no conversation_id; new chats get a title (C7.4).
        title = None if body.get("conversation_id") else _title(text)
        record = controller.open_question(text, body.get("conversation_id"))
        headers = {"x-fake-question-id": record.id, "cache-control": "no-cache"}
        if record.behaviour.state == "rate_limited":
            # Plain HTTP 429 with retry-after, as the backend API limits (C5.10).
            detail = {"message": RATE_LIMIT_TEXT, "code": "rate_limit_exceeded"}
            headers["retry-after"] = str(RETRY_AFTER_S)
            return JSONResponse({"detail": detail}, status_code=429, headers=headers)
        if record.behaviour.state == "logged_out":
            return JSONResponse({"detail": "Unauthorized"}, status_code=401, headers=headers)
        return StreamingResponse(
            _answer_stream(record, controller, live, title),
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
        # The real send endpoint (C7.1); the legacy path still answers here until the page
        # has moved to the new one (the real site answers it 403).
        Route("/backend-api/f/conversation", ask, methods=["POST"]),
        Route("/backend-api/conversation", ask, methods=["POST"]),
        Route("/backend-api/conversation/skip_thinking", skip_thinking, methods=["POST"]),
        Route("/backend-api/conversation/{conversation_id}", conversation_history, methods=["GET"]),
        *common_routes(controller),
    ]
    return Router(routes=routes)
