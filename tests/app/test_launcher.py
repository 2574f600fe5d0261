"""Finding and launching the browser; stopping it leaves no process behind."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from bridge.app import launcher
from bridge.app.launcher import (
    _CANDIDATES,
    APP_PATHS_KEY,
    CHANNELS,
    BrowserConflict,
    BrowserNotFound,
    ExtensionDirInvalid,
    ExtensionLoadFailed,
    ExtensionLoadingUnavailable,
    LaunchedBrowser,
    LaunchOptions,
    _is_executable,
    default_profile_dir,
    discover_browser,
    extension_loading_for,
    find_browser,
    is_google_chrome,
    stop_process_tree,
    validate_extension_dir,
)
from bridge.app.runtime import Runtime, RuntimeOptions
from bridge.waiting import scaled
from bridge.wire.extension import EXTENSION_ID, extension_dir
from tests.exits import all_exit


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


# -- discovery on every system, as a pure function (no Chrome needed) ----------------------

MAC_HOME = "/Users/ada"
WIN_ENV = {
    "PROGRAMFILES": r"C:\Program Files",
    "PROGRAMFILES(X86)": r"C:\Program Files (x86)",
    "LOCALAPPDATA": r"C:\Users\ada\AppData\Local",
}


class FakeAppPaths:
    """The registry's App Paths as a dict: (hive, key) -> default value."""

    def __init__(self, values: dict[tuple[str, str], str] | None = None) -> None:
        self.values = values or {}
        self.asked: list[tuple[str, str]] = []

    def read(self, hive: str, key: str) -> str | None:
        self.asked.append((hive, key))
        return self.values.get((hive, key))


def _only(*present: str) -> Callable[[str], bool]:
    return lambda path: path in present


def _not_found(platform: str, env: dict[str, str], channel: str | None = None, **kw: Any) -> str:
    with pytest.raises(BrowserNotFound) as caught:
        discover_browser(platform, env, channel, is_executable=_only(), **kw)
    return str(caught.value)


def test_linux_discovery_is_today_s_path_lookup_in_today_s_order() -> None:
    env = {"PATH": "/usr/local/bin:/usr/bin"}
    both = _only("/usr/bin/chromium", "/usr/local/bin/google-chrome")
    assert discover_browser("linux", env, is_executable=both) == "/usr/bin/chromium"
    chrome = _only("/usr/local/bin/google-chrome")
    assert discover_browser("linux", env, is_executable=chrome) == "/usr/local/bin/google-chrome"
    # The real lookup agrees with shutil.which on this machine's PATH.
    found = discover_browser("linux", dict(os.environ), is_executable=_is_executable)
    assert found == next(filter(None, map(shutil.which, _CANDIDATES)))
    message = _not_found("linux", env)
    assert ", ".join(_CANDIDATES) + " on PATH" in message
    assert "apt-get install chromium" in message and "--browser-path" in message


@pytest.mark.parametrize(
    ("channel", "command", "installed"),
    [
        ("stable", "google-chrome-stable", "/opt/google/chrome/chrome"),
        ("beta", "google-chrome-beta", "/opt/google/chrome-beta/chrome"),
        ("dev", "google-chrome-unstable", "/opt/google/chrome-unstable/chrome"),
        ("canary", "google-chrome-canary", "/opt/google/chrome-canary/chrome"),
    ],
)
def test_linux_channels_are_google_s_commands_then_their_install_folder(
    channel: str, command: str, installed: str
) -> None:
    env = {"PATH": "/usr/bin"}
    everything = _only("/usr/bin/chromium", f"/usr/bin/{command}", installed)
    assert (
        discover_browser("linux", env, channel, is_executable=everything) == f"/usr/bin/{command}"
    )
    only_installed = _only("/usr/bin/chromium", installed)
    assert discover_browser("linux", env, channel, is_executable=only_installed) == installed
    message = _not_found("linux", env, channel)
    assert command in message and installed in message and "chromium" not in message
    assert f"Chrome {channel.capitalize()}" in message and "google.com/chrome" in message


def _app(root: str, name: str) -> str:
    return f"{root}/{name}.app/Contents/MacOS/{name}"


