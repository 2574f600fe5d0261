"""``install-native-host --claude-extension``: bridge as the Claude extension's native host.

Claude's own desktop tools register the same host name, so what bridge replaces must come
back exactly on uninstall. Every test installs into ``tmp_path`` with an explicit platform,
environment and, for Windows, a fake registry: nothing here touches the real profile.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import stat
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from bridge.link.native_install import (
    BRIDGE_HOST,
    CLAUDE_HOST,
    REPLACED_RECORD,
    InstallResult,
    add_arguments,
    install,
    manifest_path,
    run,
    uninstall,
    wrapper_path,
)
from bridge.wire.claude import CLAUDE_ALLOWED_ORIGIN, CLAUDE_HOST_NAME

ROOT = Path(__file__).resolve().parents[2]
PYTHON = "/opt/py/bin/python3"
CLAUDE_ID = "fcoeoabgfenejglbffodgkkbkcdhcgfn"
UNDO = "`bridge install-native-host --claude-extension --uninstall` puts it back"

LAYOUTS = {
    "linux": (
        ".config/google-chrome/NativeMessagingHosts",
        ".local/share/bridge",
    ),
    "darwin": (
        "Library/Application Support/Google/Chrome/NativeMessagingHosts",
        "Library/Application Support/bridge",
    ),
}
WINDOWS_KEY = (
    "Software\\Google\\Chrome\\NativeMessagingHosts\\com.anthropic.claude_code_browser_extension"
)
EDGE_KEY = (
    "Software\\Microsoft\\Edge\\NativeMessagingHosts\\com.anthropic.claude_code_browser_extension"
)


class FakeRegistry:
    """HKEY_CURRENT_USER as a dict of key -> default value, with a log of every call."""

    def __init__(self, values: dict[str, str] | None = None) -> None:
        self.values: dict[str, str] = dict(values or {})
        self.calls: list[tuple[str, str]] = []

    def read(self, key: str) -> str | None:
        self.calls.append(("read", key))
        return self.values.get(key)

    def write(self, key: str, value: str) -> None:
        self.calls.append(("write", key))
        self.values[key] = value

    def delete(self, key: str) -> bool:
        self.calls.append(("delete", key))
        return self.values.pop(key, None) is not None


def _theirs(program: str = "/home/u/.claude/chrome/chrome-native-host") -> bytes:
    """A manifest as Claude Code might write it: its own formatting, not bridge's."""
    return (
        '{"name":"com.anthropic.claude_code_browser_extension",'
        '"description":"Claude Code Browser Extension Native Host",'
        f'"path":{json.dumps(program)},"type":"stdio",'
        f'"allowed_origins":["chrome-extension://{CLAUDE_ID}/"]}}'
    ).encode()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _manifest(path: Path) -> dict[str, object]:
    loaded = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _plant(path: Path, data: bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir())


def _claude(platform: str, home: Path) -> tuple[Path, Path]:
    manifest = manifest_path("chrome", platform=platform, home=home, env={}, kind=CLAUDE_HOST)
    wrapper = wrapper_path("chrome", platform=platform, home=home, env={}, kind=CLAUDE_HOST)
    return manifest, wrapper


def test_the_claude_kind_names_the_claude_extension_and_its_host() -> None:
    assert CLAUDE_HOST.name == CLAUDE_HOST_NAME == "com.anthropic.claude_code_browser_extension"
    assert CLAUDE_HOST.origin == CLAUDE_ALLOWED_ORIGIN == f"chrome-extension://{CLAUDE_ID}/"
    assert CLAUDE_HOST.module == "bridge.link.claude_host"
    assert (CLAUDE_HOST.wrapper, CLAUDE_HOST.windows_wrapper) == (
        "bridge-claude-host",
        "bridge-claude-host.bat",
    )
    assert BRIDGE_HOST.name == "com.bridge.host"


