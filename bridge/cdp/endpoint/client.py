"""One DevTools client's connection: its commands read under backpressure and each answered
exactly once, browser-level ones by ``browser_methods`` and page-level ones through its
``sessions``; and, when it goes, what it leaves behind (its contexts' tabs closed, the tabs
it alone attached detached).

A client that sends faster than its commands complete is slowed down, never dropped: at
most ``MAX_IN_FLIGHT`` of its commands run at once, and meanwhile nothing more is read from
it (past ``MAX_QUEUED_FRAMES`` waiting frames, not even from its socket), so a flood costs
bounded memory and other clients keep their share.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from bridge.cdp.browser import Browser
from bridge.cdp.endpoint import browser_methods
from bridge.cdp.endpoint.downloads import ClientDownloads
from bridge.cdp.endpoint.sessions import ClientSessions
from bridge.cdp.endpoint.targets import BROWSER_SESSION, CONTEXT_ID, Params
from bridge.errors import BridgeError, CdpError
from bridge.policy.urls import check_navigable
from bridge.tasks import TaskSet
from bridge.wire.extension import EXTENSION_ID

if TYPE_CHECKING:
    from bridge.cdp.endpoint.server import CdpEndpoint

__all__ = ["MAX_IN_FLIGHT", "MAX_QUEUED_FRAMES", "CdpClient", "parse_command"]

log = logging.getLogger(__name__)

#: Commands of one client under way at once; more wait, unread (backpressure, not drops).
MAX_IN_FLIGHT = 256
#: Frames of one client received and not yet read; past this the socket is not read either.
MAX_QUEUED_FRAMES = 64


def parse_command(frame: str | bytes) -> Params | str:
    """The command in a client's frame, or why it is none (answered with ``-32700``)."""
    try:
        message = json.loads(frame)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        return f"the frame is not JSON: {exc}"
    if not isinstance(message, dict):
        return f"a CDP command is a JSON object, not {type(message).__name__}"
    request_id = message.get("id")
    if not isinstance(request_id, int) or isinstance(request_id, bool):
        return "a CDP command needs an integer 'id'"
    return message


def _command_shape_error(message: Params) -> str | None:
    """What is wrong with a command's fields (answered with ``-32600`` and its id)."""
    if not isinstance(message.get("method"), str):
        return "'method' must be a string"
    if message.get("params") is not None and not isinstance(message["params"], dict):
        return "'params' must be an object"
    if message.get("sessionId") is not None and not isinstance(message["sessionId"], str):
        return "'sessionId' must be a string"
    return None


def _bound_reading(ws: ServerConnection) -> None:
    """Flow control for this connection: the relay's server queues frames without limit
    (an extension link must never stall), but a CDP client that floods must not fill memory
    with frames nobody reads yet. Past ``MAX_QUEUED_FRAMES`` the socket is not read until the
    queue drains (websockets' own mechanism for ``max_queue``, set per connection here)."""
    assembler = getattr(ws, "recv_messages", None)
    if assembler is not None and getattr(assembler, "high", 0) is None:
        assembler.high, assembler.low = MAX_QUEUED_FRAMES, MAX_QUEUED_FRAMES // 4


@dataclass
class ClientStats:
    """What happened on one DevTools connection, counted; never used to decide anything."""

    #: The most commands that were ever under way at once (at most MAX_IN_FLIGHT).
    peak_in_flight: int = 0


