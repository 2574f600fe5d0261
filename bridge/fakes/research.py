"""The fake chatgpt.com's Deep Research (docs/sites.md#research): what it answers and how the
conversation JSON carries the research, as SITE-FACTS C9 describes it.

- A question whose ``POST /backend-api/f/conversation`` body carries the Deep Research hint in
  ``system_hints`` (C9.3: ``connector:`` or ``plugin:connector_openai_deep_research``; both
  are accepted, the prefix is contested) is a research question.
- Its answer is an ordinary assistant turn (C9.5): clarifying questions
  (``Behaviour.research_clarify``, the first research question of a conversation), else the
  research plan (C9.6, whose text says "Research plan", as OR detects it).
- Once started (the page's Start control, or its countdown: ``Behaviour.research_start``), the
  conversation JSON gains the tool message of C9.9 whose ``chatgpt_sdk.widget_state`` goes
  ``researching`` → ``completed`` with the report's markdown and ``content_references``
  (C9.10), ``Behaviour.research_ms`` (site time) later.

The clarifying and plan wordings are the fake's own (no source quotes them), as are the
report's source URLs.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

from bridge.fakes.behaviour import answer_markdown, keywords
from bridge.fakes.controller import QuestionRecord, SiteController
from bridge.fakes.streaming import Live

__all__ = [
    "CLARIFY_TEXT",
    "CONNECTOR",
    "RESEARCH_DONE_NOTICE",
    "RESEARCH_HEADER",
    "asks_research",
    "plain_report",
    "plan_text",
    "report_of",
    "start_research",
    "wait_research",
    "widget_message",
]

CONNECTOR = "connector_openai_deep_research"  # C9.3, C9.9

#: The fake's clarifying turn: an ordinary finished answer (C9.5), in its own words.
CLARIFY_TEXT = (
    "Before I start the research, a few questions:\n\n"
    "1. Which period should the report cover?\n"
    "2. Are there sources you want me to prefer or avoid?\n"
    "3. How long should the report be?"
)


#: Gemini: the fake page's own marker of a send with Deep Research on (the real wire flags of
#: G11.2 are not modelled).
RESEARCH_HEADER = "x-fake-deep-research"
#: Gemini: the one line a finished research's turn keeps (G11.5).
RESEARCH_DONE_NOTICE = "I've completed your research"
_MARKERS = re.compile("\ue200[^\ue201]*\ue201")


def start_research(
    controller: SiteController,
    live: Live,
    tasks: set[asyncio.Future[None]],
    question_id: str,
    how: str,
) -> bool | None:
    """Start ``question_id``'s planned research (its start control or countdown, C9.6, G11.3);
    it finishes ``Behaviour.research_ms`` (site time) later. None: no such plan; False:
    started already."""
    record = controller.record(question_id)
    if record is None or record.research != "plan":
        return None
    if record.research_started_at is not None:
        return False
    started = controller.update_record(
        question_id, research_started_at=time.time(), research_started_by=how
    )
    assert started is not None

    async def finish() -> None:
        seconds = started.behaviour.research_ms * started.time_scale / 1000
        if not await live.pause(seconds):
            controller.update_record(started.id, research_done_at=time.time())

    task = asyncio.ensure_future(finish())
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    return True


async def wait_research(controller: SiteController, question_id: str, timeout: float) -> bool:
    """Whether ``question_id``'s research is done, waiting ``timeout`` seconds for it."""
    try:
        await controller.wait_for_record_async(
            lambda r: r.id == question_id and r.research_done_at is not None, timeout
        )
    except TimeoutError:
        return False
    return True


def plain_report(question: str) -> tuple[str, list[dict[str, str]]]:
    """Gemini's report (G11.6): the markdown without ChatGPT's citation markers, and its used
    sources as ``{title, url}``."""
    markdown, refs = report_of(question)
    sources = [{"title": r["items"][0]["title"], "url": r["items"][0]["url"]} for r in refs]
    return _MARKERS.sub("", markdown), sources


def asks_research(body: dict[str, Any]) -> bool:
    """Whether a send body asks for Deep Research: its ``system_hints`` name the connector
    (C9.3, either prefix)."""
    hints = body.get("system_hints")
    return isinstance(hints, list) and any(isinstance(h, str) and CONNECTOR in h for h in hints)


def plan_text(question: str) -> str:
    """The research plan the fake shows before it starts (C9.6): "Research plan" and steps."""
    topic = ", ".join(keywords(question)[:3]) or "the question"
    return (
        "Research plan\n\n"
        f"1. Search the web for recent material on {topic}.\n"
        "2. Read and compare the most relevant sources.\n"
        "3. Write a report with citations."
    )


def report_of(question: str) -> tuple[str, list[dict[str, Any]]]:
    """The report's markdown with inline citation markers (U+E200 cite U+E202 … U+E201) and
    the ``content_references`` they resolve to (C9.10: ``matched_text``, ``items`` of
    ``{title, url, attribution}``), built from the corpus answer to ``question``."""
    body = answer_markdown(question)
    paragraphs = body.split("\n\n")
    words = keywords(question) or ["topic"]
    refs: list[dict[str, Any]] = []
    cited: list[str] = []
    for n, paragraph in enumerate(paragraphs):
        if n >= 2 or paragraph.startswith(("```", "|", "#")):
            cited.append(paragraph)
            continue
        marker = f"\ue200cite\ue202turn0view{n}\ue201"
        word = words[n % len(words)].lower()
        host = "docs.example.org" if n == 0 else "research.example.net"
        url = f"https://{host}/{word}/{n + 1}"
        refs.append(
            {
                "type": "grouped_webpages",
                "matched_text": marker,
                "items": [
                    {"title": f"{word.title()} source {n + 1}", "url": url, "attribution": host}
                ],
            }
        )
        cited.append(paragraph + marker)
    return "\n\n".join(cited), refs


def widget_message(record: QuestionRecord, report_question: str, now: float) -> dict[str, Any]:
    """The C9.9 tool message for ``record``'s started research, as ``now`` finds it."""
    assert record.research_started_at is not None
    done = record.research_done_at is not None and now >= record.research_done_at
    state: dict[str, Any] = {
        "status": "completed" if done else "researching",
        "research_started_at": record.research_started_at,
    }
    if done:
        markdown, refs = report_of(report_question)
        state["report_message"] = {
            "status": "finished_successfully",
            "content": {"content_type": "text", "parts": [markdown]},
            "metadata": {"content_references": refs},
        }
    return {
        "author": {"role": "tool", "name": "api_tool.call_tool"},
        "content": {"content_type": "code", "text": ""},
        "recipient": "all",
        "status": "finished_successfully",
        "metadata": {
            "chatgpt_sdk": {
                "resource_name": "Deep Research App_start",
                "attribution_id": CONNECTOR,
                "resolved_pineapple_uri": f"connectors://{CONNECTOR}",
                "connector_type": "FIRST_PARTY_ECOSYSTEM",
                "distribution_channel": "openai",
                "widget_state": json.dumps(state),
            },
            "invoked_resource": {
                "resource_uri": f"/{CONNECTOR}/implicit_link::{CONNECTOR}/start",
            },
        },
    }
