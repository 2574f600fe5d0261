"""Which CDP commands a tab's session may send under the person's guard rails (pure).

``Guard.check(method, params)`` is asked by ``CdpSession.send``, the one place every command
to a tab passes, whoever sends it: the browser tools, and the DevTools endpoint that
Playwright and Puppeteer drive. So a flag holds for both, and a client cannot step around a
tool's check by speaking CDP itself.

- ``--allowed-origins`` / ``--blocked-origins``: a command that opens a URL (``Page.navigate``,
  ``Target.createTarget``) is refused when the origin is. Links, redirects, scripts and
  frames are held at the network level instead (``bridge.cdp.interception``), where every
  request of the tab passes.
- ``--read-only``: no input (``Input.*``), no change to the document, its files, storage or
  cookies, no dialog answered, no tab closed, no request rewritten, and navigation only to an
  origin the allowed list names (none without one). Reading (``Runtime.evaluate``, ``DOM``
  queries, screenshots, the accessibility tree) stays: the reading tools need it. A script
  evaluated can still change its page: read-only keeps the tools and the protocol's acting
  methods away, it does not sandbox JavaScript (docs/mcp.md#guard-rails).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bridge.errors import BridgeError, OriginBlocked, ReadOnlyRefused
from bridge.policy.origins import OriginPolicy

__all__ = ["READ_ONLY_REFUSED", "Guard", "Refusal"]

#: Whole domains that only act: typing and pointing, and rewriting the page's requests.
_ACTING_DOMAINS = frozenset({"Input", "Fetch"})

#: Methods that change the page, its storage, the tab or the browser (the domains' readers
#: stay allowed). Method names from the protocol (https://chromedevtools.github.io/devtools-protocol/).
READ_ONLY_REFUSED = frozenset(
    {
        # the document and its files
        "DOM.setFileInputFiles", "DOM.setAttributeValue", "DOM.setAttributesAsText",
        "DOM.setNodeValue", "DOM.setOuterHTML", "DOM.setNodeName", "DOM.removeNode",
        "DOM.removeAttribute", "DOM.moveTo", "DOM.copyTo", "DOM.undo", "DOM.redo",
        "DOM.focus", "CSS.setStyleTexts", "CSS.setStyleSheetText", "CSS.setRuleSelector",
        "CSS.setMediaText", "CSS.addRule", "CSS.createStyleSheet", "CSS.forcePseudoState",
        "Page.setDocumentContent", "Debugger.setScriptSource", "Runtime.setScriptSource",
        # navigation whose target is not in the command (judged by origin when it is)
        "Page.reload", "Page.navigateToHistoryEntry", "Page.resetNavigationHistory",
        "Page.stopLoading",
        # dialogs, tabs, the browser
        "Page.handleJavaScriptDialog", "Page.close", "Page.crash", "Target.closeTarget",
        "Target.createBrowserContext", "Target.disposeBrowserContext", "Browser.close",
        "Browser.crash", "Browser.crashGpuProcess", "Browser.setPermission",
        "Browser.grantPermissions", "Browser.resetPermissions", "Browser.setDownloadBehavior",
        "Browser.cancelDownload", "Browser.setWindowBounds", "Browser.executeBrowserCommand",
        "Page.setDownloadBehavior", "Page.setWebLifecycleState",
        # cookies, storage, caches, service workers
        "Network.setCookie", "Network.setCookies", "Network.deleteCookies",
        "Network.clearBrowserCookies", "Network.clearBrowserCache", "Network.replayXHR",
        "Network.setRequestInterception", "Network.continueInterceptedRequest",
        "Network.setBlockedURLs", "Network.emulateNetworkConditions",
        "Network.setExtraHTTPHeaders", "Storage.setCookies", "Storage.clearCookies",
        "Storage.clearDataForOrigin", "Storage.clearDataForStorageKey",
        "Storage.setSharedStorageEntry", "Storage.deleteSharedStorageEntry",
        "Storage.clearSharedStorageEntries", "Storage.overrideQuotaForOrigin",
        "DOMStorage.setDOMStorageItem", "DOMStorage.removeDOMStorageItem", "DOMStorage.clear",
        "IndexedDB.clearObjectStore", "IndexedDB.deleteDatabase",
        "IndexedDB.deleteObjectStoreEntries", "CacheStorage.deleteCache",
        "CacheStorage.deleteEntry", "ServiceWorker.unregister", "ServiceWorker.skipWaiting",
        "ServiceWorker.stopWorker", "ServiceWorker.stopAllWorkers",
        "ServiceWorker.deliverPushMessage", "ServiceWorker.dispatchSyncEvent",
        "ServiceWorker.dispatchPeriodicSyncEvent", "ServiceWorker.updateRegistration",
    }
)  # fmt: skip

#: Commands that open the URL in their ``url`` parameter.
_OPENS_URL = frozenset({"Page.navigate", "Target.createTarget"})


@dataclass(frozen=True)
class Refusal:
    """Why a command may not be sent: the flag (``flag``) and what it would have done."""

    flag: str  # "read-only" or "origins"
    what: str
    url: str = ""

    def error(self) -> BridgeError:
        """The typed error a client reads, naming the flag that forbids the command."""
        if self.flag == "origins":
            return OriginBlocked(self.url, self.what)
        return ReadOnlyRefused(self.what)


@dataclass(frozen=True)
class Guard:
    """The person's guard rails, as one value every tab's session consults."""

    origins: OriginPolicy = field(default_factory=OriginPolicy)
    read_only: bool = False

    @property
    def active(self) -> bool:
        return self.read_only or self.origins.active

    def check(self, method: str, params: dict[str, Any] | None) -> Refusal | None:
        """The refusal of ``method`` with ``params``, or None when it may be sent."""
        if method in _OPENS_URL:
            url = str((params or {}).get("url") or "about:blank")
            reason = self.origins.refusal(url)
            if reason is not None:
                return Refusal("origins", reason, url)
            if self.read_only and not self._navigable_read_only(url):
                return Refusal("read-only", f"opening {url}", url)
            return None
        if not self.read_only:
            return None
        domain = method.partition(".")[0]
        if domain in _ACTING_DOMAINS or method in READ_ONLY_REFUSED:
            return Refusal("read-only", method)
        return None

    def _navigable_read_only(self, url: str) -> bool:
        """Read-only navigates only within the allowed list (none without one); about:blank
        loads nothing, so a new empty tab is fine."""
        if url.strip().lower() in ("about:blank", ""):
            return True
        return self.origins.allowed is not None and self.origins.refusal(url) is None
