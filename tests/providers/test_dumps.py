"""How long a debug dump waits for its screenshot (bridge.providers.dumps.screenshot_wait)."""

from __future__ import annotations

from bridge.providers.dumps import ENV_SCREENSHOT_S, SCREENSHOT_S, screenshot_wait


def test_a_dump_waits_ten_seconds_for_its_screenshot_unless_told_otherwise() -> None:
    assert SCREENSHOT_S == 10.0
    assert screenshot_wait({}) == 10.0
    assert screenshot_wait({ENV_SCREENSHOT_S: "2"}) == 2.0
    assert screenshot_wait({ENV_SCREENSHOT_S: "0.5"}) == 0.5


def test_a_bad_override_keeps_the_default() -> None:
    for raw in ("", "soon", "0", "-3", "nan", "inf"):
        assert screenshot_wait({ENV_SCREENSHOT_S: raw}) == SCREENSHOT_S, raw
