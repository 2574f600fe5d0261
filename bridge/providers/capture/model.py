"""The capture file's format as pydantic models (docs/captures.md#the-format): validates a
file before anything reads it (a capture is input, perhaps from someone else, perhaps
hostile) and is published as ``docs/schemas/capture.schema.json``.

Parts that other modules interpret (the stream's events, the signals' observations) are
kept open here and read defensively there; the structure that code walks (nodes and their
parents) is checked strictly, so no walk can loop or index out of range.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from bridge.errors import BridgeError

__all__ = ["Capture", "CaptureFileError", "capture_json_schema", "load_capture"]


class _Model(BaseModel):
    # A newer bridge may write more; this one reads what it knows.
    model_config = ConfigDict(extra="ignore")


class Node(_Model):
    i: int = Field(ge=0)
    p: int = Field(ge=-1)
    tag: str = Field(min_length=1, max_length=100)
    attrs: dict[str, str]
    text: list[int]


class Ancestor(_Model):
    tag: str
    role: str | None = None
    testid: str | None = None
    id: str | None = None
    classes: list[str] = []


class Shape(_Model):
    tag: str
    role: str | None = None
    testid: str | None = None
    aria_label: str | None = None
    classes: list[str] = []
    ancestors: list[Ancestor] = []


class EntryMatch(_Model):
    css: str
    count: int = Field(ge=0)
    first: Shape | None = None
    error: str | None = None


class Page(_Model):
    t_ms: int
    truncated: bool = False
    during_answer: bool | None = None  # the answering page: read while the answer came
    nodes: list[Node]
    entries: dict[str, list[EntryMatch]]

    @model_validator(mode="after")
    def _a_tree(self) -> Page:
        """Each node at its own index, its parent before it: a tree, walked without loops."""
        for position, node in enumerate(self.nodes):
            if node.i != position:
                raise ValueError(f"nodes[{position}] has i={node.i}; each node's i is its index")
            if node.p >= position:
                raise ValueError(f"nodes[{position}] has parent {node.p}, not an earlier node")
        return self


class Stream(_Model):
    method: str
    url: str
    status: int | None = None
    content_type: str | None = None
    format: str
    events: list[Any]
    parsed: dict[str, Any] = {}


class Site(_Model):
    url: str = ""
    ui_language: str = ""
    browser_language: str = ""


class Ask(_Model):
    outcome: str
    completion: str = ""
    question_chars: int = 0
    answer_chars: int = 0
    answer_source: str = ""


class Capture(_Model):
    """One provider's capture (docs/captures.md)."""

    bridge_capture: Literal[1]
    provider: Literal["chatgpt", "gemini"]
    taken_at: str
    source: Literal["live", "fake"]
    site: Site
    versions: dict[str, str | int]
    ask: Ask
    phases: dict[Literal["ready", "typed", "answering", "done"], Page]
    missing: dict[str, str] = {}
    stream: Stream | None = None
    signals: dict[str, Any] = {}
    kept_texts: list[str] = []


class CaptureFileError(BridgeError, ValueError):
    """A capture file that cannot be read: what is wrong, where, and what to do."""

    code = "capture_invalid"


def load_capture(path: Path) -> dict[str, Any]:
    """The capture in ``path``, validated; CaptureFileError says what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CaptureFileError(f"{path}: cannot be read ({exc})") from None
    except ValueError as exc:
        raise CaptureFileError(f"{path}: not JSON ({exc}); take the capture again") from None
    try:
        Capture.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise CaptureFileError(
            f"{path}: {where}: {first['msg']} ({exc.error_count()} problem(s)); a capture is "
            "written by `bridge doctor --live --capture DIR` (docs/captures.md)"
        ) from None
    assert isinstance(data, dict)
    return data


def capture_json_schema() -> dict[str, Any]:
    """The JSON Schema of a capture file (docs/schemas/capture.schema.json)."""
    schema = Capture.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "bridge capture"
    return schema
