"""The fake ``gemini.google.com``: its pages, and its chunked ``StreamGenerate`` response.

As on the real site, the page POSTs a form with an ``f.req`` field (JSON inside JSON) and reads
a chunked response encoded by :mod:`bridge.fakes.wire` as the evidence describes it
(SITE-FACTS G7.2, G3.5, G5.5; docs/sites.md#gemini-network): the anti-JSON-hijacking prefix
``)]}'``, then length-prefixed frames (``<n>\\n<json>\\n``, n counting the UTF-16 code units
after the digits, both newlines included), each ``wrb.fr`` chunk holding the *whole* answer so
far, an empty placeholder first and the last one marked finished. Errors, the usage limit among
them, are wire error codes inside an HTTP 200 stream (G5.5), not HTTP statuses. Earlier turns
of ``/app/<id>`` come from the ``batchexecute`` RPC ``hNvQHb``, in a simplified payload, and
the recent chats the page links to from ``MaZiqc`` (G7.4), in a payload of the fake's own. The
response header ``x-fake-question-id`` names the question's record for the page's reports.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route, Router

from bridge.fakes.behaviour import DEEP_THINK_PLACEHOLDER
from bridge.fakes.controller import QuestionRecord, SiteController
from bridge.fakes.images import png
from bridge.fakes.pages import common_routes, not_found_response, page_response
from bridge.fakes.research import (
    RESEARCH_DONE_NOTICE,
    RESEARCH_HEADER,
    plain_report,
    plan_text,
    start_research,
    wait_research,
)
from bridge.fakes.streaming import Live, chunks
from bridge.fakes.wire import GEMINI_PREFIX, GeminiWire, frame

__all__ = [
    "DEEP_THINK_HEADER",
    "ERROR_CODE",
    "HISTORY_PATH",
    "RATE_LIMIT_CODE",
    "STREAM_PATH",
    "frame",
    "gemini_app",
]

STREAM_PATH = "/_/BardChatUi/data/assistant.lamda.BardFrontendService/StreamGenerate"
HISTORY_PATH = "/_/BardChatUi/data/batchexecute"
# Wire error codes (SITE-FACTS G5.5): "Something went wrong" is a temporary error, and the
# usage limit is 1037, both inside an HTTP 200 stream as the real StreamGenerate sends them.
ERROR_CODE = 1013
RATE_LIMIT_CODE = 1037


LH3_HOST = "lh3.googleusercontent.com"


def image_token(record_id: str) -> str:
    """The ``rd-gg-dl`` token of a question's generated image (the fake's own: opaque)."""
    return "AIgg" + hashlib.sha1(f"{record_id}/image".encode()).hexdigest()


def generated_images(record: QuestionRecord) -> tuple[tuple[str, str, str], ...]:
    """(url, alt, id) of the answer's generated image as the wire lists it (G12.6): the
    preview at ``lh3.googleusercontent.com/rd-gg-dl/<token>=s1024-rj`` (G12.4)."""
    token = image_token(record.id)
    url = f"https://{LH3_HOST}/rd-gg-dl/{token}=s1024-rj"
    return (
        (
            url,
            f"{record.text[:40]}, AI generated",
            "http://googleusercontent.com/image_generation_content/0",
        ),
    )


def original_image(token: str) -> bytes:
    """The full-size original (``=s0-d``, G12.4/G12.5): bigger than the preview."""
    return png(f"{token}/original", 32)


def lh3_app() -> Router:
    """The ASGI app answering for ``lh3.googleusercontent.com``: generated images by token,
    the preview for ``=s1024-rj`` (and other sizes), the original for ``=s0`` / ``=s0-d``
    (G12.4). Readable from the Gemini page (CORS for its origin, with credentials), as the
    page itself fetches the preview (G12.4, 2026-09); the headers are the fake's own."""

    async def image(request: Request) -> Response:
        token, _, size = request.path_params["rest"].partition("=")
        if not token.startswith("AIgg"):
            return Response(status_code=404)
        original = size.split("?")[0] in ("s0", "s0-d")
        data = original_image(token) if original else png(token, 16)
        headers = {
            "access-control-allow-origin": "https://gemini.google.com",
            "access-control-allow-credentials": "true",
            "vary": "Origin",
            "cache-control": "private",
        }
        return Response(data, media_type="image/png", headers=headers)

    return Router(routes=[Route("/rd-gg-dl/{rest:path}", image, methods=["GET"])])