def test_mac_finds_chromium_then_chrome_in_applications_then_the_home_folder() -> None:
    env = {"HOME": MAC_HOME, "PATH": "/opt/homebrew/bin:/usr/bin"}
    chrome = _app("/Applications", "Google Chrome")
    own_chromium = _app(f"{MAC_HOME}/Applications", "Chromium")
    assert discover_browser("darwin", env, is_executable=_only(chrome)) == chrome
    assert discover_browser("darwin", env, is_executable=_only(chrome, own_chromium)) == (
        own_chromium
    )
    brew = "/opt/homebrew/bin/chromium"
    assert discover_browser("darwin", env, is_executable=_only(brew)) == brew
    message = _not_found("darwin", env)
    for name in ("Chromium", "Google Chrome", "Google Chrome Beta", "Google Chrome Canary"):
        assert _app("/Applications", name) in message
        assert _app(f"{MAC_HOME}/Applications", name) in message
    assert "brew install --cask chromium" in message


@pytest.mark.parametrize(
    ("channel", "app"),
    [
        ("stable", "Google Chrome"),
        ("beta", "Google Chrome Beta"),
        ("dev", "Google Chrome Dev"),
        ("canary", "Google Chrome Canary"),
    ],
)
def test_mac_channels_are_their_own_application_bundles(channel: str, app: str) -> None:
    env = {"HOME": MAC_HOME}
    chromium = _app("/Applications", "Chromium")
    wanted = _app(f"{MAC_HOME}/Applications", app)
    assert discover_browser("darwin", env, channel, is_executable=_only(chromium, wanted)) == (
        wanted
    )
    message = _not_found("darwin", env, channel)
    assert _app("/Applications", app) in message and "Chromium" not in message


@pytest.mark.parametrize(
    ("channel", "folder"),
    [
        ("stable", "Chrome"),
        ("beta", "Chrome Beta"),
        ("dev", "Chrome Dev"),
        ("canary", "Chrome SxS"),
    ],
)
def test_windows_channels_are_their_folders_in_program_files_and_local_app_data(
    channel: str, folder: str
) -> None:
    places = [
        rf"{WIN_ENV[var]}\Google\{folder}\Application\chrome.exe"
        for var in ("PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA")
    ]
    for place in places:
        assert discover_browser("win32", WIN_ENV, channel, is_executable=_only(place)) == place
    message = _not_found("win32", WIN_ENV, channel, registry=FakeAppPaths())
    assert all(place in message for place in places)


def test_windows_without_a_channel_tries_chromium_then_every_chrome_then_the_registry() -> None:
    chromium = rf"{WIN_ENV['LOCALAPPDATA']}\Chromium\Application\chrome.exe"
    stable = rf"{WIN_ENV['PROGRAMFILES']}\Google\Chrome\Application\chrome.exe"
    assert discover_browser("win32", WIN_ENV, is_executable=_only(stable, chromium)) == chromium
    assert discover_browser("win32", WIN_ENV, is_executable=_only(stable)) == stable
    elsewhere = r"D:\Apps\Chrome\Application\chrome.exe"
    registry = FakeAppPaths({("HKLM", APP_PATHS_KEY): f'"{elsewhere}"'})
    found = discover_browser("win32", WIN_ENV, is_executable=_only(elsewhere), registry=registry)
    assert found == elsewhere
    assert registry.asked == [("HKCU", APP_PATHS_KEY), ("HKLM", APP_PATHS_KEY)]
    message = _not_found("win32", WIN_ENV, registry=FakeAppPaths())
    assert rf"HKCU\{APP_PATHS_KEY} (not set)" in message and "Chrome SxS" in message
    assert "Install Chromium or Google Chrome" in message


def test_windows_stable_ignores_an_app_paths_entry_another_channel_took() -> None:
    beta = r"C:\Program Files\Google\Chrome Beta\Application\chrome.exe"
    registry = FakeAppPaths({("HKCU", APP_PATHS_KEY): beta})
    present = _only(beta)
    assert discover_browser("win32", WIN_ENV, is_executable=present, registry=registry) == beta
    with pytest.raises(BrowserNotFound, match="Chrome Beta"):  # listed, not launched
        discover_browser("win32", WIN_ENV, "stable", is_executable=present, registry=registry)
    # Beta, Dev and Canary are found by their folders only: the key says nothing of them.
    registry.asked.clear()
    with pytest.raises(BrowserNotFound):
        discover_browser("win32", WIN_ENV, "beta", is_executable=_only(), registry=registry)
    assert registry.asked == []


