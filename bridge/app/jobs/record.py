"""A job's record (docs/flows.md#jobs-file): what was asked, where its answer lives, how far
it got, how it ended. One pydantic model is the file's format, its validation and the
object the code works with; ``<state dir>/jobs/<id>.json`` holds it as JSON.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field, model_validator

from bridge.app.jobs.owner import owner_alive, process_start
from bridge.errors import BridgeError
from bridge.providers.results import Provider

__all__ = ["FORMAT", "JOB_ID", "Job", "JobNotFound", "JobStatus", "JobUnreadable", "Owner"]

JobStatus = Literal["running", "done", "failed"]
#: The record's format: 2 since the owner's start time is epoch seconds (1: clock ticks).
FORMAT = 2
JOB_ID = re.compile(r"^[a-z]+-[0-9a-f]{10}$")


def _iso(epoch: float) -> str:
    stamp = datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


class JobNotFound(BridgeError):
    """No job of that id in this state directory; the message says how to list the jobs."""

    code = "job_not_found"

    def __init__(self, job_id: str, where: Path) -> None:
        shape = "" if JOB_ID.match(job_id) else " (job ids look like 'chatgpt-0123456789')"
        super().__init__(
            f"no job {job_id!r} in {where}{shape}: list_jobs shows the jobs of this state "
            "directory (a server started with another --state-dir or $BRIDGE_STATE_DIR keeps its "
            "own)."
        )
        self.job_id = job_id


class JobUnreadable(BridgeError):
    """A job file that is not a job record: bridge writes them atomically, so something else
    wrote or truncated it."""

    code = "job_unreadable"

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(
            f"the job file {path} cannot be read ({why}); bridge writes job files whole, so "
            "something else changed it. Delete the file; if its answer matters, look for it "
            "in the provider's conversation history, or ask again."
        )
        self.path = path
        self.why = why


class Owner(BaseModel):
    """The process running the job, for people and ``list_jobs`` (its lock decides)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    pid: int = 0
    start: float | None = None
    """When it started (epoch seconds): a later process given the same pid is not it."""

    @classmethod
    def me(cls) -> Owner:
        pid = os.getpid()
        return cls(pid=pid, start=process_start(pid))

    def alive(self) -> bool:
        return owner_alive(self.pid, self.start)


