"""Register bridge's Chrome native messaging host: ``python -m bridge install-native-host``.

Native messaging lets an extension start a program the user installed and talk to it over its
stdin and stdout. bridge uses it so the extension learns where local relays are by being told
(a push from ``bridge.link.native_host``) instead of probing every port in the relay range, and so
the extension's link to a relay can travel over the native port where plain WebSockets are not
wanted. The browser only starts hosts that a manifest file registers, and the manifest must name
an absolute path to an executable, so this module writes a small wrapper script that runs
``<python> -m bridge.link.native_host`` and a manifest pointing at it (plus, on Windows, the
registry value through which Chrome finds the manifest).

Everything is pure over its inputs (platform, home, environment, registry) so tests can install
into a temporary directory without touching the real profile or registry.
"""

from __future__ import annotations

import argparse
import json
import ntpath
import os
import posixpath
import shlex
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, Protocol

from bridge.store.state import write_atomically
from bridge.wire.extension import EXTENSION_ID

__all__ = [
    "ALLOWED_ORIGIN",
    "BROWSERS",
    "HOST_NAME",
    "InstallResult",
    "RegistryWriter",
    "WindowsRegistry",
    "add_arguments",
    "install",
    "manifest_path",
    "run",
    "uninstall",
    "wrapper_path",
]

HOST_NAME: Final = "com.bridge.host"
# Chrome compares origins including the trailing slash; without it the host is refused.
ALLOWED_ORIGIN: Final = f"chrome-extension://{EXTENSION_ID}/"
BROWSERS: Final = ("chrome", "chromium", "edge", "brave")
DESCRIPTION: Final = (
    "bridge: tells the bridge extension where local relays are (and can carry its link)"
)
MANIFEST_NAME: Final = f"{HOST_NAME}.json"
WRAPPER_NAME: Final = "bridge-native-host"
WINDOWS_WRAPPER_NAME: Final = "bridge-native-host.bat"
MANIFEST_MODE: Final = 0o644
WRAPPER_MODE: Final = 0o755

_LINUX_CONFIG_DIRS: Final[Mapping[str, tuple[str, ...]]] = {
    "chrome": ("google-chrome",),
    "chromium": ("chromium",),
    "edge": ("microsoft-edge",),
    "brave": ("BraveSoftware", "Brave-Browser"),
}
_MAC_SUPPORT_DIRS: Final[Mapping[str, tuple[str, ...]]] = {
    "chrome": ("Google", "Chrome"),
    "chromium": ("Chromium",),
    "edge": ("Microsoft Edge",),
    "brave": ("BraveSoftware", "Brave-Browser"),
}
_WINDOWS_VENDORS: Final[Mapping[str, str]] = {
    "chrome": "Google\\Chrome",
    "chromium": "Chromium",
    "edge": "Microsoft\\Edge",
    "brave": "BraveSoftware\\Brave-Browser",
}
_HKCU: Final = "HKEY_CURRENT_USER"


class RegistryWriter(Protocol):
    """The default values under ``HKEY_CURRENT_USER`` that registration needs.

    A protocol rather than direct ``winreg`` calls so the Windows branch can be tested
    anywhere with a fake; keys are relative to ``HKEY_CURRENT_USER``.
    """

    def read(self, key: str) -> str | None:
        """The key's default value, or None when the key (or value) is absent."""
        ...

    def write(self, key: str, value: str) -> None:
        """Create the key if needed and set its default value."""
        ...

    def delete(self, key: str) -> bool:
        """Remove the key; False when it was not there."""
        ...


