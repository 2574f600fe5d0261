"""Files with the question through a real MCP client over stdio (docs/sites.md#attachments).

``python -m bridge.mcp`` runs as a subprocess that launches its own headless Chromium with
the fake sites mapped in, as in tests/mcp/test_transports.py; the fakes record what they
received.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client

from bridge.fakes import Behaviour, FakeSites
from tests.mcp import stdio
from tests.mcp.stdio import owned
from tests.providers.test_attachments import make_pdf

pytestmark = pytest.mark.e2e

ASK_TOOLS = ("ask_chatgpt_web", "ask_gemini_web", "ask_chatgpt_gemini_web")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stdio_server(
    fake_sites: FakeSites, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Client]:
    state = tmp_path_factory.mktemp("mcp-files")
    async for client in owned(lambda: stdio.stdio_server(fake_sites, state)):
        yield client


def _text(result: Any) -> str:
    return str(result.content[0].text)


async def test_every_ask_tool_takes_files(stdio_server: Client) -> None:
    tools = {t.name: t for t in (await stdio_server.list_tools()).tools}
    for name in ASK_TOOLS:
        files = tools[name].input_schema["properties"]["files"]
        assert "upload" in files["description"]


async def test_files_go_to_both_sites_over_stdio(
    stdio_server: Client, fakes: FakeSites, tmp_path: Path
) -> None:
    for site in (fakes.chatgpt, fakes.gemini):
        site.set_behaviour(Behaviour(upload_ms=300))
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf(1_500_000, seed=3))
    notes = tmp_path / "notes.txt"
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
    stdio_server: Client, fakes: FakeSites, tmp_path: Path
) -> None:
    result = await stdio_server.call_tool(
        "ask_chatgpt_gemini_web",
        {"question": "Read this.", "files": [str(tmp_path / "nowhere.pdf")]},
    )
    assert result.is_error
    assert "[file_refused]" in _text(result) and "nowhere.pdf" in _text(result)
    assert fakes.chatgpt.records == [] and fakes.gemini.records == []
