"""The guard rail flags of python -m bridge.mcp (bridge/mcp/guard_rails.py): parsed into the one
Guard the runtime hands its Browser; bad or unenforceable ones stop the server at once."""

from __future__ import annotations

import pytest

from bridge.mcp.__main__ import parse_args, serve
from bridge.mcp.guard_rails import guard_from_args


def test_the_flags_become_one_guard() -> None:
    args = parse_args(
        ["--allowed-origins", "https://a.com;b.com", "--blocked-origins", "c.com", "--read-only"]
    )
    guard = guard_from_args(args)
    assert guard.read_only and guard.active
    assert guard.origins.refusal("https://a.com/x") is None
    assert "--blocked-origins" in (guard.origins.refusal("http://c.com/") or "")
    assert "--allowed-origins" in (guard.origins.refusal("http://d.com/") or "")
    assert not guard_from_args(parse_args([])).active  # no flags: no guard


async def test_a_bad_origin_stops_the_server_before_anything_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert await serve(parse_args(["--blocked-origins", "https://a.com/path"])) == 2
    assert "--blocked-origins" in capsys.readouterr().err


async def test_the_flags_are_refused_over_the_claude_extension(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert await serve(parse_args(["--link", "claude", "--read-only"])) == 2
    assert "cannot hold over --link claude" in capsys.readouterr().err
