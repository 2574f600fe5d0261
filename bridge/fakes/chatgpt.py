"""The fake ``chatgpt.com``: its pages, its conversation API and its server-sent event stream.

The answer travels the way the real site sends it: the page POSTs the question to
``/backend-api/f/conversation`` (SITE-FACTS C7.1; the legacy ``/backend-api/conversation`` still
answers for now) and reads a ``text/event-stream`` response in ChatGPT's "v1" delta encoding,
encoded by :mod:`bridge.fakes.wire` as the evidence describes it (C7.3, C7.4, C3.7;
docs/sites.md#chatgpt-network), so drivers can read answers from the network as well as the
DOM. A usage limit is HTTP 429 with ``retry-after`` (C5.10). A conversation page loads its
turns with ``GET /backend-api/conversation/<id>`` → ``{mapping, current_node}`` (C7.8) and
its sidebar with ``GET /backend-api/conversations?offset=&limit=`` (C7.9). The response header
``x-fake-question-id`` names the question's record so the page can report what it showed; it
is the only fake-specific part of the exchange.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import mimetypes
import re
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route, Router

from bridge.fakes.controller import Exchange, QuestionRecord, SiteController
from bridge.fakes.images import png
from bridge.fakes.pages import common_routes, not_found_response, page_response
from bridge.fakes.research import CLARIFY_TEXT, asks_research, plan_text, widget_message
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


def _wire(record: QuestionRecord, title: str | None) -> ChatGPTWire:
    """The stream's writer; its messages name the model that answers (``model_slug``, C7.5):
    the mode the page asked in, or the wire's default for ``auto`` (the site routes it)."""
    if record.mode and record.mode != "auto":
        return ChatGPTWire(record.conversation_id, title=title, model=record.mode)
    return ChatGPTWire(record.conversation_id, title=title)


async def _answer_stream(
    record: QuestionRecord,
    controller: SiteController,
    live: Live,
    title: str | None,
    stopped: asyncio.Event,
    outputs: Outputs | None = None,
) -> AsyncIterator[str]:
    behaviour = record.behaviour
    scale = record.time_scale  # the site's clock: durations are site time
    interval = behaviour.chunk_pause_ms(len(record.answer)) * scale / 1000
    wire = _wire(record, title)
    yield wire.preamble()
    if behaviour.image and behaviour.state == "ok":
        yield wire.add(_image_tool_message(wire, record))
    if behaviour.state == "error_turn":
        yield wire.answer_start(record.id)
        await live.pause(interval, stopped)
        yield wire.error(ERROR_TEXT)
        return
    if behaviour.thinking_ms:
        yield wire.thoughts(str(uuid.uuid4()))
        started = time.monotonic()
        try:
            await live.pause(behaviour.thinking_ms * scale / 1000, live.skip_event(record.id))
        finally:  # also when the server shuts down mid-thought
            live.forget(record.id)
        seconds = max(1, round((time.monotonic() - started) / scale))
        yield wire.recap(str(uuid.uuid4()), seconds)
    yield wire.answer_start(record.id)
    sent = ""
    for chunk in chunks(record.answer, behaviour.chunk_chars):
        # Each chunk at the record's clock now: a test may hurry the rest (controller.hurry).
        interval = behaviour.chunk_pause_ms(len(record.answer)) * controller.clock(record) / 1000
        if await live.pause(interval, stopped):
            return
        yield wire.append(chunk)
        sent += chunk
        controller.answer_sent(record, sent)
        if behaviour.state == "stuck":
            await stopped.wait()
            return
    if outputs is not None and behaviour.image:
        # C10.2/C10.3: the image arrives after the stream; the skeleton outlives the stop button.
        outputs.image_pending(record, time.monotonic() + behaviour.image_ms * scale / 1000)
    yield wire.finish()


def _image_tool_message(wire: ChatGPTWire, record: QuestionRecord) -> dict[str, Any]:
    """The tool message that says an image is being made (C10.3): text "Processing image",
    ``metadata.image_gen_async`` and ``async_task_id``."""
    message = wire.message(
        str(uuid.uuid5(uuid.NAMESPACE_URL, f"{record.id}/image-tool")),
        {"content_type": "text", "parts": ["Processing image"]},
        {
            "image_gen_async": True,
            "async_task_id": f"task_{record.id.replace('-', '')[:24]}",
            "image_gen_title": _title(record.text),
            "trigger_async_ux": True,
        },
    )
    message["author"] = {"role": "tool", "name": "t2uay3k.sj1i4kz", "metadata": {}}
    return message


