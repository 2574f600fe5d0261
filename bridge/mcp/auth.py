"""Streamable HTTP security: a bearer token kept in a 0600 file, Host and Origin checks.

The token is made on first use with the OS's CSPRNG and written atomically with mode 0600
(never readable by another user, never served to a page). Host and Origin are checked
against DNS rebinding: only this port on 127.0.0.1/localhost, and no browser Origin at
all (MCP clients are not web pages).
"""

from __future__ import annotations

import hmac
import sys
from pathlib import Path

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings

from bridge.tokens import load_or_create_token

__all__ = ["StaticTokenVerifier", "auth_settings", "load_or_create_token", "security_settings"]


class StaticTokenVerifier:
    """Accepts exactly one bearer token (compared in constant time)."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token.encode()):
            return AccessToken(token=token, client_id="bridge-local", scopes=[])
        return None


def auth_settings(host: str, port: int) -> AuthSettings:
    url = f"http://{host}:{port}"
    return AuthSettings(issuer_url=url, resource_server_url=f"{url}/mcp")  # type: ignore[arg-type]


def security_settings(host: str, port: int) -> TransportSecuritySettings:
    hosts = [f"{host}:{port}"]
    if host in ("127.0.0.1", "localhost"):
        hosts = [f"127.0.0.1:{port}", f"localhost:{port}"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=[]
    )


def announce_token(token: str, path: Path) -> None:
    print(
        f"bridge: made an HTTP bearer token (shown once): {token}\n"
        f"bridge: it is kept in {path} (mode 0600); send it as 'Authorization: Bearer <token>'.",
        file=sys.stderr,
        flush=True,
    )
