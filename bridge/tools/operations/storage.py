"""The storage family (the ``storage`` tool group): the current page's cookies, its
localStorage and sessionStorage, and its storage state saved to / loaded from a file.

Everything is scoped to the current tab's origin (``bridge.tools.storage_core``): the
cookies Chrome would send to its URL (``Network.getCookies`` with that URL only, never the
whole cookie jar), cookies set or deleted only for its host, web storage of its own origin.
Web storage is read and written in an isolated world (``bridge/js/webstorage.js``), where
the page's scripts cannot stand in for ``Storage``'s methods. Cookie values are the
person's secrets: they go to the client that asked, and never into a log.
"""

from __future__ import annotations

import json
from typing import Any

from bridge.cdp.page_script import script_file
from bridge.cdp.session import JavaScriptError
from bridge.errors import CdpError
from bridge.tools.operations.client import ToolClient
from bridge.tools.saving import default_name, read_file, save_file
from bridge.tools.storage_core import (
    MAX_STATE_BYTES,
    PageOrigin,
    build_state,
    cookie_set_params,
    page_origin,
    parse_state,
)
from bridge.tools.targets import TabState

__all__ = ["Storage"]

_WEBSTORAGE = script_file("webstorage.js").strip().rstrip(";")
#: The isolated world's name (shown in DevTools' context picker).
WORLD = "bridge-storage"


