"""``bridge-mcp`` (or ``python -m bridge.mcp``): the everyday MCP server.

stdio by default (an MCP client starts it); ``--http`` serves Streamable HTTP on
127.0.0.1 with a bearer token. Without ``--launch`` it waits for the person's own Chrome
with the extension; with ``--launch`` it starts Chromium itself with a dedicated profile.
It ends within 5 s of stdin closing, SIGTERM or SIGINT, detaching its debuggers and
stopping a browser it launched, with exit status 0; if the MCP server itself crashes, it
logs the traceback to stderr, cleans up the same way and exits with status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import os
import socket
import ssl
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from bridge.app.runtime import (
    Runtime,
    add_allow_path_argument,
    add_runtime_arguments,
    options_from_args,
    start_error,
)
from bridge.cli.about import version_line
from bridge.cli.demo import DEMO_NOTE, demo_setup, refuse_demo_options
from bridge.cli.token import show_command
from bridge.errors import BridgeError
from bridge.link import native_install
from bridge.link.redaction import UVICORN_LOGGERS, redact_request_logs
from bridge.logs import LogSetupError, add_log_arguments, setup_logging
from bridge.mcp.auth import (
    RequestGuard,
    StaticTokenVerifier,
    allowed_hosts,
    announce_token,
    auth_settings,
    load_or_create_token,
    needs_tls,
    security_settings,
)
from bridge.mcp.guard_rails import add_guard_arguments, guard_from_args, serve_reading_only
from bridge.mcp.server import (
    DEFAULT_GROUPS,
    TOOL_GROUPS,
    build_claude_server,
    build_server,
    selected_groups,
)
from bridge.signals import StopSignals
from bridge.store.state import default_state_dir
from bridge.tools.browsing import ToolSettings
from bridge.tools.claude import claude_browser
from bridge.waiting import scaled
from bridge.wire.extension import LINK_MODES

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from starlette.types import ASGIApp

SHUTDOWN_LIMIT_S = 5.0
log = logging.getLogger("bridge.mcp")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bridge-mcp", description="The MCP server: ask ChatGPT and Gemini, use the browser."
    )
    p.add_argument("--version", action="version", version=version_line("bridge-mcp"))
    t = p.add_argument_group("transport")
    t.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    t.add_argument("--port", type=int, default=3456, help="HTTP port (default 3456)")
    t.add_argument(
        "--host",
        default="127.0.0.1",
        help="HTTP bind address (default 127.0.0.1; anything but loopback is exposed to your "
        "network: it needs --tls-cert and --tls-key, or --insecure-remote)",
    )
    t.add_argument("--tls-cert", type=Path, metavar="FILE", help="serve HTTPS: certificate (PEM)")
    t.add_argument("--tls-key", type=Path, metavar="FILE", help="serve HTTPS: private key (PEM)")
    t.add_argument(
        "--insecure-remote",
        action="store_true",
        help="serve plain HTTP on a non-loopback --host: the bearer token then crosses the "
        "network in clear (anyone on the way can take it)",
    )
    add_runtime_arguments(p)
    _offer_claude_link(p)
    add_allow_path_argument(p)
    g = p.add_argument_group("tools")
    g.add_argument(
        "--tools",
        default=",".join(DEFAULT_GROUPS),
        help=f"tool groups, comma-separated: {', '.join(TOOL_GROUPS)}, or all "
        f"(default {','.join(DEFAULT_GROUPS)})",
    )
    g.add_argument(
        "--caps",
        default="",
        help="capability groups to add to --tools, comma-separated (playwright-mcp's "
        "option): e.g. --caps dom,pdf serves the default groups and those",
    )
    g.add_argument(
        "--action-timeout",
        type=float,
        default=5.0,
        help="seconds a browser action waits for its element to be ready (default 5)",
    )
    g.add_argument(
        "--allow-file-urls", action="store_true", help="let browser tools open file: URLs"
    )
    g.add_argument(
        "--no-tab-groups",
        action="store_true",
        help="do not gather each client's tabs in a Chrome tab group named after it",
    )
    g.add_argument(
        "--codegen",
        choices=("none", "python"),
        default="none",
        help="python: each browser action's result also carries its Playwright-for-Python "
        "line (playwright-mcp's option; the testing group's browser_generate_test writes "
        "them as a test)",
    )
    add_guard_arguments(p)
    p.add_argument("--verbose", action="store_true", help="log details to stderr")
    add_log_arguments(p)
    p.add_argument(
        "--demo",
        action="store_true",
        help="try it without an account: bridge's built-in fake ChatGPT and Gemini in a "
        "headless Chromium it launches (temporary profile and state unless --state-dir)",
    )
    return p


def _offer_claude_link(parser: argparse.ArgumentParser) -> None:
    """``--link claude``: the MCP server's own link kind (no relay: the Claude extension's
    native host, docs/claude-extension.md)."""
    for action in parser._actions:
        if action.dest == "link":
            action.choices = (*LINK_MODES, "claude")
            action.help = (
                f"{action.help}; or claude: the browser tools through the Claude browser "
                "extension you already have (bridge install-native-host --claude-extension)"
            )


def tool_settings(args: argparse.Namespace, groups: tuple[str, ...]) -> ToolSettings:
    """The browser tools' settings from the options; actions are recorded as Playwright
    code with --codegen python or when the testing group (browser_generate_test) is served."""
    return ToolSettings(
        action_timeout=args.action_timeout,
        allow_file_urls=args.allow_file_urls,
        tab_groups=not args.no_tab_groups,
        codegen=args.codegen,
        record_code="testing" in groups,
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = build_parser()
    args = p.parse_args(argv)
    refusal = transport_refusal(args)
    if refusal is not None:
        p.exit(2, f"bridge-mcp: error: {refusal}\n")
    return args


def transport_refusal(args: argparse.Namespace) -> str | None:
    """Why these transport options cannot serve (exit status 2), or None.

    A non-loopback ``--host`` sends the bearer token over the network: HTTPS with the
    person's certificate, or their explicit ``--insecure-remote``, never plain HTTP by default.
    """
    if (args.tls_cert is None) != (args.tls_key is None):
        return "--tls-cert and --tls-key go together (the certificate and its private key)"
    tls = args.tls_cert is not None
    if (tls or args.insecure_remote) and not args.http:
        return "--tls-cert, --tls-key and --insecure-remote are for --http"
    if tls:
        try:
            ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(
                args.tls_cert, args.tls_key
            )
        except (OSError, ssl.SSLError) as exc:
            return f"--tls-cert {args.tls_cert} / --tls-key {args.tls_key} cannot be used: {exc}"
    if args.http and needs_tls(args.host) and not tls and not args.insecure_remote:
        return (
            f"--host {args.host} is reachable from your network, and the bearer token would "
            "cross it in clear: serve HTTPS with --tls-cert FILE --tls-key FILE, or accept "
            "plain HTTP with --insecure-remote (or keep the default --host 127.0.0.1)"
        )
    return None


def _listen(host: str, port: int) -> socket.socket:
    """The HTTP server's socket, listening from now on: a taken port fails before anything
    starts, and a client that connects before the server runs waits instead of being refused."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise SystemExit(
                f"bridge: HTTP port {port} on {host} is already in use (another bridge?). "
                "Stop it, or choose another port with --port N."
            ) from None
        raise
    return sock


