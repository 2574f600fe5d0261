"""MCP resources: the jobs and the conversations, for clients that list and read resources
(docs/mcp.md#resources). The tools that do the same stay (``get_answer``, ``list_jobs``,
``get_conversation``, ``list_conversations``); a resource is a snapshot, never a wait.

- ``bridge://jobs/{job_id}``: a job's record as JSON (application/json).
- ``bridge://conversations/{provider}/{conversation_id}``: a conversation's turns as
  markdown (text/markdown), read as ``get_conversation`` reads it.

``resources/list`` returns the recent jobs (as ``list_jobs`` lists them by default) and,
when the browser is linked, each provider's recent conversations (as
``list_conversations``); without the browser, the jobs alone: a client lists resources as it
connects, which may be before the person's Chrome is there. The SDK lists only resources
registered beforehand, so ``ResourceServer`` adds the ones that exist when asked.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp_types import Annotations
from mcp_types import Resource as MCPResource
from pydantic import Field

from bridge.app.facade import Bridge
from bridge.app.jobs import Job, JobNotFound
from bridge.errors import BridgeError
from bridge.providers.conversations import (
    ConversationList,
    conversation_id,
    url_of_conversation_id,
)
from bridge.providers.conversations.reading import LINKS_WAIT_S
from bridge.providers.results import PROVIDERS, Provider
from bridge.providers.specs import provider_spec
from bridge.waiting import scaled

__all__ = [
    "CONVERSATION_TEMPLATE",
    "JOB_TEMPLATE",
    "ResourceLister",
    "ResourceServer",
    "conversation_uri",
    "job_uri",
    "register_resources",
    "resource_error",
]

log = logging.getLogger(__name__)

JOB_TEMPLATE = "bridge://jobs/{job_id}"
CONVERSATION_TEMPLATE = "bridge://conversations/{provider}/{conversation_id}"
JOB_MIME = "application/json"
CONVERSATION_MIME = "text/markdown"
#: The jobs ``resources/list`` returns: ``list_jobs``' default.
LISTED_JOBS = 20
#: How long listing waits for one provider's conversations before leaving them out: its
#: tab to be ready, then as long as ``list_conversations`` waits for the sidebar's links.
LIST_CONVERSATIONS_S = LINKS_WAIT_S + 7.0
#: The question's characters a listed job's name shows.
NAME_CHARS = 60

_TITLES: dict[str, str] = {"chatgpt": "ChatGPT", "gemini": "Gemini"}

#: Resources that exist when asked (jobs, conversations), for ``resources/list``.
ResourceLister = Callable[[], Awaitable[list[MCPResource]]]


class ResourceServer(MCPServer[Any]):
    """An ``MCPServer`` whose ``resources/list`` also returns what its listers find when
    asked: the SDK's own listing holds only resources registered beforehand, and jobs and
    conversations come and go."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._listers: list[ResourceLister] = []

    def add_resource_lister(self, lister: ResourceLister) -> None:
        self._listers.append(lister)

    async def list_resources(self) -> list[MCPResource]:
        listed = await super().list_resources()
        for lister in self._listers:
            listed += await lister()
        return listed


def job_uri(job_id: str) -> str:
    return JOB_TEMPLATE.format(job_id=job_id)


def conversation_uri(provider: str, ident: str) -> str:
    return CONVERSATION_TEMPLATE.format(provider=provider, conversation_id=ident)


def resource_error(exc: BridgeError | ValueError) -> ResourceError:
    """What a client reads when a resource cannot be read: as from a tool (``[code]
    message`` for a ``BridgeError``, the message of a ``ValueError``); a job that does
    not exist is not found (invalid params), the rest a failed read."""
    message = f"[{exc.code}] {exc}" if isinstance(exc, BridgeError) else str(exc)
    if isinstance(exc, JobNotFound):
        return ResourceNotFoundError(message)
    return ResourceError(message)