class Storage(ToolClient):
    """``browser_cookie_*``, ``browser_localstorage_*``, ``browser_sessionstorage_*``,
    ``browser_storage_state``, ``browser_set_storage_state``."""

    async def _page(self, state: TabState) -> tuple[PageOrigin, str]:
        """The main frame's origin (as Chrome knows it, not as the page says) and its id."""
        tree = await state.tab.send("Page.getFrameTree")
        frame = tree["frameTree"]["frame"]
        return page_origin(str(frame.get("url", ""))), str(frame["id"])

    # -- cookies ---------------------------------------------------------------------------

    async def _cookies(self, state: TabState, page: PageOrigin) -> list[dict[str, Any]]:
        result = await state.tab.send("Network.getCookies", {"urls": [page.url]})
        return list(result.get("cookies", []))

    async def cookie_list(
        self, domain: str | None = None, path: str | None = None, tab: int | None = None
    ) -> list[dict[str, Any]]:
        """The cookies Chrome would send to the current page, filtered as Playwright does
        (``domain`` contained in the cookie's, ``path`` a prefix of its)."""
        state = await self._state(tab)
        page, _ = await self._page(state)
        cookies = await self._cookies(state, page)
        if domain:
            cookies = [c for c in cookies if domain in c["domain"]]
        if path:
            cookies = [c for c in cookies if str(c["path"]).startswith(path)]
        return cookies

    async def cookie_get(self, name: str, tab: int | None = None) -> dict[str, Any] | None:
        """The current page's cookie ``name`` (None when it has none)."""
        return next((c for c in await self.cookie_list(tab=tab) if c["name"] == name), None)

    async def cookie_set(
        self,
        name: str,
        value: str,
        *,
        domain: str | None = None,
        path: str | None = None,
        expires: float | None = None,
        http_only: bool | None = None,
        secure: bool | None = None,
        same_site: str | None = None,
        tab: int | None = None,
    ) -> dict[str, Any]:
        """Set a cookie of the current page's host (or a parent domain of it): the CDP
        parameters it was set with (``StorageScopeRefused`` for another domain)."""
        state = await self._state(tab)
        page, _ = await self._page(state)
        params = cookie_set_params(
            page,
            name=name,
            value=value,
            domain=domain,
            path=path,
            expires=expires,
            http_only=http_only,
            secure=secure,
            same_site=same_site,
        )
        await self._set_cookie(state, params)
        return params

    async def _set_cookie(self, state: TabState, params: dict[str, Any]) -> None:
        try:
            result = await state.tab.send("Network.setCookie", params)
        except CdpError as exc:  # the value itself is never in the message: it is a secret
            result = {"success": False, "error": str(exc)}
        if result.get("success") is False:  # older Chrome answers success: false, newer errs
            why = result.get("error") or "no reason given"
            raise ValueError(
                f"Chrome refused the cookie {params['name']!r} ({why}): a secure cookie on an "
                "http page, SameSite=None without secure, or a public-suffix domain?"
            )

    async def cookie_delete(self, name: str, tab: int | None = None) -> int:
        """Delete the current page's cookies named ``name`` (each by its exact domain and
        path, so no other site's cookie of that name goes): how many."""
        state = await self._state(tab)
        page, _ = await self._page(state)
        doomed = [c for c in await self._cookies(state, page) if c["name"] == name]
        return await self._delete(state, doomed)

    async def cookie_clear(self, tab: int | None = None) -> int:
        """Delete every cookie the current page gets (only those): how many."""
        state = await self._state(tab)
        page, _ = await self._page(state)
        return await self._delete(state, await self._cookies(state, page))

    async def _delete(self, state: TabState, cookies: list[dict[str, Any]]) -> int:
        for c in cookies:
            params: dict[str, Any] = {"name": c["name"], "domain": c["domain"], "path": c["path"]}
            if c.get("partitionKey"):
                params["partitionKey"] = c["partitionKey"]
            await state.tab.send("Network.deleteCookies", params)
        return len(cookies)

    # -- localStorage / sessionStorage -----------------------------------------------------

    async def web_storage(
        self,
        area: str,
        op: str,
        key: str = "",
        value: str = "",
        tab: int | None = None,
    ) -> Any:
        """``op`` (list, get, set, delete, clear) on the current page's ``area`` ("local"
        or "session") storage: list answers ``[{name, value}]``, get the value or None."""
        if area not in ("local", "session"):
            raise ValueError(f"storage area is 'local' or 'session', not {area!r}")
        if op not in ("list", "get", "set", "delete", "clear"):
            raise ValueError(f"unknown storage operation {op!r}")
        state = await self._state(tab)
        page, frame = await self._page(state)
        return await self._in_world(state, frame, page, area, op, key, value, [])

    async def _in_world(
        self,
        state: TabState,
        frame: str,
        page: PageOrigin,
        area: str,
        op: str,
        key: str,
        value: str,
        items: list[dict[str, str]],
    ) -> Any:
        world = await state.tab.send(
            "Page.createIsolatedWorld", {"frameId": frame, "worldName": WORLD}
        )
        params = {
            "functionDeclaration": _WEBSTORAGE,
            "executionContextId": world["executionContextId"],
            "arguments": [{"value": a} for a in (area, op, key, value, items)],
            "returnByValue": True,
        }
        result = await state.tab.send("Runtime.callFunctionOn", params)
        details = result.get("exceptionDetails")
        if details:
            exc = details.get("exception") or {}
            text = exc.get("description") or details.get("text") or "exception"
            raise JavaScriptError(
                "Runtime.callFunctionOn", f"{area}Storage of {page.origin}: {text}"
            )
        return result.get("result", {}).get("value")

    # -- storage state ---------------------------------------------------------------------

    async def storage_state(self, filename: str | None = None, tab: int | None = None) -> Any:
        """Save the current origin's cookies and localStorage as Playwright's storageState
        JSON under an allowed folder: ``(path, cookies, items)``."""
        state = await self._state(tab)
        page, frame = await self._page(state)
        cookies = await self._cookies(state, page)
        local = await self._in_world(state, frame, page, "local", "list", "", "", [])
        body = json.dumps(build_state(page, cookies, local), indent=2).encode()
        path = save_file(
            self.hub.files,
            filename or default_name("storage-state", "json"),
            body,
            "application/json",
        )
        return path, len(cookies), len(local)

    async def set_storage_state(self, filename: str, tab: int | None = None) -> dict[str, Any]:
        """Replace the current origin's cookies and localStorage with a storage-state
        file's (Playwright's restore, limited to this origin). The file is read only from
        an allowed folder; any entry of another origin refuses the whole file, before
        anything is changed."""
        path, data = read_file(self.hub.files, filename, MAX_STATE_BYTES)
        state = await self._state(tab)
        page, frame = await self._page(state)
        entries = parse_state(data, page)  # refuses before anything changes
        removed = await self._delete(state, await self._cookies(state, page))
        for params in entries.cookies:
            await self._set_cookie(state, params)
        items = [{"name": k, "value": v} for k, v in entries.local_storage]
        await self._in_world(state, frame, page, "local", "replace", "", "", items)
        return {
            "origin": page.origin,
            "cookies_removed": removed,
            "cookies": len(entries.cookies),
            "local_storage": len(items),
            "path": str(path),
        }
