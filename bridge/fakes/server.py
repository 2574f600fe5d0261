"""One loopback HTTPS server answering as both ``chatgpt.com`` and ``gemini.google.com``.

It routes by the ``Host`` header, so a browser started with :meth:`FakeSites.chromium_args`
(``--host-resolver-rules`` mapping both hosts here, ``--ignore-certificate-errors``) loads the
fakes at the real URLs and every URL rule in bridge runs as it does in production. Those flags
belong only in browsers that bridge launches for tests, never in a person's own profile.

Uvicorn runs on a daemon thread with its own event loop, so sync tests, async tests on another
loop, and ``python -m bridge.fakes`` can all use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import tempfile
import threading
from pathlib import Path
from types import TracebackType

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Host

from bridge.fakes.certs import FAKE_HOSTS, make_certificate
from bridge.fakes.chatgpt import chatgpt_app
from bridge.fakes.controller import SiteController
from bridge.fakes.gemini import gemini_app, lh3_app
from bridge.fakes.streaming import Live

__all__ = ["CHATGPT_URL", "GEMINI_URL", "FakeSites", "build_app"]

CHATGPT_URL = "https://chatgpt.com/"
GEMINI_URL = "https://gemini.google.com/app"
_LOOPBACK = "127.0.0.1"
_START_TIMEOUT = 30.0
_STOP_TIMEOUT = 10.0


def build_app(chatgpt: SiteController, gemini: SiteController, live: Live) -> Starlette:
    """Both sites behind Host routing; any other host gets 404."""
    return Starlette(
        routes=[
            Host(FAKE_HOSTS[0], app=chatgpt_app(chatgpt, live)),
            Host(FAKE_HOSTS[1], app=gemini_app(gemini, live)),
            Host(FAKE_HOSTS[2], app=lh3_app()),
        ]
    )


def _listening_socket(port: int) -> socket.socket:
    """A loopback TCP listener made with an explicit IPPROTO_TCP.

    asyncio turns on TCP_NODELAY only for sockets whose ``proto`` is IPPROTO_TCP, and accepted
    sockets inherit the listener's; ``socket.create_server`` leaves it 0, and then Nagle's
    algorithm holds each response body behind its headers until the client's delayed ACK:
    40 ms on every response, which would swamp the latencies these fakes exist to measure.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((_LOOPBACK, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


class _Server(uvicorn.Server):
    """Uvicorn that says when it is accepting connections."""

    def __init__(self, config: uvicorn.Config, started: threading.Event) -> None:
        super().__init__(config)
        self._started_event = started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self._started_event.set()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await super().shutdown(sockets)
        # A TLS close waits for the peer's close_notify; a peer that never reads again (a client
        # blocked elsewhere) would leave its transport open after this loop ends. Cut it.
        for connection in list(self.server_state.connections):
            transport = getattr(connection, "transport", None)
            if isinstance(transport, asyncio.Transport):
                transport.abort()


class FakeSites:
    """The fake ChatGPT and Gemini sites, served on ``127.0.0.1``.

    ``port=0`` picks a free port. Use :attr:`chatgpt` and :attr:`gemini` to set behaviours and
    read records; they work before, during and after the server runs.
    """

    def __init__(self, port: int = 0) -> None:
        self.chatgpt = SiteController("chatgpt")
        self.gemini = SiteController("gemini")
        self._requested_port = port
        self._socket: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._server: _Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._live: Live | None = None
        self._failure: BaseException | None = None
        self.certificate_pem = b""
        """The server's certificate (PEM), for clients that want to verify it."""

    @property
    def port(self) -> int:
        if self._socket is None:
            raise RuntimeError("FakeSites is not started")
        port: int = self._socket.getsockname()[1]
        return port

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def chromium_args(self) -> list[str]:
        """The flags that make a Chromium load the fakes at the real URLs."""
        rules = ", ".join(f"MAP {host} {_LOOPBACK}:{self.port}" for host in FAKE_HOSTS)
        return [f"--host-resolver-rules={rules}", "--ignore-certificate-errors"]

    def start(self) -> None:
        """Serve, returning once the server accepts connections."""
        if self._thread is not None:
            raise RuntimeError("FakeSites is already started")
        # asyncio.Event binds to a loop on first use, so Live can be made here and used there.
        self._live = Live()
        config = self._config(build_app(self.chatgpt, self.gemini, self._live))
        self._socket = _listening_socket(self._requested_port)
        started = threading.Event()
        self._failure = None
        self._server = _Server(config, started)
        self._thread = threading.Thread(target=self._run, name="fake-sites", daemon=True)
        self._thread.start()
        if not started.wait(_START_TIMEOUT) or self._failure is not None:
            failure = self._failure
            self.stop()
            raise RuntimeError("the fake sites did not start") from failure

    def _config(self, app: Starlette) -> uvicorn.Config:
        certificate = make_certificate()
        self.certificate_pem = certificate.cert_pem
        config = uvicorn.Config(
            app=app,
            http="h11",
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=False,
            proxy_headers=False,
            server_header=False,  # the real sites do not announce uvicorn
            timeout_graceful_shutdown=2,
        )
        # Uvicorn reads the certificate from files; they are needed only until it has loaded
        # them into its SSL context, so they never outlive start().
        with tempfile.TemporaryDirectory(prefix="bridge-fakes-") as directory:
            cert_file = Path(directory, "cert.pem")
            key_file = Path(directory, "key.pem")
            cert_file.write_bytes(certificate.cert_pem)
            key_file.write_bytes(certificate.key_pem)
            key_file.chmod(0o600)
            config.ssl_certfile = str(cert_file)
            config.ssl_keyfile = str(key_file)
            config.load()
        return config

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as error:  # reported to start(); the thread must not die silently
            self._failure = error
        finally:
            if self._server is not None:
                self._server._started_event.set()

    async def _serve(self) -> None:
        assert self._server is not None and self._socket is not None
        self._loop = asyncio.get_running_loop()
        await self._server.serve(sockets=[self._socket])

    def stop(self) -> None:
        """Stop serving and join the thread. Safe to call more than once."""
        thread, server, loop, live = self._thread, self._server, self._loop, self._live
        if thread is None:
            return
        if loop is not None and live is not None:
            with contextlib.suppress(RuntimeError):  # the loop already finished
                loop.call_soon_threadsafe(live.close)
        if server is not None:
            server.should_exit = True
        thread.join(_STOP_TIMEOUT)
        if thread.is_alive() and server is not None:
            server.force_exit = True
            thread.join(_STOP_TIMEOUT)
        if self._socket is not None:
            self._socket.close()
        self._thread = self._server = self._loop = self._live = None
        self._socket = None

    def __enter__(self) -> FakeSites:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
