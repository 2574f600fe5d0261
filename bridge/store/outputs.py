"""The outputs folder: where images and files a site generated are saved (docs/sites.md#outputs).

Everything about a saved output's name comes from the site, and a page is hostile input: a
name may be ``../../.bashrc``, an absolute path, carry NUL or control characters, be
thousands of characters long, be a reserved Windows device (``CON``, ``nul.txt``), or the
folder may hold a symlink planted where the next file would go. So:

- :func:`safe_name` (pure) turns any name into one plain file name: the last path component
  only, control characters, separators and characters Windows forbids replaced, leading dots
  and trailing dots/spaces dropped (no hidden files, no ``..``), reserved device names
  prefixed, at most :data:`MAX_NAME_BYTES` bytes of UTF-8 with the extension kept;
- :func:`numbered` (pure) gives the n-th alternative ``name (n).ext`` when a name is taken:
  an existing file is never overwritten;
- :class:`OutputFolder` writes: the folder is opened once with ``O_NOFOLLOW`` (a symlink in
  its place is refused) and every write goes through that descriptor, a fresh temporary file
  (``O_EXCL | O_NOFOLLOW``, mode 0600) renamed into place with ``link`` (which fails on any
  existing entry, a symlink included, so nothing is written through a link or over a file).

Where the folder is: ``<state dir>/outputs/<ask id>/`` by default, or a folder the person
names (``outputs_dir``), which must not be a protected place (credentials, browser profiles,
bridge's own state: :func:`bridge.policy.files.protected_locations`).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import sys
import time
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bridge.errors import OutputsFolderRefused

__all__ = [
    "MAX_NAME_BYTES",
    "OutputFolder",
    "SavedOutput",
    "new_output_id",
    "numbered",
    "outputs_folder",
    "safe_name",
]

#: Bytes of UTF-8 a saved name may take: below every common file system's 255, leaving room
#: for a " (NN)" suffix and the temporary file's prefix.
MAX_NAME_BYTES = 180
#: Tries at a free name before giving up (each a distinct " (n)").
MAX_TRIES = 1000

_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{i}" for i in range(10)),
    *(f"lpt{i}" for i in range(10)),
    "conin$",
    "conout$",
}
# Separators, NUL and control characters, and what Windows forbids in a name.
_BAD = re.compile(r'[\x00-\x1f\x7f-\x9f/\\:*?"<>|]')


def safe_name(name: str, fallback: str = "output") -> str:
    """One plain file name for ``name`` as a site gave it (pure; see the module docstring).

    Never empty, never ``.``/``..``, never hidden, never a path, never a Windows device name,
    never longer than :data:`MAX_NAME_BYTES` bytes of UTF-8."""
    text = unicodedata.normalize("NFC", name)
    # Only the last component: a site's "sandbox:/mnt/data/x.csv" or "../../x" is named "x…".
    text = re.split(r"[/\\]", text.replace("\x00", "/"))[-1]
    text = _BAD.sub("_", text)
    # Unicode format characters (bidi overrides that make "gpj.exe" read "exe.jpg").
    text = "".join("_" if unicodedata.category(c) == "Cf" else c for c in text)
    text = text.lstrip(". ").rstrip(". ")
    if not text:
        text = safe_name(fallback, "output") if fallback != name else "output"
    if text.split(".")[0].rstrip(" ").lower() in _RESERVED:
        text = "_" + text  # "nul.txt" is the NUL device on Windows; "_nul.txt" is a file
    stem, dot, ext = text.rpartition(".")
    return _shorten(text, stem if dot and stem else text, ext if dot and stem else "")


def _shorten(text: str, stem: str, ext: str) -> str:
    """``text`` cut to :data:`MAX_NAME_BYTES` bytes, keeping a short extension."""
    if len(text.encode("utf-8")) <= MAX_NAME_BYTES:
        return text
    if not ext or len(ext.encode("utf-8")) > 16:
        stem, ext = text, ""
    room = MAX_NAME_BYTES - (len(ext.encode("utf-8")) + 1 if ext else 0)
    cut = stem.encode("utf-8")[:room].decode("utf-8", "ignore").rstrip(". ") or "output"
    return f"{cut}.{ext}" if ext else cut


def numbered(name: str, n: int) -> str:
    """The ``n``-th alternative to a taken ``name``: ``photo (2).png`` (pure); ``n=0`` is
    ``name`` itself."""
    if n == 0:
        return name
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        return f"{name} ({n})"
    return f"{stem} ({n}).{ext}"


def new_output_id() -> str:
    """A folder name for one ask's outputs: when, plus randomness (sortable, unguessable)."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(4)


