"""Secrets kept in files: made with the OS's CSPRNG, written atomically with mode 0600
(never readable by another user), never served by any endpoint, never printed unless a
person asks (``bridge token``), compared in constant time.

A token file is adopted only when it is one bridge could have made: a regular file (not a
symbolic link, opened with ``O_NOFOLLOW`` and checked with ``fstat`` on the descriptor it is
read from), owned by this user, with no group or other permission bits, holding a token of
the shape bridge makes, in a state directory that is this user's alone
(:func:`bridge.store.state.private_state_dir`). Anything else (a file a checkout or another user
planted with a value they know, one left readable, a link to somewhere else) is replaced by
a fresh token and never used: its value may be known to someone else. The replacement is
written beside it (``O_CREAT | O_EXCL``, 0600) and renamed over it, under a lock, so two
processes starting at once agree on one token.
"""

from __future__ import annotations

import errno
import hmac
import os
import re
import secrets
import stat
import sys
from pathlib import Path

from bridge.logs import never_log
from bridge.store import locks
from bridge.store.state import (
    POSIX_PERMISSIONS,
    owner_uid,
    private_state_dir,
    write_atomically,
)

__all__ = ["load_or_create_token", "read_token", "token_file_problem", "token_matches"]

#: What ``secrets.token_urlsafe(32)`` makes: 43 characters of the URL-safe alphabet.
_TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_-]{43}$")
_MAX_READ = 4096  # a token file is one short line; anything longer is not ours


def _make_token() -> str:
    return secrets.token_urlsafe(32)


def read_token(path: Path) -> tuple[str | None, str | None]:
    """``(token, None)`` when ``path`` holds a token bridge would adopt; ``(None, why)`` when
    it holds one it would replace (``why`` says what is wrong); ``(None, None)`` when there
    is no file."""
    # NONBLOCK: a FIFO. Windows has none of the three flags (getattr leaves them out): there
    # no other user can plant a link or a FIFO in the person's profile (its ACL), which is
    # what O_NOFOLLOW guards against here.
    flags = os.O_RDONLY | sum(
        getattr(os, name, 0) for name in ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC")
    )
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, "is a symbolic link"
        return None, f"cannot be read ({exc.strerror or exc})"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, "is not a regular file"
        if st.st_uid != owner_uid():
            return None, f"belongs to another user (uid {st.st_uid})"
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077 and POSIX_PERMISSIONS:  # Windows: the profile's ACL guards it
            return None, f"has mode {mode:04o}: other users may have read or written it"
        raw = os.read(fd, _MAX_READ + 1)
    finally:
        os.close(fd)
    try:
        token = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        token = ""
    if not _TOKEN_SHAPE.match(token):
        return None, "does not hold a token bridge made"
    never_log(token)  # whoever reads it may log something holding it: not in a log line
    return token, None


def token_file_problem(path: Path) -> str | None:
    """Why bridge would replace the token file at ``path`` on its next start (None: it is
    fine, or missing). For ``bridge doctor``."""
    return read_token(path)[1]


def load_or_create_token(path: Path) -> tuple[str, bool]:
    """The token in ``path``, made (0600, atomically) when missing or not one to adopt;
    returns (token, made now). Raises :class:`bridge.errors.StateDirUnsafe` when the
    directory is another user's."""
    private_state_dir(path.parent)
    token, problem = read_token(path)
    if token is not None:
        return token, False
    with locks.held(path.parent / ".tokens.lock"):
        # Another process may have made or replaced it while this one waited for the lock.
        token, problem = read_token(path)
        if token is not None:
            return token, False
        if problem is not None:
            # Said, never silent: a client holding the old value must be given the new one.
            print(
                f"bridge: {path} {problem}: replaced by a new token (the old value is never "
                "used; it may be known to someone else)",
                file=sys.stderr,
                flush=True,
            )
        token = _make_token()
        never_log(token)
        write_atomically(path, token + "\n")
    return token, True


def token_matches(given: str | None, token: str) -> bool:
    """Constant-time comparison: a wrong token takes as long as a right one."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())
