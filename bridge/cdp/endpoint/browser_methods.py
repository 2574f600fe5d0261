"""The browser-level methods ``chrome.debugger`` does not have, emulated for one client:
version, targets, auto-attach, sessions, contexts, downloads, cookies, the window.

``BROWSER_METHODS`` maps each method to its handler, ``handler(client, params, caller)``
(``caller``: the session that sent it, None for the browser's own); ``call`` answers any
other method as Chrome answers an unknown one (``-32601``). A context here is a group of tabs
a client opened in the person's profile: cookies and storage are not isolated.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from bridge.cdp.browser import TabInfo
from bridge.cdp.endpoint.targets import BROWSER_SESSION, Params, target_id, target_info
from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError, CdpError

if TYPE_CHECKING:
    from bridge.cdp.endpoint.client import CdpClient

__all__ = ["BROWSER_METHODS", "Handler", "call"]

Handler = Callable[["CdpClient", Params, "str | None"], Awaitable[Params]]


async def call(client: CdpClient, method: str, params: Params, caller: str | None) -> Params:
    """The result of a browser-level ``method`` for ``client``."""
    handler = BROWSER_METHODS.get(method)
    if handler is None:
        raise CdpError(method, f"'{method}' is not available through the bridge extension", -32601)
    return await handler(client, params, caller)


# -- helpers -------------------------------------------------------------------------------------


async def _tabs(client: CdpClient) -> list[TabInfo]:
    return [t for t in await client.browser.list_tabs() if client.endpoint.usable(t)]


async def _tab_info(client: CdpClient, target: str) -> TabInfo:
    """The tab of a target id the client named; a page it may not drive (an extension
    page, a file without --allow-file-urls) is refused as Chrome refuses an unknown id."""
    for info in await client.browser.list_tabs():
        if target_id(info) == target:
            if not client.endpoint.usable(info):
                break
            return info
    raise ValueError(f"No target with given id found: {target}")


def _a_tab_in_use(client: CdpClient, method: str) -> CdpSession:
    for alias in client.sessions.aliases.values():
        if alias.tab is not None and alias.tab.ended is None:
            return alias.tab
    raise CdpError(method, "open a page first: cookies are reached through a tab", -32000)


# -- Browser -------------------------------------------------------------------------------------


async def _get_version(client: CdpClient, params: Params, caller: str | None) -> Params:
    return {
        "protocolVersion": "1.3",
        "product": client.endpoint.product(),
        "revision": "",
        "userAgent": client.endpoint.user_agent(),
        "jsVersion": "",
    }


async def _set_download_behavior(client: CdpClient, params: Params, caller: str | None) -> Params:
    # The browser's own behaviour stays (extensions may not change it); with events on,
    # downloads are reported as Chrome would, and a copy of each finished file is put where
    # the client asked ("allowAndName": named by its guid).
    client.downloads.set_behavior(params)
    return {}


async def _grant_permissions(client: CdpClient, params: Params, caller: str | None) -> Params:
    # Extensions cannot grant site permissions; pretending would make a test pass or fail
    # for the wrong reason.
    raise CdpError(
        "Browser.grantPermissions",
        "granting permissions is not available through the bridge extension: "
        "grant them in Chrome's site settings for the person's profile",
        -32000,
    )


async def _reset_permissions(client: CdpClient, params: Params, caller: str | None) -> Params:
    return {}  # nothing was granted through bridge, so nothing to reset


async def _close(client: CdpClient, params: Params, caller: str | None) -> Params:
    await client.ws.close(1000, "Browser.close: disconnected; the browser keeps running")
    return {}


async def _get_window_for_target(client: CdpClient, params: Params, caller: str | None) -> Params:
    return {
        "windowId": 1,
        "bounds": {
            "left": 0,
            "top": 0,
            "width": 1280,
            "height": 800,
            "windowState": "normal",
        },
    }


async def _accepted(client: CdpClient, params: Params, caller: str | None) -> Params:
    """Settings a client may make that change nothing here (the window, remote locations,
    certificate errors): accepted as Chrome accepts them."""
    return {}


# -- Target: discovery and sessions --------------------------------------------------------------


async def _set_discover_targets(client: CdpClient, params: Params, caller: str | None) -> Params:
    client.discover = bool(params.get("discover"))
    if client.discover:
        for info in await _tabs(client):
            await client.event(
                "Target.targetCreated", {"targetInfo": target_info(info, attached=False)}
            )
    return {}


async def _set_auto_attach(client: CdpClient, params: Params, caller: str | None) -> Params:
    client.auto_attach = bool(params.get("autoAttach"))
    if client.auto_attach:
        for info in await _tabs(client):
            await client.sessions.announce(info, waiting=False)
    return {}


async def _get_targets(client: CdpClient, params: Params, caller: str | None) -> Params:
    return {
        "targetInfos": [
            target_info(t, attached=client.sessions.has(t.tab_id)) for t in await _tabs(client)
        ]
    }


async def _get_target_info(client: CdpClient, params: Params, caller: str | None) -> Params:
    wanted = params.get("targetId")
    if wanted is None:
        return {
            "targetInfo": {
                "targetId": "browser",
                "type": "browser",
                "title": "",
                "url": "",
                "attached": True,
            }
        }
    info = await _tab_info(client, str(wanted))
    return {"targetInfo": target_info(info, attached=client.sessions.has(info.tab_id))}


async def _attach_to_target(client: CdpClient, params: Params, caller: str | None) -> Params:
    # A session of its own on the tab (Playwright's new_cdp_session, Puppeteer's
    # createCDPSession). As Chrome does, the session that asked hears attachedToTarget
    # before the answer: Puppeteer creates its session object from that event. Playwright
    # asks from a browser session of its own (attachToBrowserTarget), so its main session
    # never reads it as a second page.
    info = await _tab_info(client, str(params["targetId"]))
    alias = client.sessions.new(info)
    described = target_info(info, attached=True, context=client.context_of(info.tab_id))
    await client.event(
        "Target.attachedToTarget",
        {
            "sessionId": alias.session_id,
            "targetInfo": described,
            "waitingForDebugger": False,
        },
        caller,
    )
    return {"sessionId": alias.session_id}


async def _attach_to_browser_target(
    client: CdpClient, params: Params, caller: str | None
) -> Params:
    return {"sessionId": BROWSER_SESSION}


async def _detach_from_target(client: CdpClient, params: Params, caller: str | None) -> Params:
    client.sessions.drop(str(params.get("sessionId", "")))
    return {}


# -- Target: tabs and contexts -------------------------------------------------------------------


async def _create_target(client: CdpClient, params: Params, caller: str | None) -> Params:
    url = client.navigable(str(params.get("url") or "about:blank"))
    context = params.get("browserContextId")
    if context and context not in client.contexts:
        raise ValueError(f"Failed to find browser context with id {context}")
    sessions = client.sessions
    sessions.creating += 1
    try:
        tab = await client.browser.new_tab(url, own_window=True)
    finally:
        sessions.creating -= 1
    if context:
        client.contexts[str(context)].add(tab.tab_id)
    created = [t for t in await client.browser.list_tabs() if t.tab_id == tab.tab_id]
    if not created:
        raise ValueError("the new tab closed at once")
    if client.auto_attach:
        await sessions.announce(created[0], waiting=True)
    deferred, sessions.deferred = sessions.deferred, []
    for other in deferred:  # tabs others opened meanwhile
        if other["tabId"] != tab.tab_id:
            sessions.popup(other)
    return {"targetId": target_id(created[0])}


async def _close_target(client: CdpClient, params: Params, caller: str | None) -> Params:
    info = await _tab_info(client, str(params.get("targetId", "")))
    await client.browser.close_tab(info.tab_id)  # ends the tab's aliases (sessions._ended)
    for alias in [a for a in client.sessions.aliases.values() if a.tab_id == info.tab_id]:
        client.sessions.drop(alias.session_id)  # aliases never used (never attached)
    await client.event("Target.targetDestroyed", {"targetId": target_id(info)})
    return {"success": True}


async def _get_browser_contexts(client: CdpClient, params: Params, caller: str | None) -> Params:
    return {"browserContextIds": list(client.contexts)}


async def _create_browser_context(client: CdpClient, params: Params, caller: str | None) -> Params:
    if params.get("proxyServer"):
        # A context here is a group of tabs in the person's profile: a proxy for it alone
        # would silently not apply. Refused, so the client knows.
        raise CdpError(
            "Target.createBrowserContext",
            "a proxy per context is not available through the bridge extension "
            "(contexts share the person's profile); set the proxy in Chrome itself",
            -32000,
        )
    context = f"bridge-context-{next(client.ids)}"
    client.contexts[context] = set()
    return {"browserContextId": context}


async def _dispose_browser_context(client: CdpClient, params: Params, caller: str | None) -> Params:
    tabs = client.contexts.pop(str(params.get("browserContextId")), None)
    if tabs is None:
        raise ValueError(f"Failed to find context with id {params.get('browserContextId')}")
    for tab_id in tabs:
        with contextlib.suppress(BridgeError):  # closed already by the client or person
            await client.browser.close_tab(tab_id)
    return {}


# -- Storage: cookies ----------------------------------------------------------------------------
# Browser-level cookie calls, made through a tab this client already uses (the cookie store
# is the profile's, whichever tab asks): attaching another tab just for this would put the
# debugging bar on a tab nobody asked for.


async def _get_cookies(client: CdpClient, params: Params, caller: str | None) -> Params:
    found = await _a_tab_in_use(client, "Storage.getCookies").send("Network.getAllCookies")
    return {"cookies": found.get("cookies", [])}


async def _set_cookies(client: CdpClient, params: Params, caller: str | None) -> Params:
    tab = _a_tab_in_use(client, "Storage.setCookies")
    await tab.send("Network.setCookies", {"cookies": params.get("cookies", [])})
    return {}


async def _clear_cookies(client: CdpClient, params: Params, caller: str | None) -> Params:
    raise CdpError(
        "Storage.clearCookies",
        "clearing cookies is refused through the bridge extension: it would sign the "
        "person out of every site; delete the test's cookies one by one instead",
        -32000,
    )


BROWSER_METHODS: dict[str, Handler] = {
    "Browser.getVersion": _get_version,
    "Browser.setDownloadBehavior": _set_download_behavior,
    "Browser.grantPermissions": _grant_permissions,
    "Browser.resetPermissions": _reset_permissions,
    "Browser.close": _close,
    "Browser.getWindowForTarget": _get_window_for_target,
    "Browser.setWindowBounds": _accepted,
    "Target.setRemoteLocations": _accepted,
    "Security.setIgnoreCertificateErrors": _accepted,
    "Target.setDiscoverTargets": _set_discover_targets,
    "Target.setAutoAttach": _set_auto_attach,
    "Target.getTargets": _get_targets,
    "Target.getTargetInfo": _get_target_info,
    "Target.attachToTarget": _attach_to_target,
    "Target.attachToBrowserTarget": _attach_to_browser_target,
    "Target.detachFromTarget": _detach_from_target,
    "Target.createTarget": _create_target,
    "Target.closeTarget": _close_target,
    "Target.getBrowserContexts": _get_browser_contexts,
    "Target.createBrowserContext": _create_browser_context,
    "Target.disposeBrowserContext": _dispose_browser_context,
    "Storage.getCookies": _get_cookies,
    "Storage.setCookies": _set_cookies,
    "Storage.clearCookies": _clear_cookies,
}