def test_windows_with_no_known_folders_says_the_variables_are_unset() -> None:
    assert "(unset)" in _not_found("win32", {}, registry=FakeAppPaths())


def test_an_unknown_channel_names_the_known_ones() -> None:
    with pytest.raises(BrowserNotFound, match="stable, beta, dev, canary"):
        discover_browser("linux", {}, "nightly", is_executable=_only())


def test_channel_and_an_explicit_browser_are_refused_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BRIDGE_BROWSER", raising=False)
    with pytest.raises(BrowserConflict, match="drop --browser-path"):
        find_browser(tmp_path / "chrome", channel="beta")
    monkeypatch.setenv("BRIDGE_BROWSER", str(tmp_path / "chrome"))
    with pytest.raises(BrowserConflict, match="unset BRIDGE_BROWSER"):
        find_browser(channel="canary")


def test_each_channel_has_a_profile_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "/cache")
    assert default_profile_dir() == Path("/cache/bridge/profile")  # as before channels
    assert {default_profile_dir(c) for c in CHANNELS} == {
        Path(f"/cache/bridge/profiles/{c}") for c in CHANNELS
    }


@pytest.mark.parametrize("env", [{}, {"XDG_CACHE_HOME": "/k"}, {"XDG_CACHE_HOME": "rel"}])
def test_linux_profiles_are_where_they_always_were(env: dict[str, str]) -> None:
    home = Path("/home/ada")
    before = Path(env.get("XDG_CACHE_HOME") or str(home / ".cache")) / "bridge"  # the old code
    for channel in (None, *CHANNELS):
        expected = before / "profile" if channel is None else before / "profiles" / channel
        assert default_profile_dir(channel, platform="linux", env=env, home=home) == expected


def test_profiles_per_os() -> None:
    home = Path("/Users/ada")
    caches = home / "Library" / "Caches" / "bridge"
    assert default_profile_dir(platform="darwin", env={}, home=home) == caches / "profile"
    assert default_profile_dir("beta", platform="darwin", env={}, home=home) == (
        caches / "profiles" / "beta"
    )
    local = {"LOCALAPPDATA": r"C:\Users\ada\AppData\Local"}
    profiles = Path(local["LOCALAPPDATA"]) / "bridge" / "profiles"
    assert default_profile_dir(platform="win32", env=local, home=home) == profiles / "default"
    assert {default_profile_dir(c, platform="win32", env=local, home=home) for c in CHANNELS} == {
        profiles / c for c in CHANNELS
    }
    assert "default" not in CHANNELS  # the default profile is no channel's


def test_a_channel_launch_uses_its_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin" / "google-chrome-beta"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.delenv("BRIDGE_BROWSER", raising=False)
    monkeypatch.setenv("PATH", str(fake.parent))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    launched = LaunchedBrowser(LaunchOptions(channel="beta", native_host=False))
    args = launched.command()
    assert args[0] == str(fake)
    assert f"--user-data-dir={tmp_path / 'cache/bridge/profiles/beta'}" in args
    # A Google Chrome ignores --load-extension: its extensions go in over the pipe.
    assert launched.extension_loading() == "cdp"
    assert "--remote-debugging-pipe" in args and "--enable-unsafe-extension-debugging" in args
    assert not any(a.startswith(("--load-extension", "--disable-extensions")) for a in args)


# -- --load-extension ------------------------------------------------------------------------


def _extension(folder: Path, manifest: object = None) -> Path:
    folder.mkdir(parents=True)
    body = {"manifest_version": 3, "name": "t", "version": "1"} if manifest is None else manifest
    (folder / "manifest.json").write_text(json.dumps(body))
    return folder