class Outputs:
    """What the fake ChatGPT generated beside its answers (docs/sites.md#outputs): images
    (C10) and code-interpreter files (C11), and the signed estuary content serving both.

    The estuary serves a file only with the page's session cookie and the right ``sig``
    (U80: estuary URLs need authentication even with ``sig``): 403 otherwise."""

    def __init__(self) -> None:
        self._images: dict[str, tuple[str, float]] = {}  # record id -> (file id, ready at)
        self._content: dict[str, tuple[bytes, str, str, bool]] = {}  # id -> data, mime, sig, ok

    @staticmethod
    def image_id(record: QuestionRecord) -> str:
        return "file_" + hashlib.sha1(f"{record.id}/image".encode()).hexdigest()[:32]

    def image_pending(self, record: QuestionRecord, ready_at: float) -> None:
        file_id = self.image_id(record)
        refused = record.behaviour.download != "ok"
        self._images[record.id] = (file_id, ready_at)
        self.serve(file_id, png(record.id), "image/png", refused=refused)

    def image_of(self, record_id: str) -> tuple[str, float] | None:
        return self._images.get(record_id)

    def serve(self, file_id: str, data: bytes, mime: str, *, refused: bool = False) -> str:
        """Keep ``data`` at the estuary under ``file_id``; its signed URL."""
        sig = hashlib.sha256(f"{file_id}/sig".encode()).hexdigest()[:24]
        self._content[file_id] = (data, mime, sig, not refused)
        return f"https://chatgpt.com/backend-api/estuary/content?id={file_id}&sig={sig}"

    def described(self, file_id: str) -> dict[str, Any] | None:
        """The files API's answer for ``file_id`` (C10.6): its signed URL, name, size, type."""
        found = self._content.get(file_id)
        if found is None:
            return None
        data, mime, sig, _ = found
        return {
            "status": "success",
            "download_url": f"https://chatgpt.com/backend-api/estuary/content?id={file_id}&sig={sig}",
            "file_name": f"{file_id}.png" if mime == "image/png" else file_id,
            "file_size_bytes": len(data),
            "mime_type": mime,
        }

    def content(self, file_id: str, sig: str) -> tuple[bytes, str] | None:
        found = self._content.get(file_id)
        if found is None or found[2] != sig or not found[3]:
            return None
        return found[0], found[1]


#: The fake's session cookie, set with the page: its name is the fake's own (the real
#: site's cookies are not documented here), and only the estuary checks it.
SESSION_COOKIE = "fake-session"


def _image_message(record: QuestionRecord, file_id: str, data: bytes) -> dict[str, Any]:
    """The finished image as the conversation read carries it (C10.4): a
    ``multimodal_text`` message with one ``image_asset_pointer`` part."""
    part = {
        "content_type": "image_asset_pointer",
        "asset_pointer": f"sediment://{file_id}",
        "width": 16,
        "height": 16,
        "size_bytes": len(data),
        "fovea": 16,
        "metadata": {
            "dalle": {
                "gen_id": file_id[5:21],
                "prompt": record.text,
                "seed": None,
                "serialization_title": "DALL-E generation metadata",
            }
        },
    }
    return {
        "author": {"role": "assistant"},
        "content": {"content_type": "multimodal_text", "parts": [part]},
        "recipient": "all",
        "status": "finished_successfully",
        "channel": "final",
        "end_turn": True,
    }


async def _replay(record: QuestionRecord, text: str) -> AsyncIterator[str]:
    """A finished answer as one whole stream: a resume that came just after it ended."""
    wire = _wire(record, None)
    yield wire.preamble()
    yield wire.answer_start(record.id)
    if text:
        yield wire.append(text)
    yield wire.finish()


def _title(question: str) -> str:
    """A chat title made of the question's first words (the real one is generated)."""
    words = question.split()
    return " ".join(words[:6]) or "New chat"