class WindowsRegistry:
    """The real registry. ``winreg`` is imported per call: it exists only on Windows."""

    def read(self, key: str) -> str | None:
        if sys.platform != "win32":
            raise OSError("the Windows registry is only reachable on Windows")
        import winreg

        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, key) as handle:
                value, _kind = winreg.QueryValueEx(handle, "")
        except FileNotFoundError:
            return None
        return value if isinstance(value, str) else None

    def write(self, key: str, value: str) -> None:
        if sys.platform != "win32":
            raise OSError("the Windows registry is only reachable on Windows")
        import winreg

        with winreg.CreateKeyEx(winreg.HKEY_CURRENT_USER, key, 0, winreg.KEY_WRITE) as handle:
            winreg.SetValueEx(handle, "", 0, winreg.REG_SZ, value)

    def delete(self, key: str) -> bool:
        if sys.platform != "win32":
            raise OSError("the Windows registry is only reachable on Windows")
        import winreg

        try:
            winreg.DeleteKey(winreg.HKEY_CURRENT_USER, key)
        except FileNotFoundError:
            return False
        return True


@dataclass(frozen=True)
class InstallResult:
    """What ``install`` or ``uninstall`` did, and where."""

    browser: str
    manifest: Path
    wrapper: Path
    registry_key: str | None  # relative to HKEY_CURRENT_USER; Windows only
    changed: bool  # False when everything was already so (a rerun, or nothing to remove)
    action: Literal["install", "uninstall"] = "install"
    # Other browsers whose registration still uses the shared files, so uninstall kept them.
    kept_for: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.action == "install":
            head = (
                f"installed bridge's native messaging host for {self.browser}"
                if self.changed
                else f"bridge's native messaging host for {self.browser} was already installed"
            )
        elif self.changed:
            head = f"removed bridge's native messaging host for {self.browser}"
        else:
            head = f"bridge's native messaging host for {self.browser} was not installed"
        lines = [head, f"  manifest: {self.manifest}", f"  wrapper:  {self.wrapper}"]
        if self.registry_key is not None:
            lines.append(f"  registry: {_HKCU}\\{self.registry_key}")
        if self.kept_for:
            lines.append(
                "  kept the shared files: still registered for " + ", ".join(self.kept_for)
            )
        return "\n".join(lines)


@dataclass(frozen=True)
class _Layout:
    manifest: Path
    wrapper: Path
    registry_key: str | None
    windows: bool


def _check_browser(browser: str) -> None:
    if browser not in BROWSERS:
        raise ValueError(f"unknown browser {browser!r}: choose one of {', '.join(BROWSERS)}")


def _xdg_dir(env: Mapping[str, str], name: str, fallback: Path) -> Path:
    value = env.get(name, "")
    # The XDG spec says relative values are invalid and must be ignored; honouring one would
    # make the location depend on whichever directory the browser happened to start in.
    return Path(value) if value and posixpath.isabs(value) else fallback


def _layout(
    browser: str,
    user_data_dir: Path | None,
    platform: str | None,
    home: Path | None,
    env: Mapping[str, str] | None,
) -> _Layout:
    _check_browser(browser)
    platform = sys.platform if platform is None else platform
    home = (Path.home() if home is None else home).absolute()
    env = os.environ if env is None else env
    windows = platform == "win32"
    if user_data_dir is not None:
        if platform in ("darwin", "win32"):
            system = "macOS" if platform == "darwin" else "Windows"
            raise ValueError(
                f"--user-data-dir is only supported on Linux: on {system} Chrome only reads "
                "native messaging hosts from the default location; install without it"
            )
        # Linux Chromium reads <user-data-dir>/NativeMessagingHosts; keeping the wrapper there
        # too means deleting a throwaway profile removes every trace of the install.
        hosts = user_data_dir.absolute() / "NativeMessagingHosts"
        return _Layout(hosts / MANIFEST_NAME, hosts / WRAPPER_NAME, None, windows=False)
    if windows:
        local = env.get("LOCALAPPDATA", "")
        base = Path(local) if local else home / "AppData" / "Local"
        data = base / "bridge"
        key = f"Software\\{_WINDOWS_VENDORS[browser]}\\NativeMessagingHosts\\{HOST_NAME}"
        return _Layout(data / MANIFEST_NAME, data / WINDOWS_WRAPPER_NAME, key, windows=True)
    if platform == "darwin":
        support = home / "Library" / "Application Support"
        hosts = support.joinpath(*_MAC_SUPPORT_DIRS[browser], "NativeMessagingHosts")
        return _Layout(hosts / MANIFEST_NAME, support / "bridge" / WRAPPER_NAME, None, False)
    config = _xdg_dir(env, "XDG_CONFIG_HOME", home / ".config")
    data_home = _xdg_dir(env, "XDG_DATA_HOME", home / ".local" / "share")
    hosts = config.joinpath(*_LINUX_CONFIG_DIRS[browser], "NativeMessagingHosts")
    return _Layout(hosts / MANIFEST_NAME, data_home / "bridge" / WRAPPER_NAME, None, False)


