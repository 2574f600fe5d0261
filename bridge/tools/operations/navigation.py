"""The navigation family: open a URL in the current tab (a new one if the client has none),
and go back or forward in its history; each reports what changed, as every action does."""

from __future__ import annotations

from bridge.errors import BridgeError
from bridge.policy.urls import check_navigable
from bridge.tools import codegen
from bridge.tools.action_report import ActionReport
from bridge.tools.locating import CodeStep
from bridge.tools.operations.client import ToolClient
from bridge.waiting import scaled

__all__ = ["Navigation"]


class Navigation(ToolClient):
    """``browser_navigate``, ``browser_navigate_back``, ``browser_navigate_forward``."""

    async def navigate(self, url: str, tab: int | None = None) -> ActionReport:
        target = check_navigable(url, allow_file=self.hub.settings.allow_file_urls)
        if tab is None and self.current is None:
            session = await self.hub.browser.new_tab("about:blank", own_window=True)
            self.current = session.tab_id
        state = await self._state(tab)

        async def go() -> None:
            loaded = state.tab.expect_event("Page.loadEventFired")
            try:
                result = await state.tab.send("Page.navigate", {"url": target})
                if result.get("errorText"):
                    raise BridgeError(f"could not open {target}: {result['errorText']}")
                if result.get("loaderId"):  # a new document (not a same-document jump)
                    await loaded.wait(scaled(30.0))
            finally:
                loaded.close()

        step = CodeStep(lambda _: [codegen.goto(target)])
        return await self._act(state, f"Navigated to {target}", go, navigation=False, code=step)

    async def go_back(self, tab: int | None = None) -> ActionReport:
        return await self._history(-1, tab)

    async def go_forward(self, tab: int | None = None) -> ActionReport:
        return await self._history(1, tab)

    async def _history(self, step: int, tab: int | None) -> ActionReport:
        state = await self._state(tab)
        history = await state.tab.send("Page.getNavigationHistory")
        index = int(history["currentIndex"]) + step
        entries = history["entries"]
        if not 0 <= index < len(entries):
            raise BridgeError(f"there is no page to go {'back' if step < 0 else 'forward'} to")

        async def go() -> None:
            await state.tab.send("Page.navigateToHistoryEntry", {"entryId": entries[index]["id"]})

        code = CodeStep(lambda _: ["page.go_back()" if step < 0 else "page.go_forward()"])
        return await self._act(state, "Went back" if step < 0 else "Went forward", go, code=code)
