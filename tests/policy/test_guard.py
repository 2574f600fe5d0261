"""Which CDP commands the guard rails let through (bridge.policy.guard)."""

from __future__ import annotations

import pytest

from bridge.errors import OriginBlocked, ReadOnlyRefused
from bridge.policy.guard import Guard
from bridge.policy.origins import OriginPolicy

READ_ONLY = Guard(read_only=True)


@pytest.mark.parametrize(
    "method",
    [
        "Input.dispatchMouseEvent",
        "Input.insertText",
        "Input.dispatchKeyEvent",
        "DOM.setFileInputFiles",
        "DOM.setAttributeValue",
        "Page.handleJavaScriptDialog",
        "Page.reload",
        "Page.navigateToHistoryEntry",
        "Network.setCookie",
        "Storage.clearCookies",
        "DOMStorage.setDOMStorageItem",
        "Fetch.enable",
        "Target.closeTarget",
    ],
)
def test_read_only_refuses_input_and_changes(method: str) -> None:
    refusal = READ_ONLY.check(method, {})
    assert refusal is not None and refusal.flag == "read-only"
    error = refusal.error()
    assert isinstance(error, ReadOnlyRefused) and "--read-only" in str(error)


@pytest.mark.parametrize(
    "method",
    [
        "Runtime.evaluate",
        "DOM.getDocument",
        "Accessibility.getFullAXTree",
        "Page.captureScreenshot",
        "Network.enable",
        "Page.enable",
        "Emulation.setFocusEmulationEnabled",
        "Page.getNavigationHistory",
    ],
)
def test_read_only_lets_reading_through(method: str) -> None:
    assert READ_ONLY.check(method, {}) is None


def test_read_only_navigates_only_within_the_allowed_list() -> None:
    assert READ_ONLY.check("Page.navigate", {"url": "https://a.com/"}) is not None
    assert READ_ONLY.check("Target.createTarget", {"url": "about:blank"}) is None
    guard = Guard(OriginPolicy.from_flags("a.com", None), read_only=True)
    assert guard.check("Page.navigate", {"url": "https://a.com/x"}) is None
    refusal = guard.check("Page.navigate", {"url": "https://b.com/"})
    assert refusal is not None and isinstance(refusal.error(), OriginBlocked)


def test_origins_refuse_opening_a_blocked_url_whoever_asks() -> None:
    guard = Guard(OriginPolicy.from_flags(None, "b.com"))
    refusal = guard.check("Target.createTarget", {"url": "http://b.com/"})
    assert refusal is not None
    assert "--blocked-origins" in str(refusal.error())
    assert guard.check("Page.navigate", {"url": "http://a.com/"}) is None
    assert guard.check("Input.dispatchMouseEvent", {}) is None  # not read-only


def test_no_flags_no_guard() -> None:
    assert not Guard().active
    assert Guard().check("Input.dispatchMouseEvent", {}) is None
