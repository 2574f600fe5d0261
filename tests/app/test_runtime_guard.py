"""The guard rails reach what enforces them: ``RuntimeOptions.guard`` becomes the Browser's
guard, the one the tools' sessions and the DevTools endpoint's share."""

from __future__ import annotations

from pathlib import Path

from bridge.app.runtime import Runtime, RuntimeOptions
from bridge.policy.guard import Guard
from bridge.policy.origins import OriginPolicy


async def test_the_runtime_hands_its_guard_to_the_browser_the_endpoint_uses(
    tmp_path: Path,
) -> None:
    guard = Guard(OriginPolicy.from_flags("https://a.com", None), read_only=True)
    options = RuntimeOptions(guard=guard, cdp=True, state_dir=tmp_path / "state")
    options.runtime_dir = tmp_path / "rt"
    async with Runtime(options) as runtime:
        assert runtime.browser.guard is guard
        assert runtime.endpoint is not None and runtime.endpoint.browser is runtime.browser
        assert runtime.bridge.tools.browser is runtime.browser
