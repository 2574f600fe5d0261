"""The run report's page: pure rendering, and a real run's page as a person sees it in
Chromium (rows, checks, answers, the failure's screenshots; nothing fetched)."""

from __future__ import annotations

import base64
import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from bridge.cdp.browser import Browser
from bridge.cdp.session import CdpSession
from bridge.testing.scenarios.html_report import render_html
from bridge.waiting import scaled
from tests.local_http import serve_http

JPEG_1PX = base64.b64decode(
    "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////"
    "////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQAB"
    "PxA="
)


class _Structure(HTMLParser):
    """Tags and attributes of a page, and its text roughly as a browser shows it: the body's
    only, blocks apart, and what a closed ``<details>`` holds beyond its summary kept aside
    as hidden."""

    _INLINE = frozenset({"strong", "code", "b", "i", "em", "a"})

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.hidden: list[str] = []
        self._open: list[str] = []
        self._in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_body |= tag == "body"
        if tag in ("details", "summary"):
            self._open.append(tag)
        self._apart(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("details", "summary") and self._open and self._open[-1] == tag:
            self._open.pop()
        self._apart(tag)

    def _apart(self, tag: str) -> None:
        if tag not in self._INLINE:
            self.handle_data(" ")

    def handle_data(self, data: str) -> None:
        if not self._in_body:
            return
        in_details = "details" in self._open
        (self.hidden if in_details and self._open[-1] != "summary" else self.text).append(data)

    def shown(self) -> str:
        """The visible text, whitespace collapsed."""
        return " ".join("".join(self.text).split())


def _parse(page: str) -> _Structure:
    parser = _Structure()
    parser.feed(page)
    parser.close()
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


def _report(*records: dict[str, Any], **meta: Any) -> dict[str, Any]:
    outcomes = [r["outcome"] for r in records]
    return {
        "format": 2,
        "status": "finished",
        "started_at": "2026-11-23T10:00:00.000Z",
        "finished_at": "2026-11-23T10:01:00.000Z",
        "mode": "fake",
        "args": ["scenarios"],
        **meta,
        "summary": {
            "total": len(records),
            **{k: outcomes.count(k) for k in ("passed", "failed", "skipped", "error")},
        },
        "results": list(records),
    }


def _scenario_rows(parsed: _Structure) -> list[dict[str, str | None]]:
    return [
        attrs
        for tag, attrs in parsed.tags
        if tag == "tr" and "scenario" in (attrs.get("class") or "").split()
    ]


HOSTILE = "<script>alert(1)</script></pre></details></td></tr><img src=http://evil.example/x>"


def test_everything_from_the_report_is_text_never_markup() -> None:
    provider = {
        "ok": True,
        "answer_preview": HOSTILE,
        "answer": HOSTILE * 20,  # long enough for the whole answer's <details> too
        "answer_length": len(HOSTILE) * 20,
        "url": HOSTILE,
        "timings": {HOSTILE: 1.0},
        "error": {"code": HOSTILE, "message": HOSTILE},
        "steps": [{"step": HOSTILE, "start_s": 0, "duration_ms": 1}],
    }
    record = _record(
        "hostile",
        "failed",
        question=HOSTILE,
        providers={HOSTILE: provider},
        checks=[{"name": HOSTILE, "provider": HOSTILE, "passed": False, "actual": HOSTILE}],
        message=HOSTILE,
        evidence=[
            {"name": HOSTILE, "kind": "html", "text": HOSTILE, "excerpt_of": HOSTILE},
            {"name": HOSTILE, "kind": "text", "text": HOSTILE},
            {"name": HOSTILE, "kind": "jpeg", "data": base64.b64encode(JPEG_1PX).decode()},
        ],
        tags=[HOSTILE],
        file=HOSTILE,
    )
    record["name"] = HOSTILE
    skipped = _record(HOSTILE, "skipped", message=HOSTILE)
    page = render_html(_report(record, skipped, status=HOSTILE, cwd=HOSTILE, browser=HOSTILE))
    parsed = _parse(page)
    tags = [tag for tag, _ in parsed.tags]
    assert "script" not in tags
    assert tags.count("img") == 1  # the screenshot only
    assert not any(
        (attrs.get("src") or attrs.get("href") or "data:").startswith(("http", "//"))
        for _, attrs in parsed.tags
    )
    assert _scenario_rows(parsed)[1]["id"] == HOSTILE  # an attribute keeps it whole, too
    seen = "".join(parsed.text) + "".join(parsed.hidden)
    assert seen.count(HOSTILE) >= 20  # shown, as text: the answer, its whole, the message…


def test_one_row_per_scenario_failures_first_with_checks_answers_timings_and_evidence() -> None:
    jpeg = base64.b64encode(JPEG_1PX).decode()
    ok = _record(
        "chatgpt-ok",
        "passed",
        checks=[
            {
                "name": "minAnswerLength",
                "provider": "chatgpt",
                "passed": True,
                "actual": 597,
                "expected": ">= 20",
            }
        ],
        providers={
            "chatgpt": {
                "ok": True,
                "answer_preview": "A decorator wraps a function.",
                "answer": "A decorator wraps a function.",
                "answer_length": 29,
                "timings": {"total_ms": 619.5, "connect_ms": 119.7, "wait_response_ms": 444.2},
                "steps": [
                    {"step": "connect", "start_s": 0.0, "duration_ms": 119.7},
                    {"step": "wait", "start_s": 0.2, "duration_ms": 444.2, "attempt": 2},
                ],
            }
        },
    )
    broken = _record(
        "gemini-broken",
        "failed",
        provider="gemini",
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
        message="FAIL expect.error[gemini]: error_turn",
        evidence=[
            {"name": "gemini tab 7 screenshot", "kind": "jpeg", "data": jpeg},
            {
                "name": "gemini tab 7 DOM excerpt",
                "kind": "html",
                "text": "<model-response><p>x</p></model-response>",
                "excerpt_of": "the newest turn of 3",
            },
        ],
    )
    skipped = _record("live-only", "skipped", message="live only (run with --live): real sites")
    erred = _record("setup-broke", "error", message="fixture 'bridge' failed")
    parsed = _parse(render_html(_report(ok, broken, skipped, erred)))
    rows = _scenario_rows(parsed)
    # Every scenario once; those that did not pass first, each group in the order it ran.
    assert [row["id"] for row in rows] == [
        "gemini-broken",
        "setup-broke",
        "chatgpt-ok",
        "live-only",
    ]
    text = parsed.shown()
    assert "Gemini Broken gemini-broken provider: gemini · tags: smoke scenarios/x.json" in text
    assert "FAILED 1.50 s" in text and "ERROR 1.50 s" in text
    assert "skipped 1.50 s live only (run with --live): real sites" in text
    assert "✗ FAIL expect.error (gemini): got error_turn, expected None" in text
    assert "✓ pass minAnswerLength (chatgpt): got 597, expected >= 20" in text
    assert "A decorator wraps a function." in text
    assert "total 0.62 s · open tab 0.12 s · answer 0.44 s" in text
    assert "steps: connect 0.12 s → wait 0.44 s (attempt 2)" in text
    assert "error [error_turn]: oops" in text
    assert "What failed FAIL expect.error[gemini]: error_turn" in text
    assert "fixture 'bridge' failed" in text  # an error shows its message as a failure does
    images = [attrs for tag, attrs in parsed.tags if tag == "img"]
    assert images == [{"alt": "gemini tab 7 screenshot", "src": f"data:image/jpeg;base64,{jpeg}"}]
    assert "gemini tab 7 DOM excerpt: the newest turn of 3 (41 characters)" in text
    assert "<model-response><p>x</p></model-response>" in "".join(parsed.hidden)  # one click
    # Outcome in words as well as colour: each badge says it.
    badges = [attrs.get("class") for tag, attrs in parsed.tags if tag == "span"]
    assert badges.count("badge failed") == 1 and badges.count("badge passed") == 1


def test_an_answer_shows_its_start_and_the_whole_of_it_one_click_away() -> None:
    answer = "".join(f"line {i:04d}\n" for i in range(100))  # 1000 characters
    long = {"ok": True, "answer_preview": answer[:300], "answer": answer, "answer_length": 1000}
    older = {"ok": True, "answer_preview": answer[:300], "answer_length": 1000}  # no "answer"
    page = render_html(
        _report(
            _record("now", "passed", providers={"chatgpt": long}),
            _record("before", "passed", providers={"chatgpt": older}),
        )
    )
    parsed = _parse(page)
    text = parsed.shown()
    assert "line 0059" in text and "line 0060" not in text  # the first 600 characters
    assert "The whole answer (1000 characters)" in text
    assert "line 0099" in "".join(parsed.hidden)
    assert "The first 300 of 1000 characters." in text  # a report of whole answers' time


def test_the_header_says_how_the_run_went_and_under_what_settings() -> None:
    report = _report(
        _record("a", "passed"),
        _record("b", "failed"),
        status="interrupted",
        cwd="/home/me/project",
        python="3.12.1",
        pytest="8.3.4",
        workers=2,
        browser="Chromium 131",
    )
    report["summary"].update(planned=4, not_run=2)
    text = _parse(render_html(report)).shown()
    assert "bridge scenario run: interrupted" in text
    assert "1 passed 1 failed 0 error 0 skipped 2 not run" in text
    assert "Started 2026-11-23T10:00:00.000Z, finished 2026-11-23T10:01:00.000Z" in text
    assert "against bridge's fake sites" in text
    assert "pytest scenarios in /home/me/project (Python 3.12.1, pytest 8.3.4)" in text
    assert "workers: 2; browser: Chromium 131" in text
    live = _report(mode="live")
    live["finished_at"] = None
    live_text = _parse(render_html(live)).shown()
    assert "finished not yet; against the real sites in your Chrome" in live_text


def test_a_run_with_no_result_yet_says_so() -> None:
    report = _report()
    report.update(status="running", finished_at=None)
    text = _parse(render_html(report)).shown()
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
            "id": "both-write-a-book",
            "name": "Both write a book",
            "provider": "both",
            "tags": ["parallel"],
            "question": {"template": "What is a Python generator?"},
            # No fake answer is this long: the scenario fails, and leaves its evidence.
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
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYTEST_") and k != "BRIDGE_REPORTS_DIR"
    }
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(180.0),
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # one scenario failed, as meant
    reports = sorted((project / "reports").glob("*.json"))
    assert len(reports) == 1, proc.stdout
    return {
        "json": json.loads(reports[0].read_text()),
        "html": reports[0].with_suffix(".html"),
        "dir": project / "reports",
    }


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


