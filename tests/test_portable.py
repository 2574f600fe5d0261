"""bridge without the POSIX-only modules, as on Windows: every module imports, and the state
store, the job store and the locks work between two processes through the path Windows takes.

Each check runs in a subprocess where ``fcntl``, ``termios`` and ``resource`` cannot be
imported (``sys.modules[name] = None``, set before bridge is imported). Windows' lock
primitive (``LockFileEx``, through portalocker's ``Win32Locker``) cannot run on Linux: a
stand-in with its contract (``lock(fd, flags)``, ``AlreadyLocked`` when a non-blocking lock is
taken, ``unlock(fd)``) is put in its place, built on the real ``flock`` the child took hold of
before blocking ``fcntl``. What is tested is bridge's side: that nothing needs ``fcntl``, that
the Windows path is the one taken, and that its calls exclude, wait and let go as they must.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from bridge.waiting import scaled
from tests.lines import read_line

ROOT = Path(__file__).resolve().parents[1]
BLOCKED = ("fcntl", "termios", "resource")

#: Modules allowed to need a POSIX-only module, each with why (none: every module of bridge
#: imports without them). A module that imports fine is not allowed to stay listed.
PENDING_ELSEWHERE: dict[str, str] = {}

PRELUDE = textwrap.dedent(
    """
    import enum, sys, types
    import fcntl as real_fcntl  # the stand-in's primitive; bridge cannot reach it
    # Libraries that choose their code by OS load it first, as on Linux: psutil's Linux
    # backend needs resource, mcp's stdio server fcntl (both under sys.platform checks
    # that Windows takes the other way). What is checked is bridge's own imports.
    import psutil  # noqa: F401
    import mcp.server.stdio  # noqa: F401

    for name in BLOCKED:
        sys.modules[name] = None
    try:
        import fcntl  # noqa: F401
    except ImportError:
        pass
    else:
        sys.exit("fcntl is still importable: the test would prove nothing")

    class LockException(Exception):
        pass

    class AlreadyLocked(LockException):
        pass

    class LockFlags(enum.IntFlag):
        EXCLUSIVE = 1
        SHARED = 2
        NON_BLOCKING = 4

    class Win32Locker:
        calls = 0

        def lock(self, fd, flags):
            Win32Locker.calls += 1
            how = real_fcntl.LOCK_EX if flags & LockFlags.EXCLUSIVE else real_fcntl.LOCK_SH
            if flags & LockFlags.NON_BLOCKING:
                how |= real_fcntl.LOCK_NB
            try:
                real_fcntl.flock(fd, how)
            except BlockingIOError:
                raise AlreadyLocked("locked by another handle") from None

        def unlock(self, fd):
            real_fcntl.flock(fd, real_fcntl.LOCK_UN)

    portalocker = types.ModuleType("portalocker")
    portalocker.LockException, portalocker.AlreadyLocked = LockException, AlreadyLocked
    portalocker.LockFlags = LockFlags
    portalocker.portalocker = types.ModuleType("portalocker.portalocker")
    portalocker.portalocker.Win32Locker = Win32Locker
    sys.modules["portalocker"] = portalocker
    sys.modules["portalocker.portalocker"] = portalocker.portalocker
    """
).replace("BLOCKED", repr(BLOCKED))


def _child(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code), *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run(code: str, *args: str) -> str:
    with _child(code, *args) as child:
        out, err = child.communicate(timeout=scaled(120))
    assert child.returncode == 0, out + err
    return out


IMPORT_ALL = """
import importlib, json, pkgutil
import bridge

failed = {}
def note(name):
    failed[name] = repr(sys.exc_info()[1])

names = [m.name for m in pkgutil.walk_packages(bridge.__path__, "bridge.", onerror=note)]
sys.argv = ["bridge", "--version"]  # bridge/__main__.py runs the command line when imported
for name in names:
    try:
        importlib.import_module(name)
    except SystemExit as exc:
        if exc.code not in (0, None):
            failed[name] = f"exited {exc.code}"
    except Exception as exc:
        failed[name] = repr(exc)
