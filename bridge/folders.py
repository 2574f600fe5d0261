"""Where bridge keeps its files by default, per OS: one pure function of (platform, environment,
home), so every system's answer is tested on any one.

Three kinds of folder, each ending in ``bridge``:

- ``state``: sessions, history, tokens, pack overrides (``bridge.store.state``);
- ``config``: the person's secret (``bridge.link.trust_root``);
- ``cache``: the launched browser's lasting profiles (``bridge.app.launcher``), hundreds of
  megabytes the browser manages, which can be lost at the cost of logging in again.

Per OS:

- Linux and other POSIX: the XDG base directories, as bridge always had them:
  ``$XDG_STATE_HOME`` (``~/.local/state``), ``$XDG_CONFIG_HOME`` (``~/.config``),
  ``$XDG_CACHE_HOME`` (``~/.cache``). State and config ignore a relative value, as the XDG
  spec says; cache takes any value, as the launcher always did (kept, so nothing moves).
- macOS: ``~/Library/Application Support/bridge`` for state and config (Apple's place for an
  app's own data; the secret sits next to the tokens, both private to the person), and
  ``~/Library/Caches/bridge`` for profiles (Apple's place for what can be made again). XDG
  variables are not read there: few Mac tools honour them, and a person who sets them for
  their shell would otherwise see a different folder from an app started by launchd.
- Windows: ``%LOCALAPPDATA%\\bridge`` for all three (profiles in its ``profiles`` folder,
  chosen by the launcher). Local, not roaming (``%APPDATA%``): a roaming profile is copied to
  and from a server at every log-on and log-off, and what bridge keeps must not travel:
  browser profiles of hundreds of megabytes (Chrome keeps its own User Data in Local for the
  same reason), tokens and a secret that belong to this machine's relays and native host,
  and file locks that mean nothing on another machine. The runtime directory is already
  there too (``%LOCALAPPDATA%\\bridge\\run``, ``bridge.link.registry``).

The environment overrides (``BRIDGE_STATE_DIR``, ``BRIDGE_TRUST_DIR``, ``--profile-dir``…)
are the callers' and come first; this module only says what applies without them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal

__all__ = ["APP", "Purpose", "default_folder", "folder_hint"]

Purpose = Literal["state", "config", "cache"]
APP: Final = "bridge"

#: Linux and other POSIX: the XDG variable, its default under home, and whether a relative
#: value is ignored (the spec says so; the launcher's cache never checked, and keeps not
#: checking so no profile moves).
_XDG: Final[dict[Purpose, tuple[str, tuple[str, ...], bool]]] = {
    "state": ("XDG_STATE_HOME", (".local", "state"), True),
    "config": ("XDG_CONFIG_HOME", (".config",), True),
    "cache": ("XDG_CACHE_HOME", (".cache",), False),
}
_MAC: Final[dict[Purpose, tuple[str, ...]]] = {
    "state": ("Library", "Application Support"),
    "config": ("Library", "Application Support"),
    "cache": ("Library", "Caches"),
}


def default_folder(
    purpose: Purpose,
    *,
    platform: str = sys.platform,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> Path:
    """bridge's default folder for ``purpose`` on ``platform`` (see the module docstring).

    ``env`` defaults to ``os.environ`` and ``home`` to ``Path.home()``; both are parameters
    so that each system's answer can be checked on any other."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    if platform == "win32":
        local = env.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(local) / APP
    if platform == "darwin":
        return home.joinpath(*_MAC[purpose]) / APP
    name, under_home, absolute_only = _XDG[purpose]
    value = env.get(name, "")
    if value and (Path(value).is_absolute() or not absolute_only):
        return Path(value) / APP
    return home.joinpath(*under_home) / APP


def folder_hint(purpose: Purpose, platform: str = sys.platform) -> str:
    """The default folder as a person reads it in help and messages (``~``, ``%LOCALAPPDATA%``),
    without the environment's overrides."""
    if platform == "win32":
        return "%LOCALAPPDATA%\\" + APP
    if platform == "darwin":
        return "~/" + "/".join(_MAC[purpose]) + "/" + APP
    return "~/" + "/".join(_XDG[purpose][1]) + "/" + APP
