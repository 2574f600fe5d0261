"""The run report's page: pure rendering, and a real run's page as a person sees it in
Chromium (rows, checks, answers, the failure's screenshot; nothing fetched)."""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import os
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from bridge.browser import Browser
from bridge.scenarios.html_report import render_html
from tests.local_http import serve_http

JPEG_1PX = base64.b64decode(
    "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////"
    "////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQAB"
    "PxA="
)


class _Structure(HTMLParser):
    """Tags and attributes of a page, and its text, as a browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(page: str) -> _Structure:
    parser = _Structure()
    parser.feed(page)
    return parser


def _record(id_: str, outcome: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": id_,
        "name": id_.replace("-", " ").title(),
        "nodeid": f"scenarios/x.json::{id_}",
        "file": "scenarios/x.json",
        "provider": "chatgpt",
        "tags": ["smoke"],
        "outcome": outcome,
        "duration_ms": 1500.0,
        "checks": [],
        **extra,
    }


def _report(*records: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": 2,
        "status": "finished",
        "started_at": "2026-11-23T10:00:00.000Z",
        "finished_at": "2026-11-23T10:01:00.000Z",
        "mode": "fake",
        "args": ["scenarios"],
        "summary": {"total": len(records), "passed": 1, "failed": 1, "skipped": 0, "error": 0},
        "results": list(records),
    }


HOSTILE = "<script>alert(1)</script></pre></td></tr><img src=http://evil.example/x>"


def test_everything_from_the_report_is_text_never_markup() -> None:
    provider = {"ok": True, "answer_preview": HOSTILE, "answer_length": 70, "url": HOSTILE}
    record = _record(
        "hostile",
        "failed",
        question=HOSTILE,
        providers={"chatgpt": provider},
        checks=[{"name": HOSTILE, "provider": "chatgpt", "passed": False, "actual": HOSTILE}],
        message=HOSTILE,
        evidence=[{"name": HOSTILE, "kind": "html", "text": HOSTILE}],
    )
    record["name"] = HOSTILE
    page = render_html(_report(record))
    parsed = _parse(page)
    tags = [tag for tag, _ in parsed.tags]
    assert "script" not in tags
    assert not any(attrs.get("src", "").startswith("http") for _, attrs in parsed.tags)
    assert HOSTILE in "".join(parsed.text)  # shown, as text


def test_rows_failed_first_with_checks_answers_timings_and_evidence() -> None:
    jpeg = base64.b64encode(JPEG_1PX).decode()
    ok = _record(
        "chatgpt-ok",
        "passed",
        checks=[{"name": "minAnswerLength", "provider": "chatgpt", "passed": True, "actual": 597}],
        providers={
            "chatgpt": {
                "ok": True,
                "answer_preview": "A decorator wraps a function.",
                "answer_length": 29,
                "timings": {"total_ms": 619.5, "connect_ms": 119.7, "wait_response_ms": 444.2},
            }
        },
    )
    broken = _record(
        "gemini-broken",
        "failed",
        checks=[
            {
                "name": "expect.error",
                "provider": "gemini",
                "passed": False,
                "actual": "error_turn",
                "expected": None,
            }
        ],
        providers={"gemini": {"ok": False, "error": {"code": "error_turn", "message": "oops"}}},
        message="gemini: error_turn",
        evidence=[
            {"name": "gemini tab 7 screenshot", "kind": "jpeg", "data": jpeg},
            {"name": "gemini tab 7 DOM excerpt", "kind": "html", "text": "<body><p>x</p>"},
        ],
    )
    parsed = _parse(render_html(_report(ok, broken)))
    rows = [
        attrs
        for tag, attrs in parsed.tags
        if tag == "tr" and "scenario" in (attrs.get("class") or "")
    ]
    assert [row["id"] for row in rows] == ["gemini-broken", "chatgpt-ok"]
    text = " ".join("".join(parsed.text).split())
    assert "✗ FAIL expect.error (gemini): got error_turn, expected None" in text
    assert "✓ pass minAnswerLength (chatgpt): got 597" in text
    assert "A decorator wraps a function." in text
    assert "total 0.62 s · open tab 0.12 s · answer 0.44 s" in text
    assert "error [error_turn]: oops" in text
    images = [attrs for tag, attrs in parsed.tags if tag == "img"]
    assert images == [{"alt": "gemini tab 7 screenshot", "src": f"data:image/jpeg;base64,{jpeg}"}]
    assert "<body><p>x</p>" in text  # the excerpt, as text
    assert "1 passed" in text and "1 failed" in text


def test_a_run_with_no_result_yet_says_so() -> None:
    report = _report()
    report.update(status="running", finished_at=None)
    text = " ".join(_parse(render_html(report)).text)
    assert "No scenario has finished yet." in text and "running" in text


# -- a real run, opened in the session's Chromium ------------------------------------------------

SCENARIOS = {
    "version": "1.0.0",
    "scenarios": [
        {
            "id": "chatgpt-answers",
            "name": "ChatGPT answers",
            "provider": "chatgpt",
            "tags": ["smoke"],
            "question": {"template": "What is a Python decorator?"},
            "assertions": {"minAnswerLength": 20},
        },
        {
            "id": "gemini-too-short",
            "name": "Gemini writes a book",
            "provider": "gemini",
            "tags": ["smoke"],
            "question": {"template": "What is a Python generator?"},
            "assertions": {"minAnswerLength": 100000},
        },
    ],
}


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One pytest run of two scenarios (one passes, one fails) against the fake sites, in a
    project of its own, as a person runs it: its report and its page."""
    project = tmp_path_factory.mktemp("html-report-project")
    (project / "scenarios").mkdir()
    (project / "scenarios" / "two.json").write_text(json.dumps(SCENARIOS))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = asyncio.run(_run_pytest(project, env))
    assert proc[0] == 1, proc[1]  # one scenario failed, as meant
    reports = sorted((project / "reports").glob("*.json"))
    assert len(reports) == 1, proc[1]
    return {
        "json": json.loads(reports[0].read_text()),
        "html": reports[0].with_suffix(".html"),
        "dir": project / "reports",
    }


