"""Locks on files, the one way bridge takes them on every OS.

Every lock in bridge is a lock on an open *lock file* (``sessions``' and history's
``.lock``, a job's ``<id>.lock``, ``.tokens.lock``), held through the descriptor that opened
it. What bridge relies on, and how each OS gives it:

- **released when the holder dies, however it dies.** A job's lock is how other processes
  learn that its owner is gone (bridge.app.jobs). POSIX ``flock`` and Windows
  ``LockFileEx`` both belong to the open file, and the kernel lets go when the last
  descriptor closes or the process ends (Windows: "unlocked by the operating system" when
  the process terminates).
- **blocking waits without polling**, exclusive and shared: the state store waits for a
  neighbour's write; a job's watcher waits, possibly for the whole length of an answer, in
  a shared lock (bridge.app.jobs.watch). ``flock`` blocks; so does ``LockFileEx`` without
  ``LOCKFILE_FAIL_IMMEDIATELY``.
- **a try that never waits**, to claim a job only if nobody holds it.
- **lock files made 0600, never through a symbolic link** (``O_NOFOLLOW``, where the OS
  has it), and **never deleted while another process may hold them**: a deleted lock file
  lets the next process lock a new file of the same name while a waiter still holds the
  old one, and two "exclusive" holders exist.

Why ``fcntl.flock`` is called directly on Linux and macOS: it *is* those semantics, and it is
what bridge has always used (Linux behaviour does not change with Windows support).

Why ``portalocker``'s ``Win32Locker`` on Windows, and not our own code or ``filelock``:

- Windows has no ``flock``. ``msvcrt.locking`` (the standard library's only lock) has no
  shared mode, and its "blocking" mode gives up after ten one-second retries: a watcher
  would poll. ``LockFileEx`` is the primitive with the semantics above; calling it means an
  ``OVERLAPPED`` structure, OS handles from C descriptors and the file position to mind,
  which ``portalocker`` (kept, typed, widely used) does through ``pywin32``, and which
  nothing here could test (no Windows machine runs these tests).
- ``filelock`` has no shared locks, waits by polling with sleeps, and on Windows deletes the
  lock file when it releases it, which is the two-holders hazard above.
- ``portalocker``'s default Windows locker is ``msvcrt.locking`` for exclusive locks (the
  ten-second give-up); ``Win32Locker`` is chosen by name so every wait is a real one.

Which one runs is decided by what can be imported, not by the platform's name: where
``fcntl`` is missing, the Windows path runs; ``tests/test_portable.py`` runs it on Linux,
with ``fcntl`` made unimportable and ``LockFileEx`` stood in for.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Protocol

__all__ = [
    "LOCK_FILE_FLAGS",
    "acquire",
    "backend_name",
    "held",
    "open_lock_file",
    "release",
    "remove_held_lock_file",
]

#: How a lock file is opened: made if missing, never through a symbolic link (O_NOFOLLOW,
#: where the OS has it: Windows has no symbolic-link following in ``open`` to refuse), never
#: inherited by a child process (a child holding the descriptor would hold the lock too).
LOCK_FILE_FLAGS = (
    os.O_CREAT | os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)


class _Backend(Protocol):
    name: str

    def acquire(self, fd: int, *, shared: bool, blocking: bool) -> bool: ...

    def release(self, fd: int) -> None: ...


class _Flock:
    """POSIX ``flock``: per open file, dropped by the kernel when the holder dies."""

    name = "flock"

    def __init__(self, fcntl: ModuleType) -> None:
        self._fcntl = fcntl

    def acquire(self, fd: int, *, shared: bool, blocking: bool) -> bool:
        f = self._fcntl
        how = (f.LOCK_SH if shared else f.LOCK_EX) | (0 if blocking else f.LOCK_NB)
        try:
            f.flock(fd, how)
        except OSError as exc:
            if not blocking and exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return False
            raise
        return True

    def release(self, fd: int) -> None:
        self._fcntl.flock(fd, self._fcntl.LOCK_UN)


class _LockFileEx:
    """Windows ``LockFileEx`` through ``portalocker``'s ``Win32Locker`` (needs ``pywin32``,
    which bridge requires on Windows: pyproject.toml)."""

    name = "LockFileEx"

    def __init__(self) -> None:
        from portalocker import AlreadyLocked, LockException, LockFlags
        from portalocker.portalocker import Win32Locker

        self._locker = Win32Locker()
        self._flags = LockFlags
        self._already_locked = AlreadyLocked
        self._lock_exception = LockException

    def acquire(self, fd: int, *, shared: bool, blocking: bool) -> bool:
        # LockFileEx's shared lock is "no EXCLUSIVE flag": LockFlags.SHARED is passed for
        # clarity, Win32Locker reads only EXCLUSIVE and NON_BLOCKING.
        how = self._flags.SHARED if shared else self._flags.EXCLUSIVE
        if not blocking:
            how |= self._flags.NON_BLOCKING
        try:
            self._locker.lock(fd, how)
        except self._already_locked:
            if blocking:  # a blocking LockFileEx does not report contention; say it as is
                raise
            return False
        except self._lock_exception as exc:  # as OSError, like flock's failures
            raise OSError(errno.EIO, f"could not lock: {exc}") from exc
        return True

    def release(self, fd: int) -> None:
        try:
            self._locker.unlock(fd)
        except self._lock_exception as exc:
            raise OSError(errno.EIO, f"could not unlock: {exc}") from exc


def _choose() -> _Backend:
    try:
        import fcntl
    except ImportError:  # Windows (or a test playing it)
        return _LockFileEx()
    return _Flock(fcntl)


_backend: _Backend | None = None


def _get() -> _Backend:
    # Chosen at first use, not at import: importing bridge never needs a lock library.
    global _backend
    if _backend is None:
        _backend = _choose()
    return _backend


def backend_name() -> str:
    """``"flock"`` or ``"LockFileEx"``: what this process locks with (for tests, doctor)."""
    return _get().name


def open_lock_file(path: Path, opener: Callable[[Path, int], int] | None = None) -> int:
    """A descriptor on the lock file ``path`` (made 0600 when missing, never through a
    symbolic link). ``opener`` is the state store's seam (``bridge.store.state._open``), so a
    test's disk faults reach lock files too."""
    if opener is None:
        return os.open(path, LOCK_FILE_FLAGS, 0o600)
    return opener(path, LOCK_FILE_FLAGS)


