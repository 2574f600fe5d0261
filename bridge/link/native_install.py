"""Register bridge's Chrome native messaging host: ``python -m bridge install-native-host``.

Native messaging lets an extension start a program the user installed and talk to it over its
stdin and stdout. bridge uses it so the extension learns where local relays are by being told
(a push from ``bridge.link.native_host``) instead of probing every port in the relay range, and so
the extension's link to a relay can travel over the native port where plain WebSockets are not
wanted. The browser only starts hosts that a manifest file registers, and the manifest must name
an absolute path to an executable, so this module writes a small wrapper script that runs
``<python> -m bridge.link.native_host`` and a manifest pointing at it (plus, on Windows, the
registry value through which Chrome finds the manifest).

With ``--claude-extension`` the same is done for the official Claude extension's host name
(``bridge.wire.claude``): its wrapper runs ``bridge.link.claude_host``. Claude's own desktop
tools register that very name, so bridge's manifest replaces theirs. What it replaces is kept
first, byte for byte with its mode (and on Windows the registry value, or its absence), in
``claude-host-replaced.json`` beside bridge's wrapper, and ``--uninstall`` puts it back; a
manifest someone else wrote meanwhile is left alone.

Everything is pure over its inputs (platform, home, environment, registry) so tests can install
into a temporary directory without touching the real profile or registry.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import ntpath
import os
import posixpath
import shlex
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal, Protocol

from bridge.store.state import write_atomically
from bridge.wire.claude import CLAUDE_ALLOWED_ORIGIN, CLAUDE_HOST_NAME
from bridge.wire.extension import EXTENSION_ID

__all__ = [
    "ALLOWED_ORIGIN",
    "BRIDGE_HOST",
    "BROWSERS",
    "CLAUDE_HOST",
    "HOST_NAME",
    "REPLACED_RECORD",
    "HostKind",
    "InstallResult",
    "RegistryWriter",
    "WindowsRegistry",
    "add_arguments",
    "install",
    "manifest_path",
    "registered_manifest",
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
#: Beside bridge's wrapper: what installing bridge as the Claude extension's host replaced.
REPLACED_RECORD: Final = "claude-host-replaced.json"
RECORD_MODE: Final = 0o600


@dataclass(frozen=True)
class HostKind:
    """One native host bridge registers: what the browser is told, and what the wrapper runs.

    Both kinds share the layouts (which directory, which registry key): only these differ.
    """

    name: str
    description: str
    wrapper: str
    windows_wrapper: str
    module: str
    origin: str  # the one extension allowed to start it: pinned, never a wildcard
    label: str  # how ``InstallResult.describe`` names it
    # Another program registers the same name (Claude's desktop tools do): what bridge
    # replaces is kept to be put back, and a manifest not bridge's is never removed.
    keeps_replaced: bool
    flag: str  # the option that selects it, for the commands printed to the person

    @property
    def manifest_name(self) -> str:
        return f"{self.name}.json"


BRIDGE_HOST: Final = HostKind(
    name=HOST_NAME,
    description=DESCRIPTION,
    wrapper=WRAPPER_NAME,
    windows_wrapper=WINDOWS_WRAPPER_NAME,
    module="bridge.link.native_host",
    origin=ALLOWED_ORIGIN,
    label="bridge's native messaging host",
    keeps_replaced=False,
    flag="",
)
CLAUDE_HOST: Final = HostKind(
    name=CLAUDE_HOST_NAME,
    description="bridge: the Claude extension's native host, run by bridge",
    wrapper="bridge-claude-host",
    windows_wrapper="bridge-claude-host.bat",
    module="bridge.link.claude_host",
    origin=CLAUDE_ALLOWED_ORIGIN,
    label="bridge's native host for the Claude extension",
    keeps_replaced=True,
    flag="--claude-extension",
)

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
    kind: HostKind = BRIDGE_HOST
    # What was kept, put back or left alone (only for a kind that keeps what it replaces).
    notes: tuple[str, ...] = ()

    def describe(self) -> str:
        label = self.kind.label
        if self.action == "install":
            head = (
                f"installed {label} for {self.browser}"
                if self.changed
                else f"{label} for {self.browser} was already installed"
            )
        elif self.changed:
            head = f"removed {label} for {self.browser}"
        else:
            head = f"{label} for {self.browser} was not installed"
        lines = [head, f"  manifest: {self.manifest}", f"  wrapper:  {self.wrapper}"]
        if self.registry_key is not None:
            lines.append(f"  registry: {_HKCU}\\{self.registry_key}")
        if self.kept_for:
            lines.append(
                "  kept the shared files: still registered for " + ", ".join(self.kept_for)
            )
        lines.extend(f"  {note}" for note in self.notes)
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
    kind: HostKind = BRIDGE_HOST,
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
        return _Layout(hosts / kind.manifest_name, hosts / kind.wrapper, None, windows=False)
    if windows:
        local = env.get("LOCALAPPDATA", "")
        base = Path(local) if local else home / "AppData" / "Local"
        data = base / "bridge"
        key = f"Software\\{_WINDOWS_VENDORS[browser]}\\NativeMessagingHosts\\{kind.name}"
        return _Layout(data / kind.manifest_name, data / kind.windows_wrapper, key, windows=True)
    if platform == "darwin":
        support = home / "Library" / "Application Support"
        hosts = support.joinpath(*_MAC_SUPPORT_DIRS[browser], "NativeMessagingHosts")
        return _Layout(hosts / kind.manifest_name, support / "bridge" / kind.wrapper, None, False)
    config = _xdg_dir(env, "XDG_CONFIG_HOME", home / ".config")
    data_home = _xdg_dir(env, "XDG_DATA_HOME", home / ".local" / "share")
    hosts = config.joinpath(*_LINUX_CONFIG_DIRS[browser], "NativeMessagingHosts")
    return _Layout(hosts / kind.manifest_name, data_home / "bridge" / kind.wrapper, None, False)


def manifest_path(
    browser: str,
    user_data_dir: Path | None = None,
    *,
    platform: str | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    kind: HostKind = BRIDGE_HOST,
) -> Path:
    """Where the manifest for ``browser`` goes (on Windows: the file the registry names)."""
    return _layout(browser, user_data_dir, platform, home, env, kind).manifest


def wrapper_path(
    browser: str,
    user_data_dir: Path | None = None,
    *,
    platform: str | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    kind: HostKind = BRIDGE_HOST,
) -> Path:
    """Where the wrapper script the manifest points at goes."""
    return _layout(browser, user_data_dir, platform, home, env, kind).wrapper


def _manifest_bytes(wrapper: Path, kind: HostKind = BRIDGE_HOST) -> bytes:
    manifest = {
        "name": kind.name,
        "description": kind.description,
        "path": str(wrapper),
        "type": "stdio",
        "allowed_origins": [kind.origin],
    }
    return (json.dumps(manifest, indent=2) + "\n").encode("utf-8")


def _wrapper_bytes(python: str, windows: bool, kind: HostKind = BRIDGE_HOST) -> bytes:
    if windows:
        if '"' in python:
            raise ValueError(f"a Windows path cannot contain a double quote: {python!r}")
        # In a batch file % starts a variable even inside quotes; %% is a literal one.
        quoted = '"' + python.replace("%", "%%") + '"'
        # %* passes on what the browser passes: the caller's origin first.
        return f"@echo off\r\n{quoted} -m {kind.module} %*\r\n".encode()
    flag = f" {kind.flag}" if kind.flag else ""
    purpose = "bridge's native host" if kind is BRIDGE_HOST else kind.label
    return (
        "#!/bin/sh\n"
        f"# Written by python -m bridge install-native-host{flag}: "
        f"Chrome starts this to run {purpose}.\n"
        f'exec {shlex.quote(python)} -m {kind.module} "$@"\n'
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


def _absolute_python(python: str | None, windows: bool) -> str:
    python = sys.executable if python is None else python
    # Chrome starts the host with its own working directory and PATH, so only an absolute
    # interpreter path reliably finds the same Python (and virtualenv) as this one.
    if not python or not (ntpath.isabs(python) if windows else posixpath.isabs(python)):
        raise ValueError(f"the Python interpreter must be an absolute path, not {python!r}")
    return python


def install(
    browser: str = "chrome",
    user_data_dir: Path | None = None,
    *,
    python: str | None = None,
    platform: str | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    registry: RegistryWriter | None = None,
    kind: HostKind = BRIDGE_HOST,
) -> InstallResult:
    """Write the wrapper, the manifest and (on Windows) the registry value; idempotent.

    For a kind that keeps what it replaces (the Claude extension's host), a registration of
    that name that is not bridge's is first kept in the record beside the wrapper."""
    layout = _layout(browser, user_data_dir, platform, home, env, kind)
    python = _absolute_python(python, layout.windows)
    if layout.registry_key is not None:
        registry = WindowsRegistry() if registry is None else registry
    manifest = _manifest_bytes(layout.wrapper, kind)
    notes: tuple[str, ...] = ()
    if kind.keeps_replaced:
        _refuse_a_link(layout.manifest)
        # Kept before anything is written: whatever fails after this, theirs is not lost.
        undo = _undo_command(kind, browser, user_data_dir)
        notes = _keep_replaced(layout, manifest, registry, undo)
    wrapper_mode = MANIFEST_MODE if layout.windows else WRAPPER_MODE
    # The wrapper before the manifest and the manifest before the registry: at no point does
    # a registration name a file that is not there yet.
    changed = _put(layout.wrapper, _wrapper_bytes(python, layout.windows, kind), wrapper_mode)
    changed = _put(layout.manifest, manifest, MANIFEST_MODE) or changed
    if layout.registry_key is not None:
        assert registry is not None
        if registry.read(layout.registry_key) != str(layout.manifest):
            registry.write(layout.registry_key, str(layout.manifest))
            changed = True
    return InstallResult(
        browser,
        layout.manifest,
        layout.wrapper,
        layout.registry_key,
        changed,
        "install",
        kind=kind,
        notes=notes,
    )


def _still_used_by(
    layout: _Layout,
    browser: str,
    platform: str | None,
    home: Path | None,
    env: Mapping[str, str] | None,
    registry: RegistryWriter | None,
    kind: HostKind = BRIDGE_HOST,
) -> tuple[str, ...]:
    """Other browsers registered through the same wrapper (or, on Windows, manifest)."""
    users = []
    for other in BROWSERS:
        if other == browser:
            continue
        theirs = _layout(other, None, platform, home, env, kind)
        if theirs.registry_key is not None:
            assert registry is not None
            if registry.read(theirs.registry_key) == str(layout.manifest):
                users.append(other)
            continue
        try:
            named = _host_program(_read_manifest(theirs.manifest))
        except OSError:
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
    kind: HostKind = BRIDGE_HOST,
) -> InstallResult:
    """Remove this browser's registration; the files other browsers share stay if still used.

    For a kind that keeps what it replaces, what install kept is put back instead, and a
    registration that is no longer bridge's is left alone. Directories are left alone: they
    may hold other hosts or the user's own files.
    """
    layout = _layout(browser, user_data_dir, platform, home, env, kind)
    if layout.registry_key is not None:
        registry = WindowsRegistry() if registry is None else registry
    if kind.keeps_replaced:
        return _uninstall_restoring(
            layout, browser, user_data_dir, platform, home, env, registry, kind
        )
    changed = False
    if layout.registry_key is not None:
        assert registry is not None
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


