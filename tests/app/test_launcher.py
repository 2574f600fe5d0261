"""Finding and launching the browser; stopping it leaves no process behind."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from bridge.app import launcher
from bridge.app.launcher import (
    BrowserNotFound,
    LaunchedBrowser,
    LaunchOptions,
    find_browser,
    stop_process_tree,
)
from bridge.waiting import scaled


def test_explicit_path_that_is_not_executable_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-chrome"
    with pytest.raises(BrowserNotFound, match=str(missing)):
        find_browser(missing)


def test_environment_variable_is_used_before_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "my-chrome"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("BRIDGE_BROWSER", str(fake))
    assert find_browser() == fake


def test_nothing_on_path_explains_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("BRIDGE_BROWSER", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BrowserNotFound, match="apt-get install chromium"):
        find_browser()


def test_command_line_loads_the_extension_and_passes_extra_args(tmp_path: Path) -> None:
    launcher = LaunchedBrowser(
        LaunchOptions(headless=True, profile_dir=tmp_path / "p", extra_args=["--lang=ja"])
    )
    args = launcher.command()
    ext = str(Path(launcher.options.extension).resolve())
    assert f"--load-extension={ext}" in args
    assert f"--disable-extensions-except={ext}" in args
    assert f"--user-data-dir={tmp_path / 'p'}" in args
    assert "--headless=new" in args and "--lang=ja" in args
    # Every user can read a process's command line: nothing of the island is on it.
    assert args[-1].startswith("data:text/html,") and "#" not in args[-1]
    assert not any(launcher.secret in a for a in args)
    assert not any(str(launcher.island.directory) in a for a in args)
    launcher.island.close()
    assert not any(a.startswith("--host-resolver-rules") for a in args)  # never by default


async def test_a_temporary_profile_says_where_it_saves_downloads() -> None:
    """The DevTools endpoint copies a client's download only from this folder."""
    launcher = LaunchedBrowser(LaunchOptions(headless=True, isolated=True, native_host=False))
    launcher.command()
    try:
        assert launcher.profile is not None
        downloads = launcher.profile / "Downloads"
        assert launcher.downloads_dir == downloads and downloads.is_dir()
        prefs = json.loads((launcher.profile / "Default" / "Preferences").read_text())
        assert prefs["download"]["default_directory"] == str(downloads)
    finally:
        await launcher.stop()
    lasting = LaunchedBrowser(LaunchOptions(headless=True, profile_dir=Path("/nonexistent/p")))
    assert lasting.downloads_dir is None  # the person's own choice, wherever that is


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False