def manifest_path(
    browser: str,
    user_data_dir: Path | None = None,
    *,
    platform: str | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """Where the manifest for ``browser`` goes (on Windows: the file the registry names)."""
    return _layout(browser, user_data_dir, platform, home, env).manifest


def wrapper_path(
    browser: str,
    user_data_dir: Path | None = None,
    *,
    platform: str | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """Where the wrapper script the manifest points at goes."""
    return _layout(browser, user_data_dir, platform, home, env).wrapper


def _manifest_bytes(wrapper: Path) -> bytes:
    manifest = {
        "name": HOST_NAME,
        "description": DESCRIPTION,
        "path": str(wrapper),
        "type": "stdio",
        "allowed_origins": [ALLOWED_ORIGIN],
    }
    return (json.dumps(manifest, indent=2) + "\n").encode("utf-8")


def _wrapper_bytes(python: str, windows: bool) -> bytes:
    if windows:
        if '"' in python:
            raise ValueError(f"a Windows path cannot contain a double quote: {python!r}")
        # In a batch file % starts a variable even inside quotes; %% is a literal one.
        quoted = '"' + python.replace("%", "%%") + '"'
        return f"@echo off\r\n{quoted} -m bridge.link.native_host %*\r\n".encode()
    return (
        "#!/bin/sh\n"
        "# Written by python -m bridge install-native-host: "
        "Chrome starts this to run bridge's native host.\n"
        f'exec {shlex.quote(python)} -m bridge.link.native_host "$@"\n'
    ).encode()


def _put(path: Path, data: bytes, mode: int) -> bool:
    """Make ``path`` hold exactly ``data`` with ``mode``; False when it already did."""
    try:
        same = path.read_bytes() == data
        # Windows keeps no POSIX permission bits worth comparing.
        same = same and (os.name == "nt" or stat.S_IMODE(path.stat().st_mode) == mode)
    except FileNotFoundError:
        same = False
    if same:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    # Whole or not at all: the browser may start the host at any moment and must never see a
    # half-written manifest or wrapper. The mode is set explicitly: the browser may run as a
    # sandboxed user.
    write_atomically(path, data, mode=mode)
    return True


def _remove(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def install(
    browser: str = "chrome",
    user_data_dir: Path | None = None,
    *,
    python: str | None = None,
    platform: str | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    registry: RegistryWriter | None = None,
) -> InstallResult:
    """Write the wrapper, the manifest and (on Windows) the registry value; idempotent."""
    layout = _layout(browser, user_data_dir, platform, home, env)
    python = sys.executable if python is None else python
    # Chrome starts the host with its own working directory and PATH, so only an absolute
    # interpreter path reliably finds the same Python (and virtualenv) as this one.
    if not python or not (ntpath.isabs(python) if layout.windows else posixpath.isabs(python)):
        raise ValueError(f"the Python interpreter must be an absolute path, not {python!r}")
    wrapper_mode = MANIFEST_MODE if layout.windows else WRAPPER_MODE
    # The wrapper before the manifest and the manifest before the registry: at no point does
    # a registration name a file that is not there yet.
    changed = _put(layout.wrapper, _wrapper_bytes(python, layout.windows), wrapper_mode)
    changed = _put(layout.manifest, _manifest_bytes(layout.wrapper), MANIFEST_MODE) or changed
    if layout.registry_key is not None:
        registry = WindowsRegistry() if registry is None else registry
        if registry.read(layout.registry_key) != str(layout.manifest):
            registry.write(layout.registry_key, str(layout.manifest))
            changed = True
    return InstallResult(
        browser, layout.manifest, layout.wrapper, layout.registry_key, changed, "install"
    )


def _still_used_by(
    layout: _Layout,
    browser: str,
    platform: str | None,
    home: Path | None,
    env: Mapping[str, str] | None,
    registry: RegistryWriter | None,
) -> tuple[str, ...]:
    """Other browsers registered through the same wrapper (or, on Windows, manifest)."""
    users = []
    for other in BROWSERS:
        if other == browser:
            continue
        theirs = _layout(other, None, platform, home, env)
        if theirs.registry_key is not None:
            assert registry is not None
            if registry.read(theirs.registry_key) == str(layout.manifest):
                users.append(other)
            continue
        try:
            named = json.loads(theirs.manifest.read_text(encoding="utf-8")).get("path")
        except (OSError, ValueError, AttributeError):
            continue
        if named == str(layout.wrapper):
            users.append(other)
    return tuple(users)


def uninstall(
    browser: str = "chrome",
    user_data_dir: Path | None = None,
    *,
    platform: str | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    registry: RegistryWriter | None = None,
) -> InstallResult:
    """Remove this browser's registration; the files other browsers share stay if still used.

    Directories are left alone: they may hold other hosts or the user's own files.
    """
    layout = _layout(browser, user_data_dir, platform, home, env)
    changed = False
    if layout.registry_key is not None:
        registry = WindowsRegistry() if registry is None else registry
        # Registration first, files after: the browser never follows a key to a missing file.
        changed = registry.delete(layout.registry_key)
    # Without a user data dir the wrapper (and on Windows the manifest too) is one file for all
    # browsers; removing it under another browser's registration would break that one.
    kept_for = (
        ()
        if user_data_dir is not None
        else _still_used_by(layout, browser, platform, home, env, registry)
    )
    if not layout.windows or not kept_for:
        changed = _remove(layout.manifest) or changed
    if not kept_for:
        changed = _remove(layout.wrapper) or changed
    return InstallResult(
        browser,
        layout.manifest,
        layout.wrapper,
        layout.registry_key,
        changed,
        "uninstall",
        kept_for,
    )


def registered_anywhere() -> bool:
    """Is bridge's native host registered for any browser of this user?"""
    for browser in BROWSERS:
        try:
            if manifest_path(browser).exists():
                return True
        except ValueError:
            continue
    return False


SETUP_HINT: Final = (
    "your own Chrome's bridge extension serves this relay only once it holds your secret: "
    "run `bridge install-native-host` once (then reload the extension), or `bridge pair` "
    "and type its code into the extension's popup"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``install-native-host`` command's options."""
    parser.add_argument(
        "--browser",
        choices=BROWSERS,
        default="chrome",
        help="which browser to register the host with (default: chrome)",
    )
    parser.add_argument(
        "--user-data-dir",
        type=Path,
        metavar="DIR",
        default=None,
        help="register in this profile directory instead of the default one (Linux only)",
    )
    parser.add_argument(
        "--uninstall",
        action="store_true",
        help="remove the registration instead of writing it",
    )


def run(
    args: argparse.Namespace,
    *,
    platform: str | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    registry: RegistryWriter | None = None,
) -> int:
    """Install or uninstall as ``args`` say; print what was done. The keywords are for tests."""
    try:
        if args.uninstall:
            result = uninstall(
                args.browser,
                args.user_data_dir,
                platform=platform,
                home=home,
                env=env,
                registry=registry,
            )
        else:
            result = install(
                args.browser,
                args.user_data_dir,
                platform=platform,
                home=home,
                env=env,
                registry=registry,
            )
    except ValueError as exc:
        print(f"install-native-host: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"install-native-host: {exc}", file=sys.stderr)
        return 1
    print(result.describe())
    return 0
