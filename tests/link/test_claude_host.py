"""The Claude extension's native host as Chrome runs it, and bridge's end of it.

The host is ``python -m bridge.link.claude_host`` in a subprocess; this test is the
extension, writing and reading frames exactly as Chrome would (the whole extension, with its
tools in a real browser, is ``tests/claude_extension``); bridge's end is a real
``ClaudeConnector`` meeting the host in a runtime directory of the test's own.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bridge.errors import BridgeTimeout, ClaudeExtensionNotConnected, ExtensionDisconnected
from bridge.link import local_ipc
from bridge.link.claude_host import HOSTS_ROOM, ToolFailed, ToolQueue, check_origin
from bridge.link.claude_link import ClaudeConnector
from bridge.link.local_ipc import ENV_LOCAL_IPC
from bridge.link.registry import ENV_RUNTIME_DIR
from bridge.link.trust_root import load_secret
from bridge.waiting import scaled
from bridge.wire.claude import CLAUDE_ALLOWED_ORIGIN
from bridge.wire.native_framing import FrameDecoder, FrameError, encode

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="the test's pipes are POSIX"),
    pytest.mark.asyncio(loop_scope="session"),
]


class Extension:
    """Chrome's and the extension's side of the host's pipes."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.decoder = FrameDecoder()
        self.ready: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(encode(message))

    async def next(self, kind: str | None = None) -> dict[str, Any]:
        """The next message (of ``kind``; others stay queued)."""
        async with asyncio.timeout(scaled(10.0)):
            while True:
                for index, message in enumerate(self.ready):
                    if kind is None or message.get("type") == kind:
                        return self.ready.pop(index)
                assert self.process.stdout is not None
                data = await self.process.stdout.read(65536)
                assert data, "the host closed stdout"
                for item in self.decoder.feed(data):
                    assert not isinstance(item, FrameError), item
                    self.ready.append(item)

    def answer(self, text: str, **extra: Any) -> None:
        result = {"content": [{"type": "text", "text": text}], **extra}
        self.send({"type": "tool_response", "result": result})

    async def close_port(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        async with asyncio.timeout(scaled(10.0)):
            return await self.process.wait()


@pytest.fixture
def runtime() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="bridge-ch-"))  # short: Unix socket paths
    path.chmod(0o700)
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def start_host(
    runtime: Path, origin: str = CLAUDE_ALLOWED_ORIGIN, env: dict[str, str] | None = None
) -> Extension:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge.link.claude_host",
        origin,  # Chrome passes the caller's origin first
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, ENV_RUNTIME_DIR: str(runtime), **(env or {})},
    )
    return Extension(process)


@pytest_asyncio.fixture(loop_scope="session")
async def extension(runtime: Path) -> AsyncIterator[Extension]:
    ext = await start_host(runtime)
    ext.send({"type": "ping"})
    assert (await ext.next("pong"))["timestamp"] > 0
    yield ext
    if ext.process.returncode is None:
        ext.process.kill()
        await ext.process.wait()


@pytest_asyncio.fixture(loop_scope="session")
async def connector(runtime: Path) -> AsyncIterator[ClaudeConnector]:
    conn = ClaudeConnector(runtime, secret=load_secret())
    await conn.start()
    yield conn
    await conn.stop()


async def test_the_host_answers_ping_and_status_and_tells_of_each_client(
    extension: Extension, connector: ClaudeConnector
) -> None:
    extension.send({"type": "get_status"})
    status = await extension.next("status_response")
    assert status["native_host_version"].startswith("bridge")
    # The connector started after the host: it reached the host's endpoint.
    link = await connector.connect(timeout=scaled(10.0))
    assert link.hello["extension"] == "fcoeoabgfenejglbffodgkkbkcdhcgfn"
    assert await extension.next("mcp_connected") == {"type": "mcp_connected"}
    await link.close()
    assert await extension.next("mcp_disconnected") == {"type": "mcp_disconnected"}


async def test_a_host_starting_after_the_client_reaches_it(
    runtime: Path, connector: ClaudeConnector
) -> None:
    ext = await start_host(runtime)
    try:
        link = await connector.connect(timeout=scaled(10.0))
        calling = asyncio.ensure_future(link.call("tabs_context", {"createIfEmpty": True}))
        request = await ext.next("tool_request")
        assert request == {
            "type": "tool_request",
            "method": "execute_tool",
            "params": {"tool": "tabs_context_mcp", "args": {"createIfEmpty": True}},
        }
        ext.answer("tabs", tabContext={"currentTabId": 7, "availableTabs": [{"tabId": 7}]})
        reply = await calling
        assert reply.text == "tabs" and reply.tab_context is not None
        assert reply.tab_context.current == 7
    finally:
        assert await ext.close_port() == 0


async def test_calls_go_one_at_a_time_and_answers_reach_their_callers(
    extension: Extension, connector: ClaudeConnector
) -> None:
    link = await connector.connect(timeout=scaled(10.0))
    first = asyncio.ensure_future(link.call("get_page_text", {"tabId": 1}))
    second = asyncio.ensure_future(link.call("get_page_text", {"tabId": 2}))
    asked = await extension.next("tool_request")
    assert asked["params"]["args"] == {"tabId": 1}
    extension.answer("one")
    assert (await extension.next("tool_request"))["params"]["args"] == {"tabId": 2}
    extension.answer("two")
    assert (await first).text == "one" and (await second).text == "two"


