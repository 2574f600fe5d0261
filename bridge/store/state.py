"""Persistent state under the state directory (:func:`default_state_dir`).

- ``sessions.json``: per session key and provider, the conversation url, tab id, last use;
- ``history.jsonl``: one line per ask, appended;
- ``debug/``: dumps of suspicious answers and anomalies.

Nothing is lost when two processes write at once: every read-modify-write of
``sessions.json`` holds an exclusive lock on a lock file (bridge.store.locks: ``flock``,
``LockFileEx`` on Windows) and replaces the file
atomically (write a temporary file, fsync, rename); a history line is written with one
``write`` on an ``O_APPEND`` descriptor under the same lock.

The lock waits for another process and ``fsync`` waits for the disk, so async code calls
the ``*_async`` variants, which do the same work on a worker thread: a slow disk or a busy
neighbour never stalls the event loop that carries every CDP round trip.

State is a record, never a condition of an answer: a state directory that is read-only,
full or unreadable costs the record, not the ask. Reading a session that cannot be read is
"no saved session"; writers raise ``OSError``, and their callers (the ask flow, the facade)
hand it to ``report_fault``, which says so once per store (one warning, and one note for
the next result), not on every ask. A failed write leaves the files as they were: no
partial ``sessions.json`` (atomic replace), no torn history line (cut back), no temporary
file behind. State files are opened, written and read through ``_open``, ``_write`` and
``_read_text``: the seam tests inject disk faults through.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import stat
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bridge.errors import StateDirUnsafe
from bridge.folders import default_folder, folder_hint
from bridge.store import locks

__all__ = [
    "POSIX_PERMISSIONS",
    "SessionEntry",
    "StateStore",
    "default_state_dir",
    "owner_uid",
    "private_state_dir",
    "project_key",
]

log = logging.getLogger(__name__)


def default_state_dir(
    *,
    platform: str = sys.platform,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> Path:
    """The state directory when no ``--state-dir`` was given: ``$BRIDGE_STATE_DIR``, else the
    per-user folder of the OS (``bridge.folders``): ``$XDG_STATE_HOME/bridge``
    (``~/.local/state/bridge``) on Linux, ``~/Library/Application Support/bridge`` on macOS,
    ``%LOCALAPPDATA%\\bridge`` on Windows. ``platform``, ``env`` and ``home`` (defaults: this
    process's) let each system's answer be checked on any one.

    The per-user default is what an installed command needs: an MCP client may start it in
    any directory (Claude Desktop in ``/``), and the HTTP token must be found at one place.
    Conversations stay per project all the same: their key is the working directory's name
    (:func:`project_key`), not the state directory.

    The working directory's ``./.local/bridge`` is never taken on its own: a checkout is
    anyone's content, and a state directory holds what bridge trusts (tokens, provider pack
    overrides that say where asks and files go). Where one exists, bridge says once that it
    is ignored and how to choose it (``--state-dir .local/bridge``)."""
    env = os.environ if env is None else env
    named = env.get("BRIDGE_STATE_DIR")
    if named:
        chosen = Path(named)
    else:
        chosen = default_folder("state", platform=platform, env=env, home=home)
    _note_local_state_ignored(chosen)
    return chosen


_local_noted = False
_local_noted_lock = threading.Lock()


def _note_local_state_ignored(chosen: Path) -> None:
    """Say once per process, on stderr, that the working directory's ``.local/bridge`` is
    not the state directory (it was adopted by earlier versions of bridge)."""
    global _local_noted
    local = Path.cwd() / ".local" / "bridge"
    with _local_noted_lock:
        if _local_noted or not local.is_dir():
            return
        with contextlib.suppress(OSError):
            if local.resolve() == chosen.expanduser().resolve():
                return
        _local_noted = True
    print(
        f"bridge: ignoring {local}: a working directory's .local/bridge is no longer used on "
        f"its own (a checkout could plant tokens and provider packs there); the state "
        f"directory is {chosen}. To use that one, pass --state-dir .local/bridge (or set "
        "BRIDGE_STATE_DIR)",
        file=sys.stderr,
        flush=True,
    )


#: Group and other write bits: a directory with them lets another user plant files in it.
_LOOSE_DIR_BITS = 0o022
_CHOOSE_ANOTHER = (
    "Choose a directory of your own with --state-dir DIR (or $BRIDGE_STATE_DIR); the default "
    f"is {folder_hint('state')}"
)


#: Whether files carry POSIX owner and permission bits worth checking. Windows keeps neither
#: (``os.stat`` gives every file uid 0 and mode 0666/0777 from the read-only flag alone):
#: there a file of bridge's is protected by where it lives, the person's profile
#: (``%USERPROFILE%``, whose ACL lets no other user in), not by bits bridge could check.
POSIX_PERMISSIONS = os.name != "nt"


def owner_uid() -> int:
    """The user bridge runs as: who must own the state directory and everything secret in it
    (a function, so a test can play another user where it cannot chown). On Windows, 0: what
    ``os.stat`` says of every file there, so the ownership checks hold trivially and the
    profile's ACL is what protects the files (:data:`POSIX_PERMISSIONS`)."""
    geteuid: Callable[[], int] | None = getattr(os, "geteuid", None)
    return geteuid() if geteuid is not None else 0


