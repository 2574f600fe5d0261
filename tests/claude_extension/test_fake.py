"""The fake Claude extension against a stand-in native host and the test browser.

The stand-in host (written to tmp_path) speaks native messaging's framing, answers ``ping``
and ``get_status``, and writes to the fake whatever the test tells it to through a
``stand_in_send`` message (so each test scripts the host's tool requests).
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bridge.cdp.direct import DirectCdp
from tests.claude_extension.fake import (
    CLAUDE_ORIGIN,
    FakeClaudeExtension,
    ManifestRefused,
)
from tests.claude_extension.test_gif import decode_gif

STAND_IN_HOST = textwrap.dedent(
    """\
    import json, struct, sys, time

    seen = []

    def send(message):
        data = json.dumps(message).encode()
        sys.stdout.buffer.write(struct.pack("<I", len(data)) + data)
        sys.stdout.buffer.flush()

    while True:
        head = sys.stdin.buffer.read(4)
        if len(head) < 4:
            sys.exit(0)
        message = json.loads(sys.stdin.buffer.read(struct.unpack("<I", head)[0]))
        seen.append(message.get("type"))
        if message["type"] == "ping":
            send({"type": "pong", "timestamp": int(time.time() * 1000)})
        elif message["type"] == "get_status":
            send({"type": "status_response", "native_host_version": "stand-in",
                  "argv": sys.argv[1:], "seen": list(seen)})
        elif message["type"] == "stand_in_send":
            for out in message["messages"]:
                send(out)
        elif message["type"] == "stand_in_raw":
            sys.stdout.buffer.write(bytes.fromhex(message["hex"]))
            sys.stdout.buffer.flush()
    """
)


def _host_script(folder: Path) -> Path:
    script = folder / "stand_in_host.py"
    script.write_text(f"#!{sys.executable}\n{STAND_IN_HOST}", encoding="utf-8")
    script.chmod(0o755)
    return script


@pytest_asyncio.fixture(loop_scope="session")
async def fake(direct_cdp: DirectCdp, tmp_path: Path) -> AsyncIterator[FakeClaudeExtension]:
    async with FakeClaudeExtension(direct_cdp, [str(_host_script(tmp_path))]) as extension:
        yield extension


async def request(fake: FakeClaudeExtension, *calls: tuple[str, dict[str, Any]]) -> None:
    """The stand-in host sends these tool requests, as a host forwards an MCP client's."""
    messages = [
        {"type": "tool_request", "method": "execute_tool", "params": {"tool": t, "args": a}}
        for t, a in calls
    ]
    await fake.send({"type": "stand_in_send", "messages": messages})


async def tool(fake: FakeClaudeExtension, name: str, **args: Any) -> dict[str, Any]:
    await request(fake, (name, args))
    return await fake.next_answer()


def text_of(answer: dict[str, Any]) -> str:
    assert "result" in answer, answer
    return "\n".join(c["text"] for c in answer["result"]["content"] if c["type"] == "text")


def error_of(answer: dict[str, Any]) -> str:
    assert "error" in answer, answer
    return str(answer["error"]["content"])


async def open_tab(fake: FakeClaudeExtension, url: str) -> int:
    created = text_of(await tool(fake, "tabs_create_mcp"))
    match = re.search(r"Tab ID: (\d+)", created)
    assert match, created
    tab_id = int(match.group(1))
    assert "Navigated to" in text_of(await tool(fake, "navigate", url=url, tabId=tab_id))
    return tab_id


async def js(fake: FakeClaudeExtension, tab_id: int, code: str) -> str:
    answer = await tool(fake, "javascript_tool", action="javascript_exec", text=code, tabId=tab_id)
    return text_of(answer)


def ref_of(tree: str, role: str, name: str) -> str:
    match = re.search(rf'- {role} "{re.escape(name)}" \[ref=(ref_\d+)\]', tree)
    assert match, tree
    return match.group(1)


async def test_handshake_ping_and_status_with_the_origin_argument(
    fake: FakeClaudeExtension,
) -> None:
    types = [m["type"] for m in fake.received]
    assert types[:2] == ["pong", "status_response"]
    status = fake.received[1]
    assert status["argv"] == [CLAUDE_ORIGIN]
    assert status["seen"] == ["ping", "get_status"]
    assert (await fake.next_message("pong"))["timestamp"] > 0