def test_extra_extensions_load_next_to_bridge_s(tmp_path: Path) -> None:
    mine = _extension(tmp_path / "mine")
    launcher = LaunchedBrowser(
        LaunchOptions(
            profile_dir=tmp_path / "p",
            native_host=False,
            extensions=[mine, mine / ".." / "mine"],  # the same folder twice loads once
        )
    )
    args = launcher.command()
    both = f"{Path(launcher.options.extension).resolve()},{mine}"
    assert f"--load-extension={both}" in args
    assert f"--disable-extensions-except={both}" in args


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "absent", "no such folder"),
        (lambda d: (d / "empty").mkdir() or d / "empty", "no manifest.json"),
        (lambda d: _extension(d / "x", "not json") and d / "x", "no manifest_version"),
        (lambda d: _extension(d / "v", {"name": "t"}), "no manifest_version"),
        (lambda d: _extension(d / "a,b"), "commas"),
    ],
)
def test_an_extension_folder_chromium_would_skip_is_refused_with_the_reason(
    tmp_path: Path, make: Callable[[Path], Path], message: str
) -> None:
    folder = make(tmp_path)
    with pytest.raises(ExtensionDirInvalid, match=message):
        validate_extension_dir(folder)
    launcher = LaunchedBrowser(
        LaunchOptions(profile_dir=tmp_path / "p", native_host=False, extensions=[folder])
    )
    with pytest.raises(ExtensionDirInvalid, match=message):
        launcher.command()
    assert not (tmp_path / "p").exists()  # refused before any profile was made


def test_a_broken_manifest_names_the_json_error(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "manifest.json").write_text("{not json")
    with pytest.raises(ExtensionDirInvalid, match="not readable JSON"):
        validate_extension_dir(folder)


MARKER = Path(__file__).resolve().parents[1] / "extensions" / "marker"
#: Resolves with the marker extension's mark once its content script has set it (no polling).
MARKED = """new Promise((resolve) => {
  const root = document.documentElement;
  const done = () => root.dataset.marker && (resolve(root.dataset.marker), true);
  if (!done()) new MutationObserver(done).observe(root, { attributes: true });
})"""


@pytest.mark.e2e
@pytest.mark.parametrize("loading", ["flags", "cdp"])
async def test_a_person_s_extension_runs_next_to_bridge_s_which_still_works(
    pages: str, tmp_path: Path, loading: launcher.ExtensionLoading
) -> None:
    """Both ways of loading, in Chromium: ``cdp`` is how a Google Chrome gets them."""
    options = RuntimeOptions(
        launch=True,
        headless=True,
        isolated=True,
        debug_pipe=True,
        load_extensions=(MARKER,),
        extension_loading=loading,
        state_dir=tmp_path / "state",
    )
    async with Runtime(options) as runtime:
        await runtime.connected()  # bridge's extension linked to its relay
        tab = await runtime.browser.new_tab(f"{pages}/")  # bridge drives a tab ...
        assert tab.tab_id in {t.tab_id for t in await runtime.browser.list_tabs()}
        # ... where the other extension's content script ran and its worker answered.
        mark = await tab.evaluate(MARKED, await_promise=True, timeout=scaled(20.0))
        source, marker_id = mark.split(" ")
        assert source == "worker" and marker_id != EXTENSION_ID
        assert runtime.launched is not None
        async with runtime.launched.direct_cdp() as cdp:
            workers = {
                t["url"].split("/")[2]
                for t in await cdp.targets("service_worker")
                if t["url"].startswith("chrome-extension://")
            }
        assert {EXTENSION_ID, marker_id} <= workers
        assert runtime.launched.extension_loading() == loading
        if loading == "cdp":  # each id as Extensions.loadUnpacked gave it
            assert runtime.launched.extension_ids == {
                extension_dir(): EXTENSION_ID,
                MARKER: marker_id,
            }
        else:
            assert runtime.launched.extension_ids == {}


# -- extensions over the DevTools pipe (Google Chrome 137+ ignores --load-extension) --------


