"""The devtools group over MCP (in-memory client, real Chromium with the extension): a
client emulates, traces a page load and reads an insight with nothing but these tools; its
emulation ends when it resets or when bridge puts back what it left."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp_types import Implementation

from bridge.app.facade import Bridge
from bridge.mcp.server import build_server
from tests.tools.test_devtools import perf_site  # noqa: F401 (the local page, a fixture)

pytestmark = pytest.mark.e2e


def _text(result: Any) -> str:
    assert not result.is_error, result.content[0].text
    return str(result.content[0].text)


async def _dark(client: Client, tab: int | None = None) -> bool:
    function = "() => matchMedia('(prefers-color-scheme: dark)').matches"
    args: dict[str, Any] = {"function": function}
    if tab is not None:
        args["tab"] = tab
    result = _text(await client.call_tool("browser_evaluate", args))
    return "true" in result.lower()


async def test_an_agent_emulates_traces_and_reads_an_insight(
    bridge: Bridge,
    perf_site: str,  # noqa: F811
) -> None:
    server = build_server(lambda: bridge, groups=("browser", "devtools"))
    info = Implementation(name="devtools-agent", version="1")
    async with Client(server, client_info=info) as client:
        call = client.call_tool
        _text(await call("browser_navigate", {"url": f"{perf_site}/perf"}))
        emulated = _text(
            await call(
                "browser_emulate",
                {
                    "color_scheme": "dark",
                    "viewport": {"width": 600, "height": 400, "device_scale_factor": 2},
                    "network": {"latency": 1000},
                    "cpu_throttling_rate": 2,
                },
            )
        )
        assert "color scheme dark" in emulated and "viewport 600×400 at DPR 2" in emulated
        assert await _dark(client)

        traced = await call("performance_start_trace", {"reload": True, "auto_stop": True})
        text = _text(traced)
        assert "LCP:" in text and "CLS:" in text and "The raw trace" in text
        data = traced.structured_content
        assert data is not None and data["lcp"]["kind"] == "image" and data["cls"] > 0
        insight = _text(await call("performance_analyze_insight", {"insight_name": "LCPBreakdown"}))
        assert "perf.png" in insight
        unknown = await call("performance_analyze_insight", {"insight_name": "Everything"})
        assert unknown.is_error and "[insight_unknown]" in unknown.content[0].text

        reset = _text(await call("browser_emulate_reset", {}))
        assert "color_scheme" in reset and "viewport" in reset
        assert not await _dark(client)

        # Emulation left in place is put back when bridge lets the client go.
        again = await call("browser_emulate", {"color_scheme": "dark"})
        tab = again.structured_content["tab"]  # type: ignore[index]
        assert await _dark(client)
        await bridge.tools.leave("client:devtools-agent@1")
        assert not await _dark(client, tab)


async def test_refusals_are_typed_tool_errors(bridge: Bridge, perf_site: str) -> None:  # noqa: F811
    server = build_server(lambda: bridge, groups=("browser", "devtools"))
    async with Client(server) as client:
        call = client.call_tool
        stopped = await call("performance_stop_trace", {})
        assert stopped.is_error and "[trace_not_running]" in stopped.content[0].text
        _text(await call("browser_navigate", {"url": f"{perf_site}/geo"}))
        outside = await call("performance_start_trace", {"file_path": "/etc/passwd.json"})
        assert outside.is_error and "[trace_file_refused]" in outside.content[0].text
        bad = await call("browser_emulate", {"network": "5G"})
        assert bad.is_error  # the schema's presets only
        no_reload = await call("performance_start_trace", {"auto_stop": True})
        assert no_reload.is_error and "[trace_options_invalid]" in no_reload.content[0].text