async def test_requests_answered_in_order_without_ids(fake: FakeClaudeExtension) -> None:
    await request(
        fake,
        ("tabs_context_mcp", {"createIfEmpty": True}),
        ("no_such_tool", {}),
        ("tabs_create_mcp", {}),
    )
    first, second, third = [await fake.next_answer() for _ in range(3)]
    context = first["result"]["tabContext"]
    assert context["tabCount"] == 1 and context["tabGroupId"] is not None
    assert "Unknown tool" in error_of(second)
    assert re.search(r"Tab ID: \d+", text_of(third))
    assert third["result"]["tabContext"]["tabCount"] == 2
    for answer in (first, second, third):
        assert answer["type"] == "tool_response" and "id" not in answer


async def test_garbage_from_the_host_is_answered_and_survived(fake: FakeClaudeExtension) -> None:
    garbage = b"not json at all"
    framed = len(garbage).to_bytes(4, "little") + garbage
    await fake.send({"type": "stand_in_raw", "hex": framed.hex()})
    invalid = await fake.next_message("invalid")
    assert invalid["raw"] == "not json at all"
    await request(fake, ("tabs_context_mcp", {"createIfEmpty": True}))
    first, second = await fake.next_answer(), await fake.next_answer()
    assert "invalid message from the native host" in error_of(first)
    assert second["result"]["tabContext"]["tabCount"] == 1


async def test_read_page_refs_then_click_by_ref(fake: FakeClaudeExtension, site: str) -> None:
    tab_id = await open_tab(fake, f"{site}/form.html")
    tree = text_of(await tool(fake, "read_page", tabId=tab_id, filter="interactive"))
    assert re.search(r'- button "Go" \[ref=ref_\d+\] \(x=\d+,y=\d+\) id="go" type="button"', tree)
    assert "heading" not in tree  # not interactive
    everything = text_of(await tool(fake, "read_page", tabId=tab_id))
    assert '- heading "Claude fake form"' in everything
    assert re.search(r'\n  +- link "Other page"', everything)  # indented under nav
    button = ref_of(tree, "button", "Go")
    answer = await tool(fake, "computer", action="left_click", ref=button, tabId=tab_id)
    assert answer["result"]["tabContext"]["executedOnTabId"] == tab_id
    assert await js(fake, tab_id, "document.getElementById('out').textContent") == "clicked"
    found = text_of(await tool(fake, "find", query="agree terms", tabId=tab_id))
    assert 'checkbox "Agree to terms"' in found.splitlines()[0]


async def test_form_input_sets_text_checkbox_and_select(
    fake: FakeClaudeExtension, site: str
) -> None:
    tab_id = await open_tab(fake, f"{site}/form.html")
    tree = text_of(await tool(fake, "read_page", tabId=tab_id, filter="interactive"))
    name = ref_of(tree, "textbox", "Name")
    agree = ref_of(tree, "checkbox", "Agree to terms")
    color = re.search(r'- combobox (?:"[^"]*" )?\[ref=(ref_\d+)\] .* id="color"', tree)
    assert color, tree
    for ref, value in ((name, "Ada"), (agree, True), (color.group(1), "Green")):
        await tool(fake, "form_input", ref=ref, value=value, tabId=tab_id)
    state = (
        "[...document.querySelectorAll('#name, #agree, #color')]"
        ".map((e) => (e.type === 'checkbox' ? e.checked : e.value)).join()"
    )
    assert await js(fake, tab_id, state) == "Ada,true,g"
    missing = await tool(fake, "form_input", ref=color.group(1), value="Blue", tabId=tab_id)
    assert "not found" in error_of(missing)


async def test_type_and_key_chords(fake: FakeClaudeExtension, site: str) -> None:
    tab_id = await open_tab(fake, f"{site}/form.html")
    tree = text_of(await tool(fake, "read_page", tabId=tab_id, filter="interactive"))
    name = ref_of(tree, "textbox", "Name")
    await tool(fake, "computer", action="left_click", ref=name, tabId=tab_id)
    await tool(fake, "computer", action="key", text="ctrl+a", tabId=tab_id)
    await tool(fake, "computer", action="type", text="hello", tabId=tab_id)
    await tool(fake, "computer", action="key", text="Backspace", repeat=2, tabId=tab_id)
    assert await js(fake, tab_id, "document.getElementById('name').value") == "hel"