def outputs_folder(
    state_root: Path,
    ask_id: str,
    named: str | os.PathLike[str] | None,
    *,
    protected: Iterable[Path] = (),
    base: Path | None = None,
) -> Path:
    """Where one ask's outputs go: the ``named`` folder (``~`` expanded, relative to ``base``,
    resolved), or ``<state_root>/outputs/<ask_id>``. A named folder at or inside a protected
    place (``protected``, resolved) is :class:`OutputsFolderRefused`; so is an ``ask_id``
    that is not one plain name."""
    if named is None:
        if safe_name(ask_id) != ask_id:
            raise OutputsFolderRefused(ask_id, "the ask id is not a plain folder name")
        return state_root / "outputs" / ask_id
    given = str(named)
    if not given.strip() or "\x00" in given:
        raise OutputsFolderRefused(given, "it is empty or holds a NUL character")
    folder = Path(os.path.realpath((base or Path.cwd()) / Path(given).expanduser()))
    for place in protected:
        resolved = Path(os.path.realpath(place))
        if folder == resolved or resolved in folder.parents:
            raise OutputsFolderRefused(
                given,
                f"it is in {resolved}, a protected place (credentials, browser profiles, "
                "bridge's own state)",
            )
    return folder


@dataclass(frozen=True)
class SavedOutput:
    """One saved output, as ``Used.outputs`` lists it."""

    kind: str  # "image" or "file"
    name: str  # the saved file's name (safe_name of the site's, maybe numbered)
    path: Path
    bytes: int
    mime: str
    source: str = ""  # where the bytes came from, e.g. the site's file id

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "kind": self.kind,
            "name": self.name,
            "path": str(self.path),
            "bytes": self.bytes,
            "mime": self.mime,
        }
        if self.source:
            out["source"] = self.source
        return out


_DIR_FD = os.open in os.supports_dir_fd and os.link in os.supports_dir_fd
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class OutputFolder:
    """One ask's outputs folder, made (0700) on the first save; see the module docstring."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _open_dir(self) -> int | None:
        """The folder made if missing (0700) and opened without following a link; None where
        the OS has no directory descriptors (Windows: paths are used, checked the same way)."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = os.lstat(self.folder)
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
            raise OutputsFolderRefused(str(self.folder), "it is a symlink or not a folder")
        if not _DIR_FD:
            return None
        try:
            return os.open(self.folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
        except OSError as exc:
            raise OutputsFolderRefused(str(self.folder), f"it cannot be opened: {exc}") from exc

    def save(self, kind: str, name: str, data: bytes, mime: str, source: str = "") -> SavedOutput:
        """Write ``data`` under a safe, free name made from ``name``; never over anything."""
        wanted = safe_name(name)
        fd = self._open_dir()
        try:
            temp = f".bridge-output-{secrets.token_hex(8)}.tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
            handle = (
                os.open(temp, flags, 0o600, dir_fd=fd)
                if fd is not None
                else os.open(self.folder / temp, flags | getattr(os, "O_BINARY", 0), 0o600)
            )
            try:
                with open(handle, "wb", closefd=True) as out:
                    if hasattr(os, "fchmod"):
                        os.fchmod(out.fileno(), 0o600)
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                final = self._place(temp, wanted, fd)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    if fd is not None:
                        os.unlink(temp, dir_fd=fd)
                    else:
                        os.unlink(self.folder / temp)
        finally:
            if fd is not None:
                os.close(fd)
        return SavedOutput(kind, final, self.folder / final, len(data), mime, source)

    def _place(self, temp: str, wanted: str, fd: int | None) -> str:
        """Give the temporary file its name: the first of ``wanted``, ``wanted (1)``… that no
        entry holds (``link`` refuses any existing entry, a symlink included)."""
        for n in range(MAX_TRIES):
            candidate = numbered(wanted, n)
            try:
                if fd is not None:
                    os.link(temp, candidate, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
                elif sys.platform == "win32":
                    os.rename(self.folder / temp, self.folder / candidate)  # never replaces
                else:
                    os.link(self.folder / temp, self.folder / candidate, follow_symlinks=False)
                return candidate
            except FileExistsError:
                continue
        raise OutputsFolderRefused(
            str(self.folder), f"no free name for {wanted!r} after {MAX_TRIES} tries"
        )


def mime_extension(mime: str, mapping: Mapping[str, str] | None = None) -> str:
    """The usual extension for an image type (``image/png`` → ``png``); "" if unknown."""
    table = mapping or {
        "image/png": "png",
        "image/jpeg": "jpg",
        "image/webp": "webp",
        "image/gif": "gif",
    }
    return table.get(mime.split(";")[0].strip().lower(), "")