@pytest.mark.reliability(47)
async def test_the_queue_sends_the_next_request_only_once_the_one_before_is_answered() -> None:
    """Answers carry no id: a second request must not reach the extension before the first
    one's answer, or the answers could not be told apart."""
    sent: list[tuple[dict[str, Any], bool]] = []  # (args, was the first answered by then)
    answered = False
    each_sent = asyncio.Queue[None]()

    def send(message: dict[str, Any]) -> None:
        sent.append((message["params"]["args"], answered))
        each_sent.put_nowait(None)

    queue = ToolQueue(send)
    # Both start before anything is answered (the second is scheduled before the test waits).
    first = asyncio.ensure_future(queue.run("read_page", {"tabId": 1}, 10.0))
    second = asyncio.ensure_future(queue.run("read_page", {"tabId": 2}, 10.0))
    await each_sent.get()
    answered = True
    queue.answered({"type": "tool_response", "result": {"content": "1"}})
    assert (await first)["result"]["content"] == "1"
    await each_sent.get()
    assert sent == [({"tabId": 1}, False), ({"tabId": 2}, True)]
    queue.close("gone")
    with pytest.raises(ToolFailed, match="gone"):
        await second


@pytest.mark.reliability(47)
async def test_a_late_answer_is_dropped_instead_of_reaching_the_next_caller(
    extension: Extension, connector: ClaudeConnector
) -> None:
    link = await connector.connect(timeout=scaled(10.0))
    with pytest.raises(BridgeTimeout, match="get_page_text"):
        late = asyncio.ensure_future(link.call("get_page_text", {"tabId": 1}, timeout=0.3))
        await extension.next("tool_request")
        await late
    following = asyncio.ensure_future(link.call("read_page", {"tabId": 1}))
    extension.answer("the late answer to get_page_text")
    assert (await extension.next("tool_request"))["params"]["tool"] == "read_page"
    extension.answer('- button "Save" [ref=ref_1]')
    assert (await following).text == '- button "Save" [ref=ref_1]'


async def test_an_error_answer_is_read_as_the_tools_error(
    extension: Extension, connector: ClaudeConnector
) -> None:
    link = await connector.connect(timeout=scaled(10.0))
    calling = asyncio.ensure_future(link.call("navigate", {"url": "x", "tabId": 99}))
    await extension.next("tool_request")
    extension.send({"type": "tool_response", "error": {"content": "Tab not found"}})
    assert (await calling).error == "Tab not found"


@pytest.mark.reliability(48)
async def test_the_extension_leaving_fails_a_waiting_call_at_once(
    extension: Extension, connector: ClaudeConnector
) -> None:
    link = await connector.connect(timeout=scaled(10.0))
    calling = asyncio.ensure_future(link.call("read_page", {"tabId": 1}, timeout=60.0))
    await extension.next("tool_request")
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await extension.close_port() == 0
    with pytest.raises(ExtensionDisconnected, match="closed its native port"):
        await calling
    assert loop.time() - started < 30  # not the call's 60 s deadline
    with pytest.raises(ClaudeExtensionNotConnected, match="install-native-host --claude"):
        await connector.connect(timeout=0.2)


@pytest.mark.reliability(45)
async def test_a_caller_other_than_the_claude_extension_is_refused(runtime: Path) -> None:
    ext = await start_host(runtime, origin="chrome-extension://abcdefghijklmnopabcdefghijklmnop/")
    assert ext.process.stdout is not None
    assert await ext.process.stdout.read() == b""  # not a byte for an impostor
    assert await ext.process.wait() == 1
    assert local_ipc.endpoint_files(runtime / HOSTS_ROOM) == []
    assert check_origin([]) is not None
    assert check_origin([CLAUDE_ALLOWED_ORIGIN, "--parent-window=0"]) is None


@pytest.mark.reliability(46)
async def test_over_tcp_a_listener_without_the_secret_is_never_taken_for_the_host(
    runtime: Path,
) -> None:
    """Windows' way (loopback TCP): a local process squatting a host endpoint is refused."""
    (runtime / HOSTS_ROOM).mkdir(mode=0o700)
    rogue_seen: list[bytes] = []

    async def rogue(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"\x00" * 32)  # a nonce, then whatever it makes of the answer
        rogue_seen.append(await reader.read(1024))
        writer.close()

    server = await asyncio.start_server(rogue, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    (runtime / HOSTS_ROOM / "4242.port").write_text(f"{port}\n")
    conn = ClaudeConnector(runtime, secret=load_secret(), kind="tcp")
    try:
        await conn.start()
        with pytest.raises(ClaudeExtensionNotConnected):
            await conn.connect(timeout=0.5)
        assert not (runtime / HOSTS_ROOM / "4242.port").exists()  # removed as stale
    finally:
        await conn.stop()
        server.close()


async def test_over_tcp_host_and_client_prove_the_secret_to_each_other(runtime: Path) -> None:
    ext = await start_host(runtime, env={ENV_LOCAL_IPC: "tcp"})
    ext.send({"type": "ping"})
    await ext.next("pong")
    conn = ClaudeConnector(runtime, secret=load_secret(), kind="tcp")
    await conn.start()
    try:
        link = await conn.connect(timeout=scaled(10.0))
        calling = asyncio.ensure_future(link.call("get_page_text", {"tabId": 3}))
        await ext.next("tool_request")
        ext.answer("over tcp")
        assert (await calling).text == "over tcp"
    finally:
        await conn.stop()
        assert await ext.close_port() == 0
