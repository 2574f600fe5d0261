"""The network family (the ``network`` capability group): routes that mock, abort or
re-header a client's requests, and offline.

Routes and offline belong to the client that set them: they apply to the tabs it acts on
(its current tab when set, and every tab it acts on afterwards), never to another client's,
and they end when the client removes them or leaves (``on_leave``). Each tab's requests go
through its one interception (``bridge.cdp.interception``), the person's origin guard first.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Literal

from bridge.cdp.session import CdpSession
from bridge.policy.routing import Route
from bridge.tools.operations.client import ToolClient
from bridge.tools.targets import TabState

if TYPE_CHECKING:
    from bridge.tools.browsing import ToolHub

__all__ = ["NetworkOperations"]

_UNDO = "network routes and offline"

#: Network.emulateNetworkConditions for online (no throttling) and offline.
_CONDITIONS = {"latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}


class NetworkOperations(ToolClient):
    """``browser_route``, ``browser_route_list``, ``browser_unroute``,
    ``browser_network_state_set``."""

    def __init__(self, hub: ToolHub, client: str) -> None:
        super().__init__(hub, client)
        self.routes: list[Route] = []
        self.offline = False
        #: The tabs this client's routes and offline were put on (the session they were
        #: put on: a tab attached again starts without them).
        self._network_tabs: dict[int, CdpSession] = {}

    async def route(self, route: Route) -> Route:
        """Add a route (newest wins where several match), on this client's tabs."""
        self.routes.append(route)
        await self._spread()
        return route

    def route_list(self) -> list[Route]:
        return list(self.routes)

    async def unroute(self, pattern: str | None = None) -> int:
        """Remove the routes of ``pattern`` (all without one); how many were removed."""
        kept = [r for r in self.routes if pattern is not None and r.pattern != pattern]
        removed = len(self.routes) - len(kept)
        self.routes = kept
        await self._spread()
        return removed

    async def set_network_state(self, state: Literal["online", "offline"]) -> None:
        self.offline = state == "offline"
        await self._spread()

    # -- where they apply -------------------------------------------------------------

    async def _state(self, tab: int | None, *, dialog_ok: bool = False) -> TabState:
        state = await super()._state(tab, dialog_ok=dialog_ok)
        if (self.routes or self.offline) and self._network_tabs.get(state.tab_id) is not state.tab:
            await self._apply(state.tab)
        return state

    async def _spread(self) -> None:
        """Put the client's routes and offline on its tabs as they are now (the current
        one included, if it has one), and register their undo while any is set."""
        just: CdpSession | None = None
        if self.current is not None and self.current not in self._network_tabs:
            just = (await self._state(None)).tab  # applies them (the override above)
        for tab_id, session in list(self._network_tabs.items()):
            if session.ended is not None:
                del self._network_tabs[tab_id]
                continue
            if session is not just:  # once per tab and change
                await self._apply(session)
        if self.routes or self.offline:
            self.on_leave(_UNDO, self._undo_network)
        else:
            self.cancel_leave(_UNDO)
            self._network_tabs = {}  # put back on each: nothing left to undo there

    async def _apply(self, session: CdpSession) -> None:
        # The routes and the network's state are independent: set at once, one round trip.
        await asyncio.gather(
            self.hub.browser.interception(session).set_routes(self.client, self.routes),
            session.send(
                "Network.emulateNetworkConditions", {"offline": self.offline, **_CONDITIONS}
            ),
        )
        self._network_tabs[session.tab_id] = session

    async def _undo_network(self) -> None:
        """The client leaves: its routes go, its tabs are online again."""
        self.routes, self.offline = [], False
        tabs, self._network_tabs = self._network_tabs, {}
        for session in tabs.values():
            if session.ended is None:
                await self._apply(session)
        self._network_tabs = {}
