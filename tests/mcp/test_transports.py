"""``python -m bridge.mcp`` as a real subprocess: stdio, Streamable HTTP, shutdown.

Each server launches its own headless Chromium (``--launch --headless --isolated``) with
the fake sites mapped in through ``--chrome-arg``, exactly as a person would run it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import stat
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import pytest_asyncio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bridge.fakes import Behaviour, FakeSites
from tests.mcp import stdio
from tests.mcp.stdio import ROOT, owned, server_args

pytestmark = pytest.mark.e2e

QUESTION = "How do I read files asynchronously in Python?"


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stdio_server(
    fake_sites: FakeSites, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Client]:
    state = tmp_path_factory.mktemp("mcp-stdio")
    async for client in owned(lambda: stdio.stdio_server(fake_sites, state)):
        yield client


def _text(result: Any) -> str:
    return str(result.content[0].text)


async def test_stdio_lists_the_tools(stdio_server: Client) -> None:
    names = {t.name for t in (await stdio_server.list_tools()).tools}
    assert {"ask_chatgpt_web", "ask_gemini_web", "ask_chatgpt_gemini_web"} <= names


@pytest.mark.parametrize("tool", ["ask_chatgpt_web", "ask_gemini_web"])
async def test_stdio_asks_each_provider(stdio_server: Client, fakes: FakeSites, tool: str) -> None:
    result = await stdio_server.call_tool(tool, {"question": QUESTION, "new_chat": True})
    assert not result.is_error, _text(result)
    site = fakes.chatgpt if tool == "ask_chatgpt_web" else fakes.gemini
    assert _text(result).startswith(site.records[-1].answer.splitlines()[0])


async def test_stdio_asks_both(stdio_server: Client, fakes: FakeSites) -> None:
    result = await stdio_server.call_tool(
        "ask_chatgpt_gemini_web", {"question": QUESTION, "new_chat": True}
    )
    assert not result.is_error
    data = result.structured_content or {}
    assert data["chatgpt"]["answer"] and data["gemini"]["answer"]


async def test_stdio_snapshot_returns_an_image(stdio_server: Client, fakes: FakeSites) -> None:
    await stdio_server.call_tool("ask_gemini_web", {"question": QUESTION, "new_chat": True})
    result = await stdio_server.call_tool("take_cdp_snapshot", {"target": "gemini"})
    assert [c.type for c in result.content] == ["text", "image"]


async def test_stdio_progress_during_a_slow_answer(stdio_server: Client, fakes: FakeSites) -> None:
    fakes.chatgpt.queue(Behaviour(chunk_chars=10, chunk_interval_ms=40))
    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    result = await stdio_server.call_tool(
        "ask_chatgpt_web", {"question": QUESTION, "new_chat": True}, progress_callback=on_progress
    )
    assert not result.is_error
    assert any("characters so far" in m for m in messages)


async def test_stdio_cancelled_ask_leaves_the_next_ask_working(
    stdio_server: Client, fakes: FakeSites
) -> None:
    fakes.chatgpt.queue(Behaviour(length="long", chunk_chars=10, chunk_interval_ms=50))
    asking = asyncio.ensure_future(
        stdio_server.call_tool(
            "ask_chatgpt_web", {"question": "Explain Python asyncio in depth.", "new_chat": True}
        )
    )
    await fakes.chatgpt.wait_for_record_async(lambda r: r.first_token_at is not None, 30)
    asking.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asking
    # The server stopped that answer; the same conversation takes the next question.
    await fakes.chatgpt.wait_for_record_async(lambda r: r.stopped, 30)
    result = await stdio_server.call_tool(
        "ask_chatgpt_web", {"question": "What is a Python decorator?"}
    )
    assert not result.is_error, _text(result)
    assert "decorator" in _text(result)


# -- HTTP ------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _read_until(stream: asyncio.StreamReader, marker: str, timeout: float) -> list[str]:
    lines: list[str] = []
    async with asyncio.timeout(timeout):
        while True:
            raw = await stream.readline()
            if not raw:
                raise AssertionError("server exited:\n" + "".join(lines))
            lines.append(raw.decode())
            if marker in lines[-1]:
                return lines


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def http_server(
    fake_sites: FakeSites, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[dict[str, Any]]:
    state = tmp_path_factory.mktemp("mcp-http")
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *server_args(fake_sites, state, "--http", "--port", str(port)),
        cwd=str(ROOT),
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    lines = await _read_until(proc.stderr, "MCP over HTTP at", 60)
    token = (state / "mcp-token").read_text().strip()
    try:
        yield {
            "url": f"http://127.0.0.1:{port}/mcp",
            "port": port,
            "token": token,
            "state": state,
            "stderr": lines,
        }
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 10)


def _initialize() -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }


async def _post(server: dict[str, Any], headers: dict[str, str]) -> int:
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient(trust_env=False) as http:
        response = await http.post(server["url"], json=_initialize(), headers={**base, **headers})
        return response.status_code


async def test_the_devtools_endpoint_is_announced_on_stderr(http_server: dict[str, Any]) -> None:
    """Its URL and where its token is, never the token (tests/reliability/test_security.py
    checks every start)."""
    path = http_server["state"] / "cdp-token"
    token = path.read_text().strip()
    assert any(
        line.startswith("bridge: CDP endpoint: ws://127.0.0.1:")
        and f"/cdp (token in {path}; `bridge token cdp --state-dir {http_server['state']}` "
        "prints it)"
        in line
        for line in (raw.strip() for raw in http_server["stderr"])
    ), http_server["stderr"]
    assert not any(token in line for line in http_server["stderr"])


async def test_http_token_file_is_private_and_announced_by_its_path_only(
    http_server: dict[str, Any],
) -> None:
    path = http_server["state"] / "mcp-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert any(f"made a new HTTP bearer token in {path}" in line for line in http_server["stderr"])
    assert not any(http_server["token"] in line for line in http_server["stderr"])


async def test_http_refuses_missing_and_wrong_tokens(http_server: dict[str, Any]) -> None:
    assert await _post(http_server, {}) == 401
    assert await _post(http_server, {"Authorization": "Bearer not-the-token"}) == 401


async def test_http_refuses_foreign_origin_and_host(http_server: dict[str, Any]) -> None:
    auth = {"Authorization": f"Bearer {http_server['token']}"}
    assert await _post(http_server, {**auth, "Origin": "https://evil.example"}) == 403
    assert await _post(http_server, {**auth, "Host": f"evil.example:{http_server['port']}"}) == 421


async def test_http_tool_call_works_with_the_token(
    http_server: dict[str, Any], fakes: FakeSites
) -> None:
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {http_server['token']}"}, trust_env=False, timeout=60
    )
    async with http, Client(streamable_http_client(http_server["url"], http_client=http)) as client:
        result = await client.call_tool("ask_gemini_web", {"question": QUESTION, "new_chat": True})
    assert not result.is_error, _text(result)
    assert _text(result).startswith(fakes.gemini.records[-1].answer.splitlines()[0])


async def test_http_port_taken_is_a_clear_error(
    http_server: dict[str, Any], tmp_path: Path
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge.mcp",
        "--http",
        "--port",
        str(http_server["port"]),
        "--state-dir",
        str(tmp_path),
        cwd=str(ROOT),
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode != 0
    assert f"HTTP port {http_server['port']}" in err.decode() and "--port" in err.decode()


# -- shutdown ------------------------------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("how", ["stdin-closed", "SIGTERM", "SIGINT"])
async def test_shutdown_ends_server_and_browser_within_5s(
    fake_sites: FakeSites, tmp_path: Path, how: str
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *server_args(fake_sites, tmp_path),
        cwd=str(ROOT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None and proc.stdin is not None
    line = (await _read_until(proc.stderr, "(pid ", 60))[-1]
    browser_pid = int(line.split("(pid ")[1].split(")")[0])
    assert _alive(browser_pid)
    loop = asyncio.get_running_loop()
    started = loop.time()
    if how == "stdin-closed":
        proc.stdin.close()
    else:
        proc.send_signal(signal.SIGTERM if how == "SIGTERM" else signal.SIGINT)
    await asyncio.wait_for(proc.wait(), 10)
    elapsed = loop.time() - started
    assert elapsed < 5.0, f"took {elapsed:.1f}s"
    assert not _alive(browser_pid)
    assert proc.returncode == 0  # a normal end, whichever way it was asked for


# -- exit status: 0 for a normal end, 1 when the server crashed ----------------------------------


async def _stdio_without_browser(state: Path, stdout: int) -> asyncio.subprocess.Process:
    """The server as an MCP client starts it, minus ``--launch``: nothing to wait for."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "bridge.mcp", "--state-dir", str(state)),
        cwd=str(ROOT),
        stdin=asyncio.subprocess.PIPE,
        stdout=stdout,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(_initialize()) + "\n").encode())
    await proc.stdin.drain()
    return proc


