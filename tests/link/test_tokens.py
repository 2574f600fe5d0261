"""Token files (bridge.link.tokens): made private, adopted only when bridge could have made them,
replaced (never used) when planted, loosened, another user's, a link or a FIFO."""

from __future__ import annotations

import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from bridge.errors import StateDirUnsafe
from bridge.link import tokens
from bridge.link.tokens import load_or_create_token, read_token, token_matches
from tests.another_user import give_to_another_user

#: A value of the very shape bridge makes: only where it lies and how can give it away.
KNOWN = "K" * 43


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _plant(path: Path, value: str = KNOWN, mode: int = 0o600) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(value + "\n")
    path.chmod(mode)


def test_a_token_is_made_private_once_and_then_kept(tmp_path: Path) -> None:
    path = tmp_path / "state" / "mcp-token"
    token, created = load_or_create_token(path)
    assert created and len(token) == 43 and _mode(path) == 0o600
    assert _mode(path.parent) == 0o700
    assert load_or_create_token(path) == (token, False)
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.reliability(35)
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602, 0o660], ids=oct)
def test_a_loose_token_file_is_replaced_never_used(
    tmp_path: Path, mode: int, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cdp-token"
    _plant(path, mode=mode)
    token, created = load_or_create_token(path)
    assert created and token != KNOWN and _mode(path) == 0o600
    assert path.read_text().strip() == token
    err = capsys.readouterr().err
    assert f"{path} has mode {mode:04o}" in err and "replaced by a new token" in err
    assert KNOWN not in err and token not in err


@pytest.mark.parametrize("value", ["planted", "hunter2", "K" * 42, "K" * 44, "K" * 42 + "!", ""])
def test_a_value_bridge_never_makes_is_replaced(tmp_path: Path, value: str) -> None:
    path = tmp_path / "mcp-token"
    _plant(path, value)
    token, created = load_or_create_token(path)
    assert created and token != value.strip() and len(token) == 43


@pytest.mark.reliability(35)
def test_a_symbolic_link_is_replaced_and_its_target_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    _plant(target)  # private, ours, the right shape: only the link is wrong
    path = tmp_path / "state" / "mcp-token"
    path.parent.mkdir(mode=0o700)
    path.symlink_to(target)
    assert read_token(path) == (None, "is a symbolic link")
    token, created = load_or_create_token(path)
    assert created and token != KNOWN
    assert not path.is_symlink() and _mode(path) == 0o600
    assert target.read_text() == KNOWN + "\n"


def test_a_fifo_is_replaced_without_waiting_for_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "cdp-token"
    os.mkfifo(path, 0o600)
    _, created = load_or_create_token(path)
    assert created and stat.S_ISREG(path.stat().st_mode)


@pytest.mark.reliability(35)
def test_another_users_token_file_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another user is played by chown to uid 65534 (as root), else by bridge.link.tokens' view of
    who it runs as (tests/another_user.py)."""
    path = tmp_path / "mcp-token"
    _plant(path)
    give_to_another_user(path, tokens, monkeypatch)
    assert (read_token(path)[1] or "").startswith("belongs to another user")
    monkeypatch.undo()  # bridge's own file, once made, is its own again
    token, created = load_or_create_token(path)
    assert created and token != KNOWN and path.stat().st_uid == os.geteuid()


def test_a_token_in_another_users_directory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bridge.store import state

    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    give_to_another_user(theirs, state, monkeypatch)
    with pytest.raises(StateDirUnsafe, match="belongs to another user"):
        load_or_create_token(theirs / "mcp-token")
    assert not (theirs / "mcp-token").exists()


def _race(path: str, out: multiprocessing.Queue[str]) -> None:  # type: ignore[type-arg]
    out.put(load_or_create_token(Path(path))[0])


def test_processes_replacing_one_planted_file_at_once_agree_on_one_token(tmp_path: Path) -> None:
    path = tmp_path / "mcp-token"
    _plant(path, mode=0o644)
    ctx = multiprocessing.get_context("fork")
    out: multiprocessing.Queue[str] = ctx.Queue()
    procs = [ctx.Process(target=_race, args=(str(path), out)) for _ in range(8)]
    for proc in procs:
        proc.start()
    seen = {out.get(timeout=30) for _ in procs}
    for proc in procs:
        proc.join(30)
    assert seen == {path.read_text().strip()} and KNOWN not in seen


def test_token_matches_is_exact() -> None:
    assert token_matches(KNOWN, KNOWN)
    assert not token_matches(None, KNOWN)
    assert not token_matches(KNOWN[:-1], KNOWN)