def acquire(fd: int, *, shared: bool = False, blocking: bool = True) -> bool:
    """Lock the file open on ``fd``: exclusive unless ``shared``; waiting for other holders
    unless ``blocking`` is False, in which case False says another holder has it (this
    process's other descriptors included). Raises OSError on any other failure."""
    return _get().acquire(fd, shared=shared, blocking=blocking)


def release(fd: int) -> None:
    """Let go of the lock held through ``fd`` (closing ``fd`` lets go too)."""
    _get().release(fd)


@contextlib.contextmanager
def held(
    path: Path, *, opener: Callable[[Path, int], int] | None = None, shared: bool = False
) -> Iterator[None]:
    """The lock on ``path`` held for the ``with`` block, waiting for other holders first."""
    fd = open_lock_file(path, opener)
    try:
        acquire(fd, shared=shared)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):  # closing below lets go all the same
                release(fd)
    finally:
        os.close(fd)


def remove_held_lock_file(path: Path, fd: int) -> None:
    """Remove the lock file ``path``, whose exclusive lock this process holds through ``fd``,
    and close ``fd``.

    POSIX: unlinked while still held, so no other process can take it in between; one that
    opened it before and waits on it gets the removed file, which nobody else will lock
    again (what it waited for is gone). Windows: a file open in another process cannot be
    removed (no ``FILE_SHARE_DELETE``): the lock is let go, then the file removed unless
    another process has it open, in which case the empty file is left, never pulled from
    under its holder."""
    if _get().name == "LockFileEx":
        with contextlib.suppress(OSError):
            release(fd)
        os.close(fd)
        with contextlib.suppress(FileNotFoundError, PermissionError):
            path.unlink()
        return
    try:
        path.unlink(missing_ok=True)
    finally:
        with contextlib.suppress(OSError):
            release(fd)
        os.close(fd)