# What installing over another program's registration keeps, and how uninstall puts it back.
# The record lives beside bridge's wrapper (for that layout), where the person finds it and
# where it survives as long as bridge's registration does: one entry per manifest path (the
# old bytes, base64, and mode) and, on Windows, one per registry key (the old default value,
# or null when there was none).


@dataclass(frozen=True)
class _KeptFile:
    data: bytes
    mode: int
    saved_at: str


@dataclass(frozen=True)
class _KeptValue:
    value: str | None  # None: the key was not there
    saved_at: str


@dataclass
class _Record:
    path: Path
    files: dict[str, _KeptFile]
    values: dict[str, _KeptValue]


def _record_path(layout: _Layout) -> Path:
    return layout.wrapper.parent / REPLACED_RECORD


def _unreadable_record(path: Path, why: object) -> ValueError:
    return ValueError(
        f"{path} is not a record bridge can read ({why}); it may hold the host bridge replaced, "
        "to put back by hand: move it aside, then run again"
    )


def _read_record(path: Path) -> _Record:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return _Record(path, {}, {})
    except UnicodeDecodeError as exc:
        raise _unreadable_record(path, exc) from exc
    try:
        raw = json.loads(text)
        files = {
            str(name): _KeptFile(
                base64.b64decode(entry["bytes_base64"], validate=True),
                int(entry["mode"], 8),
                str(entry["saved_at"]),
            )
            for name, entry in raw["manifests"].items()
        }
        values = {}
        for key, entry in raw["registry"].items():
            value = entry["value"]
            if value is not None and not isinstance(value, str):
                raise TypeError(f"the value of {key} is neither a string nor null")
            values[str(key)] = _KeptValue(value, str(entry["saved_at"]))
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error) as exc:
        raise _unreadable_record(path, exc) from exc
    return _Record(path, files, values)