def _group(pgid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == pgid and _alive(int(entry)):
                    pids.append(int(entry))
            except ProcessLookupError:
                continue
    return pids


@pytest.mark.e2e
@pytest.mark.reliability(25)
async def test_stop_leaves_no_process_and_no_temporary_profile() -> None:
    launcher = LaunchedBrowser(LaunchOptions(headless=True, isolated=True, debug_pipe=True))
    await launcher.start()
    pid = launcher.pid
    assert pid is not None and launcher.profile is not None
    profile = launcher.profile
    async with launcher.direct_cdp() as cdp:  # up, with its start page: helpers are running
        assert [t for t in await cdp.targets("page")]
    assert len(_group(pid)) > 1  # browser plus its helpers
    await launcher.stop()
    assert _group(pid) == []
    assert not profile.exists()


def test_stale_temporary_profiles_are_swept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tempfile

    from bridge.app.launcher import sweep_stale_profiles

    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    dead, alive, starting = (tmp_path / f"bridge-profile-{n}" for n in ("dead", "alive", "new"))
    for d in (dead, alive, starting):
        d.mkdir()
    (dead / "SingletonLock").symlink_to(f"{_HOST}-{_dead_pid()}")
    (alive / "SingletonLock").symlink_to(f"{_HOST}-{os.getpid()}")
    assert sweep_stale_profiles() == 1
    assert not dead.exists() and alive.exists() and starting.exists()


_HOST = socket.gethostname()  # Chromium's SingletonLock says "<hostname>-<pid>"


def _dead_pid() -> int:
    """A pid that certainly belonged to a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def _profiles(root: Path, locks: dict[str, str]) -> dict[str, Path]:
    made = {}
    for name, target in locks.items():
        made[name] = root / f"bridge-profile-{name}"
        made[name].mkdir()
        (made[name] / "SingletonLock").symlink_to(target)
    return made


def test_without_proc_the_sweep_asks_the_kernel_and_keeps_live_profiles(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # macOS and the BSDs have no /proc: every pid looked dead there, live profiles included.
    import tempfile

    from bridge.app.launcher import sweep_stale_profiles

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(temp))
    profiles = _profiles(
        temp, {"alive": f"{_HOST}-{os.getpid()}", "dead": f"{_HOST}-{_dead_pid()}"}
    )
    assert sweep_stale_profiles(proc_root=tmp_path / "no-proc") == 1
    assert profiles["alive"].exists() and not profiles["dead"].exists()


def test_a_process_of_another_user_counts_as_alive(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tempfile

    from bridge.app import launcher

    def kill(pid: int, sig: int) -> None:
        raise PermissionError(1, "Operation not permitted")  # what kill(2) says: it exists

    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr(os, "kill", kill)
    monkeypatch.setattr(launcher, "PROC_ROOT", tmp_path / "no-proc")
    profiles = _profiles(tmp_path, {"other-user": f"{_HOST}-{_dead_pid()}"})
    assert launcher.sweep_stale_profiles() == 0
    assert profiles["other-user"].exists()


def test_the_sweep_leaves_profiles_locked_from_another_host_and_tolerates_odd_comm(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tempfile

    from bridge.app.launcher import sweep_stale_profiles

    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    proc = tmp_path / "proc"  # a procfs whose process names hold spaces and parentheses
    (proc / "self").mkdir(parents=True)
    for pid, state in ((4242, "S"), (4343, "Z")):
        (proc / str(pid)).mkdir()
        (proc / str(pid) / "stat").write_text(f"{pid} (Chrome (a) b) {state} 1 2 3\n")
    profiles = _profiles(
        tmp_path / "tmp",
        {
            "elsewhere": f"another-host-{_dead_pid()}",  # a shared /tmp: its pid is not ours
            "running": f"{_HOST}-4242",
            "zombie": f"{_HOST}-4343",
            "gone": f"{_HOST}-4444",
        },
    )
    assert sweep_stale_profiles(proc_root=proc) == 2
    assert {name for name, path in profiles.items() if path.exists()} == {"elsewhere", "running"}


# -- the process tree the Windows way (psutil), run here ------------------------------------

_TREE = """
import subprocess, sys, time
sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
middle = [sys.executable, "-c", "import subprocess, sys, time\\n"
          "g = subprocess.Popen(%r)\\nprint(g.pid, flush=True)\\ntime.sleep(600)" % (sleeper,)]
kids = [subprocess.Popen(sleeper), subprocess.Popen(middle, stdout=subprocess.PIPE)]
grandchild = kids[1].stdout.readline().decode().strip()
print(kids[0].pid, kids[1].pid, grandchild, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("graceful", [True, False])
async def test_the_psutil_tree_stop_leaves_no_process_of_the_tree(graceful: bool) -> None:
    """A parent with a child and a grandchild, in bridge's own process group (no session of
    its own, as on Windows): stopped through psutil, none of them is left, nothing else is
    touched. Every member holds our stdout pipe, so its end is the event: all are gone."""
    parent = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _TREE, stdout=asyncio.subprocess.PIPE
    )
    assert parent.stdout is not None
    async with asyncio.timeout(scaled(20.0)):
        members = [int(p) for p in (await parent.stdout.readline()).split()]
    assert len(members) == 3
    assert os.getpgid(parent.pid) == os.getpgid(0)  # no group of its own: killpg is not used
    await stop_process_tree(parent, graceful=graceful, mode="tree")
    assert parent.returncode is not None
    async with asyncio.timeout(scaled(10.0)):
        assert await parent.stdout.read() == b""  # the last holder of the pipe has exited
    for pid in members:
        with contextlib.suppress(psutil.NoSuchProcess):
            assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # exited, not reaped
    assert psutil.Process().is_running()  # the test process (same group) untouched


async def test_a_tree_already_gone_is_stopped_without_error() -> None:
    done = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await done.wait()
    await stop_process_tree(done, graceful=True, mode="tree")


async def test_debug_pipe_where_it_cannot_be_passed_says_what_to_use_and_makes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert launcher.debug_pipe_supported("win32") is False
    assert launcher.debug_pipe_supported("darwin") and launcher.debug_pipe_supported("linux")
    assert launcher.default_tree_mode("win32") == "tree"
    assert launcher.default_tree_mode("linux") == "group"
    monkeypatch.setattr(launcher, "debug_pipe_supported", lambda: False)
    browser = LaunchedBrowser(LaunchOptions(headless=True, isolated=True, debug_pipe=True))
    with pytest.raises(launcher.DebugPipeUnavailable, match=r"remote_debugging=True"):
        await browser.start()
    assert browser.process is None and browser.profile is None and browser.devtools_pipe is None
