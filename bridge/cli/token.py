"""``bridge token mcp|cdp``: a token for a person who asks, on stdout and nowhere else.

bridge never prints or logs a token on its own (MCP clients keep a server's stderr in log
files); servers name the token's file and this command instead. ``bridge token mcp`` is
what a registration snippet runs (``--header "Authorization: Bearer $(bridge token mcp)"``);
``bridge token cdp --url`` prints the DevTools WebSocket URL with the token in its query,
for the few clients that cannot send an ``Authorization`` header.

The token is read (or made) by the same rules as a server's (:mod:`bridge.link.tokens`): a file
bridge would not adopt is replaced, never printed.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
import urllib.error
import urllib.request
from pathlib import Path

from bridge.errors import BridgeError
from bridge.folders import folder_hint
from bridge.link import local_ipc
from bridge.link.registry import runtime_dir
from bridge.link.tokens import load_or_create_token
from bridge.link.trust_root import existing_secret
from bridge.store.state import default_state_dir

__all__ = ["TOKEN_FILES", "add_arguments", "cdp_ws_url", "run", "show_command"]

#: Which file holds which token, under the state directory.
TOKEN_FILES = {"mcp": "mcp-token", "cdp": "cdp-token"}
_PROBE_S = 2.0


def show_command(kind: str, state_dir: Path | None = None, relay_port: int | None = None) -> str:
    """The command that prints ``kind``'s token (``--state-dir`` named when ``state_dir`` is
    not the default one; with ``relay_port``, the cdp ``--url`` form for that port)."""
    command = f"bridge token {kind}"
    if state_dir is not None and state_dir.expanduser() != default_state_dir().expanduser():
        command += f" --state-dir {shlex.quote(str(state_dir))}"
    if relay_port is not None:
        command += f" --url --relay-port {relay_port}"
    return command


def cdp_ws_url(port: int, token: str) -> str:
    """The DevTools WebSocket URL with the token in its query (for clients without headers)."""
    return f"ws://127.0.0.1:{port}/cdp?token={token}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", choices=sorted(TOKEN_FILES), help="which token")
    parser.add_argument(
        "--state-dir",
        type=Path,
        help="the state directory the server uses (default: $BRIDGE_STATE_DIR, else "
        f"{folder_hint('state')})",
    )
    parser.add_argument(
        "--url",
        action="store_true",
        help="cdp only: print ws://127.0.0.1:<port>/cdp?token=… for a client that cannot send "
        "an Authorization header (the running endpoint is found, or name it with --relay-port)",
    )
    parser.add_argument("--relay-port", type=int, help="with --url: the port `bridge cdp` printed")


def run(args: argparse.Namespace) -> int:
    if args.url and args.kind != "cdp":
        print("error: --url is for the DevTools token: bridge token cdp --url", file=sys.stderr)
        return 2
    if args.relay_port is not None and not args.url:
        print("error: --relay-port goes with --url", file=sys.stderr)
        return 2
    state_dir = args.state_dir or default_state_dir()
    try:
        token, _ = load_or_create_token(state_dir.expanduser() / TOKEN_FILES[args.kind])
    except BridgeError as exc:
        print(f"error [{exc.code}]: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: cannot read or make the token in {state_dir}: {exc}", file=sys.stderr)
        return 1
    if not args.url:
        print(token)
        return 0
    port = args.relay_port if args.relay_port is not None else _serving_port(token)
    if port is None:
        print(
            "error: no running bridge serves the DevTools endpoint with this token (start "
            "`bridge cdp`, or `bridge-mcp`, with the same state directory), or name its port "
            "with --relay-port N",
            file=sys.stderr,
        )
        return 1
    print(cdp_ws_url(port, token))
    return 0


def _serving_port(token: str) -> int | None:
    """The port of a running relay whose DevTools endpoint takes ``token``.

    Relays register in the runtime directory (bridge.link.registry) as ``<port>.sock`` or,
    the Windows way, ``<port>.port`` (bridge.link.local_ipc). Only a relay whose endpoint
    answers is asked ``/json/version`` with the token in the header: a dead relay's port may
    be anyone's now, and the token must not go to them (a ``.port`` endpoint answers only by
    proving the person's secret, read here, never made). The first to take it is the one."""
    try:
        endpoints = [
            p for p in local_ipc.endpoint_files(runtime_dir() / "relays") if p.stem.isdigit()
        ]
    except OSError:
        return None
    secret = existing_secret() if any(p.suffix == ".port" for p in endpoints) else None

    async def probe_all() -> list[tuple[local_ipc.Probe, str]]:
        return await asyncio.gather(
            *(local_ipc.probe(p, secret=secret, timeout=_PROBE_S) for p in endpoints)
        )

    verdicts = asyncio.run(probe_all())
    ports = sorted(
        int(p.stem) for p, (v, _) in zip(endpoints, verdicts, strict=True) if v == "live"
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only
    for port in ports:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/json/version", headers={"Authorization": f"Bearer {token}"}
        )
        try:
            with opener.open(request, timeout=_PROBE_S) as response:
                if response.status == 200:
                    return port
        except (urllib.error.URLError, OSError):
            continue
    return None