def http_app(server: MCPServer, host: str, port: int) -> ASGIApp:
    """The Streamable HTTP app as served: Host and Origin refused before any route answers."""
    app = server.streamable_http_app(transport_security=security_settings(host, port), host=host)
    return RequestGuard(app, allowed_hosts(host, port))


def _quiet_server_class() -> type:
    import uvicorn

    class QuietServer(uvicorn.Server):
        """uvicorn without its own signal handling: ours cancels the main task instead."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return QuietServer


def server_crash(serving: asyncio.Future[None]) -> BaseException | None:
    """Why the server task failed, or None: still running, cancelled by us, or ended normally.

    Normal ends are stdin closing (stdio) and our own cancellation after a signal.
    """
    if not serving.done() or serving.cancelled():
        return None
    return serving.exception()


def exit_status(crash: BaseException | None) -> int:
    return 0 if crash is None else 1


def _arm_watchdog() -> None:
    """Whatever hangs during cleanup, the process is gone within the limit.

    (docs/flows.md#shutdown)
    """
    timer = threading.Timer(SHUTDOWN_LIMIT_S, lambda: os._exit(1))
    timer.daemon = True
    timer.start()


async def serve(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as demo:
        return await _serve(args, demo)


async def _serve(args: argparse.Namespace, demo: contextlib.ExitStack) -> int:
    """Serve until stdin closes or a signal; ``demo`` holds the fake sites with ``--demo``
    (closed here before the process exits, since the end is ``os._exit``)."""
    try:
        groups = selected_groups(args.tools, args.caps)
    except ValueError as exc:
        print(f"bridge: --tools/--caps: {exc}", file=sys.stderr)
        return 2
    if args.link == "claude" and (args.launch or args.demo):
        print(
            "bridge: --link claude works through the Claude extension in your own Chrome: "
            "it cannot be combined with --launch or --demo",
            file=sys.stderr,
        )
        return 2
    try:
        guard = guard_from_args(args)
    except ValueError as exc:
        print(f"bridge: --allowed-origins/--blocked-origins: {exc}", file=sys.stderr)
        return 2
    if args.link == "claude" and guard.active:
        print(
            "bridge: --allowed-origins, --blocked-origins and --read-only are enforced on "
            "bridge's own CDP sessions: they cannot hold over --link claude",
            file=sys.stderr,
        )
        return 2
    options = options_from_args(args)
    options.guard = guard
    if args.demo:
        refusal = refuse_demo_options(options)
        if refusal is not None:
            print(f"bridge: {refusal}", file=sys.stderr)
            return 2
        options.state_dir = demo.enter_context(demo_setup(options)).state_dir
        print(f"bridge: {DEMO_NOTE}", file=sys.stderr, flush=True)
    state_dir = options.state_dir or default_state_dir()
    options.state_dir = state_dir
    options.tool_settings = tool_settings(args, groups)
    options.cdp = True  # the DevTools endpoint for Playwright/Puppeteer, behind its own token
    runtime = Runtime(options)
    server_options: dict[str, object] = {}
    listening: socket.socket | None = None
    tls = args.tls_cert is not None
    if args.http:
        if needs_tls(args.host):
            how = (
                "HTTPS" if tls else "plain HTTP (--insecure-remote): the token crosses it in clear"
            )
            print(
                f"bridge: binding to {args.host}: reachable from your network, token required, "
                f"{how}.",
                file=sys.stderr,
            )
        listening = _listen(args.host, args.port)
        token_path = state_dir / "mcp-token"
        try:
            token, created = load_or_create_token(token_path)
        except BridgeError as exc:
            listening.close()
            print(f"bridge: cannot start: [{exc.code}] {exc}", file=sys.stderr)
            return 1
        announce_token(token_path, created, show_command("mcp", options.state_dir))
        server_options = {
            "token_verifier": StaticTokenVerifier(token),
            "auth": auth_settings(args.host, args.port, "https" if tls else "http"),
        }
    # Before anything starts: a signal during start-up must still clean up what started.
    stop = asyncio.Event()
    # Undone when ``demo`` closes, with the fake sites (this function's end is ``os._exit``).
    demo.enter_context(StopSignals(stop.set))
    if args.link == "claude":
        return await _serve_claude(args, groups, server_options, listening, stop, demo)
    # A tool called before the extension connects fails fast, with instructions.
    options.connect_timeout = scaled(30.0) if options.launch else scaled(3.0)
    try:
        await runtime.start()
    except (BridgeError, OSError) as exc:
        reason = start_error(exc, args.relay_port) if isinstance(exc, OSError) else str(exc)
        print(f"bridge: cannot start: {reason}", file=sys.stderr)
        if listening is not None:
            listening.close()
        return 1
    print(
        f"bridge: relay on {runtime.relay.url}"
        + (
            f"; launched {runtime.launched.executable} (pid {runtime.launched.pid})"
            if runtime.launched
            else ""
        )
        + ("" if options.launch else "; waiting for Chrome with the bridge extension"),
        file=sys.stderr,
        flush=True,
    )
    if not options.launch and not native_install.registered_anywhere():
        print(f"bridge: {native_install.SETUP_HINT}", file=sys.stderr, flush=True)
    # The DevTools token's file, never its value (docs/flows.md#tokens).
    print(
        f"bridge: CDP endpoint: ws://127.0.0.1:{runtime.relay.port}/cdp (token in "
        f"{state_dir / 'cdp-token'}; `{show_command('cdp', options.state_dir)}` prints it)",
        file=sys.stderr,
        flush=True,
    )
    server = build_server(lambda: runtime.bridge, groups=groups, **server_options)
    if guard.read_only:
        serve_reading_only(server, navigation=guard.origins.allowed is not None)

    async def cleanup() -> None:
        # Unfinished jobs are let go, not failed as their tabs close: the sites finish those
        # answers, and the next server collects them (docs/flows.md#jobs).
        runtime.bridge.abandon_jobs()
        await runtime.stop()

    return await _run_until_stopped(server, args, listening, stop, cleanup, demo)


async def _serve_claude(
    args: argparse.Namespace,
    groups: tuple[str, ...],
    server_options: dict[str, object],
    listening: socket.socket | None,
    stop: asyncio.Event,
    demo: contextlib.ExitStack,
) -> int:
    """``--link claude``: no relay and no extension of bridge's; the browser tools go to the
    Claude extension's native host, met in the runtime directory."""
    browser = claude_browser(connect_timeout=scaled(10.0), allow_file_urls=args.allow_file_urls)
    try:
        hub = await browser.__aenter__()
    except (BridgeError, OSError, ValueError) as exc:
        print(f"bridge: cannot start: {exc}", file=sys.stderr)
        if listening is not None:
            listening.close()
        return 1
    print(
        "bridge: browser tools over the Claude extension; its native host links when Chrome "
        "starts it (`bridge install-native-host --claude-extension` registers bridge as that "
        "host; `bridge doctor` says which host is registered)",
        file=sys.stderr,
        flush=True,
    )
    server = build_claude_server(lambda: hub, groups=groups, **server_options)

    async def cleanup() -> None:
        await browser.__aexit__(None, None, None)

    return await _run_until_stopped(server, args, listening, stop, cleanup, demo)


async def _run_until_stopped(
    server: MCPServer,
    args: argparse.Namespace,
    listening: socket.socket | None,
    stop: asyncio.Event,
    cleanup: Callable[[], Awaitable[None]],
    demo: contextlib.ExitStack,
) -> int:
    """Serve (stdio or HTTP) until stdin closes, a signal or a crash; then ``cleanup``,
    bounded, and exit the process."""
    tls = args.tls_cert is not None

    async def run_server() -> None:
        if args.http:
            assert listening is not None
            import uvicorn

            app = http_app(server, args.host, args.port)
            config = uvicorn.Config(
                app,
                host=args.host,
                port=args.port,
                log_level="warning",
                ssl_certfile=args.tls_cert,
                ssl_keyfile=args.tls_key,
            )
            redact_request_logs(*UVICORN_LOGGERS)  # after uvicorn has set up its loggers
            http = _quiet_server_class()(config)
            scheme = "https" if tls else "http"
            print(
                f"bridge: MCP over HTTP at {scheme}://{args.host}:{args.port}/mcp", file=sys.stderr
            )
            try:
                await http.serve(sockets=[listening])
            except SystemExit as exc:  # uvicorn's way to give up at start-up (it logged why)
                raise RuntimeError(f"the HTTP server failed to start (uvicorn: {exc})") from None
            # Only our cancellation ends it (its own signal handling is off): this is a failure.
            raise RuntimeError("the HTTP server stopped on its own (see uvicorn's log above)")
        else:
            await server.run_stdio_async()  # returns when stdin closes

    serving = asyncio.ensure_future(run_server())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        # Whatever ended it (stdin closed, a signal, a crash), clean up from here, bounded.
        crash = server_crash(serving)
        if crash is not None:
            log.error("the MCP server crashed; stopping", exc_info=crash)
        else:
            log.info("shutting down (%s)", "signal" if stop.is_set() else "stdin closed")
        _arm_watchdog()
        stopping.cancel()
        # Not awaited: the stdio transport reads stdin in a worker thread that cannot be
        # interrupted, so its cancellation would wait for input that never comes.
        serving.cancel()
        try:
            async with asyncio.timeout(SHUTDOWN_LIMIT_S - 1.5):
                await cleanup()
        except Exception as exc:  # shutting down anyway; the watchdog bounds what is left
            log.warning("cleanup at shutdown failed: %r", exc)
        with contextlib.suppress(Exception):  # the fake sites' server thread, with --demo
            demo.close()
        log.info("stopped")
        # Everything of ours is stopped. Exit now: a thread still blocked reading stdin (after a
        # signal) would otherwise hold the interpreter's shutdown until the watchdog fires.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a broken stdout must not change the status
                stream.flush()
        os._exit(exit_status(crash))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:  # to stderr (stdout carries the MCP protocol in stdio mode), and --log-file
        setup_logging(
            log_file=args.log_file, default_level=logging.INFO if args.verbose else logging.WARNING
        )
    except LogSetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(serve(args))


if __name__ == "__main__":
    sys.exit(main())
