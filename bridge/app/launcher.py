"""Start Chromium/Chrome with the bridge extension loaded, and stop it without leftovers.

Used by ``--launch`` (the embedded browser, a dedicated profile so a person logs in
once) and by the test fixtures (a temporary profile). A launched browser is an island
(``bridge.link.trust_root.Island``): its native host hands its extension a secret of its own and
announces only the relays of the bridge that launched it, so it never links to the person's
everyday relay, and no other relay can prove itself to it. Nothing secret is on its command
line (which every user of the machine can read).

Its process tree: on POSIX the browser gets a session and process group of its own
(``start_new_session``), so one ``killpg`` reaches every helper it started (zygote,
renderers, GPU) and a Ctrl+C in bridge's terminal does not reach it. Windows has neither:
there it is started with ``CREATE_NEW_PROCESS_GROUP`` (bridge's console Ctrl+C stays
bridge's) and stopped by finding the tree with psutil (``stop_process_tree``, mode
``"tree"``), which tests also run on Linux.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import Any, Literal, Protocol
from urllib.parse import quote

import psutil

from bridge.cdp.direct import CdpPipe, DirectCdp
from bridge.errors import BridgeError, BridgeTimeout, CdpError
from bridge.folders import default_folder
from bridge.link import native_install
from bridge.link.registry import ENV_RUNTIME_DIR
from bridge.link.relay import Relay
from bridge.link.trust_root import Island
from bridge.tasks import cancel_and_wait
from bridge.waiting import scaled, wait_for
from bridge.wire.extension import EXTENSION_ID, extension_dir

__all__ = [
    "CHANNELS",
    "EXTENSION_LOADINGS",
    "AppPaths",
    "BrowserConflict",
    "BrowserNotFound",
    "DebugPipeUnavailable",
    "ExtensionDirInvalid",
    "ExtensionLoadFailed",
    "ExtensionLoading",
    "ExtensionLoadingUnavailable",
    "LaunchOptions",
    "LaunchedBrowser",
    "TreeMode",
    "WindowsAppPaths",
    "debug_pipe_supported",
    "default_profile_dir",
    "default_tree_mode",
    "discover_browser",
    "extension_loading_for",
    "find_browser",
    "is_google_chrome",
    "stop_process_tree",
    "validate_extension_dir",
]

log = logging.getLogger(__name__)


def _die_with_parent() -> None:
    """Linux: the browser gets SIGTERM if bridge dies without cleaning up (even SIGKILL)."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        # Not glibc (e.g. musl): the browser then outlives a bridge killed by SIGKILL, and
        # the next launch's sweep removes its temporary profile. This runs in the child
        # between fork and exec, where logging is unsafe: hence a silent suppress.
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


_TEMP_PREFIX = "bridge-profile-"
PROC_ROOT = Path("/proc")
"""Where Linux shows processes; hosts without it (macOS, BSDs) are asked with ``kill(pid, 0)``."""


def sweep_stale_profiles(proc_root: Path | None = None) -> int:
    """Remove temporary profiles left by bridge processes that died without cleaning up.

    Chromium keeps ``SingletonLock`` as a symlink to ``<host>-<pid>`` while it runs; a
    profile whose browser is certainly gone is ours to delete. Anything in doubt stays: a
    profile still starting (no lock yet), one locked from another host (its pid means
    nothing here), one whose process might be alive.
    """
    removed = 0
    host = socket.gethostname()
    for path in Path(tempfile.gettempdir()).glob(f"{_TEMP_PREFIX}*"):
        try:
            target = os.readlink(path / "SingletonLock")
            lock_host, pid_text = target.rsplit("-", 1)
            pid = int(pid_text)
        except (OSError, ValueError):
            continue  # still starting, or not a Chromium profile: leave it
        if lock_host != host or pid <= 0:
            continue
        if not _running(pid, PROC_ROOT if proc_root is None else proc_root):
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
    return removed


def _running(pid: int, proc_root: Path) -> bool:
    """Is ``pid`` alive? True whenever that cannot be told: a live profile is never swept."""
    if (proc_root / "self").exists():  # a mounted procfs, not just an empty /proc directory
        try:
            stat = (proc_root / str(pid) / "stat").read_text()
        except FileNotFoundError:
            return False
        except OSError:
            return True
        # "pid (comm) state ...": comm may hold spaces and parentheses, so split after the last ")"
        fields = stat.rpartition(")")[2].split()
        return not fields or fields[0] != "Z"  # a zombie has exited
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, someone else's; anything else: in doubt
        return True
    return True


#: How a launched browser's process tree is started and stopped: ``"group"`` (POSIX: a
#: session and process group of its own, signalled whole by ``killpg``) or ``"tree"``
#: (Windows: the tree found with psutil and stopped process by process).
TreeMode = Literal["group", "tree"]
#: How long a browser asked to stop may take before it is killed. Short: the MCP server must
#: be gone within 5 s of being told to stop.
_STOP_GRACE_S = 2.5


def default_tree_mode(platform: str = sys.platform) -> TreeMode:
    return "tree" if platform == "win32" else "group"


