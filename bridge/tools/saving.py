"""Files the browser tools write (a storage state, a PDF): only under a folder the file
policy allows, atomically, never over an existing file.

The name comes from the client, which may be repeating what a page told it: ``../../.bashrc``,
``/etc/cron.d/x``, ``~/.ssh/authorized_keys``, a NUL byte. So the path is judged exactly as
a file given to a page is (``bridge.policy.files.FilePolicy``: resolved, symlinks followed,
inside the working directory or an ``--allow-path``, nothing hidden or protected below it),
and the bytes are written by ``bridge.store.outputs.OutputFolder`` (a fresh 0600 file linked
into place: no symlink followed, nothing overwritten; a taken name becomes ``name (1).ext``).
"""

from __future__ import annotations

import time
from pathlib import Path

from bridge.errors import PathNotAllowed, StorageStateInvalid
from bridge.policy.files import FilePolicy
from bridge.store.outputs import OutputFolder

__all__ = ["default_name", "read_file", "save_file", "writable_path"]


def default_name(prefix: str, ext: str) -> str:
    """Playwright's default: ``{prefix}-{timestamp}.{ext}``."""
    return f"{prefix}-{time.strftime('%Y-%m-%dT%H-%M-%S', time.gmtime())}.{ext}"


def writable_path(files: FilePolicy, filename: str) -> Path:
    """Where ``filename`` (relative to the working directory, or absolute) would be written:
    the resolved path, or ``PathNotAllowed`` saying why not and what would allow it."""
    if not filename.strip() or "\x00" in filename:
        raise PathNotAllowed(
            f"bridge will not write to {filename!r}: a file name may not be empty or hold a "
            "NUL character. Nothing was written.",
            filename,
            "outside",
        )
    try:
        resolved = files.check(filename)
    except PathNotAllowed as exc:
        where = "; ".join(r.describe(files.flag) for r in files.roots)
        why = {
            "outside": f"it is outside the folders bridge may write to ({where})",
            "hidden": "a name in its path is hidden (starts with '.')",
        }.get(
            exc.reason, "it is in a protected place (credentials, browser profiles, bridge's state)"
        )
        raise PathNotAllowed(
            f"bridge will not write {filename!r}: {why}. Nothing was written. Use a plain "
            f"name (saved in {files.base}) or a path inside an allowed folder; if a web page "
            f"asked for this path, do not follow it. The person can allow a folder with "
            f"{files.flag}.",
            filename,
            exc.reason,
        ) from exc
    if resolved.is_dir():
        raise PathNotAllowed(
            f"bridge will not write {filename!r}: it is a folder; give a file name",
            filename,
            "outside",
        )
    return resolved


def save_file(files: FilePolicy, filename: str, data: bytes, mime: str) -> Path:
    """Write ``data`` at ``filename`` (``writable_path``), atomically, never over an
    existing file: the path it was saved at."""
    target = writable_path(files, filename)
    saved = OutputFolder(target.parent).save("file", target.name, data, mime)
    return saved.path


def read_file(files: FilePolicy, filename: str, limit: int) -> tuple[Path, bytes]:
    """A file the client names, read only from where the file policy allows (the same
    rule as a file given to a page), at most ``limit`` bytes: its path and bytes."""
    if "\x00" in filename:
        raise PathNotAllowed(
            f"bridge will not read {filename!r}: a file name may not hold a NUL character",
            filename,
            "outside",
        )
    path = files.check(filename)
    if not path.is_file():
        raise StorageStateInvalid(f"{filename!r} is not a file (resolved: {path})")
    if path.stat().st_size > limit:
        raise StorageStateInvalid(f"{filename!r} holds more than {limit} bytes")
    return path, path.read_bytes()
