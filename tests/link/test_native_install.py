"""``bridge.link.native_install``: where the native messaging host is registered, and what with.

Every test installs into ``tmp_path`` with an explicit environment and, for Windows, a fake
registry: nothing here touches the real home directory, profile or registry.
"""

from __future__ import annotations

import argparse
import json
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.link.native_install import (
    ALLOWED_ORIGIN,
    BROWSERS,
    HOST_NAME,
    InstallResult,
    add_arguments,
    install,
    manifest_path,
    run,
    uninstall,
    wrapper_path,
)

PYTHON = "/opt/py/bin/python3"
ORIGIN = "chrome-extension://iomhiibonjdeegefpemgdjbgoabaphda/"

LINUX_DIRS = {
    "chrome": ".config/google-chrome/NativeMessagingHosts",
    "chromium": ".config/chromium/NativeMessagingHosts",
    "edge": ".config/microsoft-edge/NativeMessagingHosts",
    "brave": ".config/BraveSoftware/Brave-Browser/NativeMessagingHosts",
}
MAC_DIRS = {
    "chrome": "Library/Application Support/Google/Chrome/NativeMessagingHosts",
    "chromium": "Library/Application Support/Chromium/NativeMessagingHosts",
    "edge": "Library/Application Support/Microsoft Edge/NativeMessagingHosts",
    "brave": "Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts",
}
WINDOWS_KEYS = {
    "chrome": "Software\\Google\\Chrome\\NativeMessagingHosts\\com.bridge.host",
    "chromium": "Software\\Chromium\\NativeMessagingHosts\\com.bridge.host",
    "edge": "Software\\Microsoft\\Edge\\NativeMessagingHosts\\com.bridge.host",
    "brave": "Software\\BraveSoftware\\Brave-Browser\\NativeMessagingHosts\\com.bridge.host",
}