class Job(BaseModel):
    """One ask as a job. ``result`` is the ask's result (``AskResult.to_dict()``), ``error``
    the typed error's ``code`` and ``message``. Times are epoch seconds (``created_at``,
    ``updated_at``), and ISO text for people in the file (``created``, ``updated``)."""

    model_config = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)

    format: Literal[1, 2] = 2
    """The record's format (``FORMAT``)."""
    id: str = Field(pattern=JOB_ID.pattern)
    provider: Provider
    question: str
    session_key: str
    status: JobStatus = "running"
    created_at: float
    updated_at: float = 0.0
    timeout_s: float
    new_chat: bool = False
    mode: str | None = None
    """The site mode asked for (docs/sites.md#modes)."""
    conversation: str | None = None
    """Where it is asked (docs/sites.md#where): the conversation continued…"""
    project: str | None = None
    """…the ChatGPT project…"""
    gpt: str | None = None
    """…the ChatGPT GPT…"""
    gem: str | None = None
    """…the Gemini Gem asked in."""
    temporary: bool = False
    """Asked in a temporary chat (nothing recorded in the sessions)."""
    effort: str | None = None
    """ChatGPT's thinking effort asked for (docs/sites.md#effort)."""
    deep_think: bool = False
    """Gemini's Deep Think asked for (docs/sites.md#effort)."""
    outputs_dir: str | None = None
    """The folder the caller named for generated images and files, checked and resolved
    (docs/sites.md#outputs); None: ``<state dir>/outputs/<job id>/``."""
    research: bool = False
    """Deep Research asked for (docs/sites.md#research): a resumed job waits for the report."""
    research_answers: str | None = None
    """The person's answers to the site's clarifying questions, if given."""
    owner: Owner = Field(default_factory=Owner)
    url: str | None = None
    """The conversation's URL, once known."""
    tab_id: int | None = None
    phase: str = "queued"
    """The ask's progress phase (docs/flows.md#ask-steps)."""
    chars: Annotated[int, Field(ge=0)] = 0
    """Characters of the answer so far."""
    resumed: Annotated[int, Field(ge=0)] = 0
    """How many times another process picked it up."""
    result: dict[str, Any] | None = None
    error: dict[str, str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _read(cls, data: Any) -> Any:
        """The ISO times are written for people and derived from the epoch ones; a format 1
        owner's start is in clock ticks, which no longer compare."""
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k not in ("created", "updated")}
            if data.get("format") == 1 and isinstance(data.get("owner"), dict):
                data["owner"] = {**data["owner"], "start": None}
        return data

    @model_validator(mode="after")
    def _ended_with_a_result(self) -> Job:
        if self.status == "done" and self.result is None:
            raise ValueError("done, but no result")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def created(self) -> str:
        return _iso(self.created_at)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def updated(self) -> str:
        return _iso(self.updated_at)

    @classmethod
    def new(
        cls,
        provider: Provider,
        question: str,
        session_key: str,
        timeout_s: float,
        *,
        new_chat: bool = False,
        mode: str | None = None,
        conversation: str | None = None,
        project: str | None = None,
        gpt: str | None = None,
        gem: str | None = None,
        temporary: bool = False,
        effort: str | None = None,
        deep_think: bool = False,
        outputs_dir: str | None = None,
        research: bool = False,
        research_answers: str | None = None,
    ) -> Job:
        now = time.time()
        return cls(
            id=f"{provider}-{secrets.token_hex(5)}",
            provider=provider,
            question=question,
            session_key=session_key,
            created_at=now,
            updated_at=now,
            timeout_s=float(timeout_s),
            new_chat=new_chat,
            mode=mode,
            conversation=conversation,
            project=project,
            gpt=gpt,
            gem=gem,
            temporary=temporary,
            effort=effort,
            deep_think=deep_think,
            outputs_dir=outputs_dir,
            research=research,
            research_answers=research_answers,
            owner=Owner.me(),
        )

    @classmethod
    def from_text(cls, text: str, path: Path) -> Job:
        """A record read back; ``JobUnreadable`` saying what is wrong with it otherwise."""
        try:
            job = cls.model_validate_json(text)
        except ValidationError as exc:
            error = exc.errors()[0]
            if error["type"] == "json_invalid":
                raise JobUnreadable(path, f"not JSON: {error['msg']}") from None
            where = ".".join(str(p) for p in error["loc"]) or "the record"
            raise JobUnreadable(path, f"missing or wrong field: {where}: {error['msg']}") from None
        if job.id != path.stem:
            raise JobUnreadable(path, f"it names job {job.id!r}")
        return job

    def to_text(self) -> str:
        """The file's content (snake_case, as everything bridge writes)."""
        return self.model_dump_json(indent=2) + "\n"

    def copy_now(self) -> Job:
        """A copy to hand out or write while this one goes on changing."""
        return self.model_copy(update={"owner": self.owner.model_copy()})

    @property
    def owner_pid(self) -> int:
        return self.owner.pid

    @property
    def deadline(self) -> float:
        """When the ask's timeout runs out (epoch seconds)."""
        return self.created_at + self.timeout_s

    def elapsed_s(self, now: float | None = None) -> float:
        """Seconds since the job started: up to now while it runs, up to its end after."""
        end = (now or time.time()) if self.status == "running" else self.updated_at
        return round(max(0.0, end - self.created_at), 1)

    def progress(self) -> dict[str, Any]:
        """How far the job got, as tools show it (``job`` is its id, as in every result
        about a job)."""
        return {
            "job": self.id,
            "provider": self.provider,
            "status": self.status,
            "phase": self.phase,
            "elapsed_s": self.elapsed_s(),
            "chars": self.chars,
            "url": self.url,
            "created": self.created,
            "updated": self.updated,
        }

    def summary(self) -> dict[str, Any]:
        """One line of ``list_jobs``: the question's start, status and where it lives."""
        question = " ".join(self.question.split())
        return {
            "id": self.id,
            "provider": self.provider,
            "question": question if len(question) <= 80 else question[:79] + "…",
            "status": self.status,
            "phase": self.phase,
            "url": self.url,
            "created": self.created,
            "updated": self.updated,
            "elapsed_s": self.elapsed_s(),
            "chars": self.chars,
            "owner_pid": self.owner.pid,
            "owner_alive": self.status == "running" and self.owner.alive(),
            **({"error": self.error} if self.error else {}),
        }
