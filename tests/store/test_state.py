"""State files: atomic, append-only, and whole when several processes write at once."""

from __future__ import annotations

import asyncio
import fcntl
import json
import multiprocessing
import os
import threading
from pathlib import Path

import pytest

from bridge.store.state import StateStore, project_key
from tests.another_user import give_to_another_user


def test_session_round_trip(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    assert store.get_session("proj", "chatgpt") is None
    store.put_session("proj", "chatgpt", "https://chatgpt.com/c/1", 7)
    entry = store.get_session("proj", "chatgpt")
    assert entry is not None and (entry.url, entry.tab_id) == ("https://chatgpt.com/c/1", 7)
    store.forget_session("proj", "chatgpt")
    assert store.get_session("proj", "chatgpt") is None


def test_layout_follows_the_sessions_file_spec(tmp_path: Path) -> None:
    # docs/flows.md#sessions-file: the spec's shape and camelCase keys.
    store = StateStore(tmp_path)
    store.put_session("proj", "gemini", "https://gemini.google.com/app/x", 3)
    data = json.loads((tmp_path / "sessions.json").read_text())
    assert data["projects"]["proj"]["gemini"]["tabId"] == 3
    assert data["projects"]["proj"]["gemini"]["lastUsed"].endswith("Z")


def test_a_corrupt_sessions_file_is_kept_aside_not_lost(tmp_path: Path) -> None:
    (tmp_path / "sessions.json").write_text("{not json")
    store = StateStore(tmp_path)
    assert store.get_session("p", "chatgpt") is None
    assert list(tmp_path.glob("sessions.corrupt-*.json"))


def test_history_is_append_only(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    store.append_history({"n": 1})
    store.append_history({"n": 2, "answer": "multi\nline"})
    assert [r["n"] for r in store.history()] == [1, 2]
    assert len((tmp_path / "history.jsonl").read_text().splitlines()) == 2


def test_project_key_is_the_working_directory_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    assert project_key() == tmp_path.name


def _hammer(root: str, name: str, n: int) -> None:
    store = StateStore(Path(root))
    for i in range(n):
        store.put_session(name, "chatgpt", f"https://chatgpt.com/c/{name}-{i}", i)
        store.append_history({"project": name, "i": i, "answer": "x" * 5000})


@pytest.mark.reliability(23)
def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    n = 60
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_hammer, args=(str(tmp_path), name, n)) for name in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    store = StateStore(tmp_path)
    records = store.history()  # json.loads on every line: none torn
    assert len(records) == 2 * n
    for name in ("a", "b"):
        assert [r["i"] for r in records if r["project"] == name] == list(range(n))
        entry = store.get_session(name, "chatgpt")
        assert entry is not None and entry.url.endswith(f"{name}-{n - 1}")
    assert not list(tmp_path.glob(".sessions.json.*.tmp"))  # no temporary files left behind


async def test_waiting_for_the_lock_never_blocks_the_event_loop(tmp_path: Path) -> None:
    """Another process holding the state lock delays our write, not the event loop (which
    carries every CDP round trip of every tab)."""
    store = StateStore(tmp_path)
    tmp_path.mkdir(exist_ok=True)
    holder = os.open(tmp_path / ".lock", os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)  # a second open file description: it contends
    # Safety valve only: a blocking implementation would stall this test's loop until the
    # lock is released, so release it eventually whatever happens.
    valve = threading.Timer(10, lambda: fcntl.flock(holder, fcntl.LOCK_UN))
    valve.start()
    try:
        writing = asyncio.ensure_future(store.append_history_async({"outcome": "ok"}))
        done, _ = await asyncio.wait({writing}, timeout=0.2)
        assert not done, "the write finished while another holder had the lock"
        fcntl.flock(holder, fcntl.LOCK_UN)
        await asyncio.wait_for(writing, 10)
    finally:
        valve.cancel()
        os.close(holder)
    assert store.history()[-1]["outcome"] == "ok"


def test_default_state_dir_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """$BRIDGE_STATE_DIR, else the per-user state directory ($XDG_STATE_HOME, else
    ~/.local/state); the working directory's .local/bridge never, even where it exists."""
    from bridge.store.state import default_state_dir

    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.delenv("BRIDGE_STATE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    assert default_state_dir() == tmp_path / "home" / ".local" / "state" / "bridge"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_state_dir() == tmp_path / "xdg" / "bridge"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/ignored")  # the XDG spec: absolute only
    assert default_state_dir() == tmp_path / "home" / ".local" / "state" / "bridge"
    (project / ".local" / "bridge").mkdir(parents=True)  # a checkout's: not taken
    assert default_state_dir() == tmp_path / "home" / ".local" / "state" / "bridge"
    monkeypatch.setenv("BRIDGE_STATE_DIR", str(tmp_path / "env"))
    assert default_state_dir() == tmp_path / "env"


def _state_dir_before_issue_26(env: dict[str, str], home: Path) -> Path:
    """default_state_dir as it was on every OS (XDG), for Linux's answer to be held to it."""
    if env.get("BRIDGE_STATE_DIR"):
        return Path(env["BRIDGE_STATE_DIR"])
    xdg = env.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".local" / "state"
    return base / "bridge"


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"XDG_STATE_HOME": "/xdg/state"},
        {"XDG_STATE_HOME": "relative"},
        {"XDG_STATE_HOME": ""},
        {"BRIDGE_STATE_DIR": "/named", "XDG_STATE_HOME": "/xdg/state"},
        {"LOCALAPPDATA": "/local"},  # Windows' variable: nothing to Linux
    ],
)
def test_linux_state_dir_is_what_it_always_was(env: dict[str, str]) -> None:
    from bridge.store.state import default_state_dir

    home = Path("/home/ada")
    found = default_state_dir(platform="linux", env=env, home=home)
    assert found == _state_dir_before_issue_26(env, home)


