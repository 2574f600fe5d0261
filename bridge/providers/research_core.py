"""Deep Research, the pure part (docs/sites.md#research): reading a finished report and its
sources out of what the sites give, and deciding what the wait does next.

ChatGPT keeps the report **not** in an assistant text message but in a tool message of the
conversation JSON (``GET /backend-api/conversation/<id>``, SITE-FACTS C9.9): author
``api_tool.call_tool`` with ``metadata.chatgpt_sdk`` naming the Deep Research connector and a
``widget_state`` (a JSON *string*) whose ``status`` goes ``researching`` → ``completed``, and
whose ``report_message`` holds the markdown (``content.parts``) and its citations
(``metadata.content_references``, C9.10). A second carrier, an ``api_tool.widget_state`` tool
message whose text starts "The latest state of the widget is: ", says the same. An older
completed widget can remain while a newer one runs (C9.9): only widgets after this ask's
first question count.

The report's inline citation markers (U+E200 "cite" U+E202 … U+E201, C9.10) are replaced by
numbered links to the sources they resolve to, and a "Sources" list closes the markdown.

:func:`decide` turns one look at the page and the conversation into the next step; the I/O
around it is :mod:`bridge.providers.research`.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CONNECTOR",
    "PageLook",
    "Report",
    "Source",
    "Step",
    "Widget",
    "chain_messages",
    "decide",
    "find_widget",
    "newest_reply",
    "report_markdown",
    "sources_of",
    "user_messages_before",
]

#: The Deep Research connector's id (C9.3, C9.9: ``attribution_id``, the ``resource_uri``).
CONNECTOR = "connector_openai_deep_research"
_RESOURCE = "Deep Research App"  # C9.9 resource_name "Deep Research App_start"
_STATE_PREFIX = "The latest state of the widget is: "  # C9.9's second carrier
#: Inline citation markers (C9.10): U+E200 … U+E201, the parts split by U+E202.
_MARKER = re.compile("\ue200[^\ue201]*\ue201")


@dataclass(frozen=True)
class Source:
    """One source a report cites (C9.10 ``items``/``sources``: title and url)."""

    title: str
    url: str

    def to_dict(self) -> dict[str, str]:
        return {"title": self.title, "url": self.url}


@dataclass(frozen=True)
class Widget:
    """The Deep Research widget's state as the conversation JSON carries it (C9.9)."""

    status: str  # "researching", "completed" (others are passed on as the site says them)
    report: str = ""  # the report's markdown as the site wrote it, markers included
    report_status: str = ""  # report_message.status, "finished_successfully" when done
    references: tuple[Mapping[str, Any], ...] = ()
    started_at: float | None = None  # research_started_at, epoch seconds when given

    @property
    def completed(self) -> bool:
        """C9.11: the widget says completed and its report message finished."""
        return self.status == "completed" and self.report_status == "finished_successfully"


@dataclass(frozen=True)
class Report:
    """A finished report: markdown with numbered source links and a Sources list."""

    markdown: str
    sources: tuple[Source, ...] = ()