def debug_pipe_supported(platform: str = sys.platform) -> bool:
    """``--remote-debugging-pipe``: the browser reads and writes DevTools on fds 3 and 4,
    which a POSIX child inherits (``pass_fds``). A Windows child inherits no numbered
    descriptors from Python (only handles, which Chrome's pipe mode does not take from
    Python's ``subprocess``), so there the browser's DevTools port is the way in."""
    return platform != "win32"


def _spawn_options(mode: TreeMode, preexec: Callable[[], None], ends: list[int]) -> dict[str, Any]:
    """What ``create_subprocess_exec`` needs to start the browser as ``mode`` stops it."""
    if sys.platform == "win32":
        # No sessions or preexec on Windows: a process group of its own keeps a Ctrl+C in
        # bridge's console from reaching the browser, as a session does on POSIX.
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    options: dict[str, Any] = {"preexec_fn": preexec, "pass_fds": (3, 4) if ends else ()}
    if mode == "group":
        options["start_new_session"] = True  # its own process group: stop() takes every helper
    return options


async def stop_process_tree(
    proc: asyncio.subprocess.Process, *, graceful: bool, mode: TreeMode | None = None
) -> None:
    """Stop ``proc`` and every process it started; return once ``proc`` itself is reaped.

    ``graceful``: ask first (SIGTERM; a lasting profile saves its state), and kill whatever
    is left after a short grace; else kill at once (a temporary profile has nothing to save).
    ``mode``: ``default_tree_mode()`` unless a test runs the other platform's way."""
    mode = default_tree_mode() if mode is None else mode
    if mode == "tree" or sys.platform == "win32":
        await _stop_with_psutil(proc, graceful)
        return
    first = signal.SIGTERM if graceful else signal.SIGKILL
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, first)
    try:
        async with asyncio.timeout(_STOP_GRACE_S):
            await proc.wait()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
    # Helpers (zygote, renderers) share the group; make sure none outlives us.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


