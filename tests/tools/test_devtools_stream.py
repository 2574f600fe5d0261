"""Reading a trace from Chrome's stream (``devtools._collect``), without a browser: chunks
joined in order, base64 chunks decoded, the stream always closed, and a trace over the
limit dropped with ``TraceTooLarge`` instead of filling bridge's memory."""

from __future__ import annotations

import base64
from typing import Any, cast

import pytest

from bridge.errors import TraceTooLarge
from bridge.tools.operations import devtools
from bridge.tools.targets import TabState


class _Done:
    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value

    async def wait(self, timeout: float | None) -> dict[str, Any]:
        return self.value

    def close(self) -> None:
        pass


class _Tab:
    """A tab whose trace stream answers ``chunks`` (each ``(data, base64)``)."""

    def __init__(self, chunks: list[tuple[str, bool]]) -> None:
        self.chunks = chunks
        self.sent: list[str] = []

    def expect_event(self, method: str, *_: Any) -> _Done:
        assert method == "Tracing.tracingComplete"
        return _Done({"stream": "7"})

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.sent.append(method)
        if method == "IO.read":
            data, b64 = self.chunks.pop(0)
            return {"data": data, "base64Encoded": b64, "eof": not self.chunks}
        return {}


def _state(tab: _Tab) -> TabState:
    return cast(TabState, type("S", (), {"tab": tab})())


async def test_chunks_are_joined_and_the_stream_closed() -> None:
    tab = _Tab([('{"traceEvents": [', False), (base64.b64encode(b"]}").decode(), True)])
    assert await devtools._collect(_state(tab)) == b'{"traceEvents": []}'
    assert tab.sent == ["Tracing.end", "IO.read", "IO.read", "IO.close"]


async def test_a_trace_over_the_limit_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devtools, "MAX_TRACE_BYTES", 10)
    tab = _Tab([("x" * 8, False), ("x" * 8, False), ("x" * 8, False)])
    with pytest.raises(TraceTooLarge, match="shorter"):
        await devtools._collect(_state(tab))
    assert tab.sent == ["Tracing.end", "IO.read", "IO.read", "IO.close"]  # read no further