def test_the_state_dir_per_os_and_bridge_state_dir_first() -> None:
    from bridge.store.state import default_state_dir

    home = Path("/Users/ada")
    mac = default_state_dir(platform="darwin", env={"XDG_STATE_HOME": "/x"}, home=home)
    assert mac == home / "Library" / "Application Support" / "bridge"
    local = r"C:\Users\ada\AppData\Local"
    windows = default_state_dir(platform="win32", env={"LOCALAPPDATA": local}, home=home)
    assert windows == Path(local) / "bridge"  # local, never %APPDATA% (roaming)
    named = {"BRIDGE_STATE_DIR": "/named", "LOCALAPPDATA": local}
    for platform in ("linux", "darwin", "win32"):
        assert default_state_dir(platform=platform, env=named, home=home) == Path("/named")


def test_an_ignored_local_state_directory_is_said_once_with_how_to_choose_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bridge.store import state

    monkeypatch.setattr(state, "_local_noted", False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BRIDGE_STATE_DIR", str(tmp_path / ".local" / "bridge"))
    (tmp_path / ".local" / "bridge").mkdir(parents=True)
    state.default_state_dir()  # chosen (here through the environment): nothing to say
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("BRIDGE_STATE_DIR", str(tmp_path / "elsewhere"))
    for _ in range(3):
        assert state.default_state_dir() == tmp_path / "elsewhere"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"bridge: ignoring {tmp_path}/.local/bridge")
    assert "--state-dir .local/bridge" in err


@pytest.mark.reliability(35)
def test_another_users_state_directory_is_refused_before_anything_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Another user is played by chown to uid 65534 (as root), else by bridge.store.state's view
    of who it runs as (tests/another_user.py)."""
    from bridge.errors import StateDirUnsafe
    from bridge.store import state

    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    give_to_another_user(theirs, state, monkeypatch)
    with pytest.raises(StateDirUnsafe) as refused:
        state.private_state_dir(theirs)
    assert refused.value.code == "state_dir_unsafe"
    assert f"{theirs} belongs to another user" in str(refused.value)
    assert "--state-dir DIR" in str(refused.value)
    assert state.private_state_dir(tmp_path / "missing", create=False) == tmp_path / "missing"
    assert not (tmp_path / "missing").exists()


def test_a_state_directory_others_may_write_to_is_tightened_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bridge.store.state import private_state_dir

    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o777)
    assert private_state_dir(loose) == loose
    assert loose.stat().st_mode & 0o777 == 0o755
    assert "was writable by other users (mode 0777); tightened to 0755" in capsys.readouterr().err
    made = private_state_dir(tmp_path / "new" / "state")
    assert made.stat().st_mode & 0o777 == 0o700  # made private, whatever the umask