def _wire(record: QuestionRecord) -> GeminiWire:
    return GeminiWire(f"c_{record.conversation_id}", f"r_{record.id}", f"rc_{record.id}")


async def _answer_stream(
    record: QuestionRecord, controller: SiteController, live: Live, stopped: asyncio.Event
) -> AsyncIterator[str]:
    behaviour = record.behaviour
    # The site's clock: durations are site time.
    interval = behaviour.chunk_pause_ms(len(record.answer)) * record.time_scale / 1000
    wire = _wire(record)
    yield wire.prefix()
    if behaviour.state == "rollback":  # refused: the page takes the question back (G14.2)
        yield wire.trailer()
        return
    if behaviour.state in ("error_turn", "rate_limited"):
        await live.pause(interval, stopped)
        yield wire.error(ERROR_CODE if behaviour.state == "error_turn" else RATE_LIMIT_CODE)
        yield wire.trailer()
        return
    yield wire.placeholder()
    if record.deep_think:
        # Deep Think's placeholder reply first (G10.2), as a whole text the page shows as if
        # finished; the answer replaces it later. In one stream: the fake's own choice (how
        # the real site delivers the answer after the placeholder is undocumented).
        if await live.pause(interval, stopped):
            return
        yield wire.chunk(DEEP_THINK_PLACEHOLDER, final=False)
        pause = behaviour.deep_think_placeholder_ms * record.time_scale / 1000
        if await live.pause(pause, stopped):
            return
    pieces = list(chunks(record.answer, behaviour.chunk_chars)) or [""]
    sent = ""
    for index, piece in enumerate(pieces):
        # Each chunk at the record's clock now: a test may hurry the rest (controller.hurry).
        interval = behaviour.chunk_pause_ms(len(record.answer)) * controller.clock(record) / 1000
        if await live.pause(interval, stopped):
            return
        sent += piece
        # A stuck answer hangs after its first chunk: it never says it is finished.
        last = index == len(pieces) - 1 and behaviour.state != "stuck"
        images = generated_images(record) if last and behaviour.image else ()
        yield wire.chunk(sent, final=last, images=images)
        controller.answer_sent(record, sent)
        if behaviour.state == "stuck":
            await stopped.wait()
            return
    yield wire.trailer()


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


def _place(body: bytes) -> tuple[str, bool]:
    """The Gem id at inner index 19 (G9.2) and the temporary flag, inner index 45 = 1
    (G13.2)."""
    inner = json.loads(json.loads(_form_field(body, "f.req"))[1])
    gem = inner[19] if len(inner) > 19 and isinstance(inner[19], str) else ""
    return gem, len(inner) > 45 and inner[45] == 1


def _question_files(body: bytes) -> list[str]:
    """The uploaded files' ids: ``inner[0][3]`` is ``[[[id, 1], name], …]`` as HYG's client
    sends them (the ids here are the fake upload endpoint's, not content-push's, G7.5)."""
    inner = json.loads(json.loads(_form_field(body, "f.req"))[1])
    files = inner[0][3] if len(inner[0]) > 3 else None
    if not isinstance(files, list):
        return []
    return [str(f[0][0]) for f in files if isinstance(f, list) and f and isinstance(f[0], list)]


MODEL_HEADER = "x-goog-ext-525001261-jspb"
"""The model header of the send (G7.1); the real one carries an opaque id (G7.6), the
fake page's ``[1, null, null, null, "fake-<mode>"]``."""