def chain_messages(conversation: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The messages of the conversation's current branch, oldest first (C7.8: walk from
    ``current_node`` up through ``parent``); ``{messages: [...]}`` is taken as it is."""
    mapping = conversation.get("mapping")
    current = conversation.get("current_node")
    if isinstance(mapping, Mapping) and isinstance(current, str):
        chain: list[Mapping[str, Any]] = []
        seen: set[str] = set()
        node = mapping.get(current)
        while isinstance(node, Mapping):
            message = node.get("message")
            if isinstance(message, Mapping):
                chain.append(message)
            parent = node.get("parent")
            if not isinstance(parent, str) or parent in seen:
                break
            seen.add(parent)
            node = mapping.get(parent)
        chain.reverse()
        return chain
    messages = conversation.get("messages")
    if isinstance(messages, list):
        return [m for m in messages if isinstance(m, Mapping)]
    return []


def _role(message: Mapping[str, Any]) -> str:
    author = message.get("author")
    return str(author.get("role", "")) if isinstance(author, Mapping) else ""


def _author_name(message: Mapping[str, Any]) -> str:
    author = message.get("author")
    return str(author.get("name") or "") if isinstance(author, Mapping) else ""


def _metadata(message: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = message.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _parts_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if not isinstance(content, Mapping):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "".join(p for p in parts if isinstance(p, str))
    text = content.get("text")
    return text if isinstance(text, str) else ""


def _after_question(messages: Sequence[Mapping[str, Any]], users_before: int) -> int:
    """The index just after the ``users_before``-th user message: where this ask begins."""
    seen = 0
    for index, message in enumerate(messages):
        if _role(message) == "user":
            if seen == users_before:
                return index
            seen += 1
    return len(messages)


def _is_research(message: Mapping[str, Any]) -> bool:
    meta = _metadata(message)
    sdk = meta.get("chatgpt_sdk")
    if isinstance(sdk, Mapping):
        names = (sdk.get("attribution_id"), sdk.get("resource_name"))
        if any(isinstance(n, str) and (CONNECTOR in n or n.startswith(_RESOURCE)) for n in names):
            return True
    key = meta.get("exclusive_key")
    return isinstance(key, str) and _RESOURCE in key


def _widget_state(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The widget state a research tool message carries: ``chatgpt_sdk.widget_state`` (a JSON
    string, or already an object), else the text after "The latest state of the widget is: "."""
    sdk = _metadata(message).get("chatgpt_sdk")
    raw: Any = sdk.get("widget_state") if isinstance(sdk, Mapping) else None
    if raw is None and _author_name(message) == "api_tool.widget_state":
        text = _parts_text(message)
        if text.startswith(_STATE_PREFIX):
            raw = text[len(_STATE_PREFIX) :]
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    return raw if isinstance(raw, Mapping) else None


def _widget(state: Mapping[str, Any]) -> Widget:
    report = state.get("report_message")
    report = report if isinstance(report, Mapping) else {}
    refs = _metadata(report).get("content_references")
    started = state.get("research_started_at")
    return Widget(
        status=str(state.get("status") or ""),
        report=_parts_text(report),
        report_status=str(report.get("status") or ""),
        references=tuple(r for r in refs if isinstance(r, Mapping))
        if isinstance(refs, list)
        else (),
        started_at=float(started) if isinstance(started, int | float) else None,
    )


def find_widget(conversation: Mapping[str, Any], users_before: int) -> Widget | None:
    """The newest Deep Research widget state after this ask's first question (the
    ``users_before``-th user message, 0-based), or None when the research has not shown."""
    messages = chain_messages(conversation)
    found: Widget | None = None
    for message in messages[_after_question(messages, users_before) :]:
        if _role(message) != "tool" or not _is_research(message):
            continue
        state = _widget_state(message)
        if state is not None:
            found = _widget(state)
    return found


def newest_reply(conversation: Mapping[str, Any], users_before: int) -> str | None:
    """The newest finished, visible assistant text after this ask's first question (C7.5:
    content_type text, to all, final channel or none, not hidden), else None. Without a
    research widget it is the site's clarifying turn (C9.5)."""
    messages = chain_messages(conversation)
    reply: str | None = None
    for message in messages[_after_question(messages, users_before) :]:
        if _role(message) != "assistant" or _metadata(message).get(
            "is_visually_hidden_from_conversation"
        ):
            continue
        content = message.get("content")
        if not isinstance(content, Mapping) or content.get("content_type") != "text":
            continue
        if message.get("recipient") not in (None, "all"):
            continue
        if message.get("channel") not in (None, "final"):
            continue
        if message.get("status") == "finished_successfully":
            reply = _parts_text(message)
    return reply


