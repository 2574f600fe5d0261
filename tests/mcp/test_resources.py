"""The jobs and conversations as MCP resources (docs/mcp.md#resources), read through a real
MCP client: in process over a real ``Bridge`` whose jobs are records in a temporary state
directory (no browser where the browser is not the point), over the fake sites, and once
over stdio end to end (ask, then list and read the job and its conversation)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, TextResourceContents

from bridge.app.facade import Bridge
from bridge.app.jobs import Job, Owner
from bridge.cdp.browser import Browser
from bridge.fakes import FakeSites
from bridge.link.transport import MockConnector, MockTransport
from bridge.mcp.server import build_server
from tests.mcp.stdio import stdio_server

QUESTION = "How do I reverse a list in Python, in place and as a copy?"


class NoBrowser(MockConnector):
    """A browser that is not linked, and must not be waited for."""

    async def connect(self, timeout: float | None = None) -> MockTransport:
        raise AssertionError("this must not wait for the browser")


def _bridge(tmp_path: Path, connector: MockConnector | None = None) -> Bridge:
    browser = Browser(connector or NoBrowser(), connect_timeout=0.01)
    return Bridge(browser, state_dir=tmp_path / "state", session_key="test-resources")


def _job(ident: str, age_s: float, **fields: Any) -> Job:
    created = time.time() - age_s
    return Job(
        id=ident,
        provider=fields.pop("provider", "chatgpt"),
        question=fields.pop("question", QUESTION),
        session_key="test-resources",
        created_at=created,
        updated_at=created + 1.5,
        timeout_s=480.0,
        **fields,
    )


def _text(read: Any) -> tuple[str, str | None]:
    [content] = read.contents
    assert isinstance(content, TextResourceContents)
    return content.text, content.mime_type


@pytest.fixture
def jobs(tmp_path: Path) -> tuple[Bridge, dict[str, Job]]:
    """A bridge with three job records: a failed one, a done one and a running one whose
    process is gone (oldest first)."""
    bridge = _bridge(tmp_path)
    made = {
        "failed": _job(
            "gemini-00000000aa",
            30,
            provider="gemini",
            question="What is a monad?",
            status="failed",
            phase="failed",
            error={"code": "login_required", "message": "Gemini asks you to sign in."},
        ),
        "done": _job(
            "chatgpt-00000000bb",
            20,
            status="done",
            phase="done",
            url="https://chatgpt.com/c/abc",
            chars=26,
            result={
                "answer": "Use `xs.reverse()` or `xs[::-1]`.",
                "url": "https://chatgpt.com/c/abc",
            },
        ),
        # Its server is gone (no pid 0 runs it, and no lock is held).
        "running": _job(
            "chatgpt-00000000cc",
            10,
            question="Explain " + "very " * 30 + "long things",
            phase="answering",
            chars=120,
            owner=Owner(pid=0),
            url="https://chatgpt.com/c/def",
        ),
    }
    for job in made.values():
        bridge.jobs.dir.mkdir(parents=True, exist_ok=True)
        bridge.jobs.save(job)
    return bridge, made


async def test_the_templates_are_listed_with_the_ask_group_only() -> None:
    def no_bridge() -> Bridge:
        raise AssertionError("listing the templates must not need a running bridge")

    async with Client(build_server(no_bridge, groups=("ask",))) as client:
        templates = (await client.list_resource_templates()).resource_templates
    assert [(t.uri_template, t.mime_type) for t in templates] == [
        ("bridge://jobs/{job_id}", "application/json"),
        ("bridge://conversations/{provider}/{conversation_id}", "text/markdown"),
    ]
    assert all(t.title and t.description for t in templates)
    assert "get_answer" in (templates[0].description or "")  # where waiting is
    async with Client(build_server(no_bridge, groups=("browser", "dom"))) as client:
        assert (await client.list_resource_templates()).resource_templates == []
        assert (await client.list_resources()).resources == []


async def test_the_jobs_are_listed_newest_first_without_the_browser(
    jobs: tuple[Bridge, dict[str, Job]],
) -> None:
    bridge, made = jobs
    async with Client(build_server(lambda: bridge)) as client:
        listed = (await client.list_resources()).resources  # NoBrowser: never waited for
    assert [r.uri for r in listed] == [
        "bridge://jobs/chatgpt-00000000cc",
        "bridge://jobs/chatgpt-00000000bb",
        "bridge://jobs/gemini-00000000aa",
    ]
    running, done, failed = listed
    assert {r.mime_type for r in listed} == {"application/json"}
    assert done.name == f"chatgpt-00000000bb: {QUESTION}"
    assert done.title == f"ChatGPT job: {QUESTION}"
    long = " ".join(made["running"].question.split())
    assert running.name == f"chatgpt-00000000cc: {long[:59]}…"  # 60 characters of it
    assert done.description == "done (2 s)"
    assert failed.name == "gemini-00000000aa: What is a monad?"
    assert failed.description == "failed: [login_required] Gemini asks you to sign in."
    assert re.fullmatch(
        r"running \(answering, 1\d s, 120 characters so far\)", running.description or ""
    )
    assert running.annotations is not None
    assert running.annotations.last_modified == made["running"].updated


async def test_the_listing_holds_the_newest_twenty_jobs(tmp_path: Path) -> None:
    bridge = _bridge(tmp_path)
    bridge.jobs.dir.mkdir(parents=True)
    for i in range(25):
        bridge.jobs.save(_job(f"chatgpt-{i:010x}", 100 - i, question=f"question {i}"))
    async with Client(build_server(lambda: bridge)) as client:
        listed = (await client.list_resources()).resources
    assert [r.uri for r in listed] == [f"bridge://jobs/chatgpt-{i:010x}" for i in range(24, 4, -1)]


async def test_a_job_reads_as_its_record(jobs: tuple[Bridge, dict[str, Job]]) -> None:
    bridge, made = jobs
    async with Client(build_server(lambda: bridge)) as client:
        text, mime = _text(await client.read_resource("bridge://jobs/chatgpt-00000000bb"))
        failed = json.loads(_text(await client.read_resource("bridge://jobs/gemini-00000000aa"))[0])
    assert mime == "application/json"
    done = json.loads(text)
    assert (done["id"], done["provider"], done["status"]) == (
        "chatgpt-00000000bb",
        "chatgpt",
        "done",
    )
    assert done["question"] == QUESTION  # whole, unlike a listing's name
    assert done["result"]["answer"] == "Use `xs.reverse()` or `xs[::-1]`."
    assert done["url"] == "https://chatgpt.com/c/abc"
    assert (done["created"], done["updated"]) == (made["done"].created, made["done"].updated)
    assert (done["elapsed_s"], done["owner_alive"]) == (1.5, False)
    assert failed["status"] == "failed" and failed["result"] is None
    assert failed["error"] == {"code": "login_required", "message": "Gemini asks you to sign in."}


async def test_reading_a_running_job_is_a_snapshot(jobs: tuple[Bridge, dict[str, Job]]) -> None:
    """A job whose process is gone is read as its record says: not picked up (get_answer
    would claim it and collect its answer from the conversation), not waited for."""
    bridge, _ = jobs
    path = bridge.jobs.path("chatgpt-00000000cc")
    before = path.read_text()
    async with Client(build_server(lambda: bridge)) as client:
        read = json.loads(_text(await client.read_resource("bridge://jobs/chatgpt-00000000cc"))[0])
    assert (read["status"], read["phase"], read["chars"]) == ("running", "answering", 120)
    assert read["owner_alive"] is False and read["resumed"] == 0
    assert read["elapsed_s"] >= 10
    assert path.read_text() == before
    assert not path.with_suffix(".lock").exists(), "reading claimed the job"


@pytest.mark.parametrize("ident", ["chatgpt-0123456789", "nope"])
async def test_an_unknown_job_says_to_call_list_jobs(
    jobs: tuple[Bridge, dict[str, Job]], ident: str
) -> None:
    bridge, _ = jobs
    async with Client(build_server(lambda: bridge)) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource(f"bridge://jobs/{ident}")
    assert raised.value.code == INVALID_PARAMS
    assert raised.value.message.startswith(f"[job_not_found] no job {ident!r}")
    assert "list_jobs" in raised.value.message


async def test_a_conversation_needs_a_known_provider_and_an_id(tmp_path: Path) -> None:
    bridge = _bridge(tmp_path)
    async with Client(build_server(lambda: bridge)) as client:
        with pytest.raises(MCPError) as provider:
            await client.read_resource("bridge://conversations/claude/abc")
        with pytest.raises(MCPError) as ident:
            await client.read_resource("bridge://conversations/gemini/a.b")
    assert provider.value.message.startswith("unknown provider 'claude'")
    assert "bridge://conversations/gemini/<id>" in provider.value.message
    assert ident.value.message.startswith("'a.b' is not a gemini conversation id")
    assert "https://gemini.google.com/app/<id>" in ident.value.message


async def test_a_conversation_without_the_browser_says_how_to_link_it(tmp_path: Path) -> None:
    bridge = _bridge(tmp_path, MockConnector())  # waits 0.01 s for a link that never comes
    async with Client(build_server(lambda: bridge)) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource("bridge://conversations/chatgpt/abc")
    assert raised.value.message.startswith("[extension_not_connected] ")


# -- over the fake sites ----------------------------------------------------------------

NAMES = {"chatgpt": "ChatGPT", "gemini": "Gemini"}
BASES = {"chatgpt": "https://chatgpt.com/c/", "gemini": "https://gemini.google.com/app/"}


@pytest.mark.e2e
async def test_conversations_are_listed_and_read_as_markdown(
    bridge: Bridge, fakes: FakeSites
) -> None:
    exchanges = [
        ("How do I reverse a list?", "Use `reversed()`."),
        ("In place?", "`xs.reverse()`."),
    ]
    titles = {"chatgpt": "Reversing lists", "gemini": "Sorting lists"}
    made = {p: getattr(fakes, p).create_conversation(exchanges, t) for p, t in titles.items()}
    uris = {
        provider: f"bridge://conversations/{provider}/{ident}" for provider, ident in made.items()
    }
    async with Client(build_server(lambda: bridge)) as client:
        listed = {r.uri: r for r in (await client.list_resources()).resources}
        read = {provider: _text(await client.read_resource(uri)) for provider, uri in uris.items()}
    for provider, uri in uris.items():
        name = NAMES[provider]
        assert uri in listed, list(listed)
        assert (
            listed[uri].title
            == f"{name}: {'Reversing' if provider == 'chatgpt' else 'Sorting'} lists"
        )
        assert listed[uri].mime_type == "text/markdown"
        assert listed[uri].description == BASES[provider] + made[provider]
        assert read[provider] == (
            "## User (1)\n\nHow do I reverse a list?\n\n"
            f"## {name} (2)\n\nUse `reversed()`.\n\n"
            "## User (3)\n\nIn place?\n\n"
            f"## {name} (4)\n\n`xs.reverse()`.",
            "text/markdown",
        )


@pytest.mark.e2e
async def test_an_ask_over_stdio_is_listed_and_read_as_resources(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    # Gemini lists one too: with none, listing waits for its sidebar (docs/mcp.md#resources).
    fakes.gemini.create_conversation([("Hello?", "Hi.")])
    async with stdio_server(fake_sites, state) as client:
        asked = await client.call_tool("ask_chatgpt_web", {"question": QUESTION, "new_chat": True})
        assert not asked.is_error, asked.content
        data: dict[str, Any] = asked.structured_content or {}
        job_id, url = data["job"], data["url"]
        ident = url.rsplit("/", 1)[-1]
        listed = {r.uri: r for r in (await client.list_resources()).resources}
        job = json.loads(_text(await client.read_resource(f"bridge://jobs/{job_id}"))[0])
        text, mime = _text(await client.read_resource(f"bridge://conversations/chatgpt/{ident}"))
    answer = fakes.chatgpt.records[-1].answer
    assert f"bridge://jobs/{job_id}" in listed
    assert f"bridge://conversations/chatgpt/{ident}" in listed, list(listed)
    assert (job["status"], job["url"], job["question"]) == ("done", url, QUESTION)
    assert job["result"]["answer"] == answer
    assert mime == "text/markdown"
    assert text == f"## User (1)\n\n{QUESTION}\n\n## ChatGPT (2)\n\n{answer}"