@dataclass(eq=False)
class CdpClient:
    """One ``/cdp`` connection and what its commands set up: sessions, contexts, the
    discovery and auto-attach switches, downloads."""

    endpoint: CdpEndpoint
    ws: ServerConnection
    auto_attach: bool = False
    discover: bool = False
    #: Contexts a client made (``browser.new_context()``): groups of tabs it closes together.
    #: They share the person's profile: cookies and storage are not isolated.
    contexts: dict[str, set[int]] = field(default_factory=dict)
    #: Numbers for the session and context ids this client is given.
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    #: Commands under way now (at most MAX_IN_FLIGHT: beyond, the connection is not read).
    in_flight: int = 0
    stats: ClientStats = field(default_factory=ClientStats)
    _room: asyncio.Event = field(default_factory=asyncio.Event)
    sessions: ClientSessions = field(init=False)
    downloads: ClientDownloads = field(init=False)
    tasks: TaskSet = field(init=False)

    def __post_init__(self) -> None:
        self.sessions = ClientSessions(self)
        self.downloads = ClientDownloads(self.browser, self.endpoint.downloads_dir, self.event)
        self.tasks = TaskSet("DevTools client", log)

    @property
    def browser(self) -> Browser:
        return self.endpoint.browser

    async def run(self) -> None:
        _bound_reading(self.ws)
        closed = asyncio.ensure_future(self.ws.wait_closed())
        try:
            async for frame in self.ws:
                if self.ws.state is not State.OPEN:
                    return  # its answer could not be sent: the client is gone
                message = parse_command(frame)
                if isinstance(message, str):
                    await self.send({"id": None, "error": {"code": -32700, "message": message}})
                    continue
                if not await self._wait_for_room(closed):
                    return
                self.in_flight += 1
                self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.in_flight)
                self.tasks.spawn(self._command(message), on_done=self._command_done)
        except ConnectionClosed:
            pass
        finally:
            closed.cancel()

    async def _wait_for_room(self, closed: asyncio.Future[None]) -> bool:
        """Until fewer than MAX_IN_FLIGHT commands are under way (meanwhile this client is
        not read: backpressure); False if the connection ends first."""
        while self.in_flight >= MAX_IN_FLIGHT:
            self._room.clear()
            room = asyncio.ensure_future(self._room.wait())
            waits: set[asyncio.Future[Any]] = {room, closed}
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                room.cancel()
            if closed.done():
                return False
        return True

    def _command_done(self, task: asyncio.Task[Any]) -> None:
        self.in_flight -= 1
        self._room.set()

    async def close(self, others: set[CdpClient]) -> None:
        """The client is gone: its sessions and tasks end, the tabs of contexts it made go
        with it (as disposeOnDetach does), and the tabs it alone attached are detached
        (``others``: the clients still connected); the person's own tabs stay."""
        self.sessions.close()
        await self.tasks.stop()
        for tabs in self.contexts.values():
            for tab_id in tabs:
                with contextlib.suppress(BridgeError):
                    await self.browser.close_tab(tab_id)
        self.contexts.clear()
        await self.sessions.release_tabs(others)

    async def send(self, message: Params) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(json.dumps(message))

    async def event(self, method: str, params: Params, session_id: str | None = None) -> None:
        message: Params = {"method": method, "params": params}
        if session_id:
            message["sessionId"] = session_id
        await self.send(message)

    def navigable(self, url: str) -> str:
        """The URL to open for a client's ``url``, or UrlRefused (a CDP error whose message
        says why): the browser tools' policy, with the person's --allow-file-urls."""
        return check_navigable(
            url, allow_file=self.endpoint.allow_file_urls, own_extension_id=EXTENSION_ID
        )

    def context_of(self, tab_id: int) -> str:
        return next((c for c, tabs in self.contexts.items() if tab_id in tabs), CONTEXT_ID)

    async def _command(self, message: Params) -> None:
        request_id = message["id"]
        reply: Params = {"id": request_id}
        wrong = _command_shape_error(message)
        if wrong is not None:
            reply["error"] = {"code": -32600, "message": wrong}
            await self.send(reply)
            return
        method = str(message["method"])
        params = message.get("params") or {}
        session = message.get("sessionId")
        if session:
            reply["sessionId"] = session
        try:
            if session and session != BROWSER_SESSION:
                result = await self.sessions.command(str(session), method, params)
            else:
                result = await browser_methods.call(self, method, params, session)
            reply["result"] = result
        except CdpError as exc:
            reply["error"] = {
                "code": exc.cdp_code or -32000,
                "message": str(exc).split(" failed: ", 1)[-1],
            }
        except (BridgeError, ValueError, KeyError) as exc:
            reply["error"] = {"code": -32000, "message": str(exc)}
        except Exception as exc:  # a parameter of the wrong type: answered, never silent
            log.debug("CDP client command %s failed", method, exc_info=True)
            reply["error"] = {"code": -32602, "message": f"invalid parameters for {method}: {exc}"}
        await self.send(reply)