async def _run_pytest(project: Path, env: dict[str, str]) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "-q",
        cwd=str(project),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 180)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


@pytest.fixture(scope="module")
def report_url(real_run: dict[str, Any]) -> Iterator[str]:
    handler = functools.partial(_QuietFiles, directory=str(real_run["dir"]))
    server = serve_http(handler)  # type: ignore[arg-type]
    base, _ = next(server)
    yield f"{base}/{real_run['html'].name}"
    server.close()


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


PAGE_VIEW = """(async () => {
  const images = [...document.images];
  await Promise.all(images.map((img) => img.decode()));
  const rows = [...document.querySelectorAll('tr.scenario')];
  return {
    title: document.title,
    rows: rows.map((row) => ({id: row.id, text: row.innerText})),
    failure: document.querySelector('tr.failure')?.innerText ?? null,
    images: images.map((img) => ({width: img.naturalWidth, alt: img.alt})),
    fetched: performance.getEntriesByType('resource').map((entry) => entry.name),
    scripts: document.scripts.length,
  };
})()"""


@pytest.mark.e2e
async def test_a_real_run_s_page_shows_each_scenario_and_the_failure_s_screenshot(
    extension_link: Browser, real_run: dict[str, Any], report_url: str, tmp_path: Path
) -> None:
    session = await extension_link.new_tab(report_url, own_window=True)
    try:
        seen = await session.evaluate(PAGE_VIEW, await_promise=True)
        shot = await session.send("Page.captureScreenshot", {"format": "png"})
        (tmp_path / "report.png").write_bytes(base64.b64decode(shot["data"]))  # for a person
    finally:
        await extension_link.close_tab(session.tab_id)
    assert "1 passed" in seen["title"] and "1 failed" in seen["title"]
    rows = seen["rows"]
    assert [row["id"] for row in rows] == ["gemini-too-short", "chatgpt-answers"]  # failed first
    failed, passed = rows[0]["text"], rows[1]["text"]
    assert "Gemini writes a book" in failed and "FAILED" in failed
    assert "✗ FAIL minAnswerLength (gemini)" in failed and "expected >= 100000" in failed
    assert "ChatGPT answers" in passed and "passed" in passed
    by_id = {record["id"]: record for record in real_run["json"]["results"]}
    preview = by_id["chatgpt-answers"]["providers"]["chatgpt"]["answer_preview"]
    assert preview.splitlines()[0] in passed  # the answer, as the report holds it
    assert "total " in passed and "open tab " in passed  # its timings
    assert seen["failure"] is not None and "What failed" in seen["failure"]
    assert "DOM excerpt" in seen["failure"]
    assert len(seen["images"]) == 1 and seen["images"][0]["width"] > 0
    assert seen["images"][0]["alt"].startswith("gemini tab ")
    assert seen["fetched"] == [] and seen["scripts"] == 0  # self-contained: nothing fetched