async def test_screenshot_is_png_and_uploads_to_a_file_input(
    fake: FakeClaudeExtension, site: str
) -> None:
    tab_id = await open_tab(fake, f"{site}/form.html")
    answer = await tool(fake, "computer", action="screenshot", tabId=tab_id)
    image = next(c for c in answer["result"]["content"] if c["type"] == "image")
    assert image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")
    image_id = re.search(r"ID: (\S+)", text_of(answer))
    assert image_id, text_of(answer)
    zoom = await tool(fake, "computer", action="zoom", region=[0, 0, 40, 30], tabId=tab_id)
    assert "(40x30, png)" in text_of(zoom)
    tree = text_of(await tool(fake, "read_page", tabId=tab_id, filter="interactive"))
    file_ref = re.search(r'\[ref=(ref_\d+)\] \(x=\d+,y=\d+\) id="file"', tree)
    assert file_ref, tree
    await tool(
        fake,
        "upload_image",
        imageId=image_id.group(1),
        ref=file_ref.group(1),
        filename="shot.png",
        tabId=tab_id,
    )
    uploaded = "const f = document.getElementById('file').files[0]; f.name + ':' + f.type"
    assert await js(fake, tab_id, uploaded) == "shot.png:image/png"


async def test_gif_recording_exported_as_a_download(fake: FakeClaudeExtension, site: str) -> None:
    tab_id = await open_tab(fake, f"{site}/form.html")
    nothing = await tool(fake, "gif_creator", action="export", download=True, tabId=tab_id)
    assert "no frames recorded" in error_of(nothing)
    await tool(fake, "gif_creator", action="start_recording", tabId=tab_id)
    tree = text_of(await tool(fake, "read_page", tabId=tab_id, filter="interactive"))
    await tool(
        fake, "computer", action="left_click", ref=ref_of(tree, "button", "Go"), tabId=tab_id
    )
    await tool(fake, "computer", action="key", text="Tab", tabId=tab_id)
    await tool(fake, "computer", action="left_click", coordinate=[10, 10], tabId=tab_id)  # a link
    stopped = await tool(fake, "gif_creator", action="stop_recording", tabId=tab_id)
    assert "(3 frames)" in text_of(stopped)
    assert fake.downloads is not None
    answer = await tool(
        fake, "gif_creator", action="export", download=True, filename="flow.gif", tabId=tab_id
    )
    match = re.fullmatch(
        r"Exported GIF flow\.gif \(3 frames, (\d+)×(\d+), (\d+) bytes\) .*", text_of(answer)
    )
    assert match, text_of(answer)
    data = (fake.downloads / "flow.gif").read_bytes()
    gif = decode_gif(data)
    assert data.startswith(b"GIF89a") and len(gif.frames) == 3 and gif.loops == 0
    assert (gif.width, gif.height, len(data)) == tuple(int(g) for g in match.groups())
    again = text_of(await tool(fake, "gif_creator", action="export", download=True, tabId=tab_id))
    named = re.search(r"Exported GIF (recording-\d+\.gif) \(3 frames", again)
    assert named and (fake.downloads / named.group(1)).is_file(), again
    for bad in ("../escape.gif", "sub/dir.gif", "back\\slash.gif"):
        refused = await tool(
            fake, "gif_creator", action="export", download=True, filename=bad, tabId=tab_id
        )
        assert "no path separators" in error_of(refused)
    dropped = await tool(fake, "gif_creator", action="export", coordinate=[5, 5], tabId=tab_id)
    assert "not implemented in the fake" in error_of(dropped)
    await tool(fake, "gif_creator", action="clear", tabId=tab_id)
    assert fake.gif_frames == []
    cleared = await tool(fake, "gif_creator", action="export", download=True, tabId=tab_id)
    assert "no frames recorded" in error_of(cleared)
    assert sorted(p.name for p in fake.downloads.iterdir()) == sorted(["flow.gif", named.group(1)])


async def test_gif_export_into_a_given_folder_which_stop_keeps(
    direct_cdp: DirectCdp, tmp_path: Path, site: str
) -> None:
    downloads = tmp_path / "Downloads"
    async with FakeClaudeExtension(
        direct_cdp, [str(_host_script(tmp_path))], downloads=downloads
    ) as extension:
        tab_id = await open_tab(extension, f"{site}/other.html")
        await tool(extension, "gif_creator", action="start_recording", tabId=tab_id)
        await tool(
            extension,
            "computer",
            action="scroll",
            coordinate=[50, 50],
            scroll_direction="down",
            tabId=tab_id,
        )
        for name in ("a.gif", "a.gif"):
            exported = await tool(
                extension,
                "gif_creator",
                action="export",
                download=True,
                filename=name,
                tabId=tab_id,
            )
            assert "Exported GIF a" in text_of(exported)
        default_folder = extension._tmp
    assert sorted(p.name for p in downloads.iterdir()) == ["a (1).gif", "a.gif"]
    assert len(decode_gif((downloads / "a (1).gif").read_bytes()).frames) == 1
    assert default_folder is not None and not default_folder.exists()


