"""Secrets kept in files: made with the OS's CSPRNG, written atomically with mode 0600
(never readable by another user), never served by any endpoint, compared in constant time."""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
from pathlib import Path

__all__ = ["load_or_create_token", "token_matches"]


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


def token_matches(given: str | None, token: str) -> bool:
    """Constant-time comparison: a wrong token takes as long as a right one."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())
