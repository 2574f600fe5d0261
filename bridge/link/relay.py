"""The relay: a loopback WebSocket server the extension connects to.

One port serves three things: ``GET /relay-info`` (discovery, for our extension's
origin only), the ``/extension`` WebSocket (our extension's origin only), and nothing
else. It never binds beyond 127.0.0.1, never sends a permissive CORS header, and checks
the Host header so a DNS-rebinding page cannot reach it under another name.

Nothing flows on ``/extension`` before both ends have proved they know the person's secret
(``bridge.wire.trust``; docs/protocol.md#handshake): a local program that forges the extension's
Origin learns nothing and is refused. A browser bridge launched has a secret of its own
(``bridge.link.trust_root.Island``), so only that browser can link to its relays.

Several of the person's browsers may link to one relay. The first one serves; a later one
waits on standby and takes over only when the serving one goes away, or when the person
chooses it in its popup (``claim``), or with ``switch="newest"``: never silently.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import http
import json
import logging
import os
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from bridge import __version__
from bridge.errors import BridgeError, ExtensionNotConnected
from bridge.link.extension_link import ExtensionLink, LinkChannel
from bridge.link.redaction import WEBSOCKETS_LOGGERS, redact_request_logs
from bridge.link.registry import RelayRegistration
from bridge.link.registry import runtime_dir as registry_dir
from bridge.link.registry import supported as registry_supported
from bridge.link.tokens import token_matches
from bridge.link.transport import TransportListener
from bridge.tasks import TaskSet
from bridge.waiting import scaled
from bridge.wire import protocol, trust
from bridge.wire.extension import (
    CLOSE_REFUSED,
    CLOSE_UNTRUSTED,
    DEFAULT_ORIGIN,
    KEEPALIVE_S,
    LINK_MODES,
    MAX_FRAME,
    PORT_RANGE,
)
from bridge.wire.protocol import Event, Hello, ProtocolError


class DevToolsService(Protocol):
    """What the relay serves on ``/json/*`` and ``/cdp`` when the DevTools endpoint is on
    (``bridge.cdp.endpoint.CdpEndpoint``): the seam keeps this layer below the CDP one."""

    token: str

    def version(self, host: str) -> dict[str, Any]: ...
    async def target_list(self, host: str) -> list[dict[str, Any]]: ...
    async def serve(self, ws: ServerConnection) -> None: ...


__all__ = ["DevToolsService", "Pairing", "Relay", "RelayStats"]

log = logging.getLogger(__name__)
# websockets logs request lines and headers at DEBUG: /cdp?token=… never reaches a log.
redact_request_logs(*WEBSOCKETS_LOGGERS)

CDP_PATHS: Final = frozenset(
    {"/json/version", "/json/version/", "/json/list", "/json/list/", "/json", "/json/", "/cdp"}
)

SWITCH_MODES: Final = ("first", "newest")
#: How long the extension has for each handshake step.
HANDSHAKE_S: Final = 5.0
#: A pairing code lives this long, and survives this many wrong proofs.
PAIRING_S: Final = 600.0
PAIRING_ATTEMPTS: Final = 5


@dataclass
class RelayStats:
    """What happened on a relay, counted; never used to decide anything."""

    #: GET /relay-info requests answered: how often something probed this relay.
    info_requests: int = 0
    #: Keepalive pings the extension answered: time passing on a healthy idle link.
    keepalive_rounds: int = 0
    #: Handshakes that failed the proof: impostors met (each is logged as a warning).
    refused_links: int = 0


class Pairing:
    """A one-time pairing code this relay offers (``bridge pair``): the first extension that
    shows it learns the secret; it expires after ``PAIRING_S`` or ``PAIRING_ATTEMPTS`` wrong
    proofs."""

    def __init__(self, code: str, expires_at: float) -> None:
        self.code = code
        self.expires_at = expires_at
        self.failures = 0
        self.done: asyncio.Future[Hello] = asyncio.get_running_loop().create_future()

    @property
    def open(self) -> bool:
        return (
            not self.done.done()
            and time.monotonic() < self.expires_at
            and self.failures < PAIRING_ATTEMPTS
        )

    def failed(self) -> None:
        """A wrong proof while pairing; the last one allowed ends the offer."""
        self.failures += 1
        if self.failures >= PAIRING_ATTEMPTS and not self.done.done():
            self.done.set_exception(
                BridgeError(
                    f"{PAIRING_ATTEMPTS} wrong proofs: this pairing code is void. Run "
                    "`bridge pair` again, and type the new code only into bridge's own popup"
                )
            )
            self.done.exception()  # retrieved here too: nobody may be waiting


class Relay:
    """The loopback server the extension links to: discovery, the trust handshake, which link
    serves (standby for the others), keepalives; a ``Connector`` for the Browser."""

    def __init__(
        self,
        *,
        port: int | None = None,
        port_range: tuple[int, int] = PORT_RANGE,
        allowed_origins: Iterable[str] = (DEFAULT_ORIGIN,),
        secret: str | None = None,
        switch: str = "first",
        name: str = "bridge",
        register: bool = True,
        runtime_dir: Path | None = None,
        link: str = "websocket",
        max_frame: int = MAX_FRAME,
    ) -> None:
        """``secret``: the secret links must prove (default: the person's, from
        ``bridge.link.trust_root``; a launched browser's island secret for its relays).
        ``switch``: which of several linked browsers serves: ``"first"`` (a later one waits
        until the first goes away or the person claims it) or ``"newest"``.
        ``register``: announce this relay to native hosts (``bridge.link.registry``) in
        ``runtime_dir`` (default: the per-user one, ``$BRIDGE_RUNTIME_DIR`` first).
        ``link``: how the extension should connect, ``"websocket"`` or ``"native"`` (the whole
        protocol through the native host; for browsers that may not reach loopback TCP).
        ``max_frame``: the largest WebSocket message accepted, in bytes; a bigger one closes
        that connection with code 1009 (message too big), and the relay serves on."""
        if link not in LINK_MODES:
            raise ValueError(f"link must be one of {', '.join(LINK_MODES)}, not {link!r}")
        if switch not in SWITCH_MODES:
            raise ValueError(f"switch must be one of {', '.join(SWITCH_MODES)}, not {switch!r}")
        if secret is None:
            from bridge.link.trust_root import load_secret

            secret = load_secret()
        self._secret = secret
        self.switch = switch
        #: The pairing code on offer (``start_pairing``), if any.
        self.pairing: Pairing | None = None
        #: What happened on this relay, counted (for doctor, benchmarks and tests).
        self.stats = RelayStats()
        self.host = "127.0.0.1"
        self._wanted_port = port
        self._port_range = port_range
        self.allowed_origins = tuple(allowed_origins)
        self.max_frame = max_frame
        self.name = name
        self.instance_id = uuid.uuid4().hex
        self.started_at = 0.0
        self._server: Server | None = None
        self._port = 0
        self._links: list[ExtensionLink] = []  # accepted, oldest first
        self._serving: ExtensionLink | None = None
        self._link_changed = asyncio.Condition()
        self._listeners: list[TransportListener] = []
        #: The DevTools endpoint served on this port, when enabled (bridge.cdp.endpoint).
        self.cdp: DevToolsService | None = None
        self._tasks = TaskSet("relay", log)
        self.link_mode = link
        self._register = register and registry_supported()
        self._runtime_dir = runtime_dir
        self._registration: RelayRegistration | None = None

    # -- lifecycle -----------------------------------------------------------------

    @property
    def port(self) -> int:
        if not self._port:
            raise RuntimeError("relay not started")
        return self._port

    @property
    def secret(self) -> str:
        """What a link must prove (never logged, never served)."""
        return self._secret

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}/extension"

    async def start(self) -> Relay:
        ports = (
            [self._wanted_port]
            if self._wanted_port is not None
            else list(range(self._port_range[0], self._port_range[1] + 1))
        )
        last: OSError | None = None
        for port in ports:
            try:
                self._server = await serve(
                    self._handle,
                    self.host,
                    port,
                    process_request=self._process_request,
                    max_size=self.max_frame,
                    max_queue=None,
                    compression=None,  # loopback: compression only costs CPU
                    write_limit=MAX_FRAME,
                )
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise
                last = exc
                continue
            self._port = port
            break
        else:
            lo, hi = (ports[0], ports[-1])
            raise OSError(
                errno.EADDRINUSE,
                f"no free relay port in {lo}-{hi}: stop another bridge or pass a port",
            ) from last
        self.started_at = time.time()
        if self._register:
            try:
                directory = registry_dir(self._runtime_dir)
                self._registration = RelayRegistration(
                    directory, self.relay_info, self._serve, secret=self._secret
                )
                await self._registration.start(self._port)
            except OSError as exc:  # discovery by probing still works
                log.warning("relay not registered for native hosts: %s", exc)
                self._registration = None
        log.info("relay listening on %s", self.url)
        return self

    async def stop(self) -> None:
        if self._server is None:
            return
        server, self._server = self._server, None
        if self._registration is not None:  # native hosts hear of it at once
            await self._registration.stop()
            self._registration = None
        server.close(close_connections=True)
        try:
            await server.wait_closed()
        except Exception as exc:  # stopping anyway: a connection that fails to close is gone
            log.debug("relay connections closing: %r", exc)
        await self._tasks.stop()

    async def __aenter__(self) -> Relay:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- links ---------------------------------------------------------------------

    @property
    def link(self) -> ExtensionLink | None:
        """The link that serves this relay now: the serving one while it is open, else the
        oldest open one on standby (which ``_promote`` makes serving as soon as the serving
        link's end is handled: a link that just closed is never handed out)."""
        serving = self._serving
        if serving is not None and not serving.is_closed:
            return serving
        for link in self._links:
            if not link.is_closed:
                return link
        return None

    @property
    def links(self) -> list[ExtensionLink]:
        return list(self._links)

    # -- Connector (bridge.link.transport): what Browser needs ---------------------------------

    @property
    def current(self) -> ExtensionLink | None:
        return self.link

    async def connect(self, timeout: float | None = None) -> ExtensionLink:
        return await self.wait_for_link(timeout)

    def subscribe(self, listener: TransportListener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def wait_for_link(self, timeout: float | None = None) -> ExtensionLink:
        """The serving link, waiting for one to connect for at most ``timeout`` seconds."""
        link = self.link
        if link is not None:
            return link
        timeout = scaled(10.0) if timeout is None else timeout
        try:
            async with asyncio.timeout(timeout), self._link_changed:
                await self._link_changed.wait_for(lambda: self.link is not None)
        except TimeoutError:
            raise ExtensionNotConnected(
                f"nothing connected to {self.url} within {timeout:.0f}s"
            ) from None
        link = self.link
        assert link is not None
        return link

    async def wait_until(self, predicate: Callable[[], bool], timeout: float) -> None:
        """Until ``predicate`` holds, checked whenever a link is accepted, lost or switched."""
        async with asyncio.timeout(timeout), self._link_changed:
            await self._link_changed.wait_for(predicate)

    def start_pairing(self, lifetime: float = PAIRING_S) -> Pairing:
        """Offer a one-time pairing code (``bridge pair``); the person types it in the popup."""
        self.pairing = Pairing(trust.new_code(), time.monotonic() + lifetime)
        return self.pairing

    # -- HTTP side -------------------------------------------------------------------

    def relay_info(self) -> dict[str, Any]:
        # Nothing here is a secret or useful to a web page: it only says "a relay lives here".
        return {
            "service": "bridge-relay",
            "name": self.name,
            "protocolVersion": protocol.PROTOCOL_VERSION,
            "version": __version__,
            "wsPath": "/extension",
            "instanceId": self.instance_id,
            "startedAt": int(self.started_at * 1000),
            "pid": os.getpid(),
            "port": self._port,
            "link": self.link_mode,
        }

    def _host_ok(self, headers: Headers) -> bool:
        host = headers.get("Host", "")
        return host in {f"127.0.0.1:{self._port}", f"localhost:{self._port}"}

    def _discovery_allowed(self, headers: Headers) -> bool:
        """Our extension, never a web page.

        Checked in Chromium 156: an extension's fetch with host permission carries no
        Origin header and ``Sec-Fetch-Site: none``. Every fetch a web page makes carries
        ``Sec-Fetch-Site`` naming a site, and a CORS-mode one an Origin; both are refused.
        """
        origin = headers.get("Origin")
        if origin is not None:
            return origin in self.allowed_origins
        return headers.get("Sec-Fetch-Site", "none") == "none"

    async def _process_request(self, conn: ServerConnection, request: Request) -> Response | None:
        path, _, query = request.path.partition("?")
        if not self._host_ok(request.headers):
            return _plain(conn, http.HTTPStatus.MISDIRECTED_REQUEST, "unknown Host\n")
        if path == "/extension":
            # Checked here rather than by the server's origins list: /cdp takes no Origin.
            if request.headers.get("Origin") not in self.allowed_origins:
                return _plain(conn, http.HTTPStatus.FORBIDDEN, "forbidden origin\n")
            return None
        if path == "/relay-info":
            self.stats.info_requests += 1
            if not self._discovery_allowed(request.headers):
                return _plain(conn, http.HTTPStatus.FORBIDDEN, "forbidden origin\n")
            return _response(
                http.HTTPStatus.OK, json.dumps(self.relay_info()).encode(), "application/json"
            )
        if path in CDP_PATHS and self.cdp is not None:
            return await self._cdp_request(conn, request, path, query)
        return _plain(conn, http.HTTPStatus.NOT_FOUND, "not found\n")

    async def _cdp_request(
        self, conn: ServerConnection, request: Request, path: str, query: str
    ) -> Response | None:
        """The DevTools endpoint: a token always; never a web page (no Origin at all).

        The token comes in the ``Authorization`` header; ``?token=`` only on the /cdp
        WebSocket, for the clients that cannot send headers there (a browserWSEndpoint URL).
        """
        assert self.cdp is not None
        if request.headers.get("Origin") is not None:
            return _plain(conn, http.HTTPStatus.FORBIDDEN, "forbidden origin\n")
        given = _bearer(request.headers.get("Authorization"))
        if given is None and path == "/cdp":
            given = urllib.parse.parse_qs(query).get("token", [None])[0]
        if not token_matches(given, self.cdp.token):
            return _plain(conn, http.HTTPStatus.UNAUTHORIZED, "missing or wrong token\n")
        if path == "/cdp":
            return None  # the WebSocket handshake goes on
        host = f"127.0.0.1:{self._port}"
        if path.startswith("/json/version"):
            body: Any = self.cdp.version(host)
        else:
            body = await self.cdp.target_list(host)
        return _response(http.HTTPStatus.OK, json.dumps(body).encode(), "application/json")

    # -- WebSocket side --------------------------------------------------------------

    async def _handle(self, ws: ServerConnection) -> None:
        if ws.request is not None and ws.request.path.partition("?")[0] == "/cdp":
            assert self.cdp is not None  # checked before the upgrade
            await self.cdp.serve(ws)
            return
        await self._serve(ws)

    async def _serve(self, ws: LinkChannel) -> None:
        """One extension link, over a WebSocket or tunnelled through a native host."""
        hello = await self._handshake(ws)
        if hello is None:
            return
        link = ExtensionLink(ws, hello, self._dispatch_event)
        await ws.send(
            protocol.encode(
                {
                    "method": "welcome",
                    "params": {
                        "protocolVersion": protocol.PROTOCOL_VERSION,
                        "relayVersion": __version__,
                        "instanceId": self.instance_id,
                        "keepaliveMs": int(KEEPALIVE_S * 1000),
                    },
                }
            )
        )
        runner = asyncio.ensure_future(link.run())
        try:
            current = self.link
            serves = current is None or self.switch == "newest"
            # Said before anyone can send it a command, so it is the link's first frame after
            # welcome (the extension's popup shows it).
            with contextlib.suppress(ConnectionClosed):
                await ws.send(protocol.encode({"method": "serving", "params": {"serving": serves}}))
            async with self._link_changed:
                self._links.append(link)
                current = self.link if self._serving is None else current
                if self._serving is None or self._serving.is_closed:
                    self._serving = link
                elif serves:
                    self._switch_to(link, "it is the newest (switch=newest)", told=True)
                else:
                    log.warning(
                        "a second browser linked (%r); it waits on standby while %r serves. "
                        "To use it instead, click 'Use this browser' in its bridge popup.",
                        link,
                        current,
                    )
                self._link_changed.notify_all()
            log.info("extension connected: %r", link)
            keepalive = asyncio.ensure_future(self._keepalive(link))
            try:
                await runner
            finally:
                keepalive.cancel()
        finally:
            if link in self._links:
                async with self._link_changed:
                    self._links.remove(link)
                    if self._serving is link:
                        self._serving = self.link
                        if self._serving is not None:
                            log.warning(
                                "browser switched: %r serves now (%r went away)",
                                self._serving,
                                link,
                            )
                            self._tell_serving(self._serving)
                    self._link_changed.notify_all()
                self._lost(link)
            runner.cancel()

    async def _handshake(self, ws: LinkChannel) -> Hello | None:
        """Both ends prove the secret before anything else flows (``bridge.wire.trust``); the
        extension's identity, or None when the link was refused (and closed)."""
        try:
            async with asyncio.timeout(scaled(HANDSHAKE_S)):
                first = await ws.recv()
        except (TimeoutError, ConnectionClosed):
            await ws.close(CLOSE_REFUSED, "no hello")
            return None
        try:
            msg = protocol.decode_from_extension(first)
            if not isinstance(msg, Event):
                raise ProtocolError("the first frame must be 'hello'")
            opening = protocol.parse_hello(msg)
        except ProtocolError as exc:
            await _refuse(ws, str(exc))
            return None
        relay_nonce = trust.new_nonce()
        port = self._port
        pairing = self.pairing if opening.mode == "pair" else None
        if opening.mode == "pair":
            if pairing is None or not pairing.open:
                await _refuse(
                    ws, "this relay offers no pairing code now: run `bridge pair` and type its code"
                )
                return None
            sealed = trust.seal(pairing.code, self._secret, opening.nonce, relay_nonce, port)
            challenge = {
                "nonce": relay_nonce,
                "proof": trust.pairing_proof(
                    pairing.code, opening.nonce, relay_nonce, port, sealed
                ),
                "sealed": sealed,
            }
        else:
            challenge = {
                "nonce": relay_nonce,
                "proof": trust.relay_proof(self._secret, opening.nonce, relay_nonce, port),
            }
        try:
            await ws.send(protocol.encode({"method": "challenge", "params": challenge}))
            async with asyncio.timeout(scaled(HANDSHAKE_S)):
                second = await ws.recv()
        except (TimeoutError, ConnectionClosed):
            # An extension that finds this relay unproven closes here: nothing was shown to it.
            with contextlib.suppress(ConnectionClosed):
                await ws.close(CLOSE_REFUSED, "no proof")
            return None
        try:
            msg = protocol.decode_from_extension(second)
            if not isinstance(msg, Event):
                raise ProtocolError("after the challenge the extension must 'prove'")
            proof, hello = protocol.parse_prove(msg)
        except ProtocolError as exc:
            await _refuse(ws, str(exc))
            return None
        expected = trust.extension_proof(self._secret, opening.nonce, relay_nonce, port)
        if not trust.verify(expected, proof):
            self.stats.refused_links += 1
            if pairing is not None:
                pairing.failed()
            log.warning(
                "refused an extension link that did not prove bridge's secret%s (a program "
                "posing as the extension, or an extension paired with another bridge)",
                " while pairing" if pairing is not None else "",
            )
            await _refuse(
                ws,
                "the extension did not prove bridge's secret: re-pair it (`bridge pair`) or "
                "register the native host (`bridge install-native-host`)",
                CLOSE_UNTRUSTED,
            )
            return None
        if pairing is not None and not pairing.done.done():
            pairing.done.set_result(hello)
            log.warning("paired with the extension of browser %s", hello.instance_id[:8])
        return hello

    def _switch_to(self, link: ExtensionLink, why: str, *, told: bool = False) -> None:
        """Make ``link`` serve (the caller holds ``_link_changed``); the one it replaces goes
        on standby, and its tab sessions end at once with a typed error. ``told``: ``link``
        already heard that it serves."""
        previous, self._serving = self._serving, link
        log.warning("browser switched: %r serves now instead of %r (%s)", link, previous, why)
        if previous is not None and previous is not link and not previous.is_closed:
            self._tell_serving(previous)
            self._lost(previous)
        if not told:
            self._tell_serving(link)

    def _tell_serving(self, link: ExtensionLink) -> None:
        """Tell the extension whether this link serves or waits (its popup shows it)."""
        serving = link is self._serving
        frame = protocol.encode({"method": "serving", "params": {"serving": serving}})
        self._tasks.spawn(_send_quietly(link, frame))

    def _lost(self, link: ExtensionLink) -> None:
        for listener in list(self._listeners):
            try:
                listener.transport_lost(link)
            except Exception:
                log.exception("transport listener failed on a lost link")

    async def _notify_links(self) -> None:
        async with self._link_changed:
            self._link_changed.notify_all()

    async def _keepalive(self, link: ExtensionLink) -> None:
        # Traffic both ways keeps the MV3 service worker alive (Chrome 116+).
        while not link.closed.done():
            await asyncio.wait({link.closed}, timeout=KEEPALIVE_S)
            if link.closed.done():
                return
            try:
                await link.request("ping", timeout=KEEPALIVE_S)
            except BridgeError as exc:  # the link's own end reports a dead link to everyone
                log.debug("keepalive ping on %r failed: %s", link, exc)
            else:
                async with self._link_changed:
                    self.stats.keepalive_rounds += 1
                    self._link_changed.notify_all()

    def _dispatch_event(self, link: ExtensionLink, event: Event) -> None:
        if event.method == "claim":
            # The person chose this browser in its popup: the one way a standby link serves
            # while the serving one lives (besides switch="newest").
            if link in self._links and link is not self._serving and not link.is_closed:
                self._switch_to(link, "the person chose it in its popup")
                self._tasks.spawn(self._notify_links())
            return
        if link is not self.link:
            return  # a browser on standby
        for listener in list(self._listeners):
            try:
                listener.transport_event(link, event)
            except Exception:  # one listener's bug must not starve the others
                log.exception("transport listener failed on %s", event.method)


def _response(status: http.HTTPStatus, body: bytes, content_type: str) -> Response:
    # Built whole: adding to conn.respond()'s headers would duplicate Content-Length,
    # which Chromium rejects. Deliberately no Access-Control-* header.
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
            ("Connection", "close"),
        ]
    )
    return Response(status.value, status.phrase, headers, body)


def _bearer(header: str | None) -> str | None:
    if header and header.lower().startswith("bearer "):
        return header[7:].strip()
    return None


def _plain(conn: ServerConnection, status: http.HTTPStatus, text: str) -> Response:
    return _response(status, text.encode(), "text/plain; charset=utf-8")


async def _refuse(ws: LinkChannel, message: str, code: int = CLOSE_REFUSED) -> None:
    with contextlib.suppress(ConnectionClosed):
        await ws.send(protocol.encode({"method": "refused", "params": {"message": message}}))
        # Close reasons are limited to 123 bytes; the full text went in the frame above.
        await ws.close(code, message[:120])


async def _send_quietly(link: ExtensionLink, frame: str) -> None:
    with contextlib.suppress(ConnectionClosed):
        await link.ws.send(frame)