@pytest.mark.parametrize(
    "path",
    [
        "/opt/google/chrome/chrome",
        "/opt/google/chrome-beta/chrome",
        "/opt/google/chrome-unstable/chrome",
        "/opt/google/chrome/google-chrome",
        "/usr/bin/google-chrome",
        "/usr/bin/google-chrome-stable",
        "/usr/local/bin/google-chrome-canary",
        "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
        "/Users/ada/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary",
        r"C:\Program Files\Google\Chrome\Application\chrome.exe",
        r"C:\Users\ada\AppData\Local\Google\Chrome SxS\Application\chrome.exe",
        r"C:\Program Files (x86)\Google\Chrome Beta\Application\chrome.exe",
    ],
)
def test_google_chrome_is_told_from_its_install_path(path: str) -> None:
    assert is_google_chrome(path)
    assert extension_loading_for(path) == "cdp"
    assert extension_loading_for(path, explicit="flags") == "flags"  # asked for: obeyed


@pytest.mark.parametrize(
    "path",
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/snap/bin/chromium",
        "/usr/bin/chrome",  # a name any build may have: the flags, unless it links into Google's
        "/Applications/Chromium.app/Contents/MacOS/Chromium",
        # Chrome for Testing honours --load-extension, whatever its name says.
        "/Applications/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
        "/home/ada/.cache/puppeteer/chrome/linux-139.0.7258.66/chrome-linux64/chrome",
        r"C:\Users\ada\.cache\puppeteer\chrome\win64-139\chrome-win64\chrome.exe",
        r"C:\Users\ada\AppData\Local\Chromium\Application\chrome.exe",
        "/home/ada/google/chromium/src/out/Default/chrome",  # a Chromium checkout's build
        "",
    ],
)
def test_chromium_and_chrome_for_testing_keep_the_flags(path: str) -> None:
    assert not is_google_chrome(path)
    assert extension_loading_for(path) == "flags"
    assert extension_loading_for(path, explicit="cdp") == "cdp"


def test_a_channel_or_a_link_into_google_s_folder_chooses_the_pipe() -> None:
    # --channel finds only Google Chrome, whatever the path looks like.
    assert extension_loading_for("/somewhere/odd/chrome", "stable") == "cdp"
    # /usr/bin/chrome (bridge's last Linux candidate) may be a link to Google's install.
    assert extension_loading_for("/usr/bin/chrome", resolved="/opt/google/chrome/chrome") == "cdp"
    assert extension_loading_for("/usr/bin/chromium", resolved="/usr/lib/chromium/chromium") == (
        "flags"
    )
    with pytest.raises(ValueError, match="flags, cdp"):
        extension_loading_for("/usr/bin/chromium", explicit="port")  # type: ignore[arg-type]


def test_a_symlink_to_google_chrome_is_followed(tmp_path: Path) -> None:
    # The real path, as the launcher reads it: a link named plainly, into a Google folder.
    real = tmp_path / "opt" / "google" / "chrome" / "chrome"
    real.parent.mkdir(parents=True)
    real.write_text("#!/bin/sh\n")
    real.chmod(0o755)
    (tmp_path / "chrome").symlink_to(real)
    launched = LaunchedBrowser(LaunchOptions(browser_path=str(tmp_path / "chrome")))
    assert launched.extension_loading() == "cdp"
    assert launched.executable == str(tmp_path / "chrome")  # started by the name it was given


def test_cdp_loading_puts_no_extension_on_the_command_line_and_one_pipe(tmp_path: Path) -> None:
    mine = _extension(tmp_path / "mine")
    for debug_pipe in (False, True):
        launched = LaunchedBrowser(
            LaunchOptions(
                profile_dir=tmp_path / "p",
                native_host=False,
                extensions=[mine],
                extension_loading="cdp",
                debug_pipe=debug_pipe,
            )
        )
        args = launched.command()
        assert not any(a.startswith(("--load-extension", "--disable-extensions")) for a in args)
        assert args.count("--remote-debugging-pipe") == 1  # the tests' pipe is the same one
        assert "--enable-unsafe-extension-debugging" in args
        assert not any(a.startswith("--remote-debugging-port") for a in args)  # never a port


@pytest.mark.e2e
async def test_a_folder_the_browser_refuses_is_a_typed_error_naming_it(tmp_path: Path) -> None:
    # It passes bridge's own check (a manifest_version) but not Chromium's (no name).
    nameless = _extension(tmp_path / "nameless", {"manifest_version": 3, "version": "1"})
    browser = LaunchedBrowser(
        LaunchOptions(
            headless=True,
            isolated=True,
            native_host=False,
            extensions=[nameless],
            extension_loading="cdp",
        )
    )
    with pytest.raises(ExtensionLoadFailed) as caught:
        await browser.start()
    message = str(caught.value)
    assert str(nameless) in message and "'name'" in message and "manifest.json" in message
    assert browser.process is None and browser.profile is not None
    assert not browser.profile.exists()  # stopped, its temporary profile gone
    assert browser.extension_ids == {extension_dir(): EXTENSION_ID}  # bridge's went in first


