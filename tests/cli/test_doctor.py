"""``python -m bridge doctor``: each check alone (no browser), then the whole command."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.cli import doctor
from bridge.cli.doctor import Check
from bridge.fakes import Behaviour, FakeSites
from bridge.link import native_install
from bridge.link.local_ipc import ENV_LOCAL_IPC
from bridge.link.registry import ENV_RUNTIME_DIR
from bridge.link.relay import Relay
from bridge.link.trust_root import ENV_TRUST_DIR

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_says_what_to_do_for_each_failure() -> None:
    text = doctor.render(
        [
            Check("browser", True, "/usr/bin/chromium"),
            Check("extension", False, "not connected", "load the extension"),
            Check("native host", None, "not registered", "optional: install it"),
        ]
    )
    assert "FAIL  extension" in text and "→ load the extension" in text
    assert "→ optional: install it" in text and "1 check(s) failed" in text
    assert "/usr/bin/chromium" in text


def test_token_files_bridge_would_not_adopt_are_reported(tmp_path: Path) -> None:
    made = "A" * 43  # the shape bridge makes (secrets.token_urlsafe(32))
    (tmp_path / "mcp-token").write_text(made)
    (tmp_path / "mcp-token").chmod(0o644)
    mcp, cdp = doctor.check_tokens(tmp_path)
    assert mcp.ok is False and "0644" in mcp.detail and made not in mcp.detail
    assert "replaces it with a new token" in mcp.fix and "bridge token mcp" in mcp.fix
    assert cdp.ok is None and "not created yet" in cdp.detail
    (tmp_path / "mcp-token").chmod(0o600)
    assert doctor.check_tokens(tmp_path)[0].ok is True
    (tmp_path / "mcp-token").write_text("a-value-someone-chose")
    mcp = doctor.check_tokens(tmp_path)[0]
    assert mcp.ok is False and "does not hold a token bridge made" in mcp.detail
    (tmp_path / "cdp-token").symlink_to(tmp_path / "mcp-token")
    cdp = doctor.check_tokens(tmp_path)[1]
    assert cdp.ok is False and "is a symbolic link" in cdp.detail


def test_native_host_registrations_are_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    assert doctor.check_native_host().ok is None  # optional: probing still works
    result = native_install.install("chromium", home=tmp_path, env={})
    assert doctor.check_native_host().ok is True
    result.wrapper.unlink()  # a registration pointing at nothing
    broken = doctor.check_native_host()
    assert broken.ok is False and "install-native-host" in broken.fix


CLAUDE = native_install.CLAUDE_HOST
CLAUDE_ID = "fcoeoabgfenejglbffodgkkbkcdhcgfn"


def _claude_manifest(path: Path, program: str, origins: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"name": CLAUDE.name, "path": program, "type": "stdio", "allowed_origins": origins}
    path.write_text(json.dumps(body), encoding="utf-8")


def test_claude_host_not_registered_is_fine(tmp_path: Path) -> None:
    found = doctor.check_claude_host(platform="linux", home=tmp_path, env={})
    assert found == Check(
        "Claude extension host", True, "not registered (bridge's own extension is used)"
    )


def test_claude_host_names_bridge_s_and_another_program_s(tmp_path: Path) -> None:
    where = {"platform": "linux", "home": tmp_path, "env": {}}
    chrome = native_install.manifest_path("chrome", **where, kind=CLAUDE)
    origin = f"chrome-extension://{CLAUDE_ID}/"
    _claude_manifest(chrome, "/home/u/.claude/chrome/chrome-native-host", [origin])
    edge = native_install.manifest_path("edge", **where, kind=CLAUDE)
    _claude_manifest(edge, "/opt/other/host", ["chrome-extension://abcdefghijklmnop/"])
    brave = native_install.install("brave", python="/usr/bin/python3", **where, kind=CLAUDE)

    found = doctor.check_claude_host(**where)
    assert found.ok is True  # Claude Code's host being registered is never a failure
    assert found.detail.split("; ") == [
        "chrome: another program's host (/home/u/.claude/chrome/chrome-native-host) "
        f"for the Claude extension ({CLAUDE_ID})",
        "edge: another program's host (/opt/other/host) for chrome-extension://abcdefghijklmnop/",
        f"brave: bridge's host ({brave.wrapper}) for the Claude extension ({CLAUDE_ID})",
    ]

    brave.wrapper.unlink()  # bridge's registration pointing at nothing
    broken = doctor.check_claude_host(**where)
    assert broken.ok is False
    assert f"brave: bridge's wrapper {brave.wrapper} missing or not executable" in broken.detail
    assert "--claude-extension" in broken.fix


def test_claude_host_unreadable_manifest_is_shown_not_failed(tmp_path: Path) -> None:
    where = {"platform": "linux", "home": tmp_path, "env": {}}
    chrome = native_install.manifest_path("chrome", **where, kind=CLAUDE)
    chrome.parent.mkdir(parents=True)
    chrome.write_text("{not json", encoding="utf-8")
    found = doctor.check_claude_host(**where)
    assert found.ok is None
    assert found.detail == f"chrome: unreadable manifest {chrome}"


class _Registry:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def read(self, key: str) -> str | None:
        return self.values.get(key)

    def write(self, key: str, value: str) -> None:
        self.values[key] = value

    def delete(self, key: str) -> bool:
        return self.values.pop(key, None) is not None


def test_claude_host_on_windows_follows_the_registry(tmp_path: Path) -> None:
    theirs = tmp_path / "Claude" / f"{CLAUDE.name}.json"
    _claude_manifest(theirs, "C:\\Claude\\host.bat", [f"chrome-extension://{CLAUDE_ID}/"])
    key = f"Software\\Google\\Chrome\\NativeMessagingHosts\\{CLAUDE.name}"
    registry = _Registry({key: str(theirs)})
    found = doctor.check_claude_host(platform="win32", home=tmp_path, env={}, registry=registry)
    assert found.ok is True
    assert found.detail == (
        f"chrome: another program's host (C:\\Claude\\host.bat) "
        f"for the Claude extension ({CLAUDE_ID})"
    )


async def _doctor(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        "doctor",
        *args,
        cwd=str(ROOT),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    out, err = await asyncio.wait_for(process.communicate(), 240)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def _doctor_launched(
    fake_sites: FakeSites, tmp_path: Path, *args: str
) -> tuple[int, str, str]:
    """``doctor --launch --headless --isolated --live`` against the fake sites, with state and
    runtime directories of the test's own."""
    chrome_args = [f"--chrome-arg={arg}" for arg in fake_sites.chromium_args()]
    return await _doctor(
        "--launch",
        "--headless",
        "--isolated",
        "--live",
        *args,
        "--state-dir",
        str(tmp_path / "state"),
        *chrome_args,
        env={ENV_RUNTIME_DIR: str(tmp_path / "rt")},
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.e2e
async def test_without_a_browser_the_extension_check_fails_with_the_remedy(tmp_path: Path) -> None:
    code, out, _ = await _doctor(
        "--state-dir",
        str(tmp_path / "state"),
        "--relay-port",
        str(_free_port()),  # outside the range, and no native host watches this runtime dir
        "--connect-timeout",
        "1",
        env={ENV_RUNTIME_DIR: str(tmp_path / "rt")},
    )
    assert code == 1
    assert "FAIL  extension" in out and "Load unpacked" in out, out
    assert "ok    chatgpt pack" in out and "built-in" in out, out


async def test_a_broken_pack_override_fails_with_its_file_and_the_fix(tmp_path: Path) -> None:
    packs = tmp_path / "state" / "packs"
    packs.mkdir(parents=True)
    (packs / "gemini.json").write_text('{"selectors": {"stop_buton": {"css": ["x"]}}}')
    code, out, _ = await _doctor(
        "--state-dir",
        str(tmp_path / "state"),
        "--relay-port",
        str(_free_port()),
        "--connect-timeout",
        "1",
        env={ENV_RUNTIME_DIR: str(tmp_path / "rt")},
    )
    assert code == 1
    assert "FAIL  gemini pack" in out and "gemini.json" in out, out
    assert "did you mean 'stop_button'" in out and "fix or delete the override" in out, out
    assert "ok    chatgpt pack" in out, out


@pytest.mark.e2e
async def test_a_launched_browser_passes_every_check_and_both_sites_answer(
    tmp_path: Path, fake_sites: FakeSites
) -> None:
    fake_sites.chatgpt.reset()
    fake_sites.gemini.reset()
    chrome_args = [f"--chrome-arg={arg}" for arg in fake_sites.chromium_args()]
    code, out, err = await _doctor(
        "--launch",
        "--headless",
        "--isolated",
        "--live",
        "--json",
        "--state-dir",
        str(tmp_path / "state"),
        *chrome_args,
        env={ENV_RUNTIME_DIR: str(tmp_path / "rt")},
    )
    assert out.startswith("["), err[-2000:]
    checks = {c["name"]: c for c in json.loads(out)}
    assert code == 0, (out, err[-2000:])
    assert checks["extension"]["ok"] is True and "version" in checks["extension"]["detail"]
    for provider in ("chatgpt", "gemini"):
        assert checks[f"{provider} pack"]["ok"] is True
        assert checks[f"{provider} page"]["ok"] is True
        assert "composer found" in checks[f"{provider} page"]["detail"]
        assert checks[provider]["ok"] is True
        assert "answer read from network" in checks[provider]["detail"]
    assert fake_sites.chatgpt.records and fake_sites.gemini.records  # really asked


@pytest.mark.e2e
async def test_a_logged_out_site_fails_its_page_check_with_the_remedy(
    tmp_path: Path, fake_sites: FakeSites
) -> None:
    fake_sites.chatgpt.reset()
    fake_sites.gemini.reset()
    fake_sites.chatgpt.set_behaviour(Behaviour(state="logged_out"))
    try:
        chrome_args = [f"--chrome-arg={arg}" for arg in fake_sites.chromium_args()]
        code, out, err = await _doctor(
            "--launch",
            "--headless",
            "--isolated",
            "--live",
            "--state-dir",
            str(tmp_path / "state"),
            *chrome_args,
            env={ENV_RUNTIME_DIR: str(tmp_path / "rt")},
        )
    finally:
        fake_sites.chatgpt.reset()
    assert code == 1, (out, err[-2000:])
    assert "FAIL  chatgpt page" in out and "login page" in out and "log in to chatgpt" in out
    assert "ok    gemini page" in out and "answer read from network" in out, out
    assert not fake_sites.chatgpt.records  # no tiny ask went to a logged-out site


@pytest.fixture
def fresh_runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A runtime directory of this test's own (short: Unix socket paths are limited)."""
    root = Path(tempfile.mkdtemp(prefix="bridge-rt-"))
    monkeypatch.setenv(ENV_RUNTIME_DIR, str(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


async def test_nothing_served_is_zero_relays_and_passes(fresh_runtime: Path) -> None:
    found = await doctor.check_runtime_dir()
    assert found == Check(
        "runtime directory",
        True,
        f"{fresh_runtime} (0700): 0 relay(s) registered, 0 native host(s) running",
    )


async def test_only_live_registrations_are_counted(fresh_runtime: Path) -> None:
    await doctor.check_runtime_dir()  # makes relays/ and hosts/
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(fresh_runtime / "hosts" / "1.sock"))
    stale.close()  # a crashed host's file: nothing listens
    live = socket.socket(socket.AF_UNIX)
    live.bind(str(fresh_runtime / "relays" / "19222.sock"))
    live.listen()
    try:
        found = await doctor.check_runtime_dir()
    finally:
        live.close()
    assert found.ok is True
    assert "1 relay(s) registered on 19222" in found.detail
    assert "0 native host(s) running" in found.detail
    assert "removed 1 stale endpoint file(s)" in found.detail
    assert not (fresh_runtime / "hosts" / "1.sock").exists()


@pytest.mark.parametrize("kind", ["unix", "tcp"])
async def test_a_running_relay_is_found_whichever_way_it_registers(
    fresh_runtime: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """``tcp`` is how every relay registers on Windows: found by proving the secret."""
    monkeypatch.setenv(ENV_LOCAL_IPC, kind)
    async with Relay(port=_free_port()) as relay:
        suffix = {"unix": ".sock", "tcp": ".port"}[kind]
        assert [p.name for p in (fresh_runtime / "relays").iterdir()] == [f"{relay.port}{suffix}"]
        found = await doctor.check_runtime_dir()
    assert found.ok is True, found
    assert f"1 relay(s) registered on {relay.port}" in found.detail
    assert "stale" not in found.detail


async def test_a_stale_port_file_is_reported_and_removed(fresh_runtime: Path) -> None:
    await doctor.check_runtime_dir()
    dead = fresh_runtime / "relays" / f"{_free_port()}.port"
    dead.write_text(f"{_free_port()}\n")  # a relay that died: nothing listens on its port
    found = await doctor.check_runtime_dir()
    assert found.ok is True and "0 relay(s) registered" in found.detail
    assert "removed 1 stale endpoint file(s)" in found.detail
    assert not dead.exists()


async def test_a_port_file_without_the_secret_is_shown_not_removed(
    fresh_runtime: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    await doctor.check_runtime_dir()
    kept = fresh_runtime / "relays" / "19222.port"
    kept.write_text(f"{_free_port()}\n")
    monkeypatch.setenv(ENV_TRUST_DIR, str(tmp_path / "no-secret-here"))
    found = await doctor.check_runtime_dir()
    assert found.ok is None and "not checked: relays/19222.port" in found.detail
    assert "BRIDGE_TRUST_DIR" in found.fix and kept.exists()


async def test_a_running_claude_extension_host_is_counted(fresh_runtime: Path) -> None:
    """bridge's host for the Claude extension registers in the same directory."""
    await doctor.check_runtime_dir()
    (fresh_runtime / "claude-hosts").mkdir(mode=0o700)
    live = socket.socket(socket.AF_UNIX)
    live.bind(str(fresh_runtime / "claude-hosts" / "4242.sock"))
    live.listen()
    try:
        found = await doctor.check_runtime_dir()
    finally:
        live.close()
    assert found.ok is True
    assert found.detail.endswith(", 0 native host(s) running, 1 Claude extension host(s) running")


@pytest.mark.e2e
async def test_live_capture_writes_one_reviewed_file_per_site_without_the_answer(
    tmp_path: Path, fake_sites: FakeSites
) -> None:
    """``bridge doctor --live --capture DIR`` as a person runs it (docs/captures.md): one
    private file per site, what each kept printed for review, and no conversation text."""
    fake_sites.chatgpt.reset()
    fake_sites.gemini.reset()
    marker = "ZEBRAMARKER0193"
    for site in (fake_sites.chatgpt, fake_sites.gemini):
        site.queue(Behaviour(answer=f"OK. {marker} is the marker of this answer."))
    folder = tmp_path / "captures"
    code, out, err = await _doctor_launched(fake_sites, tmp_path, "--capture", str(folder))
    assert code == 0, (out, err[-2000:])
    for provider in ("chatgpt", "gemini"):
        path = folder / f"{provider}.json"
        assert path.stat().st_mode & 0o777 == 0o600
        text = path.read_text(encoding="utf-8")
        assert marker not in text and "single word" not in text
        capture = json.loads(text)
        assert capture["provider"] == provider and capture["ask"]["outcome"] == "answered"
        assert f"{provider} capture: {path}" in out
        assert f"ok    {provider} " in out and f"captured in {path}" in out
    assert "kept verbatim" in out and "'Send prompt'" in out, out
    assert "nothing was sent anywhere" in out


@pytest.mark.e2e
async def test_a_page_that_cannot_be_asked_is_captured_as_it_is(
    tmp_path: Path, fake_sites: FakeSites
) -> None:
    """A logged-out site: no tiny ask, but its page is captured (a changed site often shows
    first as a page bridge cannot ask)."""
    fake_sites.chatgpt.reset()
    fake_sites.gemini.reset()
    fake_sites.chatgpt.set_behaviour(Behaviour(state="logged_out"))
    folder = tmp_path / "captures"
    try:
        code, out, err = await _doctor_launched(fake_sites, tmp_path, "--capture", str(folder))
    finally:
        fake_sites.chatgpt.reset()
    assert code == 1, (out, err[-2000:])
    capture = json.loads((folder / "chatgpt.json").read_text(encoding="utf-8"))
    assert capture["ask"]["outcome"].startswith("not asked: https://chatgpt.com/")
    assert "login page" in capture["ask"]["outcome"]
    assert "ready" in capture["phases"] and not fake_sites.chatgpt.records
    assert "--    chatgpt capture" in out and "the page as it is, not asked" in out
    assert json.loads((folder / "gemini.json").read_text())["ask"]["outcome"] == "answered"


async def test_capture_without_live_is_refused_with_the_reason(tmp_path: Path) -> None:
    code, _, err = await _doctor("--capture", str(tmp_path))
    assert code == 2 and "--capture needs --live" in err
    assert not any(tmp_path.iterdir())