@pytest.mark.parametrize("platform", sorted(LAYOUTS))
def test_manifest_and_wrapper_go_beside_bridge_s_own(platform: str, tmp_path: Path) -> None:
    hosts, data = LAYOUTS[platform]
    result = install(
        "chrome", python=PYTHON, platform=platform, home=tmp_path, env={}, kind=CLAUDE_HOST
    )
    assert result.manifest == tmp_path / hosts / f"{CLAUDE_HOST_NAME}.json"
    assert result.wrapper == tmp_path / data / "bridge-claude-host"
    own = install("chrome", python=PYTHON, platform=platform, home=tmp_path, env={})
    assert own.wrapper.parent == result.wrapper.parent
    assert own.manifest.parent == result.manifest.parent


@pytest.mark.reliability(45)
def test_manifest_is_exact_and_its_origin_pinned_to_the_claude_extension(tmp_path: Path) -> None:
    # Whatever the manifest it replaces allowed, bridge's allows the Claude extension alone.
    manifest, _ = _claude("linux", tmp_path)
    wide = json.loads(_theirs())
    wide["allowed_origins"] = ["chrome-extension://*/", "chrome-extension://otherid/"]
    _plant(manifest, json.dumps(wide).encode(), 0o644)
    result = install(
        "chrome", python=PYTHON, platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST
    )
    assert _manifest(result.manifest) == {
        "name": "com.anthropic.claude_code_browser_extension",
        "description": "bridge: the Claude extension's native host, run by bridge",
        "path": str(tmp_path / ".local/share/bridge/bridge-claude-host"),
        "type": "stdio",
        "allowed_origins": ["chrome-extension://fcoeoabgfenejglbffodgkkbkcdhcgfn/"],
    }
    assert _mode(result.manifest) == 0o644
    assert _mode(result.wrapper) == 0o755
    lines = result.wrapper.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "#!/bin/sh"
    assert lines[-1] == 'exec /opt/py/bin/python3 -m bridge.link.claude_host "$@"'