DEEP_THINK_HEADER = "x-fake-deep-think"
"""The fake page's own marker of a send with Deep Think on ("1"). No source documents how
the real StreamGenerate request carries Deep Think (SITE-FACTS gaps), so this is not a site
fact: it only lets the fake server record what the page sent (docs/sites.md#effort)."""


def _header_mode(value: str) -> str:
    """The mode the fake page's model header names ("" when it names none)."""
    try:
        data = json.loads(value)
    except ValueError:
        return ""
    last = data[-1] if isinstance(data, list) and data else None
    return last.removeprefix("fake-") if isinstance(last, str) else ""


def gemini_app(controller: SiteController, live: Live) -> Router:
    """The ASGI app answering for ``gemini.google.com``."""
    research_tasks: set[asyncio.Future[None]] = set()

    async def page(request: Request) -> Response:
        return page_response("gemini", controller.behaviour)

    async def gem_page(request: Request) -> Response:
        """A Gem's page /gem/<id> and its chats /gem/<id>/<chat id> (G9.1), showing the
        normal composer (G9.3), for a Gem the account has; 404 otherwise (the fake's own)."""
        if not controller.has_place(request.path_params["gem"]):
            return not_found_response()
        return page_response("gemini", controller.behaviour)

    async def root(request: Request) -> Response:
        return RedirectResponse("/app", status_code=302)

    async def generate(request: Request) -> Response:
        try:
            body = await request.body()
            text, conversation_id = _parse_question(body)
            files = _question_files(body)
            gem, temporary = _place(body)
        except (ValueError, KeyError, IndexError, TypeError):
            return JSONResponse({"error": "bad request"}, status_code=400)
        if controller.behaviour.state == "logged_out":
            return JSONResponse({"error": "unauthenticated"}, status_code=401)
        parts = urlsplit(request.headers.get("referer", ""))
        record = controller.open_question(
            text,
            conversation_id,
            files,
            _header_mode(request.headers.get(MODEL_HEADER, "")),
            place=gem,
            temporary=temporary,
            page=parts.path + (f"?{parts.query}" if parts.query else ""),
            deep_think=request.headers.get(DEEP_THINK_HEADER) == "1",
        )
        if request.headers.get(RESEARCH_HEADER) == "1" and record.answer:
            # Deep Research on: the reply is the plan with its "Start research" (G11.3).
            record = (
                controller.update_record(record.id, research="plan", answer=plan_text(text))
                or record
            )
        # x-fake-state lets the page play the stuck state's hung UI (Stop does nothing) and
        # the rollback state's taking back of the question.
        headers = {
            "x-fake-question-id": record.id,
            "x-fake-state": record.behaviour.state,
            "cache-control": "no-cache",
        }
        if record.research:
            headers["x-fake-research"] = record.research
        if record.behaviour.state == "logged_out":
            return JSONResponse({"error": "unauthenticated"}, status_code=401, headers=headers)
        return StreamingResponse(
            live.run(
                controller,
                record,
                lambda stopped: _answer_stream(record, controller, live, stopped),
            ),
            media_type="application/json+protobuf; charset=utf-8",
            headers=headers,
        )

    async def research_start(request: Request) -> Response:
        """The confirmation widget's "Start research" (G11.3). The real start goes over the
        chat (HYG sends the confirm prompt); this endpoint is the fake's own."""
        try:
            question_id = str(json.loads(await request.body())["question_id"])
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "bad request"}, status_code=400)
        started = start_research(controller, live, research_tasks, question_id, "button")
        if started is None:
            return JSONResponse({"error": "no research plan"}, status_code=404)
        return JSONResponse({"started": started})

    async def research_report(request: Request) -> Response:
        """The page's wait for the report (fake-only; the real one polls ``kwDCne``, G11.4):
        ``{done, markdown, sources}`` once done, ``{"done": false}`` after ``timeout_ms``."""
        question_id = request.path_params["question_id"]
        try:
            timeout = int(request.query_params.get("timeout_ms", "30000")) / 1000
        except ValueError:
            return JSONResponse({"error": "bad request"}, status_code=400)
        if not await wait_research(controller, question_id, timeout):
            return JSONResponse({"done": False})
        record = controller.record(question_id)
        assert record is not None
        markdown, sources = plain_report(record.text)
        return JSONResponse({"done": True, "markdown": markdown, "sources": sources})

    async def chats(request: Request) -> Response:
        """``MaZiqc`` (G7.4): the recent chats, newest first, as ``[[id, title], ...]`` (the
        real payload is undocumented; this one is the fake's own)."""
        listed = [[f"c_{cid}", title] for cid, title in controller.conversation_list()]
        payload = [["wrb.fr", "MaZiqc", json.dumps(listed, ensure_ascii=False)]]
        return Response(
            GEMINI_PREFIX + frame(payload), media_type="application/json; charset=utf-8"
        )

    async def history(request: Request) -> Response:
        """``hNvQHb``: the turns of a conversation, as ``[[question, answer|null], ...]``."""
        if request.query_params.get("rpcids") == "MaZiqc":
            return await chats(request)
        try:
            calls = json.loads(_form_field(await request.body(), "f.req"))
            conversation_id = str(json.loads(calls[0][0][1])[0]).removeprefix("c_")
        except (ValueError, KeyError, IndexError, TypeError):
            return JSONResponse({"error": "bad request"}, status_code=400)
        exchanges = controller.conversation(conversation_id)
        if exchanges is None:
            return JSONResponse({"error": "NOT_FOUND"}, status_code=404)
        # An answer still being written carries a third element, false: the page shows it
        # without its finished footer (how the real site shows one is not documented).
        turns: list[list[object]] = [
            [e.question, e.answer] if e.finished else [e.question, e.answer, False]
            for e in exchanges
        ]
        # A finished research's turn carries, fourth, the messages after its plan: a reopened
        # chat shows plan, completion notice and report as message-contents (G11.6), no panel.
        for turn, exchange in zip(turns, exchanges, strict=True):
            report = _reopened_research(controller, conversation_id, exchange.question)
            if report is not None and len(turn) == 2:
                turn.extend([True, [RESEARCH_DONE_NOTICE, report]])
        payload = [["wrb.fr", "hNvQHb", json.dumps(turns, ensure_ascii=False)]]
        return Response(
            GEMINI_PREFIX + frame(payload), media_type="application/json; charset=utf-8"
        )

    routes: list[BaseRoute] = [
        Route("/", root, methods=["GET"]),
        Route("/app", page, methods=["GET"]),
        Route("/app/{conversation_id}", page, methods=["GET"]),
        Route("/gem/{gem}", gem_page, methods=["GET"]),
        Route("/gem/{gem}/{conversation_id}", gem_page, methods=["GET"]),
        Route(STREAM_PATH, generate, methods=["POST"]),
        Route("/__fake/research/start", research_start, methods=["POST"]),
        Route("/__fake/research/{question_id}", research_report, methods=["GET"]),
        Route(HISTORY_PATH, history, methods=["POST"]),
        *common_routes(controller, live),
    ]
    return Router(routes=routes)


def _reopened_research(
    controller: SiteController, conversation_id: str, question: str
) -> str | None:
    """The report of the finished research ``question`` started in the conversation, or None
    (no research, or one not finished yet: a reopened chat then shows only its plan, which
    is the fake's own choice; G11.6 says nothing of it)."""
    now = time.time()
    for record in reversed(controller.records):
        if record.conversation_id == conversation_id and record.text == question:
            done = record.research_done_at
            if record.research == "plan" and done is not None and done <= now:
                return plain_report(record.text)[0]
            return None
    return None