def user_messages_before(conversation: Mapping[str, Any], question: str) -> int | None:
    """How many user messages precede the newest one that is ``question`` (spaces aside),
    None when no user message is."""
    want = " ".join(question.split())
    users = [m for m in chain_messages(conversation) if _role(m) == "user"]
    for index in range(len(users) - 1, -1, -1):
        if " ".join(_parts_text(users[index]).split()) == want:
            return index
    return None


def _ref_sources(ref: Mapping[str, Any]) -> list[Source]:
    out: list[Source] = []
    for key in ("items", "sources", "fallback_items"):
        items = ref.get(key)
        if not isinstance(items, list):
            continue
        for item in items:
            if isinstance(item, Mapping) and isinstance(item.get("url"), str) and item["url"]:
                out.append(Source(str(item.get("title") or item["url"]), item["url"]))
    return out


def sources_of(references: Iterable[Mapping[str, Any]]) -> list[Source]:
    """Every source the references name (C9.10 ``items``/``sources``/``fallback_items``), in
    order of first mention, each url once."""
    seen: dict[str, Source] = {}
    for ref in references:
        for source in _ref_sources(ref):
            seen.setdefault(source.url, source)
    return list(seen.values())


def report_markdown(widget: Widget) -> Report:
    """The report as markdown: each citation marker (a reference's ``matched_text``) becomes
    numbered links to its sources, stray markers are dropped, and a "Sources" list ends it."""
    sources = sources_of(widget.references)
    number = {s.url: n for n, s in enumerate(sources, 1)}
    text = widget.report
    for ref in sorted(
        widget.references, key=lambda r: len(str(r.get("matched_text") or "")), reverse=True
    ):
        matched = ref.get("matched_text")
        if not isinstance(matched, str) or not matched:
            continue
        cited = list(dict.fromkeys(s.url for s in _ref_sources(ref)))
        links = "".join(f"[[{number[u]}]]({u})" for u in cited)
        text = text.replace(matched, f" {links}" if links else "")
    text = _MARKER.sub("", text).strip()
    if sources:
        listed = "\n".join(f"{n}. [{s.title}]({s.url})" for n, s in enumerate(sources, 1))
        text = f"{text}\n\n## Sources\n\n{listed}"
    return Report(text, tuple(sources))


class Step(enum.Enum):
    """What the wait does after one look."""

    WAIT = "wait"  # nothing to do: wait for the page to change
    PRESS_START = "press_start"  # the plan's start control shows (C9.6, G11.3)
    DONE = "done"  # the report is finished (C9.11, G11.5)
    QUESTIONS = "questions"  # a finished turn without research evidence (C9.5)


@dataclass(frozen=True)
class PageLook:
    """One look at the page (page.js ``researchPage``) and, for ChatGPT, the conversation."""

    start: bool = False  # a start control shows in the newest turn
    plan: bool = False  # the newest turn is a research plan (C9.6, G11.3)
    running: bool = False  # a running marker shows (C9.7, G11.4)
    done: bool = False  # the page's own done signal shows (G11.5)
    generating: bool = False  # the stop button shows: a turn is still being written
    reply: str = ""  # the newest finished answer's text (the page's reading)
    widget: Widget | None = None  # ChatGPT: the conversation JSON's research widget
    extra: dict[str, Any] = field(default_factory=dict)


def decide(look: PageLook, *, started: bool) -> Step:
    """The next step. ``started``: research evidence was seen before (a start pressed, a
    widget, a running marker), so a quiet finished turn is no clarifying question."""
    if look.widget is not None and look.widget.completed:
        return Step.DONE
    if look.done and look.widget is None:
        return Step.DONE  # the page's own done signal (Gemini: the export button, G11.5)
    if look.widget is not None or look.running:
        return Step.WAIT
    if look.start:
        return Step.PRESS_START
    if look.plan or look.generating or started:
        return Step.WAIT
    if look.reply:
        return Step.QUESTIONS
    return Step.WAIT