# What a person sees (innerText leaves out what is hidden, such as a closed <details>), and
# what the page refers to outside itself.
PAGE_VIEW = """(async () => {
  const images = [...document.images];
  await Promise.all(images.map((img) => img.decode()));
  const rows = [...document.querySelectorAll('tr.scenario')];
  return {
    title: document.title,
    header: document.querySelector('header').innerText,
    rows: rows.map((row) => ({id: row.id, text: row.innerText})),
    failure: document.querySelector('tr.failure')?.innerText ?? null,
    images: images.map((img) => ({width: img.naturalWidth, alt: img.alt})),
    references: [...document.querySelectorAll('[src], [href]')].map(
      (el) => el.getAttribute('src') ?? el.getAttribute('href')),
    scripts: document.scripts.length,
    fetched: performance.getEntriesByType('resource').map((entry) => entry.name),
  };
})()"""


@pytest.mark.e2e
async def test_a_real_run_s_page_shows_each_scenario_and_the_failure_s_screenshots(
    extension_link: Browser, real_run: dict[str, Any], report_url: str, tmp_path: Path
) -> None:
    session = await extension_link.new_tab(own_window=True)
    requested: list[str] = []
    try:
        await session.send("Network.enable")
        stop = session.on(
            "Network.requestWillBeSent", lambda p: requested.append(p["request"]["url"])
        )
        await session.navigate(report_url)  # returns on the load event
        stop()
        seen = await session.evaluate(PAGE_VIEW, await_promise=True)
        # The whole page, for a person to look at (not asserted).
        await _screenshot_whole_page(session, tmp_path / "report.png")
    finally:
        await extension_link.close_tab(session.tab_id)
    # Self-contained: the page itself was the only request, and it refers to nothing outside.
    assert [url for url in requested if not url.startswith("data:")] == [report_url]
    assert seen["fetched"] == [] and seen["scripts"] == 0
    assert all(ref.startswith("data:") for ref in seen["references"]), seen["references"]
    assert "1 passed" in seen["title"] and "1 failed" in seen["title"]
    assert "bridge scenario run: finished" in seen["header"]
    assert "1 passed" in seen["header"] and "0 not run" in seen["header"]
    rows = seen["rows"]
    assert [row["id"] for row in rows] == ["both-write-a-book", "chatgpt-answers"]  # failed first
    failed, passed = rows[0]["text"], rows[1]["text"]
    assert "Both write a book" in failed and "FAILED" in failed
    for provider in ("chatgpt", "gemini"):
        assert f"✗ FAIL minAnswerLength ({provider})" in failed
    assert "expected >= 100000" in failed
    assert "ChatGPT answers" in passed and "passed" in passed and "FAIL" not in passed
    by_id = {record["id"]: record for record in real_run["json"]["results"]}
    answer = by_id["chatgpt-answers"]["providers"]["chatgpt"]["answer"]
    assert answer.splitlines()[0] in passed  # the answer, as the report holds it
    assert "total " in passed and "open tab " in passed  # its timings
    assert seen["failure"] is not None and "What failed" in seen["failure"]
    assert "FAIL minAnswerLength[gemini]" in seen["failure"]
    # A screenshot of each provider tab, decoded, and a DOM excerpt of its newest turns,
    # found with the provider's own selectors on the fake sites.
    assert sorted(image["alt"].split(" tab ")[0] for image in seen["images"]) == [
        "chatgpt",
        "gemini",
    ]
    assert all(image["width"] > 0 for image in seen["images"])
    evidence = by_id["both-write-a-book"]["evidence"]
    excerpts = {e["name"].split(" tab ")[0]: e for e in evidence if e["kind"] == "html"}
    assert set(excerpts) == {"chatgpt", "gemini"}
    assert 'data-testid="conversation-turn-' in excerpts["chatgpt"]["text"]
    assert "<model-response" in excerpts["gemini"]["text"]
    for excerpt in excerpts.values():
        assert excerpt["excerpt_of"].startswith("the newest ")
        assert f"DOM excerpt: {excerpt['excerpt_of']}" in seen["failure"]
    assert all(e["kind"] == "jpeg" for e in evidence if "data" in e)


async def _screenshot_whole_page(session: CdpSession, path: Path) -> None:
    """The whole page at its window's width. Taken twice, the first thrown away: through
    chrome.debugger, a tab's first capture beyond its viewport repeats the first screen down
    the page (seen in Chromium 156 headless); the second is whole. (A clip or a metrics
    override does the same every time.)"""
    params = {"format": "png", "captureBeyondViewport": True}
    await session.send("Page.captureScreenshot", params, timeout=scaled(30.0))
    shot = await session.send("Page.captureScreenshot", params, timeout=scaled(30.0))
    path.write_bytes(base64.b64decode(shot["data"]))