def private_state_dir(path: Path, *, create: bool = True) -> Path:
    """``path`` checked (and made, mode 0700, with ``create``) as a place for secrets.

    Another user's directory is refused with :class:`StateDirUnsafe`: whoever owns it can
    plant a token bridge would adopt or a pack override that sends asks elsewhere. A directory
    of ours that other users may write to (group/other ``w``, e.g. made under umask 002) is
    tightened (those bits removed) and said once on stderr: it is ours to fix, and the
    files in it are checked one by one anyway (bridge.link.tokens, bridge.providers.pack).
    Without ``create`` a missing directory is fine (nothing to trust in it yet).
    """
    path = path.expanduser()
    if create:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        st = path.stat()
    except FileNotFoundError:
        if create:
            raise
        return path
    if not stat.S_ISDIR(st.st_mode):
        raise StateDirUnsafe(path, "is not a directory", _CHOOSE_ANOTHER)
    if st.st_uid != owner_uid():
        raise StateDirUnsafe(
            path,
            f"belongs to another user (uid {st.st_uid}; you are {owner_uid()})",
            _CHOOSE_ANOTHER,
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode & _LOOSE_DIR_BITS and POSIX_PERMISSIONS:  # Windows: always "0777", see above
        tight = mode & ~_LOOSE_DIR_BITS
        try:
            os.chmod(path, tight)
        except OSError as exc:
            raise StateDirUnsafe(
                path,
                f"is writable by other users (mode {mode:04o}) and could not be tightened "
                f"({exc.strerror or exc})",
                f"Run chmod go-w {path}, or c{_CHOOSE_ANOTHER[1:]}",
            ) from exc
        print(
            f"bridge: {path} was writable by other users (mode {mode:04o}); "
            f"tightened to {tight:04o}",
            file=sys.stderr,
            flush=True,
        )
    return path


def project_key() -> str:
    """The per-project session key: the working directory's name (docs/flows.md#state-files)."""
    return Path.cwd().name or "default"


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class SessionEntry:
    """The conversation a project continues with one provider: its URL and, while known, its tab."""

    url: str
    tab_id: int | None
    last_used: str


class StateStore:
    """bridge's state files in one directory (sessions, history, debug dumps): written atomically
    under a lock, off the event loop, readable while another process writes."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or default_state_dir()).expanduser()
        self.sessions_path = self.root / "sessions.json"
        self.history_path = self.root / "history.jsonl"
        self.debug_dir = self.root / "debug"
        self._lock_path = self.root / ".lock"
        #: The first failure to read or write state, as it was reported (None: none yet).
        self.fault: str | None = None
        self._fault_noted = False
        self._fault_lock = threading.Lock()  # reads report from worker threads

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        # Opened through the seam (``_open``), so a test's read-only directory reaches the
        # lock file as it would on a read-only mount.
        with locks.held(self._lock_path, opener=_open):
            yield

    # -- faults ---------------------------------------------------------------------

    def report_fault(self, doing: str, path: Path, exc: OSError) -> None:
        """State could not be read or written (read-only directory, disk full, ...).

        The first fault of this store is a warning, kept in ``fault`` for one result to
        carry (``take_fault_note``); later ones are logged at debug level only: an agent
        asking a hundred times hears of a full disk once, not a hundred times.
        """
        what = f"could not {doing} {path}: {exc.strerror or exc}"
        with self._fault_lock:
            first = self.fault is None
            if first:
                self.fault = (
                    f"bridge {what}. Answers still come, but conversations and history in "
                    f"{self.root} are not kept up to date until it can be read and written "
                    "again (said once; later failures are logged at debug level)"
                )
        if first:
            log.warning("%s", self.fault)
        else:
            log.debug("state: %s", what)

    def take_fault_note(self) -> str | None:
        """The reported fault, the first time it is asked for (for a result to carry)."""
        with self._fault_lock:
            if self.fault is None or self._fault_noted:
                return None
            self._fault_noted = True
            return self.fault

    # -- sessions -------------------------------------------------------------------

    def _read_sessions(self) -> dict[str, Any]:
        try:
            data = json.loads(_read_text(self.sessions_path))
        except FileNotFoundError:
            return {"projects": {}}
        except json.JSONDecodeError:
            # Never written by us (our writes are atomic): keep it aside rather than lose it.
            aside = self.sessions_path.with_suffix(f".corrupt-{int(time.time())}.json")
            self.sessions_path.rename(aside)
            return {"projects": {}}
        if not isinstance(data, dict) or not isinstance(data.get("projects"), dict):
            return {"projects": {}}
        return data

    def get_session(self, key: str, provider: str) -> SessionEntry | None:
        """The saved session, or None: also when the state cannot be read (reported)."""
        try:
            data = self._read_sessions_for_get()
        except OSError as exc:
            self.report_fault("read", self.sessions_path, exc)
            return None
        entry = data["projects"].get(key, {}).get(provider)
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            return None
        tab = entry.get("tabId")
        return SessionEntry(
            entry["url"], tab if isinstance(tab, int) else None, str(entry.get("lastUsed", ""))
        )

    def tabs_of_others(self, key: str) -> set[int]:
        """The tabs recorded for other session keys (any provider): each is another
        project's conversation, never one to ask this key's question in."""
        try:
            data = self._read_sessions_for_get()
        except OSError as exc:
            self.report_fault("read", self.sessions_path, exc)
            return set()
        out: set[int] = set()
        for other, providers in data["projects"].items():
            if other == key or not isinstance(providers, dict):
                continue
            for entry in providers.values():
                if isinstance(entry, dict) and isinstance(entry.get("tabId"), int):
                    out.add(entry["tabId"])
        return out

    async def tabs_of_others_async(self, key: str) -> set[int]:
        return await asyncio.to_thread(self.tabs_of_others, key)

    def _read_sessions_for_get(self) -> dict[str, Any]:
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(self._locked())
            except OSError as exc:
                # A read-only directory has no lock file to take: writes are atomic renames,
                # so an unlocked read still sees a whole file.
                log.debug("state: reading %s without the lock: %s", self.sessions_path, exc)
            return self._read_sessions()

    def put_session(self, key: str, provider: str, url: str, tab_id: int | None) -> None:
        with self._locked():
            data = self._read_sessions()
            data["projects"].setdefault(key, {})[provider] = {
                "url": url,
                "tabId": tab_id,
                "lastUsed": _now_iso(),
            }
            _atomic_write(self.sessions_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def forget_session(self, key: str, provider: str) -> None:
        with self._locked():
            data = self._read_sessions()
            if data["projects"].get(key, {}).pop(provider, None) is not None:
                _atomic_write(
                    self.sessions_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n"
                )

    async def get_session_async(self, key: str, provider: str) -> SessionEntry | None:
        return await asyncio.to_thread(self.get_session, key, provider)

    async def put_session_async(
        self, key: str, provider: str, url: str, tab_id: int | None
    ) -> None:
        await asyncio.to_thread(self.put_session, key, provider, url, tab_id)

    # -- history --------------------------------------------------------------------

    async def append_history_async(self, record: dict[str, Any]) -> None:
        await asyncio.to_thread(self.append_history, record)

    def append_history(self, record: dict[str, Any]) -> None:
        line = json.dumps({"ts": _now_iso(), **record}, ensure_ascii=False, separators=(",", ":"))
        data = (line + "\n").encode("utf-8")
        with self._locked():
            fd = _open(self.history_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            try:
                start = os.fstat(fd).st_size
                try:
                    if _write(fd, data) != len(data):  # a full disk takes part of the line
                        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                    os.fsync(fd)
                except OSError:
                    with contextlib.suppress(OSError):  # no torn line left behind
                        os.ftruncate(fd, start)
                    raise
            finally:
                os.close(fd)

    def history(self) -> list[dict[str, Any]]:
        try:
            text = _read_text(self.history_path)
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    # -- debug dumps ----------------------------------------------------------------

    def write_debug(self, provider: str, payload: dict[str, Any], screenshot: bytes | None) -> Path:
        self.debug_dir.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S_%f")
        path = self.debug_dir / f"{provider}-{stamp}-{os.getpid()}.json"
        if screenshot:
            png = path.with_suffix(".png")
            _atomic_write_bytes(png, screenshot)
            payload = {**payload, "screenshot": png.name}
        _atomic_write(path, json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")
        return path

    async def write_debug_async(
        self, provider: str, payload: dict[str, Any], screenshot: bytes | None
    ) -> Path:
        return await asyncio.to_thread(self.write_debug, provider, payload, screenshot)


def _atomic_write(path: Path, text: str) -> None:
    _atomic_write_bytes(path, text.encode("utf-8"))


def _atomic_write_bytes(path: Path, data: bytes, mode: int = 0o600) -> None:
    """``data`` into ``path`` whole or not at all: a new file beside it (``O_EXCL``: never one
    that already exists, nor through a link), given ``mode`` whatever the umask, written,
    fsync-ed, then renamed over ``path`` (a symbolic link in its place is replaced, its target
    untouched). Readers, and a browser starting a native host at any moment, see the old file
    or the new one, never half of it."""
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    nofollow = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = _open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | nofollow)
    try:
        try:
            if hasattr(os, "fchmod"):  # Windows keeps no POSIX permission bits
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                written = _write(fd, view)
                if written <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# The seam under every state file: what is opened, written and read goes through these, so a
# test can give bridge a read-only directory or a full disk where the OS would not (root
# ignores permission bits) without touching anything else in the process.


def _open(path: Path, flags: int) -> int:
    return os.open(path, flags, 0o600)


def _write(fd: int, data: bytes | memoryview) -> int:
    """One ``write``: how many bytes went (fewer than asked when the disk fills up)."""
    return os.write(fd, data)


def _read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# For the other state files (bridge.app.jobs): the same writes and reads, through the same seam
# (each calls the private function at call time, so a test's stand-in applies to them too).


def write_atomically(path: Path, data: str | bytes, *, mode: int = 0o600) -> None:
    """Write ``path`` whole or not at all, with ``mode`` (0600 unless said: bridge's files are
    the person's alone). Every file bridge writes goes through here: state, jobs, tokens, the
    native host's manifest and wrapper, scenario reports."""
    _atomic_write_bytes(path, data.encode("utf-8") if isinstance(data, str) else data, mode)


def open_private(path: Path, flags: int) -> int:
    """``os.open`` with mode 0600: state files are the person's alone."""
    return _open(path, flags)


def read_state_text(path: Path) -> str:
    return _read_text(path)