@pytest.mark.skipif(sys.platform == "win32", reason="runs a POSIX shell script")
def test_the_wrapper_runs_the_claude_host_with_the_caller_origin(tmp_path: Path) -> None:
    fakepy = tmp_path / "fakepy"
    fakepy.write_text("#!/bin/sh\nprintf '%s\\n' \"$*\"\n", encoding="utf-8")
    fakepy.chmod(0o755)
    result = install(
        "chrome",
        python=str(fakepy),
        platform="linux",
        home=tmp_path / "home",
        env={},
        kind=CLAUDE_HOST,
    )
    done = subprocess.run(
        [str(result.wrapper), CLAUDE_ALLOWED_ORIGIN, "--parent-window=0"],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"-m bridge.link.claude_host {CLAUDE_ALLOWED_ORIGIN} --parent-window=0\n"


@pytest.mark.parametrize("platform", sorted(LAYOUTS))
def test_install_over_theirs_keeps_it_and_uninstall_puts_it_back_exactly(
    platform: str, tmp_path: Path
) -> None:
    manifest, wrapper = _claude(platform, tmp_path)
    theirs = _theirs()
    _plant(manifest, theirs, 0o640)
    result = install(
        "chrome", python=PYTHON, platform=platform, home=tmp_path, env={}, kind=CLAUDE_HOST
    )
    assert result.changed
    assert _manifest(manifest)["path"] == str(wrapper)

    record = wrapper.parent / REPLACED_RECORD
    assert _mode(record) == 0o600
    saved = json.loads(record.read_text(encoding="utf-8"))
    entry = saved["manifests"][str(manifest)]
    assert base64.b64decode(entry["bytes_base64"]) == theirs
    assert entry["mode"] == "0640"
    assert entry["manifest"] == str(manifest)
    assert datetime.fromisoformat(entry["saved_at"]).tzinfo is not None
    assert saved["registry"] == {}
    assert (
        f"  kept the previous host (/home/u/.claude/chrome/chrome-native-host) in {record}; " + UNDO
    ) in result.describe().splitlines()

    removed = uninstall("chrome", platform=platform, home=tmp_path, env={}, kind=CLAUDE_HOST)
    assert removed.changed
    assert manifest.read_bytes() == theirs
    assert _mode(manifest) == 0o640
    assert not wrapper.exists()
    assert not record.exists()
    assert _files(tmp_path) == [str(manifest.relative_to(tmp_path))]
    assert (
        f"  put back the previous host (/home/u/.claude/chrome/chrome-native-host) at {manifest}"
        in removed.describe().splitlines()
    )


def test_install_where_there_was_none_then_uninstall_leaves_nothing(tmp_path: Path) -> None:
    result = install(
        "chrome", python=PYTHON, platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST
    )
    assert result.notes == ()
    assert "kept the previous host" not in result.describe()
    assert not (result.wrapper.parent / REPLACED_RECORD).exists()
    removed = uninstall("chrome", platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    assert removed.changed and removed.notes == ()
    assert removed.describe().startswith(
        "removed bridge's native host for the Claude extension for chrome"
    )
    assert _files(tmp_path) == []
    again = uninstall("chrome", platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    assert not again.changed


def test_a_rerun_changes_nothing_and_never_overwrites_the_record(tmp_path: Path) -> None:
    manifest, wrapper = _claude("linux", tmp_path)
    _plant(manifest, _theirs(), 0o600)
    first = install(
        "chrome", python=PYTHON, platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST
    )
    record = wrapper.parent / REPLACED_RECORD
    kept = record.read_bytes()
    before = {p: p.stat() for p in (manifest, record)}

    again = install(
        "chrome", python=PYTHON, platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST
    )
    assert not again.changed
    assert again.notes == first.notes  # still says where theirs is kept
    assert "was already installed" in again.describe()
    for path, old in before.items():
        new = path.stat()
        assert (new.st_mtime_ns, new.st_ino) == (old.st_mtime_ns, old.st_ino)
    # A new interpreter rewrites the wrapper, and still not the record.
    assert install(
        "chrome", python="/other/python", platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST
    ).changed
    assert record.read_bytes() == kept
    assert record.stat().st_ino == before[record].st_ino

    uninstall("chrome", platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    assert manifest.read_bytes() == _theirs()
    assert _mode(manifest) == 0o600


def test_theirs_reinstalled_meanwhile_is_left_alone_at_uninstall(tmp_path: Path) -> None:
    manifest, wrapper = _claude("linux", tmp_path)
    _plant(manifest, _theirs(), 0o644)
    install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    newer = _theirs("/home/u/.claude/chrome/v2/chrome-native-host")
    manifest.write_bytes(newer)  # Claude Code reinstalled its host over bridge's

    removed = uninstall("chrome", platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    assert manifest.read_bytes() == newer
    assert not wrapper.exists()
    record = wrapper.parent / REPLACED_RECORD
    assert record.exists()  # the older one is not silently dropped
    assert (
        f"  {manifest} is no longer bridge's (it names "
        "/home/u/.claude/chrome/v2/chrome-native-host): left it alone; "
        f"what bridge replaced stays in {record}"
    ) in removed.describe().splitlines()


def test_theirs_put_back_by_hand_is_left_alone_and_the_record_goes(tmp_path: Path) -> None:
    manifest, wrapper = _claude("linux", tmp_path)
    _plant(manifest, _theirs(), 0o644)
    install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    manifest.write_bytes(_theirs())
    removed = uninstall("chrome", platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    assert manifest.read_bytes() == _theirs()
    assert not (wrapper.parent / REPLACED_RECORD).exists()
    assert "is the previous host's again" in removed.describe()


def test_a_newer_registration_of_theirs_is_the_one_kept(tmp_path: Path) -> None:
    manifest, _ = _claude("linux", tmp_path)
    _plant(manifest, _theirs(), 0o644)
    install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    newer = _theirs("/opt/claude/host")
    manifest.write_bytes(newer)
    manifest.chmod(0o600)
    again = install(
        "chrome", python=PYTHON, platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST
    )
    assert again.changed and "kept the previous host (/opt/claude/host)" in again.describe()
    uninstall("chrome", platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    assert manifest.read_bytes() == newer
    assert _mode(manifest) == 0o600


def test_a_manifest_removed_by_hand_gets_theirs_back(tmp_path: Path) -> None:
    manifest, _ = _claude("linux", tmp_path)
    _plant(manifest, _theirs(), 0o644)
    install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    manifest.unlink()
    assert uninstall("chrome", platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST).changed
    assert manifest.read_bytes() == _theirs()


def test_a_symlinked_manifest_is_refused_and_left_alone(tmp_path: Path) -> None:
    manifest, wrapper = _claude("linux", tmp_path)
    target = tmp_path / "elsewhere" / "theirs.json"
    _plant(target, _theirs(), 0o644)
    manifest.parent.mkdir(parents=True)
    manifest.symlink_to(target)
    with pytest.raises(ValueError, match="is a symbolic link") as raised:
        install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    assert str(target) in str(raised.value)
    assert "put the file itself there" in str(raised.value)
    assert manifest.is_symlink() and target.read_bytes() == _theirs()
    assert not wrapper.exists()
    assert not (wrapper.parent / REPLACED_RECORD).exists()

    removed = uninstall("chrome", platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    assert manifest.is_symlink() and target.read_bytes() == _theirs()
    assert "is a symbolic link, not bridge's manifest: left it alone" in removed.describe()


def test_an_unreadable_record_stops_install_before_anything_is_replaced(tmp_path: Path) -> None:
    manifest, wrapper = _claude("linux", tmp_path)
    _plant(manifest, _theirs(), 0o644)
    record = wrapper.parent / REPLACED_RECORD
    _plant(record, b"{not json", 0o600)
    with pytest.raises(ValueError, match="move it aside"):
        install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    assert manifest.read_bytes() == _theirs()
    assert record.read_bytes() == b"{not json"
    assert not wrapper.exists()


def test_each_browser_s_manifest_is_kept_apart(tmp_path: Path) -> None:
    chrome, wrapper = _claude("linux", tmp_path)
    brave = manifest_path("brave", platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    _plant(chrome, _theirs("/chrome/host"), 0o644)
    for browser in ("chrome", "brave"):
        install(browser, python=PYTHON, platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    removed = uninstall("chrome", platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    assert removed.kept_for == ("brave",)
    assert chrome.read_bytes() == _theirs("/chrome/host")
    assert wrapper.exists() and _manifest(brave)["path"] == str(wrapper)
    assert not (wrapper.parent / REPLACED_RECORD).exists()
    uninstall("brave", platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    assert not brave.exists() and not wrapper.exists()


def test_bridge_s_own_host_is_untouched_by_the_claude_one(tmp_path: Path) -> None:
    own = install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={})
    own_bytes = (own.manifest.read_bytes(), own.wrapper.read_bytes())
    install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    uninstall("chrome", platform="linux", home=tmp_path, env={}, kind=CLAUDE_HOST)
    assert (own.manifest.read_bytes(), own.wrapper.read_bytes()) == own_bytes


def test_user_data_dir_keeps_the_record_in_the_profile(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    hosts = profile / "NativeMessagingHosts"
    _plant(hosts / f"{CLAUDE_HOST_NAME}.json", _theirs(), 0o644)
    result = install(
        "chromium",
        profile,
        python=PYTHON,
        platform="linux",
        home=tmp_path / "home",
        env={},
        kind=CLAUDE_HOST,
    )
    assert result.wrapper == hosts / "bridge-claude-host"
    assert (hosts / REPLACED_RECORD).exists()
    assert (
        f"`bridge install-native-host --claude-extension --browser chromium "
        f"--user-data-dir {profile} --uninstall` puts it back"
    ) in result.describe()
    assert not (tmp_path / "home").exists()


def _win_install(registry: FakeRegistry, home: Path, browser: str = "chrome") -> InstallResult:
    return install(
        browser,
        python="C:\\py\\python.exe",
        platform="win32",
        home=home,
        env={"LOCALAPPDATA": str(home / "Local")},
        registry=registry,
        kind=CLAUDE_HOST,
    )


def _win_uninstall(registry: FakeRegistry, home: Path, browser: str = "chrome") -> InstallResult:
    env = {"LOCALAPPDATA": str(home / "Local")}
    return uninstall(
        browser, platform="win32", home=home, env=env, registry=registry, kind=CLAUDE_HOST
    )


def test_windows_keeps_the_registry_value_and_puts_it_back_exactly(tmp_path: Path) -> None:
    # Claude Code's manifest lives where it chose; the registry value names it.
    theirs = tmp_path / "Roaming/Claude/ChromeNativeHost" / f"{CLAUDE_HOST_NAME}.json"
    _plant(theirs, _theirs("C:\\Claude\\chrome-native-host.bat"), 0o644)
    registry = FakeRegistry({WINDOWS_KEY: str(theirs)})
    result = _win_install(registry, tmp_path)
    data = tmp_path / "Local/bridge"
    manifest = data / f"{CLAUDE_HOST_NAME}.json"
    assert registry.values == {WINDOWS_KEY: str(manifest)}
    assert _manifest(manifest)["path"] == str(data / "bridge-claude-host.bat")
    assert (data / "bridge-claude-host.bat").read_bytes() == (
        b'@echo off\r\n"C:\\py\\python.exe" -m bridge.link.claude_host %*\r\n'
    )
    saved = json.loads((data / REPLACED_RECORD).read_text(encoding="utf-8"))
    assert saved["registry"][WINDOWS_KEY]["value"] == str(theirs)
    assert saved["manifests"] == {}
    text = result.describe()
    assert f"kept the previous host (C:\\Claude\\chrome-native-host.bat, from {theirs})" in text

    writes = registry.calls.count(("write", WINDOWS_KEY))
    _win_install(registry, tmp_path)  # a rerun: no write, the record as it was
    assert registry.calls.count(("write", WINDOWS_KEY)) == writes
    assert json.loads((data / REPLACED_RECORD).read_text(encoding="utf-8")) == saved

    removed = _win_uninstall(registry, tmp_path)
    assert registry.values == {WINDOWS_KEY: str(theirs)}
    assert theirs.read_bytes() == _theirs("C:\\Claude\\chrome-native-host.bat")
    assert _files(data) == []
    assert f"put back HKEY_CURRENT_USER\\{WINDOWS_KEY}: {theirs}" in removed.describe()


def test_windows_without_a_key_before_deletes_it_at_uninstall(tmp_path: Path) -> None:
    registry = FakeRegistry()
    _win_install(registry, tmp_path)
    data = tmp_path / "Local/bridge"
    saved = json.loads((data / REPLACED_RECORD).read_text(encoding="utf-8"))
    assert saved["registry"][WINDOWS_KEY]["value"] is None  # its absence, kept
    _win_uninstall(registry, tmp_path)
    assert registry.values == {}
    assert ("delete", WINDOWS_KEY) in registry.calls
    deleted = registry.calls.index(("delete", WINDOWS_KEY))
    assert ("write", WINDOWS_KEY) not in registry.calls[deleted:]
    assert _files(data) == []


def test_windows_a_value_changed_meanwhile_is_left_alone(tmp_path: Path) -> None:
    registry = FakeRegistry({WINDOWS_KEY: "C:\\Claude\\old.json"})
    _win_install(registry, tmp_path)
    registry.values[WINDOWS_KEY] = "C:\\Claude\\new.json"  # Claude Code registered again
    removed = _win_uninstall(registry, tmp_path)
    assert registry.values == {WINDOWS_KEY: "C:\\Claude\\new.json"}
    text = removed.describe()
    assert "names C:\\Claude\\new.json now, not bridge's manifest: left it alone" in text


def test_windows_theirs_registered_again_by_hand_is_left_alone(tmp_path: Path) -> None:
    registry = FakeRegistry({WINDOWS_KEY: "C:\\Claude\\theirs.json"})
    _win_install(registry, tmp_path)
    registry.values[WINDOWS_KEY] = "C:\\Claude\\theirs.json"  # exactly what bridge replaced
    removed = _win_uninstall(registry, tmp_path)
    assert registry.values == {WINDOWS_KEY: "C:\\Claude\\theirs.json"}
    assert "names C:\\Claude\\theirs.json again (not bridge's): left it alone" in (
        removed.describe()
    )
    assert _files(tmp_path / "Local/bridge") == []  # nothing left to put back: no record


def test_windows_the_shared_manifest_stays_while_another_browser_uses_it(tmp_path: Path) -> None:
    registry = FakeRegistry({WINDOWS_KEY: "C:\\Claude\\theirs.json"})
    _win_install(registry, tmp_path)
    _win_install(registry, tmp_path, "edge")
    manifest = tmp_path / "Local/bridge" / f"{CLAUDE_HOST_NAME}.json"
    _win_uninstall(registry, tmp_path)
    assert registry.values == {WINDOWS_KEY: "C:\\Claude\\theirs.json", EDGE_KEY: str(manifest)}
    assert manifest.exists()
    _win_uninstall(registry, tmp_path, "edge")
    assert registry.values == {WINDOWS_KEY: "C:\\Claude\\theirs.json"}
    assert _files(tmp_path / "Local/bridge") == []


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_run_prints_what_was_kept_and_how_to_put_it_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _parse().claude_extension is False
    manifest, wrapper = _claude("linux", tmp_path)
    _plant(manifest, _theirs(), 0o644)
    assert run(_parse("--claude-extension"), platform="linux", home=tmp_path, env={}) == 0
    out, err = capsys.readouterr()
    record = wrapper.parent / REPLACED_RECORD
    assert err == ""
    assert out.splitlines() == [
        "installed bridge's native host for the Claude extension for chrome",
        f"  manifest: {manifest}",
        f"  wrapper:  {wrapper}",
        f"  kept the previous host (/home/u/.claude/chrome/chrome-native-host) in {record}; "
        + UNDO,
    ]
    code = run(_parse("--claude-extension", "--uninstall"), platform="linux", home=tmp_path, env={})
    out, _ = capsys.readouterr()
    assert code == 0
    assert out.splitlines() == [
        "removed bridge's native host for the Claude extension for chrome",
        f"  manifest: {manifest}",
        f"  wrapper:  {wrapper}",
        f"  put back the previous host (/home/u/.claude/chrome/chrome-native-host) at {manifest}",
    ]
    assert manifest.read_bytes() == _theirs()


def test_run_refuses_a_symlink_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest, _ = _claude("linux", tmp_path)
    manifest.parent.mkdir(parents=True)
    manifest.symlink_to(tmp_path / "nowhere.json")
    assert run(_parse("--claude-extension"), platform="linux", home=tmp_path, env={}) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"install-native-host: {manifest} is a symbolic link")


def test_the_bridge_command_takes_the_flag(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    hosts = profile / "NativeMessagingHosts"
    _plant(hosts / f"{CLAUDE_HOST_NAME}.json", _theirs(), 0o644)
    argv = [sys.executable, "-m", "bridge", "install-native-host", "--claude-extension"]
    argv += ["--browser", "chromium", "--user-data-dir", str(profile)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "kept the previous host (/home/u/.claude/chrome/chrome-native-host)" in done.stdout
    assert _manifest(hosts / f"{CLAUDE_HOST_NAME}.json")["allowed_origins"] == [
        CLAUDE_ALLOWED_ORIGIN
    ]
    done = subprocess.run(
        [*argv, "--uninstall"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert _files(profile) == [f"NativeMessagingHosts/{CLAUDE_HOST_NAME}.json"]
    assert (hosts / f"{CLAUDE_HOST_NAME}.json").read_bytes() == _theirs()