def _write_record(record: _Record) -> None:
    """Whole or not at all, the person's alone (0600); no record once nothing is kept."""
    if not record.files and not record.values:
        _remove(record.path)
        return
    document = {
        "about": (
            "what `bridge install-native-host --claude-extension` replaced; "
            "`bridge install-native-host --claude-extension --uninstall` puts it back"
        ),
        "manifests": {
            name: {
                "manifest": name,
                "bytes_base64": base64.b64encode(kept.data).decode("ascii"),
                "mode": f"{kept.mode:04o}",
                "saved_at": kept.saved_at,
            }
            for name, kept in record.files.items()
        },
        "registry": {
            key: {"key": f"{_HKCU}\\{key}", "value": kept.value, "saved_at": kept.saved_at}
            for key, kept in record.values.items()
        },
    }
    record.path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(record.path, json.dumps(document, indent=2) + "\n", mode=RECORD_MODE)


def _read_manifest(path: Path) -> tuple[bytes, int] | None:
    """The file's bytes and permission bits, or None when it is not there."""
    try:
        return path.read_bytes(), stat.S_IMODE(path.stat().st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _host_program(found: tuple[bytes, int] | bytes | None) -> str | None:
    """The ``path`` a manifest names, or None when it names none (or is not one)."""
    data = found[0] if isinstance(found, tuple) else found
    if data is None:
        return None
    try:
        named = json.loads(data).get("path")
    except (ValueError, AttributeError):
        return None
    return named if isinstance(named, str) else None


def _is_ours(data: bytes, layout: _Layout, ours: bytes) -> bool:
    """Bridge's manifest: exactly what bridge writes, or one naming bridge's wrapper (an
    earlier bridge's wording): keeping that would put back a host that is gone."""
    return data == ours or _host_program(data) == str(layout.wrapper)


def _refuse_a_link(path: Path) -> None:
    if path.is_symlink():
        try:
            target = f" (to {os.readlink(path)})"
        except OSError:
            target = ""
        raise ValueError(
            f"{path} is a symbolic link{target}: bridge neither writes through one nor over "
            "one it could not put back exactly; put the file itself there (or remove the "
            "link if nothing needs it), then run again"
        )


def _undo_command(kind: HostKind, browser: str, user_data_dir: Path | None) -> str:
    parts = ["bridge", "install-native-host", kind.flag]
    if browser != "chrome":
        parts += ["--browser", browser]
    if user_data_dir is not None:
        parts += ["--user-data-dir", shlex.quote(str(user_data_dir))]
    return " ".join([*parts, "--uninstall"])


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _keep_replaced(
    layout: _Layout, ours: bytes, registry: RegistryWriter | None, undo: str
) -> tuple[str, ...]:
    """Keep what installing would replace in the record, unless it is bridge's own.

    An entry already kept stays as it is while bridge's registration is in place (a rerun
    changes nothing); a newer registration of theirs found later replaces it, since that is
    the one the person had last. Absence never replaces a kept entry."""
    record = _read_record(_record_path(layout))
    changed = False
    found = _read_manifest(layout.manifest)
    name = str(layout.manifest)
    if found is not None and not _is_ours(found[0], layout, ours):
        kept = record.files.get(name)
        if kept is None or (kept.data, kept.mode) != found:
            record.files[name] = _KeptFile(found[0], found[1], _now())
            changed = True
    if layout.registry_key is not None:
        assert registry is not None
        key = layout.registry_key
        value = registry.read(key)
        kept_value = record.values.get(key)
        if value != name and (
            kept_value is None or (value is not None and kept_value.value != value)
        ):
            record.values[key] = _KeptValue(value, _now())
            changed = True
    if changed:
        _write_record(record)
    previous = _kept_hosts(layout, record)
    if not previous:
        return ()
    return (
        f"kept the previous host ({'; '.join(previous)}) in {record.path}; `{undo}` puts it back",
    )


def _kept_hosts(layout: _Layout, record: _Record) -> list[str]:
    """What the kept registrations pointed at, for the person to recognise."""
    previous = []
    kept = record.files.get(str(layout.manifest))
    if kept is not None:
        previous.append(
            _host_program(kept.data) or f"a manifest naming no program, {kept.mode:04o}"
        )
    value = record.values.get(layout.registry_key) if layout.registry_key else None
    if value is not None and value.value is not None:
        try:  # the manifest the old value names (not bridge's to touch), for its program
            program = _host_program(_read_manifest(Path(value.value)))
        except OSError:
            program = None
        previous.append(f"{program}, from {value.value}" if program else value.value)
    return previous


def _uninstall_restoring(
    layout: _Layout,
    browser: str,
    user_data_dir: Path | None,
    platform: str | None,
    home: Path | None,
    env: Mapping[str, str] | None,
    registry: RegistryWriter | None,
    kind: HostKind,
) -> InstallResult:
    """Put back what install kept; leave alone whatever is no longer bridge's."""
    record = _read_record(_record_path(layout))
    before = (dict(record.files), dict(record.values))
    changed = False
    notes: list[str] = []
    if layout.registry_key is not None:
        assert registry is not None
        # Registration first, files after: the browser never follows a key to a missing file.
        changed, note = _restore_value(layout, layout.registry_key, record, registry)
        notes += note
    kept_for = (
        ()
        if user_data_dir is not None
        else _still_used_by(layout, browser, platform, home, env, registry, kind)
    )
    # On Windows the manifest is one file for every browser's key: it stays while one names it.
    if not (layout.windows and kept_for):
        restored, note = _restore_manifest(layout, record, _manifest_bytes(layout.wrapper, kind))
        changed = restored or changed
        notes += note
    if not kept_for:
        changed = _remove(layout.wrapper) or changed
    # The record last: should anything above fail, a rerun still knows what to put back.
    if (record.files, record.values) != before:
        _write_record(record)
    return InstallResult(
        browser,
        layout.manifest,
        layout.wrapper,
        layout.registry_key,
        changed,
        "uninstall",
        kept_for,
        kind=kind,
        notes=tuple(notes),
    )


def _restore_value(
    layout: _Layout, key: str, record: _Record, registry: RegistryWriter
) -> tuple[bool, list[str]]:
    """The key's default value as it was before bridge's (or no key, if there was none)."""
    value = registry.read(key)
    kept = record.values.get(key)
    old = None if kept is None else kept.value
    where = f"{_HKCU}\\{key}"
    if value is not None and value != str(layout.manifest):
        if value == old:
            record.values.pop(key)  # theirs is back already: nothing left to put back
            return False, [f"{where} names {value} again (not bridge's): left it alone"]
        stays = f"; what bridge replaced stays in {record.path}" if old is not None else ""
        return False, [f"{where} names {value} now, not bridge's manifest: left it alone{stays}"]
    # Bridge's value, or none at all (bridge's key removed by hand): theirs goes back.
    record.values.pop(key, None)
    if old is not None:
        registry.write(key, old)
        return True, [f"put back {where}: {old}"]
    return (registry.delete(key) if value is not None else False), []


def _restore_manifest(layout: _Layout, record: _Record, ours: bytes) -> tuple[bool, list[str]]:
    """The manifest as it was before bridge's: the kept bytes and mode, or no file."""
    path = layout.manifest
    kept = record.files.get(str(path))
    stays = f"; what bridge replaced stays in {record.path}" if kept is not None else ""
    if path.is_symlink():
        return False, [f"{path} is a symbolic link, not bridge's manifest: left it alone{stays}"]
    found = _read_manifest(path)
    if found is not None and not _is_ours(found[0], layout, ours):
        program = _host_program(found) or "no program"
        if kept is not None and (kept.data, kept.mode) == found:
            record.files.pop(str(path))  # theirs is back already, exactly
            return False, [f"{path} is the previous host's again ({program}): left it alone"]
        return False, [f"{path} is no longer bridge's (it names {program}): left it alone{stays}"]
    if kept is None:
        return _remove(path), []
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, kept.data, mode=kept.mode)
    del record.files[str(path)]
    program = _host_program(kept.data) or "a manifest naming no program"
    return True, [f"put back the previous host ({program}) at {path}"]