print(json.dumps({"count": len(names), "failed": failed}))
"""


def test_every_module_imports_without_fcntl_termios_and_resource() -> None:
    import json

    result = json.loads(_run(IMPORT_ALL).splitlines()[-1])
    assert result["count"] > 100  # the walk really went through the package
    assert result["failed"] == PENDING_ELSEWHERE


def test_the_check_can_fail() -> None:
    """A module that needs fcntl is caught: the child really has it blocked."""
    out = _run(
        """
        try:
            import termios  # noqa: F401
        except ImportError:
            print("termios blocked")
        import bridge.store.locks as locks
        print(locks.backend_name())
        """
    )
    assert out.split() == ["termios", "blocked", "LockFileEx"]


def test_the_state_store_and_a_job_record_through_the_windows_path(tmp_path: Path) -> None:
    out = _run(
        """
        import asyncio
        from pathlib import Path
        from bridge.app.jobs.record import Job
        from bridge.app.jobs.store import JobStore
        from bridge.store import locks
        from bridge.store.state import StateStore

        root = Path(sys.argv[1])
        state = StateStore(root)
        state.put_session("proj", "chatgpt", "https://chatgpt.com/c/1", 7)
        state.append_history({"question": "q"})
        entry = state.get_session("proj", "chatgpt")
        assert entry is not None and entry.url == "https://chatgpt.com/c/1" and entry.tab_id == 7
        assert [r["question"] for r in state.history()] == ["q"]
        print("state ok", locks.backend_name(), Win32Locker.calls > 0)
        """,
        str(tmp_path),
    )
    assert out.split() == ["state", "ok", "LockFileEx", "True"]
    assert (tmp_path / ".lock").stat().st_mode & 0o777 == 0o600


OWNER = """
from pathlib import Path
from bridge.app.jobs.record import Job
from bridge.app.jobs.store import JobStore

store = JobStore(Path(sys.argv[1]))
job = Job.new("chatgpt", "a question", "proj", 480.0)
lock = store.create(job)  # written under its lock, held until this process dies
print(job.id, flush=True)
sys.stdin.read()  # held until the test kills this process
"""

CLAIMER = """
import asyncio
from pathlib import Path
from bridge.app.jobs.store import JobStore

store = JobStore(Path(sys.argv[1]))
job_id = sys.argv[2]
assert store.load(job_id).question == "a question"  # the other process's record, read
print("held elsewhere" if store.try_lock(job_id) is None else "free", flush=True)
# The job watch's blocking shared lock, in its thread: ends when the owner dies.
let_go = asyncio.run(store.wait_unlocked(job_id, float(sys.argv[3])))
lock = store.try_lock(job_id)
print("let go" if let_go else "still held", "claimed" if lock is not None else "refused")
"""


def test_two_processes_contend_for_a_job_and_its_owners_death_lets_go(tmp_path: Path) -> None:
    with _child(OWNER, str(tmp_path)) as owner:
        try:
            assert owner.stdout is not None
            job_id = read_line(owner.stdout, scaled(60)).strip()
            assert job_id, owner.stderr.read() if owner.stderr else ""
            with _child(CLAIMER, str(tmp_path), job_id, str(scaled(60))) as claimer:
                assert claimer.stdout is not None
                assert read_line(claimer.stdout, scaled(60)).strip() == "held elsewhere"
                owner.kill()  # however the owner dies, its lock goes with it
                out, err = claimer.communicate(timeout=scaled(90))
            assert claimer.returncode == 0, out + err
            assert out.split() == ["let", "go", "claimed"], out + err
        finally:
            if owner.poll() is None:
                owner.kill()
            owner.wait()
    lock_file = tmp_path / "jobs" / f"{job_id}.lock"
    assert lock_file.stat().st_mode & 0o777 == 0o600
