"""Streamable HTTP security: a bearer token kept in a 0600 file, Host and Origin checks.

The token is made on first use with the OS's CSPRNG and written atomically with mode 0600
(never readable by another user, never served to a page). Host and Origin are checked
against DNS rebinding: only this port on 127.0.0.1/localhost, and no browser Origin at
all (MCP clients are not web pages). ``RequestGuard`` checks both on every request before
any route answers, so no response of this server (not even the SDK's OAuth metadata route,
which would send ``Access-Control-Allow-Origin: *``) ever reaches a web page readably.
"""

from __future__ import annotations

import ipaddress
import sys
from pathlib import Path

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from bridge.link.tokens import load_or_create_token, token_matches

__all__ = [
    "ALL_INTERFACES",
    "RequestGuard",
    "StaticTokenVerifier",
    "allowed_hosts",
    "auth_settings",
    "load_or_create_token",
    "needs_tls",
    "security_settings",
]

#: Bind addresses that mean "every interface of this machine".
ALL_INTERFACES = frozenset({"0.0.0.0", "::", ""})


class StaticTokenVerifier:
    """Accepts exactly one bearer token (compared in constant time)."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if token_matches(token, self._token):
            return AccessToken(token=token, client_id="bridge-local", scopes=[])
        return None


def auth_settings(host: str, port: int, scheme: str = "http") -> AuthSettings:
    url = f"{scheme}://{host}:{port}"
    # The one static token is this server's own: there is no audience to check (and leaving
    # this unset warns, and would refuse our tokens once the SDK defaults it to True).
    return AuthSettings(
        issuer_url=url,  # type: ignore[arg-type]
        resource_server_url=f"{url}/mcp",  # type: ignore[arg-type]
        validate_token_resource=False,
    )


def allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """The Host header values this server answers; None: any.

    Bound to every interface (``--host 0.0.0.0``), by the person's explicit choice: clients
    on the network reach it under any of this machine's addresses and names, which cannot
    be listed, so any Host is accepted. DNS-rebinding protection then rests on the bearer
    token (a rebinding page cannot know it) and on the Origin check (a page's request
    carries an Origin, or ``Sec-Fetch-Site``), both of which stay.
    """
    if host in ALL_INTERFACES:
        return None
    if host in ("127.0.0.1", "localhost"):
        return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})
    return frozenset({f"[{host}]:{port}" if ":" in host else f"{host}:{port}"})


def security_settings(host: str, port: int) -> TransportSecuritySettings:
    """The SDK's own check on /mcp (``RequestGuard`` has already applied the same rules)."""
    hosts = allowed_hosts(host, port)
    if hosts is None:
        # The SDK cannot express "any Host but no Origin": RequestGuard refuses every Origin.
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=sorted(hosts), allowed_origins=[]
    )


class RequestGuard:
    """ASGI middleware around the whole app: before any route answers, a foreign Host gets
    421 and anything a web page sends (an ``Origin``, or ``Sec-Fetch-Site`` other than
    ``none``) gets 403, without any ``Access-Control-*`` header. MCP clients are programs:
    they send neither."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str] | None) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":  # (no WebSocket routes; lifespan passes through)
            headers = Headers(scope=scope)
            refusal: PlainTextResponse | None = None
            if self.hosts is not None and headers.get("host") not in self.hosts:
                refusal = PlainTextResponse("unknown Host\n", status_code=421)
            elif "origin" in headers or headers.get("sec-fetch-site", "none") != "none":
                refusal = PlainTextResponse("forbidden origin\n", status_code=403)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def announce_token(path: Path, created: bool, show_command: str) -> None:
    """Where the HTTP bearer token is, never its value: MCP clients keep a server's stderr in
    log files, and a token in a log is a token anyone reading it can use."""
    made = "made a new HTTP bearer token" if created else "HTTP bearer token"
    print(
        f"bridge: {made} in {path} (mode 0600); clients send it as 'Authorization: Bearer "
        f"<token>'; `{show_command}` prints it",
        file=sys.stderr,
        flush=True,
    )


def needs_tls(host: str) -> bool:
    """Whether serving on ``host`` sends the bearer token beyond this machine (then it must
    be HTTPS, or the person says ``--insecure-remote``).

    Loopback (``localhost``, 127.0.0.0/8, ``::1``, and IPv4-mapped loopback) stays on the
    machine; every other address, every interface (``0.0.0.0``, ``::``, empty) and any other
    name (it may resolve anywhere) does not."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if name == "localhost":
        return False
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return True  # a host name: where it points is not ours to know
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not address.is_loopback
