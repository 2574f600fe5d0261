"""bridge's default folders per OS (``bridge.folders``): every system's answer, checked here."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.folders import default_folder, folder_hint

HOME = Path("/home/ada")


@pytest.mark.parametrize(
    ("purpose", "linux", "mac", "hint"),
    [
        ("state", ".local/state/bridge", "Library/Application Support/bridge", ".local/state"),
        ("config", ".config/bridge", "Library/Application Support/bridge", ".config"),
        ("cache", ".cache/bridge", "Library/Caches/bridge", ".cache"),
    ],
)
def test_each_os_has_its_own_place_for_each_purpose(
    purpose: str, linux: str, mac: str, hint: str
) -> None:
    def folder(platform: str, env: dict[str, str]) -> Path:
        return default_folder(purpose, platform=platform, env=env, home=HOME)  # type: ignore[arg-type]

    assert folder("linux", {}) == HOME / linux
    assert folder("freebsd14", {}) == HOME / linux  # other POSIX: XDG too
    assert folder("darwin", {}) == HOME / mac
    xdg = {"XDG_STATE_HOME": "/x", "XDG_CONFIG_HOME": "/x", "XDG_CACHE_HOME": "/x"}
    assert folder("darwin", xdg) == HOME / mac  # not read on macOS
    local = {"LOCALAPPDATA": r"C:\Users\ada\AppData\Local", **xdg}
    assert folder("win32", local) == Path(r"C:\Users\ada\AppData\Local") / "bridge"
    assert folder("win32", {}) == HOME / "AppData" / "Local" / "bridge"  # where it always is
    assert folder_hint(purpose, "linux") == f"~/{hint}/bridge"  # type: ignore[arg-type]
    assert folder_hint(purpose, "darwin") == f"~/{mac}"  # type: ignore[arg-type]
    assert folder_hint(purpose, "win32") == "%LOCALAPPDATA%\\bridge"  # type: ignore[arg-type]


def test_linux_honours_xdg_as_bridge_always_did() -> None:
    env = {"XDG_STATE_HOME": "/s", "XDG_CONFIG_HOME": "/c", "XDG_CACHE_HOME": "/k"}
    assert default_folder("state", platform="linux", env=env, home=HOME) == Path("/s/bridge")
    assert default_folder("config", platform="linux", env=env, home=HOME) == Path("/c/bridge")
    assert default_folder("cache", platform="linux", env=env, home=HOME) == Path("/k/bridge")
    relative = {"XDG_STATE_HOME": "s", "XDG_CONFIG_HOME": "c", "XDG_CACHE_HOME": "k"}
    # State and config: the XDG spec's "absolute only"; the profile cache never checked.
    assert default_folder("state", platform="linux", env=relative, home=HOME) == (
        HOME / ".local" / "state" / "bridge"
    )
    assert default_folder("config", platform="linux", env=relative, home=HOME) == (
        HOME / ".config" / "bridge"
    )
    assert default_folder("cache", platform="linux", env=relative, home=HOME) == Path("k/bridge")
