"""Which pages the DevTools endpoint drives (bridge.policy.pages), as tables, and the person's
--allow-file-urls reaching the endpoint as it reaches the browser tools."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from bridge.app.runtime import Runtime, RuntimeOptions
from bridge.policy.pages import history_refusal, page_refusal
from bridge.tools.browsing import ToolSettings
from bridge.wire.extension import EXTENSION_ID

OURS = f"chrome-extension://{EXTENSION_ID}/popup.html"
OTHERS = "chrome-extension://abcdefghijklmnopabcdefghijklmnop/newtab.html"

PAGES = [
    # (url, allow_file, refused because ... or None)
    ("https://example.com/", False, None),
    ("http://127.0.0.1:8000/form", False, None),
    ("about:blank", False, None),
    ("data:text/html,<p>start page</p>", False, None),
    ("", False, None),  # a tab still opening: checked again once attached
    (OURS, False, "extension page"),
    (OURS, True, "extension page"),
    (OTHERS, True, "extension page"),
    ("CHROME-EXTENSION://" + EXTENSION_ID.upper() + "/popup.html", False, "extension page"),
    ("chrome-extension://invalid/", False, "extension page"),
    ("file:///etc/passwd", False, "--allow-file-urls"),
    ("FILE:///home/p/notes.html", False, "--allow-file-urls"),
    ("file:///etc/passwd", True, None),
]


@pytest.mark.parametrize(("url", "allow_file", "why"), PAGES)
def test_which_pages_a_client_may_drive(url: str, allow_file: bool, why: str | None) -> None:
    refusal = page_refusal(url, allow_file=allow_file)
    if why is None:
        assert refusal is None
    else:
        assert refusal is not None and why in refusal


HISTORIES = [
    # (an entry of the tab's history, allow_file, refused because ... or None)
    ("https://example.com/", False, None),
    (OURS, False, "bridge extension"),
    (f"chrome-extension://{EXTENSION_ID}/", False, "bridge extension"),
    (f"chrome-extension://{EXTENSION_ID}", False, "bridge extension"),
    # Chrome takes the debugger away from another extension's page itself: a person's
    # tab that started at such a new-tab page stays drivable.
    (OTHERS, False, None),
    ("chrome-extension://invalid/", False, None),
    ("file:///home/p/notes.html", False, "--allow-file-urls"),
    ("file:///home/p/notes.html", True, None),
]


@pytest.mark.parametrize(("url", "allow_file", "why"), HISTORIES)
def test_which_histories_make_a_tab_off_limits(url: str, allow_file: bool, why: str | None) -> None:
    refusal = history_refusal(url, allow_file=allow_file)
    if why is None:
        assert refusal is None
    else:
        assert refusal is not None and why in refusal


def _free_port() -> int:
    """Outside the relay range the extension scans: no browser links to this relay."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("allow", [False, True])
async def test_the_endpoint_gets_the_persons_allow_file_urls(tmp_path: Path, allow: bool) -> None:
    options = RuntimeOptions(
        cdp=True,
        relay_port=_free_port(),
        state_dir=tmp_path,
        runtime_dir=tmp_path / "rt",  # where no browser's native host looks for relays
        tool_settings=ToolSettings(allow_file_urls=allow),
    )
    async with Runtime(options) as runtime:
        assert runtime.relay.cdp is not None
        assert runtime.relay.cdp.allow_file_urls is allow
        assert runtime.relay.cdp.downloads_dir is None  # no browser of its own: unknown
