"""Streamable HTTP security: a bearer token kept in a 0600 file, Host and Origin checks.

The token is made on first use with the OS's CSPRNG and written atomically with mode 0600
(never readable by another user, never served to a page). Host and Origin are checked
against DNS rebinding: only this port on 127.0.0.1/localhost, and no browser Origin at
all (MCP clients are not web pages).
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import sys
from pathlib import Path

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings

__all__ = ["StaticTokenVerifier", "auth_settings", "load_or_create_token", "security_settings"]


def load_or_create_token(path: Path) -> tuple[str, bool]:
    """The token in ``path``, made (0600, atomically) when missing; returns (token, created)."""
    try:
        token = path.read_text(encoding="utf-8").strip()
        if token:
            if path.stat().st_mode & 0o077:
                path.chmod(0o600)  # tighten a file someone loosened
            return token, False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (token + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        # link() fails if another process made the file meanwhile: then theirs wins.
        os.link(tmp, path)
    except FileExistsError:
        return load_or_create_token(path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return token, True


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
