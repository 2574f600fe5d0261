"""The outputs folder against a hostile site: names and planted links (bridge.store.outputs)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from bridge.errors import OutputsFolderRefused
from bridge.store.outputs import (
    MAX_NAME_BYTES,
    OutputFolder,
    mime_extension,
    numbered,
    outputs_folder,
    safe_name,
)

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and symlinks")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("chart.png", "chart.png"),
        ("../../.bashrc", "bashrc"),
        ("/etc/passwd", "passwd"),
        ("sandbox:/mnt/data/report.csv", "report.csv"),
        ("..\\..\\evil.exe", "evil.exe"),
        ("C:\\Windows\\system32\\x.dll", "x.dll"),
        ("a\x00b.png", "b.png"),
        ("bad\x01\x1fname\x7f.txt", "bad__name_.txt"),
        ("..", "output"),
        (".", "output"),
        ("", "output"),
        ("...hidden", "hidden"),
        ("trailing. . ", "trailing"),
        ("CON", "_CON"),
        ("nul.txt", "_nul.txt"),
        ("com1.tar.gz", "_com1.tar.gz"),
        ("Lpt9", "_Lpt9"),
        ('a:b*c?d"e<f>g|h.txt', "a_b_c_d_e_f_g_h.txt"),
        ("gpj\u202eexe.png", "gpj_exe.png"),
    ],
)
def test_safe_name_makes_one_plain_name(given: str, expected: str) -> None:
    assert safe_name(given) == expected


def test_safe_name_cuts_long_names_keeping_the_extension() -> None:
    name = safe_name("é" * 500 + ".png")
    assert len(name.encode("utf-8")) <= MAX_NAME_BYTES
    assert name.endswith(".png")
    assert safe_name("x" * 1000).startswith("x")
    assert len(safe_name("x" * 1000).encode()) <= MAX_NAME_BYTES


def test_numbered_names() -> None:
    assert numbered("a.png", 0) == "a.png"
    assert numbered("a.png", 2) == "a (2).png"
    assert numbered("README", 1) == "README (1)"
    assert mime_extension("image/png") == "png"
    assert mime_extension("text/plain") == ""


def test_default_folder_is_under_the_state_dir(tmp_path: Path) -> None:
    assert outputs_folder(tmp_path, "20261127-1", None) == tmp_path / "outputs" / "20261127-1"
    with pytest.raises(OutputsFolderRefused):
        outputs_folder(tmp_path, "../x", None)


def test_a_named_folder_in_a_protected_place_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".ssh"
    with pytest.raises(OutputsFolderRefused, match="protected place"):
        outputs_folder(tmp_path, "id", secret / "sub", protected=[secret])
    # Reached through a symlink, it is still the protected place.
    secret.mkdir(parents=True)
    (tmp_path / "innocent").symlink_to(secret)
    with pytest.raises(OutputsFolderRefused):
        outputs_folder(tmp_path, "id", tmp_path / "innocent", protected=[secret])
    with pytest.raises(OutputsFolderRefused):
        outputs_folder(tmp_path, "id", "a\x00b", protected=[])
    assert outputs_folder(tmp_path, "id", "out", base=tmp_path) == tmp_path / "out"


@posix_only
def test_save_is_private_and_never_overwrites(tmp_path: Path) -> None:
    folder = OutputFolder(tmp_path / "outs")
    first = folder.save("image", "../../a.png", b"one", "image/png")
    second = folder.save("image", "a.png", b"two", "image/png")
    assert first.path == tmp_path / "outs" / "a.png"
    assert second.path == tmp_path / "outs" / "a (1).png"
    assert first.path.read_bytes() == b"one" and second.path.read_bytes() == b"two"
    assert stat.S_IMODE(os.stat(first.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "outs").st_mode) == 0o700
    assert sorted(p.name for p in (tmp_path / "outs").iterdir()) == ["a (1).png", "a.png"]
    assert first.to_dict() == {
        "kind": "image",
        "name": "a.png",
        "path": str(first.path),
        "bytes": 3,
        "mime": "image/png",
    }


@posix_only
def test_a_planted_symlink_is_never_written_through(tmp_path: Path) -> None:
    outs = tmp_path / "outs"
    outs.mkdir()
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    (outs / "x.png").symlink_to(victim)
    (outs / "dangling.png").symlink_to(tmp_path / "nowhere")
    saved = OutputFolder(outs).save("image", "x.png", b"evil", "image/png")
    dangling = OutputFolder(outs).save("image", "dangling.png", b"evil", "image/png")
    assert victim.read_bytes() == b"keep"
    assert not (tmp_path / "nowhere").exists()
    assert saved.name == "x (1).png" and dangling.name == "dangling (1).png"
    assert not saved.path.is_symlink()


@posix_only
def test_the_folder_itself_as_a_symlink_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "outs").symlink_to(elsewhere)
    with pytest.raises(OutputsFolderRefused, match="symlink"):
        OutputFolder(tmp_path / "outs").save("file", "a.txt", b"x", "text/plain")
    assert list(elsewhere.iterdir()) == []


@posix_only
def test_no_temporary_file_is_left_behind(tmp_path: Path) -> None:
    folder = OutputFolder(tmp_path)
    for _ in range(3):
        folder.save("file", "same.txt", b"x", "text/plain")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "same (1).txt",
        "same (2).txt",
        "same.txt",
    ]
