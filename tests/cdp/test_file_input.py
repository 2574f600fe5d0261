"""Files into a page's file input only by their paths, read by Chrome (bridge.cdp.file_input).

Chrome answers ``DOM.setFileInputFiles`` "Not allowed" when the debugging extension has no
file access. bridge must then fail typed, saying which switch to turn on, and never read the
bytes itself to hand them to the page. Played in a browser of the test's own whose profile
has "Allow access to file URLs" switched off for bridge (as Chrome stores it:
``extensions.settings.<id>.newAllowFileAccess``), as the person's own Chrome may have it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bridge.app.launcher import LaunchedBrowser
from bridge.app.runtime import Runtime, RuntimeOptions
from bridge.cdp.file_input import set_input_files
from bridge.errors import CdpError, FileAccessOff
from bridge.fakes import FakeSites
from bridge.testing.plugin import BridgeOptions
from bridge.waiting import scaled
from bridge.wire.extension import EXTENSION_ID
from tests.attack_files import PDF
from tests.tools.site import serve


class _Tab:
    """Answers ``DOM.setFileInputFiles`` as Chrome did (Chromium 156)."""

    def __init__(self, error: CdpError | None) -> None:
        self.error = error
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def send(self, method: str, params: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.sent.append((method, params))
        if self.error is not None:
            raise self.error
        return {}


async def test_chromes_refusal_becomes_file_access_off_and_nothing_else_is_tried() -> None:
    tab = _Tab(CdpError("DOM.setFileInputFiles", "Not allowed", -32000))
    with pytest.raises(FileAccessOff) as caught:
        await set_input_files(tab, {"objectId": "1"}, [Path("/w/report.pdf")])  # type: ignore[arg-type]
    text = str(caught.value)
    assert caught.value.code == "file_access_off" and "report.pdf" in text
    assert 'chrome://extensions → bridge → Details → "Allow access to file URLs"' in text
    assert [m for m, _ in tab.sent] == ["DOM.setFileInputFiles"]  # no second way
    other = _Tab(CdpError("DOM.setFileInputFiles", "Node is not a file input element", -32000))
    with pytest.raises(CdpError, match="not a file input"):
        await set_input_files(other, {"objectId": "1"}, [Path("/w/a.txt")])  # type: ignore[arg-type]


# -- a browser whose extension has no file access -------------------------------------------------


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    yield from serve()


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def no_file_access(
    tmp_path_factory: pytest.TempPathFactory,
    launched_browser: LaunchedBrowser | None,
    bridge_options: BridgeOptions,
    fake_sites: FakeSites,
) -> AsyncIterator[Runtime]:
    """A launched browser like the session's, but bridge's file access switched off."""
    if launched_browser is None:
        pytest.skip("launches a browser of its own (not in --live mode)")
    root = tmp_path_factory.mktemp("no-file-access")
    profile = root / "profile"
    (profile / "Default").mkdir(parents=True)
    prefs = {"extensions": {"settings": {EXTENSION_ID: {"newAllowFileAccess": False}}}}
    (profile / "Default" / "Preferences").write_text(json.dumps(prefs), encoding="utf-8")
    # An island of its own (no runtime_dir): sharing the session's would give both browsers
    # the same secret and relays, and the session's browser would serve this relay.
    options = RuntimeOptions(
        launch=True,
        headless=True,
        profile_dir=profile,
        browser_path=bridge_options.browser_path,
        chrome_args=fake_sites.chromium_args(),
        state_dir=root / "state",
        allow_paths=[root / "files"],
    )
    (root / "files").mkdir()
    async with Runtime(options) as runtime:
        await runtime.connected(scaled(30.0))
        yield runtime


@pytest.mark.e2e
async def test_the_browser_tool_fails_typed_and_the_input_stays_empty(
    no_file_access: Runtime, site: str
) -> None:
    files = no_file_access.options.allow_paths[0]
    pdf = files / "tool.pdf"
    pdf.write_bytes(PDF)
    tools = no_file_access.bridge.browser_tools("no-file-access")
    await tools.navigate(f"{site}/upload")
    with pytest.raises(FileAccessOff, match="Allow access to file URLs"):
        await tools.file_upload("#files", [str(pdf)])
    assert await tools.evaluate("() => document.querySelector('#files').files.length") == 0


@pytest.mark.reliability(39)
@pytest.mark.e2e
async def test_an_ask_with_an_upload_fails_typed_and_nothing_reaches_the_site(
    no_file_access: Runtime, fakes: FakeSites
) -> None:
    files = no_file_access.options.allow_paths[0]
    pdf = files / "ask.pdf"
    pdf.write_bytes(PDF)
    note = files / "note.txt"
    note.write_text("a small note goes into the question itself\n")
    bridge = no_file_access.bridge
    with pytest.raises(FileAccessOff, match="Allow access to file URLs"):
        await bridge.ask("chatgpt", "What is in this PDF?", new_chat=True, files=[pdf])
    assert fakes.chatgpt.records == [] and fakes.chatgpt.uploads == []
    # Text put into the question needs no file access: it still goes.
    await bridge.ask("chatgpt", "Read the note.", new_chat=True, files=[note])
    record = fakes.chatgpt.records[-1]
    assert "a small note goes into the question itself" in record.text
    assert record.files == () and fakes.chatgpt.uploads == []
