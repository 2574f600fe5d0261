"""The completion loop and its failures through the transport seam: no browser.

A ``MockConnector`` answers the page-script calls the loop makes; the test plays the page's
reports (``Runtime.bindingCalled``) and the tab's end. The same loop runs in real Chromium
in tests/providers/test_asking.py.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from pathlib import Path
from typing import Any

import pytest

from bridge.cdp.browser import Browser
from bridge.errors import (
    BridgeTimeout,
    LoginRequired,
    NoResponse,
    ProviderErrorTurn,
    ProviderStuck,
    RateLimited,
    TabClosed,
)
from bridge.link.transport import MockConnector, MockTransport
from bridge.providers.completion import Phase, Verdict
from bridge.providers.completion_loop import (
    CompletionSettings,
    raise_failure,
    wait_for_completion,
)
from bridge.providers.context import AskContext
from bridge.providers.specs import PROVIDER_SPECS, AskOptions
from bridge.store.state import StateStore

Params = dict[str, Any]
NOTICES = {
    "rateLimit": "You've reached our limit of messages. Try again after 5:00 PM.",
    "error": "",
}


def page(method: str, params: Params) -> Params:
    """The extension answering like a page with page.js in it."""
    if method != "cdpCommand":
        return {}
    cdp = params["method"]
    if cdp == "Runtime.evaluate":
        expression = params["params"]["expression"]
        value: Any = None
        if "notices(" in expression:
            value = NOTICES
        elif "debugInfo(" in expression:
            value = {"visibilityState": "visible", "url": "https://chatgpt.com/c/x"}
        elif "observe(" in expression:
            value = {"user_count": 1, "assistant_count": 0, "has_stop_button": True}
        return {"result": {"type": "object", "value": value}}
    if cdp == "Page.captureScreenshot":
        return {"data": base64.b64encode(b"\x89PNG").decode()}
    return {}


@pytest.fixture
async def ctx(tmp_path: Path) -> tuple[AskContext, MockTransport]:
    connector = MockConnector()
    transport = connector.connect_new(page)
    browser = Browser(connector, connect_timeout=1.0)
    context = AskContext(
        browser,
        StateStore(tmp_path),
        PROVIDER_SPECS["chatgpt"],
        "What is a Python generator?",
        "test",
        AskOptions(timeout=30.0),
    )
    context.session = await browser.attach(1)
    return context, transport


@pytest.mark.parametrize(
    ("reason", "error", "says"),
    [
        ("no_new_turn", NoResponse, "showed no answer"),
        ("login_wall", LoginRequired, "log in"),
        ("rate_limited", RateLimited, "Try again after 5:00 PM"),
    ],
)
async def test_each_failure_is_its_own_typed_error(
    ctx: tuple[AskContext, MockTransport], reason: str, error: type, says: str
) -> None:
    context, _ = ctx
    with pytest.raises(error, match=says) as caught:
        await raise_failure(context, Verdict(Phase.FAILED, reason, None, False))
    assert not isinstance(caught.value, BridgeTimeout)  # never "timed out after 0.0s"


async def test_no_response_is_not_a_timeout_and_leaves_a_dump(
    ctx: tuple[AskContext, MockTransport], tmp_path: Path
) -> None:
    context, _ = ctx
    with pytest.raises(NoResponse) as caught:
        await raise_failure(context, Verdict(Phase.FAILED, "no_new_turn", None, False))
    assert caught.value.code == "no_response" and "timed out" not in str(caught.value)
    dumps = list((tmp_path / "debug").glob("chatgpt-*.json"))
    assert len(dumps) == 1 and json.loads(dumps[0].read_text())["why"] == "failed: no_new_turn"


async def test_stuck_and_error_turns(ctx: tuple[AskContext, MockTransport]) -> None:
    context, _ = ctx
    with pytest.raises(ProviderStuck):
        await raise_failure(context, Verdict(Phase.STUCK, "stuck_stop_button", None, False))
    NOTICES["error"] = "Something went wrong."
    try:
        with pytest.raises(ProviderErrorTurn, match="Something went wrong"):
            await raise_failure(context, Verdict(Phase.FAILED, "error_turn", None, False))
    finally:
        NOTICES["error"] = ""


def report(transport: MockTransport, observation: Params) -> None:
    transport.cdp_event(
        1, "Runtime.bindingCalled", {"name": "__obs", "payload": json.dumps(observation)}
    )


def observation(**changes: Any) -> Params:
    base = {
        "user_count": 1,
        "assistant_count": 0,
        "has_stop_button": False,
        "send_button_present": True,
        "send_button_enabled": False,
        "input_empty": True,
        "has_skip_thinking_button": False,
        "still_generating_text": False,
        "thinking_complete_marker": False,
        "last_assistant_text_len": 0,
    }
    return {**base, **changes}


async def test_the_loop_finishes_on_the_reports_alone(
    ctx: tuple[AskContext, MockTransport],
) -> None:
    context, transport = ctx
    detector = context.spec.new_detector(0, time.monotonic(), CompletionSettings().timings)
    with context.tab.stream(
        "Runtime.bindingCalled", transform=lambda p: json.loads(p["payload"])
    ) as reports:
        report(transport, observation(assistant_count=1, has_stop_button=True))
        report(
            transport,
            observation(assistant_count=1, has_stop_button=True, last_assistant_text_len=40),
        )
        report(
            transport,
            observation(assistant_count=1, send_button_enabled=False, last_assistant_text_len=80),
        )
        verdict = await asyncio.wait_for(
            wait_for_completion(context, detector, reports, CompletionSettings()), 10
        )
    assert verdict.phase is Phase.DONE
    assert len(context.observations) == 3  # every report was fed, none read by polling


async def test_a_closed_tab_ends_the_wait_at_once(ctx: tuple[AskContext, MockTransport]) -> None:
    context, transport = ctx
    detector = context.spec.new_detector(0, time.monotonic(), CompletionSettings().timings)
    with context.tab.stream(
        "Runtime.bindingCalled", transform=lambda p: json.loads(p["payload"])
    ) as reports:
        waiting = asyncio.ensure_future(
            wait_for_completion(context, detector, reports, CompletionSettings())
        )
        report(transport, observation(assistant_count=1, has_stop_button=True))
        await asyncio.sleep(0)  # let the loop take the report and wait for the next
        started = time.monotonic()
        transport.emit("tabRemoved", {"tabId": 1})
        with pytest.raises(TabClosed):
            await asyncio.wait_for(waiting, 10)
    assert time.monotonic() - started < 1.0  # not at the 30 s answer deadline