async def test_stdin_closed_after_a_request_exits_0(tmp_path: Path) -> None:
    proc = await _stdio_without_browser(tmp_path, asyncio.subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    answer = json.loads(await asyncio.wait_for(proc.stdout.readline(), 30))
    assert answer["id"] == 1 and "result" in answer
    proc.stdin.close()
    _, err = await asyncio.wait_for(proc.communicate(), 15)
    assert proc.returncode == 0, err.decode()
    assert "crashed" not in err.decode()


async def test_a_crashed_server_logs_its_traceback_and_exits_1(tmp_path: Path) -> None:
    # stdout is a pipe nobody reads any more (the client's end is gone): the answer to the
    # request cannot be written, and the MCP server task fails with BrokenPipeError.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = await _stdio_without_browser(tmp_path, write_end)
    finally:
        os.close(write_end)
    assert proc.stdin is not None
    proc.stdin.close()
    _, raw = await asyncio.wait_for(proc.communicate(), 30)
    err = raw.decode()
    assert proc.returncode == 1, err
    # bridge.logs' one line per event: the traceback rides on the line, its newlines escaped.
    line = next(x for x in err.splitlines() if " ERROR bridge.mcp: the MCP server crashed" in x)
    assert "Traceback" in line and "BrokenPipeError" in line


def test_exit_status_is_1_only_for_a_server_that_raised() -> None:
    from bridge.mcp.__main__ import exit_status, server_crash

    async def scenario() -> list[int]:
        async def fail() -> None:
            raise OSError("boom")

        async def forever() -> None:
            await asyncio.Event().wait()

        async def done() -> None:
            return None

        crashed = asyncio.ensure_future(fail())
        finished = asyncio.ensure_future(done())
        running = asyncio.ensure_future(forever())
        cancelled = asyncio.ensure_future(forever())
        await asyncio.sleep(0)
        cancelled.cancel()
        await asyncio.wait({crashed, finished, cancelled})
        statuses = [
            exit_status(server_crash(task)) for task in (crashed, finished, running, cancelled)
        ]
        running.cancel()
        return statuses

    assert asyncio.run(scenario()) == [1, 0, 0, 0]


async def test_two_http_clients_keep_their_own_current_tabs(http_server: dict[str, Any]) -> None:
    """Each MCP session over HTTP acts on its own current tab, never on the other's."""
    from tests.tools.site import serve

    pages = serve()
    site = next(pages)
    auth = {"Authorization": f"Bearer {http_server['token']}"}
    # Two instances of one app tell bridge apart with X-Bridge-Client (MCP is stateless).
    try:
        async with (
            httpx2.AsyncClient(
                headers={**auth, "X-Bridge-Client": "one"}, trust_env=False, timeout=60
            ) as h1,
            httpx2.AsyncClient(
                headers={**auth, "X-Bridge-Client": "two"}, trust_env=False, timeout=60
            ) as h2,
            Client(streamable_http_client(http_server["url"], http_client=h1)) as one,
            Client(streamable_http_client(http_server["url"], http_client=h2)) as two,
        ):
            await one.call_tool("browser_navigate", {"url": f"{site}/form"})
            await two.call_tool("browser_navigate", {"url": f"{site}/dialogs"})
            assert "Sign up" in _text(await one.call_tool("browser_snapshot", {}))
            assert "Confirm" in _text(await two.call_tool("browser_snapshot", {}))
            listed = (await two.call_tool("browser_tabs", {"action": "list"})).structured_content
            current = [t["url"] for t in listed["tabs"] if t["current"]]
            assert len(current) == 1 and current[0].endswith("/dialogs")
    finally:
        pages.close()
