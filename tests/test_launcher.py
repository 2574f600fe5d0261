"""Finding and launching the browser; stopping it leaves no process behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bridge.launcher import BrowserNotFound, LaunchedBrowser, LaunchOptions, find_browser


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
    assert args[-1].endswith(f"#bridge-{launcher.nonce}")
    assert not any(a.startswith("--host-resolver-rules") for a in args)  # never by default


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
async def test_stop_leaves_no_process_and_no_temporary_profile() -> None:
    launcher = LaunchedBrowser(LaunchOptions(headless=True, isolated=True, remote_debugging=True))
    await launcher.start()
    pid = launcher.pid
    assert pid is not None and launcher.profile is not None
    profile = launcher.profile
    assert len(_group(pid)) > 1  # browser plus its helpers
    await launcher.stop()
    assert _group(pid) == []
    assert not profile.exists()


def test_stale_temporary_profiles_are_swept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tempfile

    from bridge.launcher import sweep_stale_profiles

    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    dead, alive, starting = (tmp_path / f"bridge-profile-{n}" for n in ("dead", "alive", "new"))
    for d in (dead, alive, starting):
        d.mkdir()
    (dead / "SingletonLock").symlink_to("host-999999999")  # no such process
    (alive / "SingletonLock").symlink_to(f"host-{os.getpid()}")
    assert sweep_stale_profiles() == 1
    assert not dead.exists() and alive.exists() and starting.exists()
