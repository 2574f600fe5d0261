"""Files the browser tools write go only where the file policy allows (bridge/tools/saving.py);
the attacker here is a page that talked the agent into a file name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bridge.errors import PathNotAllowed
from bridge.policy.files import FilePolicy
from bridge.tools.saving import read_file, save_file


@pytest.fixture
def policy(tmp_path: Path) -> FilePolicy:
    (tmp_path / "work").mkdir()
    return FilePolicy.create(cwd=tmp_path / "work", home=tmp_path / "home", env={})


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../escaped.json", "outside"),
        ("/etc/cron.d/bridge", "outside"),
        ("~/.bashrc", "outside"),
        (".env", "hidden"),
        ("sub/.git/config", "hidden"),
        ("bad\x00name.json", "outside"),
        ("", "outside"),
    ],
)
def test_hostile_names_are_refused_and_nothing_is_written(
    policy: FilePolicy, tmp_path: Path, name: str, reason: str
) -> None:
    with pytest.raises(PathNotAllowed, match="will not write") as caught:
        save_file(policy, name, b"x", "application/json")
    assert caught.value.reason == reason
    assert "Nothing was written" in str(caught.value)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written == []


def test_a_symlink_out_of_the_folder_is_judged_where_it_points(
    policy: FilePolicy, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, policy.base / "link")
    with pytest.raises(PathNotAllowed):
        save_file(policy, "link/state.json", b"x", "application/json")
    assert list(outside.iterdir()) == []


def test_a_plain_name_is_saved_in_the_working_folder_never_over_a_file(
    policy: FilePolicy,
) -> None:
    first = save_file(policy, "state.json", b"one", "application/json")
    assert first == policy.base / "state.json" and first.read_bytes() == b"one"
    second = save_file(policy, "state.json", b"two", "application/json")
    assert second == policy.base / "state (1).json"
    assert first.read_bytes() == b"one" and second.read_bytes() == b"two"
    nested = save_file(policy, "out/page.pdf", b"%PDF", "application/pdf")
    assert nested == policy.base / "out" / "page.pdf"


def test_reading_follows_the_same_policy(policy: FilePolicy, tmp_path: Path) -> None:
    (tmp_path / "secret.json").write_text("{}")
    with pytest.raises(PathNotAllowed):
        read_file(policy, "../secret.json", 100)
    with pytest.raises(PathNotAllowed):
        read_file(policy, "a\x00b", 100)
    (policy.base / "s.json").write_text("{}")
    assert read_file(policy, "s.json", 100)[1] == b"{}"