def registered_manifest(
    browser: str,
    kind: HostKind = BRIDGE_HOST,
    *,
    platform: str | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    registry: RegistryWriter | None = None,
) -> Path | None:
    """The manifest the browser reads for ``kind``'s name, whoever wrote it; None if none.

    On Windows it is whatever file the registry names, which for another program's host is
    not bridge's manifest path."""
    layout = _layout(browser, None, platform, home, env, kind)
    if layout.registry_key is not None:
        registry = WindowsRegistry() if registry is None else registry
        value = registry.read(layout.registry_key)
        return None if value is None else Path(value)
    path = layout.manifest
    return path if path.exists() or path.is_symlink() else None


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
    parser.add_argument(
        "--claude-extension",
        action="store_true",
        help="be the native host of the official Claude extension instead (the name Claude's "
        "own desktop tools register: theirs is kept, and --uninstall puts it back)",
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
    kind = CLAUDE_HOST if getattr(args, "claude_extension", False) else BRIDGE_HOST
    try:
        if args.uninstall:
            result = uninstall(
                args.browser,
                args.user_data_dir,
                platform=platform,
                home=home,
                env=env,
                registry=registry,
                kind=kind,
            )
        else:
            result = install(
                args.browser,
                args.user_data_dir,
                platform=platform,
                home=home,
                env=env,
                registry=registry,
                kind=kind,
            )
    except ValueError as exc:
        print(f"install-native-host: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"install-native-host: {exc}", file=sys.stderr)
        return 1
    print(result.describe())
    return 0
