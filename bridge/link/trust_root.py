"""The person's secret: one per user, the root of every relay <-> extension handshake.

Made once (``secrets.token_urlsafe(32)``), kept in ``<trust dir>/secret`` with mode 0600 in a
directory that must be the person's own, not a symlink, and not writable by anyone else
(``$BRIDGE_TRUST_DIR``, else the OS's folder: ``bridge.folders``).
Relays of this user read it; the native host hands it to the extension (Chrome starts the
host only for bridge's extension id); ``bridge pair`` hands it over a one-time code.

A browser bridge launches is an island: its own secret in a fresh private directory that
only that browser's native host and that bridge's relays read (``Island``), so it never links
to the person's everyday relay, nor the everyday browser to it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bridge.errors import BridgeError
from bridge.folders import default_folder
from bridge.link.registry import ENV_RUNTIME_DIR
from bridge.link.tokens import load_or_create_token, read_token
from bridge.store.state import POSIX_PERMISSIONS, owner_uid

__all__ = [
    "ENV_ISLAND",
    "ENV_TRUST_DIR",
    "SECRET_FILE",
    "Island",
    "TrustUnavailable",
    "existing_secret",
    "load_secret",
    "private_dir",
    "trust_dir",
]

ENV_TRUST_DIR: Final = "BRIDGE_TRUST_DIR"
#: Set (to "1") in the environment of a browser bridge launched: its native host then tells
#: the extension to link only to the relays it announces (no probing, no paired secret).
ENV_ISLAND: Final = "BRIDGE_ISLAND"
SECRET_FILE: Final = "secret"


class TrustUnavailable(BridgeError):
    """The secret cannot be had safely (an unsafe directory, a missing island secret)."""

    code = "trust_unavailable"


def trust_dir(
    env: Mapping[str, str] | None = None,
    *,
    platform: str = sys.platform,
    home: Path | None = None,
) -> Path:
    """``$BRIDGE_TRUST_DIR``, else the OS's config folder (``bridge.folders``): on Linux
    ``$XDG_CONFIG_HOME/bridge``, else ``~/.config/bridge``; on macOS
    ``~/Library/Application Support/bridge``; on Windows ``%LOCALAPPDATA%\\bridge``. There
    the secret shares the state directory's folder: both are the person's own, and those
    systems have no separate place for settings that is any more private."""
    env = os.environ if env is None else env
    if env.get(ENV_TRUST_DIR):
        return Path(env[ENV_TRUST_DIR])
    return default_folder("config", platform=platform, env=env, home=home)


def private_dir(path: Path, *, create: bool = True) -> Path:
    """``path`` as a directory only this user controls, made (0700) when missing.

    Refused: a symlink (it could lead anywhere), a directory another user owns, one that
    group or others may write (they could swap the secret). A directory of ours that others
    may read or enter is tightened to 0700."""
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise TrustUnavailable(f"{path} does not exist") from None
    remedy = f"remove it (or set {ENV_TRUST_DIR} to a private directory) and start bridge again"
    if stat.S_ISLNK(st.st_mode):
        raise TrustUnavailable(f"{path} is a symbolic link, which bridge does not follow: {remedy}")
    if not stat.S_ISDIR(st.st_mode):
        raise TrustUnavailable(f"{path} is not a directory: {remedy}")
    if st.st_uid != owner_uid():  # Windows: 0 for every file; the profile's ACL guards it
        raise TrustUnavailable(f"{path} belongs to another user (uid {st.st_uid}): {remedy}")
    if not POSIX_PERMISSIONS:  # Windows' "modes" say nothing of other users (always 0777)
        return path
    if st.st_mode & 0o022:
        raise TrustUnavailable(
            f"{path} may be written by other users (mode {stat.S_IMODE(st.st_mode):o}): {remedy}"
        )
    if st.st_mode & 0o077:
        path.chmod(0o700)
    return path


def load_secret(directory: Path | None = None, *, create: bool = True) -> str:
    """The secret of ``directory`` (default: ``trust_dir()``), made when missing if ``create``.

    A secret file bridge did not make, or that others may read, is replaced, never adopted
    (``bridge.link.tokens``)."""
    directory = private_dir(directory or trust_dir(), create=create)
    path = directory / SECRET_FILE
    if not create and not path.exists():
        raise TrustUnavailable(
            f"no secret in {path}: the bridge that launched this browser has stopped"
        )
    secret, _ = load_or_create_token(path)
    return secret


def existing_secret(directory: Path | None = None) -> str | None:
    """The secret of ``directory`` (default: ``trust_dir()``) if there is one bridge would
    adopt, else None; never made, replaced or tightened.

    For commands that only look (``bridge doctor``, ``bridge token``): they prove the secret
    to the relays' loopback TCP endpoints (``bridge.link.local_ipc``), and must not change
    what a running relay holds (``load_secret`` would replace a file it would not adopt)."""
    directory = directory or trust_dir()
    try:
        st = os.lstat(directory)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != owner_uid():  # a link, a file, not ours
        return None
    if POSIX_PERMISSIONS and st.st_mode & 0o022:
        return None
    return read_token(directory / SECRET_FILE)[0]


@dataclass
class Island:
    """A launched browser's own trust: a fresh private directory (``mkdtemp``: no other user
    can have made or squatted it) holding a fresh secret; it is also the runtime directory
    where that bridge's relays and that browser's native host meet. Removed by ``close``."""

    directory: Path
    secret: str

    owned: bool = True  # made here, so removed by close()

    @classmethod
    def create(cls, directory: Path | None = None) -> Island:
        """A fresh island; in ``directory`` when given (a private directory the caller made
        and removes, e.g. a test session's runtime directory)."""
        if directory is None:
            # Directly under the temporary directory: Unix socket paths must stay short.
            made = Path(tempfile.mkdtemp(prefix="bridge-island-"))
            return cls(made, load_secret(made))
        if (directory / SECRET_FILE).exists():
            # Two launched browsers on one island would share its secret and its relays: each
            # would serve the other's bridge.
            raise TrustUnavailable(
                f"{directory} is already the island of a launched browser; give each launched "
                "browser a runtime directory of its own (or none: bridge makes one)"
            )
        return cls(directory, load_secret(directory), owned=False)

    def browser_env(self) -> dict[str, str]:
        """What the launched browser (and so its native host) must see."""
        where = str(self.directory)
        return {ENV_RUNTIME_DIR: where, ENV_TRUST_DIR: where, ENV_ISLAND: "1"}

    def close(self) -> None:
        if self.owned:
            shutil.rmtree(self.directory, ignore_errors=True)