def register_resources(server: ResourceServer, get_bridge: Callable[[], Bridge]) -> None:
    """The job and conversation templates, and their listing (the ``ask`` group's)."""

    @server.resource(
        JOB_TEMPLATE,
        name="job",
        title="An ask's job",
        description="A job (an ask that outlives a call) as its record says now: id, "
        "provider, question, status (running, done, failed), phase, conversation url, "
        "created and updated, elapsed_s, chars; result (the ask's result, with its answer) "
        "when done, error {code, message} when failed. Reading never waits: get_answer "
        "waits for the answer. The ids: list_jobs, or resources/list.",
        mime_type=JOB_MIME,
    )
    async def read_job(
        job_id: Annotated[str, Field(description="A job id, e.g. chatgpt-0123456789.")],
    ) -> str:
        try:
            job = await get_bridge().read_job(job_id)
        except BridgeError as exc:
            raise resource_error(exc) from exc
        return job_text(job)

    @server.resource(
        CONVERSATION_TEMPLATE,
        name="conversation",
        title="A ChatGPT or Gemini conversation",
        description="Every turn of a conversation as markdown, a heading per turn, as "
        "get_conversation returns it. provider: chatgpt or gemini; conversation_id: the "
        "last part of its URL (https://chatgpt.com/c/<id>, "
        "https://gemini.google.com/app/<id>). Needs the browser.",
        mime_type=CONVERSATION_MIME,
    )
    async def read_conversation(
        provider: Annotated[str, Field(description="'chatgpt' or 'gemini'.")],
        conversation_id: Annotated[str, Field(description="The id in the conversation's URL.")],
    ) -> str:
        try:
            if provider not in PROVIDERS:
                raise ValueError(
                    f"unknown provider {provider!r}: conversations are "
                    f"{conversation_uri('chatgpt', '<id>')} or "
                    f"{conversation_uri('gemini', '<id>')}"
                )
            bridge = get_bridge()
            spec = provider_spec(provider, bridge.store.root)
            url = url_of_conversation_id(spec, conversation_id)
            conversation = await bridge.get_conversation(provider, url)
        except (BridgeError, ValueError) as exc:
            raise resource_error(exc) from exc
        return conversation.transcript()

    async def listed() -> list[MCPResource]:
        bridge = get_bridge()
        jobs, _unreadable = await bridge.list_jobs(LISTED_JOBS)  # list_jobs names those
        resources = [job_resource(job) for job in jobs]
        if bridge.linked:
            for provider, found in zip(
                PROVIDERS,
                await asyncio.gather(*(_conversations(bridge, p) for p in PROVIDERS)),
                strict=True,
            ):
                if found is not None:
                    resources += conversation_resources(bridge, provider, found)
        return resources

    server.add_resource_lister(listed)


async def _conversations(bridge: Bridge, provider: Provider) -> ConversationList | None:
    """A provider's recent conversations, or None when they cannot be read now (logged):
    a listing lists what it can."""
    try:
        async with asyncio.timeout(scaled(LIST_CONVERSATIONS_S)):
            return await bridge.list_conversations(provider)
    except (BridgeError, TimeoutError) as exc:
        log.info("resources/list: no %s conversations: %s", provider, exc)
        return None


def job_text(job: Job) -> str:
    """A job resource's content: its record (docs/flows.md#jobs-file), with ``elapsed_s``
    and ``owner_alive`` as ``list_jobs`` gives them."""
    data = job.model_dump(mode="json")
    data["elapsed_s"] = job.elapsed_s()
    data["owner_alive"] = job.status == "running" and job.owner.alive()
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _state(job: Job) -> str:
    if job.status == "failed":
        error = job.error or {}
        return f"failed: [{error.get('code', 'bridge_error')}] {error.get('message', '')}"
    if job.status == "done":
        return f"done ({job.elapsed_s():.0f} s)"
    chars = f", {job.chars} characters so far" if job.chars else ""
    return f"running ({job.phase}, {job.elapsed_s():.0f} s{chars})"


def job_resource(job: Job) -> MCPResource:
    question = " ".join(job.question.split())
    if len(question) > NAME_CHARS:
        question = question[: NAME_CHARS - 1] + "…"
    return MCPResource(
        uri=job_uri(job.id),
        name=f"{job.id}: {question}",
        title=f"{_TITLES.get(job.provider, job.provider)} job: {question}",
        description=_state(job),
        mime_type=JOB_MIME,
        annotations=Annotations(last_modified=job.updated),
    )


def conversation_resources(
    bridge: Bridge, provider: Provider, listed: ConversationList
) -> list[MCPResource]:
    spec = provider_spec(provider, bridge.store.root)
    resources = []
    for link in listed.conversations:
        ident = conversation_id(spec, link.url)
        if ident is None:
            continue
        title = link.title or "(untitled)"
        resources.append(
            MCPResource(
                uri=conversation_uri(provider, ident),
                name=f"{provider} conversation {ident}: {title}",
                title=f"{_TITLES[provider]}: {title}",
                description=link.url,
                mime_type=CONVERSATION_MIME,
            )
        )
    return resources
