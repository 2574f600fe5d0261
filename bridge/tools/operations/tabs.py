"""The tabs family: list the browser's tabs (with each one's access), open one, select
one (it becomes the client's current tab), close one."""

from __future__ import annotations

from typing import Any

from bridge.cdp.browser import TabInfo
from bridge.policy.urls import check_navigable
from bridge.tools.operations.client import ToolClient, current_url

__all__ = ["TabOperations"]


class TabOperations(ToolClient):
    """``browser_tabs``."""

    async def tabs(
        self, action: str = "list", tab: int | None = None, url: str | None = None
    ) -> dict[str, Any]:
        """``list`` every tab; ``new`` (optionally at ``url``); ``select`` or ``close`` one."""
        browser = self.hub.browser
        if action == "list":
            infos = await browser.list_tabs()
            return {"tabs": [self._describe(t) for t in infos], "current": self.current}
        if action == "new":
            target = check_navigable(
                url or "about:blank", allow_file=self.hub.settings.allow_file_urls
            )
            session = await browser.new_tab(target, own_window=True)
            self.current = session.tab_id
            state = await self.hub.state(session.tab_id)
            await self._group(session.tab_id)
            return {"tab": state.tab_id, "url": target}
        if tab is None:
            raise ValueError(f"browser_tabs {action!r} needs a tab id (see action 'list')")
        if action == "select":
            state = await self._state(tab, dialog_ok=True)
            return {"tab": state.tab_id, "url": await current_url(state)}
        if action == "close":
            await browser.check_access(tab)
            await browser.close_tab(tab)
            self.hub.states.pop(tab, None)
            if self.current == tab:
                self.current = None
            return {"closed": tab}
        raise ValueError(f"unknown action {action!r}: use list, new, select or close")

    def _describe(self, info: TabInfo) -> dict[str, Any]:
        access = self.hub.browser.access(info.tab_id)
        out: dict[str, Any] = {
            "tab": info.tab_id,
            "title": info.title,
            "url": info.url,
            "active": info.active,
            "attached": info.attached_here,
            "current": info.tab_id == self.current,
            "access": access,
        }
        if access == "not shared":
            out["how"] = "the person's tab: usable once they share it (bridge popup)"
        return out
