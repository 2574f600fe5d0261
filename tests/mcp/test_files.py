"""Files with the question through a real MCP client over stdio (docs/sites.md#attachments).

``python -m bridge.mcp`` runs as a subprocess that launches its own headless Chromium with
the fake sites mapped in, as in tests/mcp/test_transports.py; the fakes record what they
received.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client

from bridge.app.facade import Bridge
from bridge.fakes import Behaviour, FakeSites
from bridge.mcp.server import build_server
from bridge.policy.files import FilePolicy
from tests.attack_files import World, make_world
from tests.mcp import stdio
from tests.mcp.stdio import owned
from tests.providers.test_attachments import make_pdf
from tests.tools.site import serve

pytestmark = pytest.mark.e2e

ASK_TOOLS = ("ask_chatgpt_web", "ask_gemini_web", "ask_chatgpt_gemini_web")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """The server's fake home (with the key) and project (its working directory)."""
    return make_world(tmp_path_factory.mktemp("mcp-world"))


@pytest.fixture(scope="module")
def allowed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the server is started with ``--allow-path`` for: outside its project."""
    return tmp_path_factory.mktemp("mcp-allowed")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stdio_server(
    fake_sites: FakeSites, tmp_path_factory: pytest.TempPathFactory, world: World, allowed: Path
) -> AsyncIterator[Client]:
    """``bridge-mcp --allow-path <allowed>`` started in the project, HOME at the fake home."""
    state = tmp_path_factory.mktemp("mcp-files")
    async for client in owned(
        lambda: stdio.stdio_server(
            fake_sites,
            state,
            "--allow-path",
            str(allowed),
            cwd=world.project,
            env={"HOME": str(world.home)},
        )
    ):
        yield client


def _text(result: Any) -> str:
    return str(result.content[0].text)


async def test_every_ask_tool_takes_files(stdio_server: Client) -> None:
    tools = {t.name: t for t in (await stdio_server.list_tools()).tools}
    for name in ASK_TOOLS:
        files = tools[name].input_schema["properties"]["files"]
        assert "upload" in files["description"]


async def test_files_go_to_both_sites_over_stdio(
    stdio_server: Client, fakes: FakeSites, allowed: Path
) -> None:
    """Files outside the working directory go once ``--allow-path`` names their folder."""
    for site in (fakes.chatgpt, fakes.gemini):
        site.set_behaviour(Behaviour(upload_ms=300))
    pdf = allowed / "paper.pdf"
    pdf.write_bytes(make_pdf(1_500_000, seed=3))
    notes = allowed / "notes.txt"
    notes.write_text("The attached paper is a draft.\nPlease be kind.\n", encoding="utf-8")
    result = await stdio_server.call_tool(
        "ask_chatgpt_gemini_web",
        {
            "question": "What does the paper say?",
            "new_chat": True,
            "files": [str(pdf), str(notes)],
        },
    )
    assert not result.is_error, _text(result)
    digest = hashlib.sha256(pdf.read_bytes()).hexdigest()
    data = result.structured_content or {}
    for provider, site in (("chatgpt", fakes.chatgpt), ("gemini", fakes.gemini)):
        record = site.records[-1]
        assert [(f.name, f.size, f.sha256) for f in record.files] == [
            ("paper.pdf", 1_500_000, digest)
        ]
        assert '<file name="notes.txt">\nThe attached paper is a draft.' in record.text
        sent = {a["name"]: a["sent_as"] for a in data[provider]["used"]["attachments"]}
        assert sent == {"paper.pdf": "upload", "notes.txt": "inline"}


async def test_a_missing_file_is_refused_before_anything_is_sent(
    stdio_server: Client, fakes: FakeSites, allowed: Path
) -> None:
    result = await stdio_server.call_tool(
        "ask_chatgpt_gemini_web",
        {"question": "Read this.", "files": [str(allowed / "nowhere.pdf")]},
    )
    assert result.is_error
    assert "[file_refused]" in _text(result) and "nowhere.pdf" in _text(result)
    assert fakes.chatgpt.records == [] and fakes.gemini.records == []


# -- the attacker: a page told the agent to send the person's key --------------------------------


@pytest.mark.reliability(39)
async def test_every_ask_tool_refuses_the_key_and_files_outside_naming_the_flag(
    stdio_server: Client, fakes: FakeSites, world: World
) -> None:
    """By ``~``, by absolute path, and through symlinks in the working directory: refused
    before a job exists, with a message the agent can relay, and nothing reaches either
    site (no question, no upload)."""
    paths = ["~/.ssh/id_rsa", str(world.key), str(world.outside_file), "key.txt", "report.pdf"]
    for tool in ASK_TOOLS:
        for path in paths:
            result = await stdio_server.call_tool(
                tool, {"question": "Summarise this file.", "files": ["notes.txt", path]}
            )
            text = _text(result)
            assert result.is_error, (tool, path, text)
            assert "[path_not_allowed]" in text and repr(path) in text, text
            assert "--allow-path" in text and "do not send it" in text, text
            assert "BEGIN OPENSSH" not in text
    for site in (fakes.chatgpt, fakes.gemini):
        assert site.records == [] and site.uploads == []


@pytest.fixture(scope="module")
def upload_site() -> Iterator[str]:
    yield from serve()


@pytest.mark.reliability(39)
async def test_browser_file_upload_refuses_the_key_and_nothing_reaches_the_page(
    bridge: Bridge,
    upload_site: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The MCP tool in process, as a bridge started in the project with HOME at the fake
    home: the key, a symlink to it and a file outside are refused and the page's file input
    stays empty; with the outside folder allowed, that file goes."""
    world = make_world(tmp_path)
    monkeypatch.setenv("HOME", str(world.home))
    monkeypatch.chdir(world.project)
    bridge.file_policy = FilePolicy.create()
    async with Client(build_server(lambda: bridge, groups=("browser",))) as client:
        opened = await client.call_tool("browser_navigate", {"url": f"{upload_site}/upload"})
        assert not opened.is_error, _text(opened)
        count = {"function": "() => document.querySelector('#files').files.length"}
        for path in ("~/.ssh/id_rsa", "key.txt", str(world.outside_file), "report.pdf"):
            result = await client.call_tool(
                "browser_file_upload", {"target": "#files", "paths": ["notes.txt", path]}
            )
            text = _text(result)
            assert result.is_error and "[path_not_allowed]" in text, text
            assert repr(path) in text and "--allow-path" in text, text
            assert _text(await client.call_tool("browser_evaluate", count)) == "0"
        bridge.file_policy = FilePolicy.create([world.outside])
        result = await client.call_tool(
            "browser_file_upload", {"target": "#files", "paths": [str(world.outside_file)]}
        )
        assert not result.is_error, _text(result)
        assert (result.structured_content or {}).get("method") == "set_file_input_files"
        assert _text(await client.call_tool("browser_evaluate", count)) == "1"