class FakeRegistry:
    """HKEY_CURRENT_USER as a dict of key -> default value, with a log of every call."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
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


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _manifest(path: Path) -> dict[str, object]:
    loaded = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_constants() -> None:
    assert HOST_NAME == "com.bridge.host"
    assert ALLOWED_ORIGIN == ORIGIN
    assert BROWSERS == ("chrome", "chromium", "edge", "brave")


@pytest.mark.parametrize("browser", BROWSERS)
def test_linux_manifest_location(browser: str, tmp_path: Path) -> None:
    path = manifest_path(browser, platform="linux", home=tmp_path, env={})
    assert path == tmp_path / LINUX_DIRS[browser] / "com.bridge.host.json"
    wrapper = wrapper_path(browser, platform="linux", home=tmp_path, env={})
    assert wrapper == tmp_path / ".local/share/bridge/bridge-native-host"


@pytest.mark.parametrize("browser", BROWSERS)
def test_macos_manifest_location(browser: str, tmp_path: Path) -> None:
    path = manifest_path(browser, platform="darwin", home=tmp_path, env={})
    assert path == tmp_path / MAC_DIRS[browser] / "com.bridge.host.json"
    wrapper = wrapper_path(browser, platform="darwin", home=tmp_path, env={})
    assert wrapper == tmp_path / "Library/Application Support/bridge/bridge-native-host"


@pytest.mark.parametrize("browser", BROWSERS)
def test_install_writes_where_manifest_path_says(browser: str, tmp_path: Path) -> None:
    for platform in ("linux", "darwin"):
        home = tmp_path / platform
        result = install(browser, python=PYTHON, platform=platform, home=home, env={})
        assert result.manifest == manifest_path(browser, platform=platform, home=home, env={})
        assert result.manifest.is_file()
        assert result.wrapper.is_file()
        assert result.registry_key is None
        assert result.changed


def test_xdg_directories_are_honoured(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_DATA_HOME": str(tmp_path / "data")}
    result = install("brave", python=PYTHON, platform="linux", home=tmp_path / "home", env=env)
    assert result.manifest == (
        tmp_path / "cfg/BraveSoftware/Brave-Browser/NativeMessagingHosts/com.bridge.host.json"
    )
    assert result.wrapper == tmp_path / "data/bridge/bridge-native-host"
    assert not (tmp_path / "home").exists()


def test_relative_xdg_values_are_ignored(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": "relative/cfg", "XDG_DATA_HOME": ""}
    path = manifest_path("chrome", platform="linux", home=tmp_path, env=env)
    assert path == tmp_path / LINUX_DIRS["chrome"] / "com.bridge.host.json"
    assert wrapper_path("chrome", platform="linux", home=tmp_path, env=env) == (
        tmp_path / ".local/share/bridge/bridge-native-host"
    )


def test_user_data_dir_holds_manifest_and_wrapper(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    result = install(
        "chromium", profile, python=PYTHON, platform="linux", home=tmp_path / "home", env={}
    )
    assert result.manifest == profile / "NativeMessagingHosts/com.bridge.host.json"
    assert result.wrapper == profile / "NativeMessagingHosts/bridge-native-host"
    assert _manifest(result.manifest)["path"] == str(result.wrapper)
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_user_data_dir_is_refused_off_linux(platform: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="only reads native messaging hosts from the default"):
        install("chrome", tmp_path / "profile", python=PYTHON, platform=platform, home=tmp_path)
    with pytest.raises(ValueError, match="Linux"):
        manifest_path("chrome", tmp_path / "profile", platform=platform, home=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_manifest_content_is_exact(tmp_path: Path) -> None:
    result = install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={})
    text = result.manifest.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert text.startswith('{\n  "name": "com.bridge.host",\n')
    assert json.loads(text) == {
        "name": "com.bridge.host",
        "description": (
            "bridge: tells the bridge extension where local relays are (and can carry its link)"
        ),
        "path": str(tmp_path / ".local/share/bridge/bridge-native-host"),
        "type": "stdio",
        "allowed_origins": [ORIGIN],
    }
    assert Path(str(_manifest(result.manifest)["path"])).is_absolute()
    assert _mode(result.manifest) == 0o644


def test_wrapper_is_executable_and_runs_the_given_python(tmp_path: Path) -> None:
    result = install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={})
    assert _mode(result.wrapper) == 0o755
    lines = result.wrapper.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "#!/bin/sh"
    assert lines[-1] == 'exec /opt/py/bin/python3 -m bridge.link.native_host "$@"'


def test_wrapper_quotes_an_unusual_python_path(tmp_path: Path) -> None:
    python = "/opt/my py's/python"
    result = install("chrome", python=python, platform="linux", home=tmp_path, env={})
    last = result.wrapper.read_text(encoding="utf-8").splitlines()[-1]
    assert last == "exec '/opt/my py'\"'\"'s/python' -m bridge.link.native_host \"$@\""


@pytest.mark.skipif(sys.platform == "win32", reason="runs a POSIX shell script")
def test_the_wrapper_really_runs_python_with_the_host_module(tmp_path: Path) -> None:
    # A space and a quote in the directory prove the exec line's quoting, not just its text.
    bin_dir = tmp_path / "py dir's"
    bin_dir.mkdir()
    fakepy = bin_dir / "fakepy"
    fakepy.write_text("#!/bin/sh\nprintf '%s\\n' \"$*\"\n", encoding="utf-8")
    fakepy.chmod(0o755)
    result = install("chrome", python=str(fakepy), platform="linux", home=tmp_path / "home", env={})
    done = subprocess.run(
        [str(result.wrapper), "extra"], capture_output=True, text=True, timeout=10, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "-m bridge.link.native_host extra\n"


def test_install_is_idempotent(tmp_path: Path) -> None:
    first = install("edge", python=PYTHON, platform="linux", home=tmp_path, env={})
    assert first.changed
    before = {p: p.stat() for p in (first.manifest, first.wrapper)}
    second = install("edge", python=PYTHON, platform="linux", home=tmp_path, env={})
    assert second == InstallResult(
        "edge", first.manifest, first.wrapper, None, changed=False, action="install"
    )
    for path, old in before.items():
        new = path.stat()
        assert (new.st_mtime_ns, new.st_ino) == (old.st_mtime_ns, old.st_ino)
    assert "already installed" in second.describe()
    # No temporary files are left behind next to either file.
    assert sorted(p.name for p in first.manifest.parent.iterdir()) == ["com.bridge.host.json"]
    assert sorted(p.name for p in first.wrapper.parent.iterdir()) == ["bridge-native-host"]


def test_install_repairs_a_changed_file(tmp_path: Path) -> None:
    first = install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={})
    first.wrapper.chmod(0o644)
    assert install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={}).changed
    assert _mode(first.wrapper) == 0o755
    again = install("chrome", python="/other/python", platform="linux", home=tmp_path, env={})
    assert again.changed
    assert "exec /other/python -m" in first.wrapper.read_text(encoding="utf-8")


def test_uninstall_removes_both_files_and_only_them(tmp_path: Path) -> None:
    installed = install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={})
    removed = uninstall("chrome", platform="linux", home=tmp_path, env={})
    assert removed.changed
    assert not installed.manifest.exists()
    assert not installed.wrapper.exists()
    assert installed.manifest.parent.is_dir()
    assert installed.wrapper.parent.is_dir()
    assert removed.describe().startswith("removed bridge's native messaging host for chrome")
    again = uninstall("chrome", platform="linux", home=tmp_path, env={})
    assert not again.changed
    assert "was not installed" in again.describe()


def test_uninstall_keeps_the_wrapper_another_browser_uses(tmp_path: Path) -> None:
    chrome = install("chrome", python=PYTHON, platform="linux", home=tmp_path, env={})
    install("brave", python=PYTHON, platform="linux", home=tmp_path, env={})
    removed = uninstall("chrome", platform="linux", home=tmp_path, env={})
    assert removed.changed
    assert removed.kept_for == ("brave",)
    assert not chrome.manifest.exists()
    assert chrome.wrapper.exists()
    assert uninstall("brave", platform="linux", home=tmp_path, env={}).changed
    assert not chrome.wrapper.exists()


def test_windows_registers_the_manifest_in_the_registry(tmp_path: Path) -> None:
    registry = FakeRegistry()
    python = "C:\\Program Files\\Python311\\python.exe"
    env = {"LOCALAPPDATA": str(tmp_path / "Local")}
    result = install(
        "chrome", python=python, platform="win32", home=tmp_path, env=env, registry=registry
    )
    key = "Software\\Google\\Chrome\\NativeMessagingHosts\\com.bridge.host"
    assert result.registry_key == key
    assert result.manifest == tmp_path / "Local/bridge/com.bridge.host.json"
    assert result.wrapper == tmp_path / "Local/bridge/bridge-native-host.bat"
    assert registry.values == {key: str(result.manifest)}
    assert result.wrapper.read_bytes() == (
        b'@echo off\r\n"C:\\Program Files\\Python311\\python.exe" -m bridge.link.native_host %*\r\n'
    )
    assert _manifest(result.manifest)["path"] == str(result.wrapper)
    assert "HKEY_CURRENT_USER\\" + key in result.describe()

    writes = len([c for c in registry.calls if c[0] == "write"])
    again = install(
        "chrome", python=python, platform="win32", home=tmp_path, env=env, registry=registry
    )
    assert not again.changed
    assert len([c for c in registry.calls if c[0] == "write"]) == writes

    removed = uninstall("chrome", platform="win32", home=tmp_path, env=env, registry=registry)
    assert removed.changed
    assert registry.values == {}
    assert not result.manifest.exists()
    assert not result.wrapper.exists()
    again_removed = uninstall("chrome", platform="win32", home=tmp_path, env=env, registry=registry)
    assert not again_removed.changed


@pytest.mark.parametrize("browser", BROWSERS)
def test_windows_registry_key_per_browser(browser: str, tmp_path: Path) -> None:
    registry = FakeRegistry()
    result = install(
        browser,
        python="C:\\py\\python.exe",
        platform="win32",
        home=tmp_path,
        env={},
        registry=registry,
    )
    assert result.registry_key == WINDOWS_KEYS[browser]
    # Without %LOCALAPPDATA%, the usual place under the home directory.
    assert result.manifest == tmp_path / "AppData/Local/bridge/com.bridge.host.json"
    assert registry.values == {WINDOWS_KEYS[browser]: str(result.manifest)}


def test_windows_uninstall_keeps_the_manifest_another_browser_uses(tmp_path: Path) -> None:
    registry = FakeRegistry()
    py = "C:\\py\\python.exe"
    chrome = install(
        "chrome", python=py, platform="win32", home=tmp_path, env={}, registry=registry
    )
    install("edge", python=py, platform="win32", home=tmp_path, env={}, registry=registry)
    removed = uninstall("edge", platform="win32", home=tmp_path, env={}, registry=registry)
    assert removed.kept_for == ("chrome",)
    assert chrome.manifest.exists()
    assert chrome.wrapper.exists()
    assert registry.values == {WINDOWS_KEYS["chrome"]: str(chrome.manifest)}


def test_windows_batch_file_escapes_percent(tmp_path: Path) -> None:
    result = install(
        "chrome",
        python="C:\\100%\\python.exe",
        platform="win32",
        home=tmp_path,
        env={},
        registry=FakeRegistry(),
    )
    assert b'"C:\\100%%\\python.exe" -m bridge.link.native_host %*' in result.wrapper.read_bytes()


def test_unknown_browser_names_the_choices(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="chrome, chromium, edge, brave") as raised:
        install("firefox", python=PYTHON, platform="linux", home=tmp_path, env={})
    assert "'firefox'" in str(raised.value)
    with pytest.raises(ValueError, match="chrome, chromium, edge, brave"):
        uninstall("safari", platform="linux", home=tmp_path, env={})
    with pytest.raises(ValueError, match="chrome, chromium, edge, brave"):
        manifest_path("opera", platform="linux", home=tmp_path, env={})
    assert list(tmp_path.iterdir()) == []


def test_relative_python_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="absolute"):
        install("chrome", python="python3", platform="linux", home=tmp_path, env={})
    assert list(tmp_path.iterdir()) == []


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_arguments_and_defaults() -> None:
    args = _parse()
    assert (args.browser, args.user_data_dir, args.uninstall) == ("chrome", None, False)
    args = _parse("--browser", "edge", "--user-data-dir", "/tmp/x", "--uninstall")
    assert (args.browser, args.user_data_dir, args.uninstall) == ("edge", Path("/tmp/x"), True)


def test_arguments_refuse_an_unknown_browser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        _parse("--browser", "firefox")
    assert exited.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_run_installs_and_prints_what_it_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "profile"
    code = run(
        _parse("--browser", "chromium", "--user-data-dir", str(profile)),
        platform="linux",
        home=tmp_path / "home",
        env={},
    )
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    manifest = profile / "NativeMessagingHosts/com.bridge.host.json"
    assert manifest.is_file()
    assert out.splitlines() == [
        "installed bridge's native messaging host for chromium",
        f"  manifest: {manifest}",
        f"  wrapper:  {profile / 'NativeMessagingHosts/bridge-native-host'}",
    ]
    wrapper = (profile / "NativeMessagingHosts/bridge-native-host").read_text(encoding="utf-8")
    assert f"exec {shlex.quote(sys.executable)} -m bridge.link.native_host" in wrapper

    code = run(_parse("--user-data-dir", str(profile), "--uninstall"), platform="linux", env={})
    out, _ = capsys.readouterr()
    assert code == 0
    assert out.startswith("removed bridge's native messaging host for chrome\n")
    assert not manifest.exists()


def test_run_reports_bad_input_and_returns_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(
        _parse("--user-data-dir", str(tmp_path / "profile")),
        platform="darwin",
        home=tmp_path,
        env={},
    )
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith("install-native-host: --user-data-dir is only supported on Linux")
    bad = argparse.Namespace(browser="firefox", user_data_dir=None, uninstall=False)
    assert run(bad, platform="linux", home=tmp_path, env={}) == 2
    assert "choose one of chrome, chromium, edge, brave" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_run_reports_a_file_system_error_and_returns_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "not-a-dir"
    home.write_text("", encoding="utf-8")
    assert run(_parse(), platform="linux", home=home, env={}) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("install-native-host: ")
