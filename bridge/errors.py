"""Typed errors. Each says what went wrong and what a person can do about it."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BridgeError",
    "BridgeTimeout",
    "CdpError",
    "CommandFailed",
    "DebuggerDetached",
    "ExtensionDisconnected",
    "ExtensionNotConnected",
    "TabClosed",
    "extension_dir",
]


def extension_dir() -> Path:
    """Where the unpacked extension lives in this checkout (what a person loads)."""
    return Path(__file__).resolve().parent.parent / "extension"


class BridgeError(Exception):
    """Base of every error bridge raises on purpose. ``code`` is stable for machines."""

    code = "bridge_error"


class ExtensionNotConnected(BridgeError):
    code = "extension_not_connected"

    def __init__(self, detail: str = "") -> None:
        msg = (
            "The bridge extension is not connected to this relay"
            + (f" ({detail})" if detail else "")
            + f". Load it in Chrome: chrome://extensions -> Developer mode -> Load unpacked -> "
            f"{extension_dir()} ; or start bridge with --launch so it opens its own browser."
        )
        super().__init__(msg)


class ExtensionDisconnected(BridgeError):
    """The extension's connection dropped while something was in flight."""

    code = "extension_disconnected"


class TabClosed(BridgeError):
    code = "tab_closed"

    def __init__(self, tab_id: int, detail: str = "") -> None:
        super().__init__(f"tab {tab_id} was closed" + (f" ({detail})" if detail else ""))
        self.tab_id = tab_id


class DebuggerDetached(BridgeError):
    code = "debugger_detached"

    def __init__(self, tab_id: int, reason: str) -> None:
        hint = (
            " (someone pressed Cancel on Chrome's 'is debugging this browser' bar)"
            if reason == "canceled_by_user"
            else ""
        )
        super().__init__(f"the debugger detached from tab {tab_id}: {reason}{hint}")
        self.tab_id = tab_id
        self.reason = reason


class CdpError(BridgeError):
    """Chrome answered a CDP command with an error."""

    code = "cdp_error"

    def __init__(self, method: str, message: str, cdp_code: int | None = None) -> None:
        super().__init__(f"{method} failed: {message}" + (f" (CDP {cdp_code})" if cdp_code else ""))
        self.method = method
        self.cdp_code = cdp_code


class CommandFailed(BridgeError):
    """The extension refused or failed a relay command (not a CDP error)."""

    code = "command_failed"

    def __init__(self, method: str, error_code: str, message: str) -> None:
        super().__init__(f"{method}: {message} [{error_code}]")
        self.method = method
        self.error_code = error_code


class BridgeTimeout(BridgeError, TimeoutError):
    code = "timeout"

    def __init__(self, what: str, seconds: float) -> None:
        super().__init__(f"timed out after {seconds:.1f}s waiting for {what}")
        self.what = what
        self.seconds = seconds
