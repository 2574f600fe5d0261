"""One client's downloads: Chrome's page-level download events told as the browser-level
ones clients listen to (``Browser.downloadWillBegin``, ``Browser.downloadProgress``), and a
finished file copied where the client asked, only once ``bridge.policy.downloads`` has
checked what the extension link reported. The browser's own download behaviour stays:
extensions may not change it."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path

from bridge.cdp.browser import Browser
from bridge.cdp.endpoint.targets import Params
from bridge.errors import BridgeError
from bridge.policy.downloads import (
    DownloadRefused,
    DownloadStart,
    copy_download,
    download_target,
    is_download_guid,
    source_facts,
)

__all__ = ["MAX_DOWNLOADS", "ClientDownloads"]

log = logging.getLogger(__name__)

#: Downloads of one client remembered from their start to their end (a bound, not a limit
#: anyone reaches: a finished download's entry is needed until its last event).
MAX_DOWNLOADS = 256

Emit = Callable[[str, Params], Awaitable[None]]


class ClientDownloads:
    """What one client asked for (``Browser.setDownloadBehavior``) and the downloads it was
    told of; ``emit`` sends the client an event."""

    def __init__(self, browser: Browser, browser_dir: Path | None, emit: Emit) -> None:
        self.browser = browser
        #: Where the browser saves downloads, when bridge knows it (CdpEndpoint.downloads_dir).
        self.browser_dir = browser_dir
        self._emit = emit
        self.path: str | None = None
        self.events = False
        self.by_guid = False
        #: Downloads announced (Page.downloadWillBegin), by guid, oldest first.
        self._started: OrderedDict[str, DownloadStart] = OrderedDict()

    def set_behavior(self, params: Params) -> None:
        """``Browser.setDownloadBehavior``: with events on, downloads are reported as Chrome
        would, and a copy of each finished file is put where the client asked
        ("allowAndName": named by its guid)."""
        wanted = params.get("downloadPath")
        self.path = str(wanted) if wanted else None
        self.events = bool(params.get("eventsEnabled"))
        self.by_guid = params.get("behavior") == "allowAndName"

    @staticmethod
    def reportable(method: str, params: Params) -> bool:
        """Whether a ``Page.download*`` event may reach a client at all."""
        if is_download_guid(params.get("guid")):
            return True
        # Clients read and delete <downloadPath>/<guid>: a guid that is no UUID
        # ("../../.bashrc") comes from no Chrome, and no client hears of it.
        log.warning("%s with a guid that is not a UUID dropped: %r", method, params.get("guid"))
        return False

    async def event(self, method: str, params: Params) -> None:
        """Page-level download events as the browser-level ones clients listen to (the guid
        is a UUID: ``reportable`` checked it)."""
        guid = str(params["guid"])
        if method == "Page.downloadWillBegin":
            self._started[guid] = DownloadStart(
                str(params.get("url", "")), str(params.get("suggestedFilename", "")), time.time()
            )
            while len(self._started) > MAX_DOWNLOADS:
                self._started.popitem(last=False)
            await self._emit("Browser.downloadWillBegin", params)
            return
        if params.get("state") == "completed" and self.path and self.by_guid:
            try:
                await self._copy(guid)
            except (BridgeError, OSError) as exc:
                # The reason names paths and the guid, never a token.
                log.warning("download %r not copied for the DevTools client: %s", guid, exc)
                params = {**params, "state": "canceled"}
        await self._emit("Browser.downloadProgress", params)

    async def _copy(self, guid: str) -> None:
        """The finished download, copied to ``<downloadPath>/<guid>`` if ``download_target``
        accepts what the extension link reported; DownloadRefused (nothing written) if not."""
        start = self._started.get(guid)
        if start is None:
            raise DownloadRefused(f"no Page.downloadWillBegin was seen for download {guid}")
        found = await self.browser.request("downloadInfo", {"url": start.url, "timeoutMs": 5000})
        path = found.get("path")
        if not isinstance(path, str) or not path:
            raise DownloadRefused("the browser did not say where it saved the download")
        assert self.path is not None  # checked by the caller
        browser_dir = self.browser_dir
        facts = await asyncio.to_thread(source_facts, path)
        target = download_target(
            guid,
            client_dir=self.path,
            start=start,
            source=facts,
            browser_dir=await asyncio.to_thread(browser_dir.resolve) if browser_dir else None,
        )
        await asyncio.to_thread(copy_download, facts, target)
