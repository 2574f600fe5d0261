"""The fake ``gemini.google.com``: its pages, and its chunked ``StreamGenerate`` response.

As on the real site, the page POSTs a form with an ``f.req`` field (JSON inside JSON) and reads
a chunked response that starts with the anti-JSON-hijacking prefix ``)]}'`` and carries
length-prefixed frames (``<length>\\n<frame>\\n``, the length counted in UTF-16 code units as
JavaScript strings count). Each frame holds the *whole* answer so far, not a delta, as Gemini's
do. Earlier turns of ``/app/<id>`` come from the ``batchexecute`` RPC ``hNvQHb``, in a simplified
payload. The response header ``x-fake-question-id`` names the question's record for the page's
reports.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route, Router

from bridge.fakes.controller import QuestionRecord, SiteController
from bridge.fakes.pages import common_routes, page_response
from bridge.fakes.streaming import Live, chunks

__all__ = ["HISTORY_PATH", "STREAM_PATH", "frame", "gemini_app"]

STREAM_PATH = "/_/BardChatUi/data/assistant.lamda.BardFrontendService/StreamGenerate"
HISTORY_PATH = "/_/BardChatUi/data/batchexecute"
_PREFIX = ")]}'\n\n"
_ERROR_CODE = 13  # what the real stream carries for "Something went wrong"


def frame(payload: Any) -> str:
    """One length-prefixed frame of a Gemini response."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n"
    return f"{len(text.encode('utf-16-le')) // 2}\n{text}"


def _answer_frame(record: QuestionRecord, text: str) -> str:
    inner = [
        None,
        [f"c_{record.conversation_id}", f"r_{record.id}"],
        None,
        None,
        [[f"rc_{record.id}", [text]]],
    ]
    return frame([["wrb.fr", None, json.dumps(inner, ensure_ascii=False, separators=(",", ":"))]])


async def _answer_stream(
    record: QuestionRecord, controller: SiteController, live: Live
) -> AsyncIterator[str]:
    behaviour = record.behaviour
    interval = behaviour.chunk_interval_ms / 1000
    yield _PREFIX
    if behaviour.state == "error_turn":
        await live.pause(interval)
        yield frame([["wrb.fr", None, None, None, None, [_ERROR_CODE]]])
        return
    sent = ""
    for chunk in chunks(record.answer, behaviour.chunk_chars):
        if await live.pause(interval):
            return
        sent += chunk
        yield _answer_frame(record, sent)
        controller.answer_sent(record, sent)
        if behaviour.state == "stuck":
            await live.hold()
            return
    yield frame([["e", 4, None, None, len(sent)]])


def _form_field(body: bytes, name: str) -> str:
    values = parse_qs(body.decode("utf-8"), keep_blank_values=True).get(name)
    if not values:
        raise KeyError(name)
    return values[0]


def _parse_question(body: bytes) -> tuple[str, str | None]:
    """The question and conversation id from ``f.req=[null, "<inner json>"]``."""
    inner = json.loads(json.loads(_form_field(body, "f.req"))[1])
    text = str(inner[0][0])
    conversation = str(inner[2][0]) if len(inner) > 2 and inner[2] and inner[2][0] else ""
    return text, conversation.removeprefix("c_") or None


def gemini_app(controller: SiteController, live: Live) -> Router:
    """The ASGI app answering for ``gemini.google.com``."""

    async def page(request: Request) -> Response:
        return page_response("gemini", controller.behaviour)

    async def root(request: Request) -> Response:
        return RedirectResponse("/app", status_code=302)

    async def generate(request: Request) -> Response:
        try:
            text, conversation_id = _parse_question(await request.body())
        except (ValueError, KeyError, IndexError, TypeError):
            return JSONResponse({"error": "bad request"}, status_code=400)
        if controller.behaviour.state == "logged_out":
            return JSONResponse({"error": "unauthenticated"}, status_code=401)
        record = controller.open_question(text, conversation_id)
        # x-fake-state lets the page play the stuck state's hung UI (Stop does nothing).
        headers = {
            "x-fake-question-id": record.id,
            "x-fake-state": record.behaviour.state,
            "cache-control": "no-cache",
        }
        if record.behaviour.state == "rate_limited":
            return JSONResponse({"error": "RESOURCE_EXHAUSTED"}, status_code=429, headers=headers)
        if record.behaviour.state == "logged_out":
            return JSONResponse({"error": "unauthenticated"}, status_code=401, headers=headers)
        return StreamingResponse(
            _answer_stream(record, controller, live),
            media_type="application/json+protobuf; charset=utf-8",
            headers=headers,
        )

    async def history(request: Request) -> Response:
        """``hNvQHb``: the turns of a conversation, as ``[[question, answer|null], ...]``."""
        try:
            calls = json.loads(_form_field(await request.body(), "f.req"))
            conversation_id = str(json.loads(calls[0][0][1])[0]).removeprefix("c_")
        except (ValueError, KeyError, IndexError, TypeError):
            return JSONResponse({"error": "bad request"}, status_code=400)
        exchanges = controller.conversation(conversation_id)
        if exchanges is None:
            return JSONResponse({"error": "NOT_FOUND"}, status_code=404)
        turns = [[exchange.question, exchange.answer] for exchange in exchanges]
        payload = [["wrb.fr", "hNvQHb", json.dumps(turns, ensure_ascii=False)]]
        return Response(_PREFIX + frame(payload), media_type="application/json; charset=utf-8")

    routes: list[BaseRoute] = [
        Route("/", root, methods=["GET"]),
        Route("/app", page, methods=["GET"]),
        Route("/app/{conversation_id}", page, methods=["GET"]),
        Route(STREAM_PATH, generate, methods=["POST"]),
        Route(HISTORY_PATH, history, methods=["POST"]),
        *common_routes(controller),
    ]
    return Router(routes=routes)