async def test_javascript_value_and_thrown_error(fake: FakeClaudeExtension, site: str) -> None:
    tab_id = await open_tab(fake, f"{site}/other.html")
    assert json.loads(await js(fake, tab_id, "({a: 1, b: [2, 'x']})")) == {"a": 1, "b": [2, "x"]}
    assert await js(fake, tab_id, "Promise.resolve(6 * 7)") == "42"
    thrown = await tool(
        fake,
        "javascript_tool",
        action="javascript_exec",
        text="throw new Error('nope-7')",
        tabId=tab_id,
    )
    assert "nope-7" in error_of(thrown)
    text = text_of(await tool(fake, "get_page_text", tabId=tab_id))
    assert "The article text of the other page." in text and "footer text" not in text


async def test_console_and_network_recorded_with_filters(
    fake: FakeClaudeExtension, site: str
) -> None:
    tab_id = await open_tab(fake, f"{site}/form.html")
    await js(fake, tab_id, "fetch('/api/data?x=1').then(r => r.status)")  # it has come back
    boom = text_of(await tool(fake, "read_console_messages", pattern="boom", tabId=tab_id))
    assert "[error] boom-marker" in boom and "plain log line" not in boom
    errors = text_of(await tool(fake, "read_console_messages", onlyErrors=True, tabId=tab_id))
    assert "boom-marker" in errors and "plain log line" not in errors
    api = text_of(await tool(fake, "read_network_requests", urlPattern="/api/", tabId=tab_id))
    assert re.search(r"GET http://127\.0\.0\.1:\d+/api/data\?x=1 \(Fetch\) -> 200", api)
    assert "form.html" not in api
    await tool(fake, "read_console_messages", clear=True, tabId=tab_id)
    after = text_of(await tool(fake, "read_console_messages", pattern="boom", tabId=tab_id))
    assert "No console messages" in after


async def test_a_tab_outside_the_group_is_refused(fake: FakeClaudeExtension) -> None:
    answer = await tool(fake, "navigate", url="example.com", tabId=987654)
    assert "not in the MCP tab group" in error_of(answer)


async def test_a_closed_tab_is_not_found(fake: FakeClaudeExtension, direct_cdp: DirectCdp) -> None:
    created = text_of(await tool(fake, "tabs_create_mcp"))
    tab_id = int(re.search(r"Tab ID: (\d+)", created).group(1))  # type: ignore[union-attr]
    targets = {t["targetId"] for t in await direct_cdp.targets("page")}
    context = await tool(fake, "tabs_context_mcp")
    assert tab_id in [t["tabId"] for t in context["result"]["tabContext"]["availableTabs"]]
    ours = next(t for t in fake._tabs.values() if t.tab_id == tab_id)
    assert ours.target_id in targets
    detached = direct_cdp.expect_event(
        "Target.detachedFromTarget", lambda p: p.get("targetId") == ours.target_id
    )
    await direct_cdp.call("Target.closeTarget", {"targetId": ours.target_id})
    await asyncio.wait_for(detached, 30)  # closing is asynchronous: wait for its event
    answer = await tool(fake, "computer", action="screenshot", tabId=tab_id)
    assert "Tab not found" in error_of(answer)


async def test_stop_closes_stdin_and_the_host_exits(direct_cdp: DirectCdp, tmp_path: Path) -> None:
    extension = FakeClaudeExtension(direct_cdp, [str(_host_script(tmp_path))])
    await extension.start()
    await extension.send({"type": "stand_in_send", "messages": [{"type": "mcp_connected"}]})
    assert await extension.next_message("mcp_connected") == {"type": "mcp_connected"}
    assert await extension.stop() == 0


def test_from_manifest_refuses_a_manifest_without_the_claude_origin(tmp_path: Path) -> None:
    host = _host_script(tmp_path)
    manifest = tmp_path / "com.anthropic.claude_code_browser_extension.json"
    base = {"name": "com.anthropic.claude_code_browser_extension", "path": str(host)}
    manifest.write_text(json.dumps({**base, "type": "stdio", "allowed_origins": []}))
    with pytest.raises(ManifestRefused, match="allowed_origins"):
        FakeClaudeExtension.from_manifest(manifest, cdp=None)  # type: ignore[arg-type]
    wrong = {**base, "type": "socket", "allowed_origins": [CLAUDE_ORIGIN]}
    manifest.write_text(json.dumps(wrong))
    with pytest.raises(ManifestRefused, match="stdio"):
        FakeClaudeExtension.from_manifest(manifest, cdp=None)  # type: ignore[arg-type]
    manifest.write_text(json.dumps({**base, "type": "stdio", "allowed_origins": [CLAUDE_ORIGIN]}))
    accepted = FakeClaudeExtension.from_manifest(manifest, cdp=None)  # type: ignore[arg-type]
    assert accepted.host_command == [str(host)]