def _conversation_read(
    conversation_id: str,
    exchanges: Sequence[Exchange],
    images: dict[int, dict[str, Any]] | None = None,
    widgets: dict[int, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The conversation as ``GET /backend-api/conversation/<id>`` returns it (SITE-FACTS
    C7.8, CEX): ``{mapping, current_node}``, a tree of nodes ``{id, message, parent,
    children}`` walked from ``current_node`` up through ``parent``. The root holds no
    message, a hidden system message comes first, then each question and answer as C7.5
    messages (``author.role``, ``content {content_type: "text", parts}``, ``status``,
    ``recipient``, ``channel``). Message ids are stable per conversation, as the site's
    are. The root node's shape beyond ``message: null`` and the other top-level fields are
    the fake's own. ``widgets`` (by exchange index) are Deep Research's tool messages (C9.9),
    placed after their exchange's answer (the plan)."""

    def node_id(name: str) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{conversation_id}/{name}"))

    mapping: dict[str, dict[str, Any]] = {}

    def add(name: str, message: dict[str, Any] | None, parent: str | None) -> str:
        key = node_id(name)
        if message is not None:
            message["id"] = key
        mapping[key] = {"id": key, "message": message, "parent": parent, "children": []}
        if parent is not None:
            mapping[parent]["children"].append(key)
        return key

    def message(role: str, text: str, **more: Any) -> dict[str, Any]:
        return {
            "author": {"role": role},
            "content": {"content_type": "text", "parts": [text]},
            "recipient": "all",
            **more,
        }

    current = add("root", None, None)
    hidden = {"is_visually_hidden_from_conversation": True}
    current = add("system", message("system", "", metadata=hidden), current)
    for index, exchange in enumerate(exchanges):
        asked = message("user", exchange.question, status="finished_successfully")
        current = add(f"u{index}", asked, current)
        if exchange.answer is not None or not exchange.finished:
            # C7.5's status: an answer still being written is "in_progress", and the page
            # follows it (resume below) instead of showing it as final.
            status = "finished_successfully" if exchange.finished else "in_progress"
            answer = message(
                "assistant",
                exchange.answer or "",
                status=status,
                channel="final",
                end_turn=exchange.finished,
            )
            current = add(f"a{index}", answer, current)
        if images and index in images:
            current = add(f"i{index}", images[index], current)
        if widgets and index in widgets:
            current = add(f"w{index}", widgets[index], current)
    return {"conversation_id": conversation_id, "mapping": mapping, "current_node": current}


def _question_text(body: dict[str, Any]) -> str:
    message = body["messages"][-1]
    return "\n".join(str(part) for part in message["content"]["parts"])


def _question_files(body: dict[str, Any]) -> list[str]:
    """The uploaded files' ids in the message's ``metadata.attachments`` (the fake's own shape:
    the real request's is not documented)."""
    metadata = body["messages"][-1].get("metadata")
    attachments = metadata.get("attachments") if isinstance(metadata, dict) else None
    if not isinstance(attachments, list):
        return []
    return [str(a["id"]) for a in attachments if isinstance(a, dict) and "id" in a]


# C12.1: a project's id is g-p-<32 hex>, a GPT's g-<alnum>; a slug may follow after "-".
_GIZMO = re.compile(r"^(g-p-[0-9a-f]{32}|g-(?!p-)[A-Za-z0-9]+)(?:-[A-Za-z0-9-]*)?$")


def _referer_path(request: Request) -> str:
    """The path and query of the page that sent ``request`` (its Referer; "" without one)."""
    parts = urlsplit(request.headers.get("referer", ""))
    return parts.path + (f"?{parts.query}" if parts.query else "")


def chatgpt_app(controller: SiteController, live: Live) -> Router:
    """The ASGI app answering for ``chatgpt.com``."""
    outputs = Outputs()
    research_tasks: set[asyncio.Future[None]] = set()

    async def page(request: Request) -> Response:
        behaviour = controller.behaviour
        if not behaviour.temporary_chat and request.query_params.get("temporary-chat"):
            # An account without temporary chats lands on / (the fake's own: undocumented).
            return RedirectResponse("/", status_code=302)
        response = page_response("chatgpt", behaviour)
        response.set_cookie(SESSION_COOKIE, "signed-in", secure=True, httponly=True)
        return response

    def signed_in(request: Request) -> bool:
        return request.cookies.get(SESSION_COOKIE) == "signed-in"

    async def estuary(request: Request) -> Response:
        """Generated images and files (C10.5, C11.3): only with the session cookie and the
        right ``sig`` (U80); 403 otherwise."""
        found = outputs.content(
            request.query_params.get("id", ""), request.query_params.get("sig", "")
        )
        if found is None or not signed_in(request):
            return JSONResponse({"detail": "Forbidden"}, status_code=403)
        data, mime = found
        return Response(data, media_type=mime, headers={"cache-control": "private"})

    async def file_download(request: Request) -> Response:
        """The files API's download (C10.6, CEX's 2026-02 path): the signed estuary URL."""
        if not signed_in(request):
            return JSONResponse({"detail": "Unauthorized"}, status_code=401)
        described = outputs.described(request.path_params["file_id"])
        if described is None:
            return JSONResponse(
                {"status": "error", "error_code": "not_found", "error_message": "Not found"},
                status_code=404,
            )
        return JSONResponse(described)

    async def interpreter_download(request: Request) -> Response:
        """A generated file's download (C11.3): ``message_id`` names the assistant message
        with the ``sandbox:`` link, ``sandbox_path`` the file; the reply's ``download_url``
        is the signed estuary URL. Refusals: see ``Behaviour.download``."""
        if not signed_in(request):
            return JSONResponse({"detail": "Unauthorized"}, status_code=401)
        message_id = request.query_params.get("message_id", "")
        path = request.query_params.get("sandbox_path", "")
        record = next(
            (r for r in controller.records if r.id == message_id),
            None,
        )
        name = path.removeprefix("/mnt/data/")
        known = record is not None and name in record.behaviour.files
        if record is None or not known or not path.startswith("/mnt/data/"):
            return JSONResponse({"detail": "File not found"}, status_code=404)
        if record.behaviour.download == "refused":
            return JSONResponse(
                {
                    "status": "error",
                    "error_code": "file_expired",
                    "error_message": "The file has expired and is no longer available.",
                }
            )
        file_id = "file_" + hashlib.sha1(f"{record.id}/{name}".encode()).hexdigest()[:32]
        mime = mimetypes.guess_type(name)[0] or "application/octet-stream"
        data = f"name,value\n{name},{len(name)}\n".encode()
        url = outputs.serve(file_id, data, mime, refused=record.behaviour.download == "forbidden")
        return JSONResponse(
            {"status": "success", "download_url": url, "file_name": name, "mime_type": mime}
        )

    async def gizmo_page(request: Request) -> Response:
        """A project's or GPT's pages (C12.1: /g/g-p-<32 hex>-<slug>/project, /g/g-<id>-<slug>,
        and their chats …/c/<uuid>): the app page for one the account has, else 404."""
        match = _GIZMO.match(request.path_params["gizmo"])
        if not match or not controller.has_place(match.group(1)):
            return not_found_response()
        return page_response("chatgpt", controller.behaviour)

    async def conversation_history(request: Request) -> Response:
        conversation_id = request.path_params["conversation_id"]
        exchanges = controller.conversation(conversation_id)
        if exchanges is None:
            return JSONResponse({"detail": "Unable to load conversation"}, status_code=404)
        images: dict[int, dict[str, Any]] = {}
        for record in controller.records:
            if record.conversation_id != conversation_id:
                continue
            image = outputs.image_of(record.id)
            index = controller.exchange_index(record.id)
            if image is None or index is None:
                continue
            file_id, ready_at = image
            # The image is made after the stream (C10.3): the read waits for it, in site time.
            await asyncio.sleep(max(0.0, ready_at - time.monotonic()))
            images[index] = _image_message(record, file_id, png(record.id))
        exchanges = controller.conversation(conversation_id) or exchanges
        widgets = _research_widgets(conversation_id)
        return JSONResponse(_conversation_read(conversation_id, exchanges, images, widgets))

    def _research_widgets(conversation_id: str) -> dict[int, dict[str, Any]]:
        """Deep Research's tool messages (C9.9) of the conversation's started researches,
        by exchange index; the report answers the conversation's first research question."""
        records = [r for r in controller.records if r.conversation_id == conversation_id]
        first = next((r.text for r in records if r.research), "")
        now = time.time()
        widgets: dict[int, dict[str, Any]] = {}
        for record in records:
            index = controller.exchange_index(record.id)
            if record.research_started_at is not None and index is not None:
                widgets[index] = widget_message(record, first, now)
        return widgets

    async def research_start(request: Request) -> Response:
        """The plan's start (its Start control or its countdown, C9.6). The real request is
        not documented: this endpoint and its body ``{message_id, how}`` are the fake's own
        (docs/sites.md#facts-without-evidence). The research ends ``research_ms`` later."""
        try:
            body = json.loads(await request.body())
            question_id, how = str(body["message_id"]), str(body.get("how") or "button")
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"detail": "bad request"}, status_code=400)
        record = controller.record(question_id)
        if record is None or record.research != "plan":
            return JSONResponse({"detail": "no research plan"}, status_code=404)
        if record.research_started_at is not None:
            return JSONResponse({"started": False})
        record = controller.update_record(
            question_id, research_started_at=time.time(), research_started_by=how
        )
        assert record is not None
        task = asyncio.ensure_future(_finish_research(record))
        research_tasks.add(task)
        task.add_done_callback(research_tasks.discard)
        return JSONResponse({"started": True})

    async def _finish_research(record: QuestionRecord) -> None:
        seconds = record.behaviour.research_ms * record.time_scale / 1000
        if not await live.pause(seconds):
            controller.update_record(record.id, research_done_at=time.time())

    async def research_wait(request: Request) -> Response:
        """The page's wait for the report (fake-only: the real page hears of it through its
        async stream, C7.7/C9.9): answers once the research is done, or with
        ``{"done": false}`` after ``timeout_ms`` so the page asks again."""
        question_id = request.path_params["question_id"]
        try:
            timeout = int(request.query_params.get("timeout_ms", "30000")) / 1000
        except ValueError:
            return JSONResponse({"detail": "bad request"}, status_code=400)
        try:
            await controller.wait_for_record_async(
                lambda r: r.id == question_id and r.research_done_at is not None, timeout
            )
        except TimeoutError:
            return JSONResponse({"done": False})
        return JSONResponse({"done": True})

    async def auth_session(request: Request) -> Response:
        """``GET /api/auth/session`` (C5.3): the signed-in session with its ``accessToken``
        for ``/backend-api`` calls (C7.9); 401 when logged out. The token is the fake's."""
        if controller.behaviour.state == "logged_out":
            return JSONResponse({}, status_code=401)
        return JSONResponse(
            {
                "user": {"id": "user-fake", "name": "Fake Person", "email": "person@example.com"},
                "expires": "2099-01-01T00:00:00.000Z",
                "accessToken": "fake-access-token",
            }
        )

    async def conversation_list(request: Request) -> Response:
        """The sidebar's list: ``GET /backend-api/conversations?offset=&limit=`` (C7.9), newest
        first. Its body ``{items: [{id, title}], total, limit, offset}`` is the fake's own (no
        source records it)."""
        try:
            offset = max(0, int(request.query_params.get("offset", "0")))
            limit = max(1, int(request.query_params.get("limit", "28")))
        except ValueError:
            return JSONResponse({"detail": "bad request"}, status_code=400)
        listed = controller.conversation_list()
        items = [{"id": cid, "title": title} for cid, title in listed[offset : offset + limit]]
        return JSONResponse(
            {"items": items, "total": len(listed), "limit": limit, "offset": offset}
        )

    async def ask(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
            text = _question_text(body)
            files = _question_files(body)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return JSONResponse({"detail": "bad request"}, status_code=400)
        if controller.behaviour.state == "logged_out":
            return JSONResponse({"detail": "Unauthorized"}, status_code=401)
        # C7.2: a new chat's request has no conversation_id; new chats get a title (C7.4).
        title = None if body.get("conversation_id") else _title(text)
        mode = body.get("model") if isinstance(body.get("model"), str) else ""
        # C12.2: {kind: "gizmo_interaction", gizmo_id} inside a project or GPT.
        gizmo = body.get("conversation_mode")
        place = str(gizmo.get("gizmo_id") or "") if isinstance(gizmo, dict) else ""
        page_url = _referer_path(request)
        effort = body.get("thinking_effort")  # C13.6
        record = controller.open_question(
            text,
            body.get("conversation_id"),
            files,
            mode,
            place=place,
            temporary="temporary-chat=true" in page_url.partition("?")[2],
            page=page_url,
            effort=effort if isinstance(effort, str) else "",
        )
        headers = {"x-fake-question-id": record.id, "cache-control": "no-cache"}
        if asks_research(body) and record.answer:
            # C9.5/C9.6: clarifying questions first (once per conversation), else the plan.
            # The page learns which from the fake's own headers (the real page's way is
            # undocumented), and the plan's start style and countdown (scaled) with it.
            earlier = any(
                r.research and r.conversation_id == record.conversation_id and r.id != record.id
                for r in controller.records
            )
            kind = "clarify" if record.behaviour.research_clarify and not earlier else "plan"
            answer = CLARIFY_TEXT if kind == "clarify" else plan_text(text)
            record = controller.update_record(record.id, research=kind, answer=answer) or record
            headers["x-fake-research"] = kind
            headers["x-fake-research-start"] = record.behaviour.research_start
            countdown = record.behaviour.research_countdown_ms * record.time_scale
            headers["x-fake-research-countdown-ms"] = str(round(countdown))
        if record.behaviour.state == "rate_limited":
            # Plain HTTP 429 with retry-after, as the backend API limits (C5.10).
            detail = {"message": RATE_LIMIT_TEXT, "code": "rate_limit_exceeded"}
            headers["retry-after"] = str(RETRY_AFTER_S)
            return JSONResponse({"detail": detail}, status_code=429, headers=headers)
        if record.behaviour.state == "logged_out":
            return JSONResponse({"detail": "Unauthorized"}, status_code=401, headers=headers)
        return StreamingResponse(
            live.run(
                controller,
                record,
                lambda stopped: _answer_stream(record, controller, live, title, stopped, outputs),
            ),
            media_type="text/event-stream; charset=utf-8",
            headers=headers,
        )

    async def resume(request: Request) -> Response:
        """A reopened conversation whose answer is still being written follows it again, from
        its start (C7.4's resume token; BLM's ``conversation/resume`` path, C7.1). The body
        is not documented: the fake takes ``{"conversation_id"}``."""
        try:
            conversation_id = str(json.loads(await request.body())["conversation_id"])
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"detail": "bad request"}, status_code=400)
        record = controller.newest_question(conversation_id)
        exchanges = controller.conversation(conversation_id)
        if record is None or not exchanges:
            return JSONResponse({"detail": "Unable to load conversation"}, status_code=404)
        stream = live.follow(record.id) or _replay(record, exchanges[-1].answer or "")
        headers = {"x-fake-question-id": record.id, "cache-control": "no-cache"}
        return StreamingResponse(
            stream, media_type="text/event-stream; charset=utf-8", headers=headers
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
        Route("/g/{gizmo}", gizmo_page, methods=["GET"]),
        Route("/g/{gizmo}/project", gizmo_page, methods=["GET"]),
        Route("/g/{gizmo}/c/{conversation_id}", gizmo_page, methods=["GET"]),
        # The real send endpoint (C7.1); the legacy path still answers here until the page
        # has moved to the new one (the real site answers it 403).
        Route("/backend-api/f/conversation", ask, methods=["POST"]),
        Route("/backend-api/conversation", ask, methods=["POST"]),
        Route("/backend-api/f/conversation/resume", resume, methods=["POST"]),
        Route("/backend-api/conversation/skip_thinking", skip_thinking, methods=["POST"]),
        Route("/backend-api/conversation/research/start", research_start, methods=["POST"]),
        Route("/__fake/research/{question_id}", research_wait, methods=["GET"]),
        Route("/api/auth/session", auth_session, methods=["GET"]),
        Route("/backend-api/conversation/{conversation_id}", conversation_history, methods=["GET"]),
        Route("/backend-api/conversations", conversation_list, methods=["GET"]),
        Route("/backend-api/estuary/content", estuary, methods=["GET"]),
        Route("/backend-api/files/download/{file_id}", file_download, methods=["GET"]),
        Route(
            "/backend-api/conversation/{conversation_id}/interpreter/download",
            interpreter_download,
            methods=["GET"],
        ),
        *common_routes(controller, live),
    ]
    return Router(routes=routes)
