"""``@tool(server)`` (bridge.mcp.registration): what a client reads when a tool fails, and a
registered tool's schema being its function's. In process, no browser: the tools here raise
on purpose."""

from __future__ import annotations

from typing import Annotated

import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from bridge.errors import AttachmentRefused, BridgeError, ExtensionNotConnected, TabClosed
from bridge.mcp import annotations
from bridge.mcp.annotations import ToolHints
from bridge.mcp.registration import tool


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> MCPServer:
    """A server with one tool that raises what it is asked to, registered through ``tool``."""
    monkeypatch.setitem(
        annotations.TOOL_HINTS, "raise_this", ToolHints("Raise", True, False, True, False)
    )
    raising: dict[str, BaseException] = {
        "not_connected": ExtensionNotConnected("no hello yet"),
        "tab_closed": TabClosed(7),
        "file_refused": AttachmentRefused("a.bin", "it is 30 MB", "Send a smaller file"),
        "bad_argument": ValueError("the question is empty"),
        "crash": RuntimeError("internal detail that stays on the server"),
    }
    server = MCPServer("test")

    @tool(server)
    async def raise_this(
        what: Annotated[str, Field(description="Which error.")], ctx: Context, times: int = 1
    ) -> str:
        """Raise an error on purpose."""
        if what == "nothing":
            return f"fine x{times}"
        raise raising[what]

    return server


async def _call(server: MCPServer, what: str) -> tuple[bool, str]:
    async with Client(server) as client:
        result = await client.call_tool("raise_this", {"what": what})
    return result.is_error, str(result.content[0].text)  # type: ignore[union-attr]


async def test_a_bridge_error_reads_as_its_code_and_its_message(server: MCPServer) -> None:
    is_error, text = await _call(server, "not_connected")
    assert is_error
    assert text == (
        f"Error executing tool raise_this: [extension_not_connected] "
        f"{ExtensionNotConnected('no hello yet')}"
    )
    assert (await _call(server, "tab_closed")) == (
        True,
        "Error executing tool raise_this: [tab_closed] tab 7 was closed",
    )


async def test_a_bridge_error_that_is_a_value_error_keeps_its_code(server: MCPServer) -> None:
    assert issubclass(AttachmentRefused, ValueError) and issubclass(AttachmentRefused, BridgeError)
    is_error, text = await _call(server, "file_refused")
    assert is_error and "[file_refused] the file 'a.bin' cannot go with the question" in text


async def test_a_bad_argument_reads_as_its_message(server: MCPServer) -> None:
    assert await _call(server, "bad_argument") == (
        True,
        "Error executing tool raise_this: the question is empty",
    )


async def test_anything_else_stays_a_crash_whose_text_stays_on_the_server(
    server: MCPServer,
) -> None:
    is_error, text = await _call(server, "crash")
    assert is_error and text == "Error executing tool raise_this"


async def test_the_tool_is_its_function_with_its_rows_hints(server: MCPServer) -> None:
    async with Client(server) as client:
        (listed,) = (await client.list_tools()).tools
        fine = await client.call_tool("raise_this", {"what": "nothing", "times": 2})
    assert fine.content[0].text == "fine x2"  # type: ignore[union-attr]
    assert listed.description == "Raise an error on purpose."
    schema = listed.input_schema
    assert schema["title"] == "raise_thisArguments"
    assert list(schema["properties"]) == ["what", "times"]  # the context is not a parameter
    assert schema["properties"]["what"]["description"] == "Which error."
    assert schema["required"] == ["what"]
    assert listed.title == "Raise"
    assert listed.annotations is not None and listed.annotations.read_only_hint is True
    assert listed.annotations.open_world_hint is False


async def test_a_description_replaces_the_docstring(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(annotations.TOOL_HINTS, "made", ToolHints("Made", True, False, True, True))
    server = MCPServer("test")

    async def made() -> str:
        """Not this."""
        return "made"

    assert tool(server, description="Made by a factory.")(made) is made
    async with Client(server) as client:
        (listed,) = (await client.list_tools()).tools
    assert listed.description == "Made by a factory."