@pytest.mark.e2e
async def test_bridge_s_extension_under_another_id_is_refused(tmp_path: Path) -> None:
    """Without its manifest's key the extension gets another id, which no relay or native
    host knows: it would start and never link."""
    copy = tmp_path / "extension"
    shutil.copytree(extension_dir(), copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    del manifest["key"]
    (copy / "manifest.json").write_text(json.dumps(manifest))
    browser = LaunchedBrowser(
        LaunchOptions(
            headless=True, isolated=True, native_host=False, extension=copy, extension_loading="cdp"
        )
    )
    with pytest.raises(ExtensionLoadFailed, match=rf"not {EXTENSION_ID}.*bridge extension-path"):
        await browser.start()
    assert browser.process is None


async def test_a_browser_that_exits_ends_the_load_at_once(tmp_path: Path) -> None:
    """A closed pipe fails the pending load at once (no 30 s wait), with the browser's
    last words."""
    fake = tmp_path / "exits"
    fake.write_text("#!/bin/sh\necho 'no display, giving up' >&2\nexit 1\n")
    fake.chmod(0o755)
    browser = LaunchedBrowser(
        LaunchOptions(
            browser_path=str(fake), isolated=True, native_host=False, extension_loading="cdp"
        )
    )
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(ExtensionLoadFailed, match="exited") as caught:
        await browser.start()
    assert loop.time() - started < scaled(10.0)
    assert "no display, giving up" in str(caught.value)
    assert browser.process is None


async def test_google_chrome_where_the_pipe_cannot_be_passed_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows: a Google Chrome would start without bridge's extension, and bridge would
    wait for a link that never comes. It is refused before anything is made."""
    fake = tmp_path / "Google" / "Chrome" / "Application" / "chrome"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setattr(launcher, "debug_pipe_supported", lambda: False)
    browser = LaunchedBrowser(LaunchOptions(browser_path=str(fake), profile_dir=tmp_path / "p"))
    with pytest.raises(ExtensionLoadingUnavailable) as caught:
        await browser.start()
    message = str(caught.value)
    assert "Google Chrome" in message and "Chromium or Chrome for Testing" in message
    assert "Load unpacked" in message and "bridge extension-path" in message
    assert caught.value.code == "extension_loading_unavailable"
    assert browser.process is None and browser.devtools_pipe is None
    assert not (tmp_path / "p").exists()
    # Asked for by name, the same refusal says so; Chromium's flags still need no pipe.
    explicit = LaunchedBrowser(LaunchOptions(extension_loading="cdp", profile_dir=tmp_path / "q"))
    with pytest.raises(ExtensionLoadingUnavailable, match="extension_loading='cdp'"):
        await explicit.start()
    assert not (tmp_path / "q").exists()
    flags = LaunchedBrowser(LaunchOptions(headless=True, isolated=True))
    assert flags.extension_loading() == "flags" and not flags._needs_pipe()


# -- the process tree the Windows way (psutil), run here ------------------------------------

_TREE = """
import subprocess, sys, threading
# Each member waits on an event no one sets: it runs until it is stopped, with no timer.
forever = "import threading; threading.Event().wait()"
sleeper = [sys.executable, "-c", forever]
middle = [sys.executable, "-c", "import subprocess, sys, threading\\n"
          "g = subprocess.Popen(%r)\\nprint(g.pid, flush=True)\\nthreading.Event().wait()"
          % (sleeper,)]
kids = [subprocess.Popen(sleeper), subprocess.Popen(middle, stdout=subprocess.PIPE)]
grandchild = kids[1].stdout.readline().decode().strip()
print(kids[0].pid, kids[1].pid, grandchild, flush=True)
threading.Event().wait()
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
    await all_exit(members, scaled(10.0))  # killed just now: each exits when it is scheduled
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