async def _stop_with_psutil(proc: asyncio.subprocess.Process, graceful: bool) -> None:
    """The tree without a process group: its members are listed (psutil follows parent ids)
    before the root is stopped, since an orphan's parent id no longer leads to it. Windows
    has no graceful signal for a GUI process: ``terminate`` is ``TerminateProcess`` there, so
    a lasting profile may report an unclean exit on its next start. A helper the browser
    starts after the listing is not in it; Chrome's helpers end on their own when the
    browser process is gone (their IPC channel closes)."""
    try:
        root = psutil.Process(proc.pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.Error:  # already gone (or no longer ours to see): nothing to list
        tree = []

    def signal_all(processes: list[psutil.Process], kill: bool) -> None:
        for process in processes:
            with contextlib.suppress(psutil.Error):
                process.kill() if kill else process.terminate()

    signal_all(tree, kill=not graceful)
    try:
        async with asyncio.timeout(_STOP_GRACE_S):
            await proc.wait()
    except TimeoutError:
        signal_all(tree, kill=True)
        await proc.wait()
    # Helpers that outlived the request: gone now, whatever they were doing. psutil checks
    # each one's start time, so a pid reused by an unrelated process is never signalled.
    signal_all([p for p in tree[1:] if _alive(p)], kill=True)


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


class DebugPipeUnavailable(BridgeError):
    """``debug_pipe`` was asked for where the browser cannot inherit the pipe (Windows)."""

    code = "debug_pipe_unavailable"


class ExtensionLoadingUnavailable(DebugPipeUnavailable):
    """Extensions must be loaded over the DevTools pipe (a Google Chrome, or
    ``extension_loading="cdp"``) where the browser cannot inherit the pipe (Windows)."""

    code = "extension_loading_unavailable"


class ExtensionLoadFailed(BridgeError):
    """The browser refused an extension folder given to ``Extensions.loadUnpacked``, or
    bridge's own loaded under another id; the message names the folder and what to do."""

    code = "extension_load_failed"


class BrowserNotFound(BridgeError):
    """No Chromium or Chrome where bridge looked; the message says where, and what to set."""

    code = "browser_not_found"


class BrowserConflict(BridgeError):
    """Two options choose the browser (``--channel`` and ``--browser-path``/$BRIDGE_BROWSER)."""

    code = "browser_conflict"


class ExtensionDirInvalid(BridgeError, ValueError):
    """A ``--load-extension`` folder Chromium could not load; the message says why."""

    code = "extension_invalid"


#: Chrome's release channels (https://www.chromium.org/getting-involved/dev-channel).
CHANNELS: tuple[str, ...] = ("stable", "beta", "dev", "canary")
Hive = Literal["HKCU", "HKLM"]

#: Linux: names looked up on PATH, unchanged since bridge 0.1 (Chromium first: unlike
#: Google Chrome 137+, it still honours ``--load-extension``; docs/platforms.md).
_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
#: Linux, per channel: Google's packages' commands, then where those packages install.
_LINUX_CHANNELS: Mapping[str, tuple[tuple[str, ...], str]] = {
    "stable": (("google-chrome-stable", "google-chrome"), "/opt/google/chrome/chrome"),
    "beta": (("google-chrome-beta",), "/opt/google/chrome-beta/chrome"),
    "dev": (("google-chrome-unstable",), "/opt/google/chrome-unstable/chrome"),
    "canary": (("google-chrome-canary",), "/opt/google/chrome-canary/chrome"),
}
#: macOS: the application bundle's name per channel (its executable has the same name).
_MAC_APPS: Mapping[str, str] = {
    "stable": "Google Chrome",
    "beta": "Google Chrome Beta",
    "dev": "Google Chrome Dev",
    "canary": "Google Chrome Canary",
}
_MAC_CHROMIUM = "Chromium"
#: Windows: the folder under Google\ per channel (Canary is "side by side": Chrome SxS).
_WINDOWS_FOLDERS: Mapping[str, str] = {
    "stable": "Chrome",
    "beta": "Chrome Beta",
    "dev": "Chrome Dev",
    "canary": "Chrome SxS",
}
#: Where Windows installers record the executable, per user (HKCU) or per machine (HKLM).
APP_PATHS_KEY = r"SOFTWARE\Microsoft\Windows\CurrentVersion\App Paths\chrome.exe"


class AppPaths(Protocol):
    """Reads a registry key's default value: Windows' ``App Paths`` for ``chrome.exe``.

    A protocol, as ``native_install.RegistryWriter`` is, so Windows' discovery is tested on
    any system with a fake; only ``WindowsAppPaths`` touches ``winreg``.
    """

    def read(self, hive: Hive, key: str) -> str | None:
        """The key's default value, or None when the key or the value is absent."""
        ...


class WindowsAppPaths:
    """The real registry. ``winreg`` is imported per call: it exists only on Windows."""

    def read(self, hive: Hive, key: str) -> str | None:
        if sys.platform != "win32":
            return None
        import winreg

        root = winreg.HKEY_CURRENT_USER if hive == "HKCU" else winreg.HKEY_LOCAL_MACHINE
        try:
            with winreg.OpenKey(root, key) as handle:
                value, _kind = winreg.QueryValueEx(handle, "")
        except OSError:  # FileNotFoundError: not installed; others: unreadable, so not found
            return None
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class _Place:
    """Where discovery looked, as its error lists it, and the files that place stands for."""

    label: str
    paths: tuple[str, ...]


def _os_family(platform: str) -> Literal["linux", "mac", "windows"]:
    if platform == "darwin":
        return "mac"
    if platform in ("win32", "cygwin"):
        return "windows"
    return "linux"  # Linux, and the BSDs, whose packages use the same command names


def _on_path(names: Sequence[str], env: Mapping[str, str], windows: bool) -> _Place:
    """``names`` in each PATH folder, in ``shutil.which``'s order (an unset PATH: its
    default), so Linux finds what it found before discovery became a pure function."""
    path = env.get("PATH")
    folders = (os.defpath if path is None else path).split(";" if windows else ":")
    join: type[PurePath] = PureWindowsPath if windows else PurePosixPath
    paths = tuple(
        name if not folder else str(join(folder, name)) for name in names for folder in folders
    )
    return _Place(f"{', '.join(names)} on PATH", paths if path != "" else ())


def _mac_places(channel: str | None, env: Mapping[str, str]) -> list[_Place]:
    # No channel: Chromium first, as on Linux (it loads extensions), then Chrome's channels.
    apps = [_MAC_CHROMIUM, *_MAC_APPS.values()] if channel is None else [_MAC_APPS[channel]]
    roots = ["/Applications"]
    if env.get("HOME"):
        roots.append(str(PurePosixPath(env["HOME"], "Applications")))
    places = [
        _Place(path, (path,))
        for app in apps
        for root in roots
        for path in [str(PurePosixPath(root, f"{app}.app", "Contents", "MacOS", app))]
    ]
    if channel is None:  # Homebrew links its chromium cask's command onto PATH
        places.append(_on_path(_CANDIDATES, env, windows=False))
    return places


def _windows_places(
    channel: str | None, env: Mapping[str, str], registry: AppPaths | None
) -> list[_Place]:
    bases = [env.get(v) for v in ("PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA")]
    roots = [b for b in bases if b]
    if channel is None:
        folders = ["Chromium", *(f"Google\\{f}" for f in _WINDOWS_FOLDERS.values())]
    else:
        folders = [f"Google\\{_WINDOWS_FOLDERS[channel]}"]
    places = [
        _Place(path, (path,))
        for folder in folders
        for root in roots
        for path in [str(PureWindowsPath(root, folder, "Application", "chrome.exe"))]
        # Chromium's installer installs per user only (%LOCALAPPDATA%\Chromium).
        if folder != "Chromium" or root == env.get("LOCALAPPDATA")
    ]
    if not roots:
        places.append(_Place("%PROGRAMFILES%, %PROGRAMFILES(X86)%, %LOCALAPPDATA% (unset)", ()))
    if registry is not None and channel in (None, "stable"):
        # Whichever Chrome registered last owns App Paths\chrome.exe: for --channel stable
        # only a path in the stable folder counts, never a Beta that took the key.
        for hive in ("HKCU", "HKLM"):
            value = (registry.read(hive, APP_PATHS_KEY) or "").strip().strip('"')
            wanted = value and (
                channel is None or PureWindowsPath(value).parent.parent.name.lower() == "chrome"
            )
            shown = f"{hive}\\{APP_PATHS_KEY}" + (f" ({value})" if value else " (not set)")
            places.append(_Place(shown, (value,) if wanted else ()))
    return places


def _linux_places(channel: str | None, env: Mapping[str, str]) -> list[_Place]:
    if channel is None:
        return [_on_path(_CANDIDATES, env, windows=False)]
    names, installed = _LINUX_CHANNELS[channel]
    return [_on_path(names, env, windows=False), _Place(installed, (installed,))]


_INSTALL_HINTS: Mapping[str, str] = {
    "linux": "Install one (Debian/Ubuntu: apt-get install chromium)",
    "mac": "Install Chromium (brew install --cask chromium) or Google Chrome",
    "windows": "Install Chromium or Google Chrome",
}
_CHANNEL_PAGES: Mapping[str, str] = {
    "stable": "https://www.google.com/chrome/",
    "beta": "https://www.google.com/chrome/beta/",
    "dev": "https://www.google.com/chrome/dev/",
    "canary": "https://www.google.com/chrome/canary/",
}


def discover_browser(
    platform: str,
    env: Mapping[str, str],
    channel: str | None = None,
    *,
    is_executable: Callable[[str], bool],
    registry: AppPaths | None = None,
) -> str:
    """The first browser executable of ``channel`` (None: any, Chromium first) for a system.

    A pure function of its arguments (``platform`` as ``sys.platform`` spells it, the
    environment, a file check and the Windows registry), so every system's discovery is
    tested on any one. Raises BrowserNotFound listing every place it looked, in order.
    """
    if channel is not None and channel not in CHANNELS:
        raise BrowserNotFound(f"--channel {channel!r}: choose one of {', '.join(CHANNELS)}")
    family = _os_family(platform)
    if family == "mac":
        places = _mac_places(channel, env)
    elif family == "windows":
        places = _windows_places(channel, env, registry)
    else:
        places = _linux_places(channel, env)
    for place in places:
        for path in place.paths:
            if is_executable(path):
                return path
    what = "Chromium or Chrome" if channel is None else f"Chrome {channel.capitalize()}"
    hint = (
        _INSTALL_HINTS[family]
        if channel is None
        else f"Install Chrome {channel.capitalize()} ({_CHANNEL_PAGES[channel]})"
    )
    raise BrowserNotFound(
        f"no {what} found. Looked in: "
        + "; ".join(p.label for p in places)
        + f". {hint}, or pass --browser-path / set BRIDGE_BROWSER"
        + (" (without --channel)" if channel is not None else "")
        + "."
    )


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


#: How extensions get into the launched browser: ``"flags"`` (``--load-extension`` and
#: ``--disable-extensions-except``: Chromium, Chrome for Testing) or ``"cdp"`` (CDP's
#: ``Extensions.loadUnpacked`` over the browser's DevTools pipe: Google Chrome 137+,
#: which ignores the flag). docs/platforms.md.
ExtensionLoading = Literal["flags", "cdp"]
EXTENSION_LOADINGS: tuple[ExtensionLoading, ...] = ("flags", "cdp")


def is_google_chrome(path: str) -> bool:
    """Whether an executable's path is a Google-branded Chrome's, which ignores
    ``--load-extension`` since version 137 (docs/platforms.md).

    Told from the path alone, as Google's installers lay it out on each system, so it is a
    pure function tested for every system on any one: a ``Google Chrome*.app`` bundle
    (macOS), a ``Google`` folder holding a ``Chrome*`` one (Windows ``Google\\Chrome
    [Beta|Dev|SxS]``, Linux ``/opt/google/chrome[-beta|-unstable|-canary]``), or a
    ``google-chrome*`` command (Linux). Chrome for Testing honours the flag and is not
    Google Chrome here (``Google Chrome for Testing.app``; elsewhere its folders are
    ``chrome-linux64``, ``chrome-win64``), nor is Chromium, nor any other name: they keep
    the flags. Both separators count, so a Windows path is read right on any system.
    """
    parts = [p.lower() for p in re.split(r"[\\/]+", path) if p]
    if not parts:
        return False
    for i, part in enumerate(parts):
        if part.endswith(".app") and part.startswith("google chrome"):
            return "for testing" not in part
        if part == "google" and i + 1 < len(parts) and parts[i + 1].startswith("chrome"):
            return True
    return parts[-1].startswith("google-chrome")


def extension_loading_for(
    executable: str,
    channel: str | None = None,
    explicit: ExtensionLoading | None = None,
    *,
    resolved: str | None = None,
) -> ExtensionLoading:
    """How to load extensions into ``executable``: ``explicit`` when given; else ``"cdp"``
    for a Google Chrome (any ``channel``, or a path ``is_google_chrome`` knows, as given or
    ``resolved`` through its links: ``/usr/bin/chrome`` may lead to ``/opt/google``); else
    the flags, as bridge always loaded them into Chromium."""
    if explicit is not None:
        if explicit not in EXTENSION_LOADINGS:
            raise ValueError(
                f"extension_loading {explicit!r}: choose one of {', '.join(EXTENSION_LOADINGS)}"
            )
        return explicit
    if channel is not None or is_google_chrome(executable):
        return "cdp"
    return "cdp" if resolved is not None and is_google_chrome(resolved) else "flags"


def default_profile_dir(
    channel: str | None = None,
    *,
    platform: str = sys.platform,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> Path:
    """The launched browser's lasting profile, in the OS's cache folder (``bridge.folders``):
    ``…/bridge/profile``, or with a channel ``…/bridge/profiles/<channel>``; on Linux under
    ``$XDG_CACHE_HOME`` (``~/.cache``), on macOS under ``~/Library/Caches``. On Windows every
    profile is in ``%LOCALAPPDATA%\\bridge\\profiles`` (``default``, or the channel): that
    folder is also the state directory's, and one ``profiles`` folder keeps the browser's
    hundreds of megabytes apart from bridge's own small files.

    One per channel because a profile is not safe across versions: a Canary writes a profile
    stable cannot read back (Chrome refuses a profile "from a newer version"), and each
    channel's own default user data directory is separate for that reason
    (docs/platforms.md). Next to the default profile, in the cache, not in the state
    directory: a profile is hundreds of megabytes the browser manages, and the state
    directory stays bridge's own small files.
    """
    base = default_folder("cache", platform=platform, env=env, home=home)
    if platform == "win32":
        return base / "profiles" / (channel or "default")  # "default" is no channel's name
    return base / "profile" if channel is None else base / "profiles" / channel


def find_browser(
    explicit: str | os.PathLike[str] | None = None, channel: str | None = None
) -> Path:
    """An explicit path, then $BRIDGE_BROWSER, then the first Chromium/Chrome this system
    has (``discover_browser``); with ``channel``, that Chrome channel only."""
    env_value = os.environ.get("BRIDGE_BROWSER")
    if channel is not None and (explicit or env_value):
        source = "--browser-path" if explicit else "$BRIDGE_BROWSER"
        raise BrowserConflict(
            f"--channel {channel} and {source} both choose the browser: drop --channel to "
            f"launch {explicit or env_value}, or "
            + ("drop --browser-path" if explicit else "unset BRIDGE_BROWSER")
            + f" to launch Chrome {channel.capitalize()}"
        )
    for source, value in (("--browser-path", explicit), ("BRIDGE_BROWSER", env_value)):
        if value:
            path = Path(value).expanduser()
            if path.is_file() and os.access(path, os.X_OK):
                return path
            raise BrowserNotFound(f"{source} points to {path}, which is not an executable file")
    registry = WindowsAppPaths() if sys.platform == "win32" else None
    found = discover_browser(
        sys.platform, os.environ, channel, is_executable=_is_executable, registry=registry
    )
    return Path(found)


def validate_extension_dir(path: str | os.PathLike[str]) -> Path:
    """An unpacked extension's folder, absolute, once Chromium could load it: a folder with
    a ``manifest.json`` that names its ``manifest_version``. Chromium itself only logs a
    refused ``--load-extension`` on its stderr and starts without it: hence a clear error
    here, before anything starts."""
    folder = Path(path).expanduser().resolve()
    manifest = folder / "manifest.json"
    if not folder.is_dir():
        raise ExtensionDirInvalid(
            f"--load-extension {path}: no such folder; give the folder with the extension's "
            "manifest.json (its unpacked build)"
        )
    if "," in str(folder):
        raise ExtensionDirInvalid(
            f"--load-extension {folder}: Chromium separates extensions with commas, so a "
            "folder whose path has one cannot be loaded: move or link it elsewhere"
        )
    try:
        data = json.loads(manifest.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ExtensionDirInvalid(
            f"--load-extension {folder}: no manifest.json in it; give the extension's own "
            "folder (the one holding manifest.json, often a build output such as dist/)"
        ) from None
    except (OSError, ValueError) as exc:
        raise ExtensionDirInvalid(
            f"--load-extension {folder}: manifest.json is not readable JSON ({exc})"
        ) from None
    version = data.get("manifest_version") if isinstance(data, dict) else None
    if not isinstance(version, int) or isinstance(version, bool):
        raise ExtensionDirInvalid(
            f"--load-extension {folder}: manifest.json has no manifest_version (Chrome loads "
            'manifest_version 3: add "manifest_version": 3)'
        )
    return folder


@dataclass
class LaunchOptions:
    """How to launch the browser: which one, headless or not, which profile, an island of its own
    or the person's trust (tests), and the DevTools access tests and benchmarks need."""

    browser_path: str | None = None
    #: A Chrome release channel (CHANNELS) to find instead of any Chromium/Chrome; its
    #: lasting profile is its own (``default_profile_dir(channel)``).
    channel: str | None = None
    headless: bool = False
    profile_dir: Path | None = None  # None: the dedicated default profile (per channel)
    isolated: bool = False  # a temporary profile, removed on stop
    extra_args: Sequence[str] = ()
    #: Benchmarks only: the browser's own DevTools port, the direct-CDP reference. Anyone on
    #: the machine can drive a browser through such a port (it has no authentication).
    remote_debugging: bool = False
    #: Tests: the browser's own DevTools over a pipe only this process holds
    #: (``--remote-debugging-pipe``; ``direct_cdp()``), for what only the browser can do.
    debug_pipe: bool = False
    extension: Path = field(default_factory=extension_dir)
    #: More unpacked extensions loaded next to bridge's (``--load-extension DIR``): a
    #: person's own under test, say. Validated by ``validate_extension_dir``.
    extensions: Sequence[Path] = ()
    #: How the extensions are loaded (``ExtensionLoading``): None chooses by the browser
    #: (``extension_loading_for``: Google Chrome over CDP, Chromium by flags); "cdp" forces
    #: the DevTools way, so it is tested with Chromium too.
    extension_loading: ExtensionLoading | None = None
    #: Register bridge's native host in the profile (Linux: Chromium reads it from there):
    #: it hands the extension the island's secret and announces the island's relays. Without
    #: it the extension has no secret and links to nothing until paired by hand (tests of
    #: pairing and of probing only).
    native_host: bool = True
    #: An island (the default): a secret and runtime directory of its own, handed to its
    #: native host. False: the browser's host uses the person's, as in their own Chrome
    #: (tests of the person's browser and of the fallbacks only).
    island: bool = True
    #: The island's directory (its runtime directory too); None: a fresh private one.
    island_dir: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # extra environment for the browser


_DOWNLOADS = "Downloads"  # a temporary profile's download directory, inside it


def _keep_downloads_inside(profile: Path) -> None:
    """A throwaway profile saves downloads inside itself (gone with it), not in ~/Downloads."""
    downloads = profile / _DOWNLOADS
    downloads.mkdir(parents=True, exist_ok=True)
    prefs = {"download": {"default_directory": str(downloads), "prompt_for_download": False}}
    default = profile / "Default"
    default.mkdir(parents=True, exist_ok=True)
    (default / "Preferences").write_text(json.dumps(prefs), encoding="utf-8")


def _debug_pipe() -> tuple[CdpPipe, list[int]]:
    """Our ends of the browser's DevTools pipe, and its ends (moved above fd 9) to pass."""
    if sys.platform == "win32":
        raise DebugPipeUnavailable("no DevTools pipe on Windows: use remote_debugging=True")
    import fcntl  # POSIX only, as the pipe's fd numbers are

    # The browser reads commands on fd 3 and writes on fd 4. The ends are moved above 9
    # first so the child's dup2 onto 3 and 4 cannot overwrite one with the other.
    to_browser, to_us = os.pipe(), os.pipe()
    ends = [fcntl.fcntl(to_browser[0], fcntl.F_DUPFD, 10)]
    ends.append(fcntl.fcntl(to_us[1], fcntl.F_DUPFD, 10))
    os.close(to_browser[0])
    os.close(to_us[1])
    return CdpPipe(to_us[0], to_browser[1]), ends


class LaunchedBrowser:
    """A Chromium/Chrome bridge started, with the extension loaded: its process, profile and
    island (its own secret and runtime directory), stopped without leftovers."""

    def __init__(self, options: LaunchOptions | None = None) -> None:
        self.options = options or LaunchOptions()
        self._island: Island | None = None
        self.process: asyncio.subprocess.Process | None = None
        self.devtools_url: str | None = None  # ws://127.0.0.1:PORT/devtools/browser/...
        self.devtools_pipe: CdpPipe | None = None  # with debug_pipe
        self._temp_profile: tempfile.TemporaryDirectory[str] | None = None
        self.profile: Path | None = None
        self._stderr_tail: list[str] = []
        self._reader: asyncio.Task[None] | None = None
        self.executable = ""
        self._tree_mode: TreeMode = default_tree_mode()
        #: How this launch loads its extensions, once ``extension_loading()`` has chosen.
        self._loading: ExtensionLoading | None = None
        self._extension_dirs: list[str] = []  # bridge's first, then options.extensions
        #: Each folder loaded over CDP, with the id the browser gave it (its worker's host).
        self.extension_ids: dict[Path, str] = {}

    @property
    def downloads_dir(self) -> Path | None:
        """Where the browser saves downloads, when bridge chose it (a temporary profile);
        None for a lasting profile, whose person may have chosen any folder."""
        if self.options.isolated and self.profile is not None:
            return self.profile / _DOWNLOADS
        return None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def island(self) -> Island:
        """This browser's trust and meeting place, made on first use (before the relays)."""
        if self._island is None:
            self._island = Island.create(self.options.island_dir)
        return self._island

    @property
    def secret(self) -> str:
        """The island's secret: what this browser's extension and its relays prove."""
        return self.island.secret

    def relay(self, **kwargs: Any) -> Relay:
        """A relay this browser links to (not started): the island's secret and directory;
        not an island: the person's secret, and the runtime directory it was given."""
        if not self.options.island:
            where = self.options.env.get(ENV_RUNTIME_DIR)
            return Relay(runtime_dir=Path(where) if where else None, **kwargs)
        return Relay(secret=self.island.secret, runtime_dir=self.island.directory, **kwargs)

    @property
    def start_url(self) -> str:
        page = (
            "<title>bridge browser</title><body style='font:16px system-ui;margin:2em'>"
            "<h1>bridge</h1><p>This browser is driven by bridge. Log in to ChatGPT and "
            "Gemini here once; bridge reuses the session.</p>"
        )
        return f"data:text/html,{quote(page)}"

    def extension_loading(self) -> ExtensionLoading:
        """How this launch loads its extensions (``extension_loading_for``), choosing once:
        finds the browser, and makes nothing (no profile, no island)."""
        if self._loading is None:
            opts = self.options
            self.executable = str(find_browser(opts.browser_path, opts.channel))
            self._loading = extension_loading_for(
                self.executable,
                opts.channel,
                opts.extension_loading,
                resolved=os.path.realpath(self.executable),
            )
        return self._loading

    def command(self) -> list[str]:
        opts = self.options
        loading = self.extension_loading()
        # Before any profile is made: a folder Chromium would skip is an error now, not a
        # browser that starts without the extension under test.
        extensions = [str(Path(opts.extension).resolve())]
        for folder in opts.extensions:
            checked = str(validate_extension_dir(folder))
            if checked not in extensions:
                extensions.append(checked)
        self._extension_dirs = extensions
        if opts.isolated:
            sweep_stale_profiles()
            self._temp_profile = tempfile.TemporaryDirectory(
                prefix=_TEMP_PREFIX, ignore_cleanup_errors=True
            )
            self.profile = Path(self._temp_profile.name)
            _keep_downloads_inside(self.profile)
        else:
            self.profile = (opts.profile_dir or default_profile_dir(opts.channel)).expanduser()
            self.profile.mkdir(parents=True, exist_ok=True)
        if opts.native_host and sys.platform.startswith("linux"):
            native_install.install("chromium", user_data_dir=self.profile)
        if loading == "flags":
            loaded = ",".join(extensions)  # Chromium's list separator (hence no commas in paths)
            how = [f"--disable-extensions-except={loaded}", f"--load-extension={loaded}"]
        else:
            # Google Chrome 137+ ignores --load-extension (139 dropped the other flag too):
            # start() loads each folder with Extensions.loadUnpacked over the DevTools pipe,
            # which only this process holds; the switch lets that pipe's client load them.
            how = ["--enable-unsafe-extension-debugging"]
        args = [
            self.executable,
            f"--user-data-dir={self.profile}",
            *how,
            "--no-first-run",
            "--no-default-browser-check",
            # Without these Chromium floods a closed network with refused connections.
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            # Background tabs keep running, so answers stream while the person works elsewhere.
            "--disable-background-timer-throttling",
            "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows",
        ]
        if opts.headless:
            args += ["--headless=new", "--disable-gpu"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
        if opts.remote_debugging:
            args.append("--remote-debugging-port=0")
        if self._needs_pipe():
            args.append("--remote-debugging-pipe")
        args += list(opts.extra_args)
        args.append(self.start_url)
        return args

    def direct_cdp(self) -> DirectCdp:
        """A direct CDP client of this browser itself (``async with``): over its pipe, or
        its DevTools port; for tests and benchmarks."""
        if self.devtools_pipe is not None:
            return DirectCdp(self.devtools_pipe)
        if self.devtools_url is not None:
            return DirectCdp(self.devtools_url)
        raise BridgeError("this browser was launched without debug_pipe or remote_debugging")

    def _needs_pipe(self) -> bool:
        """The DevTools pipe: asked for (tests), or how the extensions get in."""
        return self.options.debug_pipe or self.extension_loading() == "cdp"

    def _refuse_without_pipe(self) -> None:
        """Where the pipe cannot be passed (Windows), a launch that needs it fails at once:
        a Google Chrome would otherwise start without bridge's extension, and the relay
        would wait for a link that never comes."""
        if debug_pipe_supported():
            return
        if self.extension_loading() == "cdp":
            why = (
                "extension_loading='cdp' loads extensions"
                if self.options.extension_loading == "cdp"
                else f"{self.executable} is Google Chrome, which ignores --load-extension "
                "since version 137; bridge loads extensions into it"
            )
            raise ExtensionLoadingUnavailable(
                f"{why} over the browser's DevTools pipe, which a browser started on Windows "
                "does not get. Launch Chromium or Chrome for Testing instead (drop --channel, "
                "or give its chrome.exe with --browser-path), or use your own Chrome without "
                "--launch, with bridge's extension loaded unpacked (chrome://extensions -> "
                "Developer mode -> Load unpacked -> the folder `bridge extension-path` prints)"
            )
        raise DebugPipeUnavailable(
            "the browser's DevTools pipe (debug_pipe) passes file descriptors 3 and 4, "
            "which a browser started on Windows does not inherit: use "
            "LaunchOptions(remote_debugging=True) and direct_cdp() over its DevTools port"
        )

    async def start(self) -> LaunchedBrowser:
        # Before anything is made (profile, island): nothing to clean up.
        self._refuse_without_pipe()
        args = self.command()
        ends: list[int] = []  # the browser's ends of its DevTools pipe, in this process
        preexec = _die_with_parent
        if self._needs_pipe():
            self.devtools_pipe, ends = _debug_pipe()

            def preexec() -> None:
                _die_with_parent()
                os.dup2(ends[0], 3)
                os.dup2(ends[1], 4)

        self.process = await asyncio.create_subprocess_exec(
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            # The island's paths reach the native host through the browser's environment
            # (readable by this user only, unlike the command line).
            env={
                **os.environ,
                **self.options.env,
                **(self.island.browser_env() if self.options.island else {}),
            },
            **_spawn_options(self._tree_mode, preexec, ends),
        )
        for fd in ends:
            os.close(fd)
        if self.devtools_pipe is not None:
            await self.devtools_pipe.start()
        devtools_seen: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        # Retrieved even when nobody awaits it (no --remote-debugging): no "never retrieved" noise.
        devtools_seen.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._reader = asyncio.ensure_future(self._read_stderr(devtools_seen))
        if self.extension_loading() == "cdp":
            try:
                await self._load_extensions()
            except BaseException:
                await self.stop()
                raise
        if self.options.remote_debugging:
            try:
                async with asyncio.timeout(scaled(30.0)):
                    self.devtools_url = await devtools_seen
            except TimeoutError:
                await self.stop()
                raise BridgeError(
                    "the browser did not open its DevTools port within 30s:\n" + self.stderr_tail()
                ) from None
        return self

    async def _load_extensions(self) -> None:
        """Each extension folder through ``Extensions.loadUnpacked``, bridge's first, right
        after start: its id checked (bridge's must be ``EXTENSION_ID``, the one its relay
        and native host know). A browser that exits closes the pipe, which ends the wait."""
        assert self.devtools_pipe is not None
        async with DirectCdp(self.devtools_pipe) as cdp:
            for index, folder in enumerate(self._extension_dirs):
                what = "bridge's extension" if index == 0 else "--load-extension"
                try:
                    result = await cdp.call(
                        "Extensions.loadUnpacked", {"path": folder}, timeout=scaled(30.0)
                    )
                except CdpError as exc:
                    why = exc.detail.rstrip(".")
                    raise ExtensionLoadFailed(
                        f"{what} {folder}: the browser refused to load it: {why}. "
                        "Fix its manifest.json (chrome://extensions -> Load unpacked shows the "
                        "same error); if the browser does not know Extensions.loadUnpacked, it "
                        "predates Chrome 128: update it, or launch Chromium"
                    ) from None
                except ConnectionError:
                    raise ExtensionLoadFailed(
                        f"{what} {folder}: the browser exited while bridge loaded its "
                        "extensions:\n" + await self._final_stderr()
                    ) from None
                except BridgeTimeout as exc:
                    raise ExtensionLoadFailed(
                        f"{what} {folder}: the browser did not answer Extensions.loadUnpacked "
                        f"within {exc.seconds:.0f}s; launch Chromium (its flags need no "
                        "answer), or look at the browser's output:\n" + self.stderr_tail()
                    ) from None
                loaded = str(result.get("id", ""))
                if index == 0 and loaded != EXTENSION_ID:
                    raise ExtensionLoadFailed(
                        f"{what} {folder} loaded as {loaded or 'no id'}, not {EXTENSION_ID}: "
                        'its manifest.json lacks bridge\'s "key" (the id follows from it), so '
                        "no relay or native host would know it. Launch with the folder "
                        "`bridge extension-path` prints, unchanged"
                    )
                self.extension_ids[Path(folder)] = loaded

    async def _final_stderr(self) -> str:
        """The browser's last words once it has exited: its stderr read to the end (a
        deadline, in case a helper still holds it open), not just what arrived so far."""
        if self._reader is not None:
            with contextlib.suppress(BridgeTimeout, asyncio.CancelledError):
                await wait_for(asyncio.shield(self._reader), scaled(5.0), "the browser's stderr")
        return self.stderr_tail()

    async def _read_stderr(self, devtools_seen: asyncio.Future[str]) -> None:
        assert self.process is not None and self.process.stderr is not None
        pattern = re.compile(r"DevTools listening on (ws://\S+)")
        async for raw in self.process.stderr:
            line = raw.decode(errors="replace").rstrip()
            self._stderr_tail = [*self._stderr_tail[-40:], line]
            m = pattern.search(line)
            if m and not devtools_seen.done():
                devtools_seen.set_result(m.group(1))
        if not devtools_seen.done():
            devtools_seen.set_exception(
                BridgeError("the browser exited during start-up:\n" + self.stderr_tail())
            )

    def stderr_tail(self) -> str:
        return "\n".join(self._stderr_tail[-20:])

    async def stop(self) -> None:
        if self.devtools_pipe is not None:
            await self.devtools_pipe.close()
            self.devtools_pipe = None
        proc, self.process = self.process, None
        if proc is not None and proc.returncode is None:
            # A temporary profile has nothing worth saving: no graceful exit, just stop.
            await stop_process_tree(proc, graceful=self._temp_profile is None, mode=self._tree_mode)
        if self._reader is not None:
            await cancel_and_wait(self._reader, log, "reader")
            self._reader = None
        if self._temp_profile is not None:
            self._temp_profile.cleanup()
            self._temp_profile = None
        if self._island is not None:
            self._island.close()
            self._island = None

    async def __aenter__(self) -> LaunchedBrowser:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
