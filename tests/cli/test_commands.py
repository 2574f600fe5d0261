"""``python -m bridge`` in a subprocess, as a person runs it from a terminal."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import pty
import re
import signal
import socket
import struct
import sys
import termios
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from bridge.fakes import FakeSites
from bridge.fakes.behaviour import Behaviour
from bridge.fakes.images import png
from bridge.fakes.research import plain_report
from bridge.link.registry import ENV_RUNTIME_DIR
from tests.raw_cdp import raw_cdp

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _run(
    *args: str, timeout: float = 90, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        *args,
        cwd=str(ROOT),
        env={**os.environ, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_ask_once_from_the_terminal(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    chrome = [f"--chrome-arg={a}" for a in fake_sites.chromium_args()]
    code, out, err = await _run(
        "ask",
        "How do I read files asynchronously in Python?",
        "--provider",
        "gemini",
        "--json",
        "--launch",
        "--headless",
        "--isolated",
        "--state-dir",
        str(tmp_path),
        *chrome,
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["provider"] == "gemini"
    assert result["answer"].startswith(fakes.gemini.records[-1].answer.splitlines()[0])
    assert (tmp_path / "history.jsonl").exists()


async def test_ask_without_a_browser_says_how_to_connect_one(tmp_path: Path) -> None:
    code, _, err = await _run(
        "ask",
        "What is a Python decorator?",
        "--provider",
        "chatgpt",
        "--state-dir",
        str(tmp_path),
        "--connect-timeout",
        "0.5",
        # A port outside 19222-19250, and a runtime directory no native host watches: no
        # extension (not even this session's browser) finds it.
        "--relay-port",
        str(_free_port()),
        env={ENV_RUNTIME_DIR: str(tmp_path / "rt")},
    )
    assert code == 1
    assert "[extension_not_connected]" in err and "Load unpacked" in err and "--launch" in err


async def test_relay_command_honours_its_options(tmp_path: Path) -> None:
    """Every option ``relay`` accepts takes effect: port, profile, browser flags, headless."""
    port = _free_port_in_relay_range()
    profile = tmp_path / "profile"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        "relay",
        "--launch",
        "--headless",
        "--relay-port",
        str(port),
        "--profile-dir",
        str(profile),
        "--chrome-arg=--lang=ja",
        cwd=str(ROOT),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        async with asyncio.timeout(60):
            while not lines or lines[-1] != "ready; Ctrl-C to stop":
                line = (await proc.stdout.readline()).decode()
                assert line, f"relay exited early: {lines} {(await proc.stderr.read()).decode()}"  # type: ignore[union-attr]
                lines.append(line.strip())
        text = "\n".join(lines)
        assert f"relay listening on ws://127.0.0.1:{port}/extension" in text
        assert f"profile {profile})" in text and (profile / "Default").is_dir()
        assert "extension connected" in text
        cmdline = Path(f"/proc/{_browser_pid(text)}/cmdline").read_bytes().split(b"\0")
        assert b"--lang=ja" in cmdline and b"--headless=new" in cmdline
    finally:
        proc.terminate()
        code = await asyncio.wait_for(proc.wait(), 30)
    assert code == 0


def _free_port_in_relay_range() -> int:
    """The extension discovers relays only in PORT_RANGE: pick a free port there, from the top
    (the relays of this test session take the lowest free ones)."""
    from bridge.wire.extension import PORT_RANGE

    for port in range(PORT_RANGE[1], PORT_RANGE[0] - 1, -1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port in the relay range")


def _browser_pid(text: str) -> int:
    import re

    match = re.search(r"\(pid (\d+),", text)
    assert match, text
    return int(match.group(1))


async def test_cdp_command_prints_its_url_and_token_file_and_stops_when_stdin_closes(
    tmp_path: Path,
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        "cdp",
        "--launch",
        "--headless",
        "--isolated",
        "--state-dir",
        str(tmp_path),
        cwd=str(ROOT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdin is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    match = re.fullmatch(r"CDP endpoint: ws://127\.0\.0\.1:(\d+)/cdp\n", line)
    assert match, line
    port = int(match.group(1))
    where = (await asyncio.wait_for(proc.stdout.readline(), 10)).decode()
    path = tmp_path / "cdp-token"
    assert where.startswith(f"CDP token: in {path}; send it as 'Authorization: Bearer <token>'")
    assert f"`bridge token cdp --state-dir {tmp_path} --url --relay-port {port}`" in where
    token = path.read_text().strip()
    assert token not in line + where
    assert path.stat().st_mode & 0o777 == 0o600
    # The token as the line says to get it, and it opens the endpoint the line names.
    shown = await _bridge_output("token", "cdp", "--state-dir", str(tmp_path))
    assert shown == token + "\n"
    url = await _bridge_output(
        "token", "cdp", "--state-dir", str(tmp_path), "--url", "--relay-port", str(port)
    )
    assert url == f"ws://127.0.0.1:{port}/cdp?token={token}\n"
    async with connect(url.strip(), proxy=None) as ws:
        await ws.send(json.dumps({"id": 1, "method": "Browser.getVersion"}))
        assert json.loads(await ws.recv())["id"] == 1
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 30) == 0
    assert await proc.stdout.read() == b""  # nothing more
    assert token not in (await proc.stderr.read()).decode()  # type: ignore[union-attr]


async def _bridge_output(*args: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bridge", *args, cwd=str(ROOT), stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0
    return out.decode()


@pytest.mark.e2e
async def test_cdp_command_with_allow_file_urls_lets_clients_open_local_files(
    tmp_path: Path,
) -> None:
    """The person's --allow-file-urls reaches the endpoint `bridge cdp` serves."""
    page = tmp_path / "local.html"
    page.write_text("<title>local</title>")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        "cdp",
        "--launch",
        "--headless",
        "--isolated",
        "--allow-file-urls",
        "--relay-port",
        str(_free_port()),
        "--state-dir",
        str(tmp_path / "state"),
        cwd=str(ROOT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdin is not None
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        token = (tmp_path / "state" / "cdp-token").read_text().strip()  # never printed
        url = f"{line.removeprefix('CDP endpoint: ').strip()}?token={token}"
        async with raw_cdp(url) as cdp:
            # Served once the launched browser's extension has linked (a command waits).
            created = await cdp.result("Target.createTarget", {"url": page.as_uri()})
            listed = (await cdp.result("Target.getTargets"))["targetInfos"]
            assert [t["url"] for t in listed if t["targetId"] == created["targetId"]] == [
                page.as_uri()
            ]
    finally:
        proc.stdin.close()
        assert await asyncio.wait_for(proc.wait(), 30) == 0


# -- progress on a terminal ---------------------------------------------------------------------

ESC = "\x1b"
LINE = re.compile(r"(chatgpt|gemini)\s+(\S+(?: \[\w+\])?)\s+([\d ]+) chars\s+([\d.]+) s")


async def _run_on_a_terminal(*args: str, columns: int = 100) -> tuple[int, str]:
    """``python -m bridge`` with a pseudo-terminal as stdout and stderr, as in a terminal
    window of ``columns``; everything it wrote, raw (line ends as the terminal got them)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        *args,
        cwd=str(ROOT),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)

    def read_all() -> bytes:
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)

    try:
        raw = await asyncio.wait_for(asyncio.to_thread(read_all), 120)
        code = await asyncio.wait_for(proc.wait(), 30)
    finally:
        os.close(master)
    return code, raw.decode()


def _launched(fake_sites: FakeSites, state: Path) -> list[str]:
    """A headless Chromium of the command's own, with the fake sites mapped in."""
    chrome = [f"--chrome-arg={a}" for a in fake_sites.chromium_args()]
    return ["--launch", "--headless", "--isolated", "--state-dir", str(state), *chrome]


def _lines_of(raw: str, provider: str) -> list[tuple[str, int, int]]:
    """Each drawn status line of ``provider``: (phase, chars, offset in the output)."""
    return [
        (m.group(2), int(m.group(3).replace(" ", "")), m.start())
        for m in LINE.finditer(raw)
        if m.group(1) == provider
    ]


async def test_both_on_a_terminal_shows_live_phases_and_the_first_answer_first(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    fakes.gemini.set_behaviour(Behaviour(duration_ms=3000))  # Gemini takes seconds longer
    code, raw = await _run_on_a_terminal(
        "ask", "What is a Python decorator?", *_launched(fake_sites, tmp_path)
    )
    assert code == 0, raw
    assert f"{ESC}[2F{ESC}[2K" in raw  # redrawn in place, two lines up
    gemini = _lines_of(raw, "gemini")
    phases = [phase for phase, _, _ in gemini]
    assert "streaming" in phases and phases[-1] == "done"
    assert phases.index("streaming") < phases.index("done")
    counts = [chars for phase, chars, _ in gemini if phase == "streaming"]
    assert counts == sorted(counts) and len({c for c in counts if c > 0}) >= 2  # growing
    chatgpt_answer = raw.index("## chatgpt")
    gemini_done = next(at for phase, _, at in gemini if phase == "done")
    assert chatgpt_answer < gemini_done < raw.index("## gemini")  # printed while Gemini worked
    for site in (fakes.chatgpt, fakes.gemini):
        first_line = site.records[-1].answer.splitlines()[0]
        assert first_line in raw
    # Left on screen at the end: one summary line per provider, after both answers.
    tail = raw[raw.index("## gemini") :]
    assert [m.group(1, 2) for m in LINE.finditer(tail)][-2:] == [
        ("chatgpt", "done"),
        ("gemini", "done"),
    ]


async def test_piped_output_has_answers_and_no_terminal_codes(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    code, out, err = await _run(
        "ask", "What is a Python decorator?", *_launched(fake_sites, tmp_path)
    )
    assert code == 0, err
    assert ESC not in out and ESC not in err
    assert out.count("## chatgpt") == 1 and out.count("## gemini") == 1
    assert not LINE.search(out)  # no status lines


async def test_json_on_a_terminal_is_just_the_json(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    code, raw = await _run_on_a_terminal(
        "ask",
        "What is a Python decorator?",
        "--provider",
        "chatgpt",
        "--json",
        *_launched(fake_sites, tmp_path),
    )
    assert code == 0, raw
    assert ESC not in raw
    assert json.loads(raw.replace("\r\n", "\n"))["provider"] == "chatgpt"


async def test_cdp_command_stops_on_sigterm_while_stdin_stays_open(tmp_path: Path) -> None:
    """A supervisor's SIGTERM ends `bridge cdp` though its stdin pipe is still open (a thread
    blocked reading stdin used to keep the process alive)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "bridge", "cdp", "--launch", "--headless", "--isolated"),
        *("--relay-port", str(_free_port()), "--state-dir", str(tmp_path)),
        cwd=str(ROOT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        assert line.startswith("CDP endpoint: "), line
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 15) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


# -- choosing the browser: --channel and --load-extension (no browser starts) -------------


async def test_channel_and_browser_path_are_refused_together(tmp_path: Path) -> None:
    code, _, err = await _run(
        "relay", "--launch", "--channel", "beta", "--browser-path", str(tmp_path / "chrome")
    )
    assert code == 2
    assert "argument --browser-path: not allowed with argument --channel" in err
    code, _, err = await _run(
        "relay", "--launch", "--channel", "beta", "--relay-port", str(_free_port()),
        env={"BRIDGE_BROWSER": str(tmp_path / "chrome")},
    )  # fmt: skip
    assert code == 1 and "unset BRIDGE_BROWSER" in err, err


async def test_a_channel_not_installed_lists_where_bridge_looked(tmp_path: Path) -> None:
    code, _, err = await _run(
        "ask", "q", "--launch", "--headless", "--channel", "canary",
        "--state-dir", str(tmp_path), "--relay-port", str(_free_port()),
        env={"PATH": str(tmp_path), "BRIDGE_BROWSER": ""},
    )  # fmt: skip
    assert code == 1
    assert "[browser_not_found]" in err and "google-chrome-canary on PATH" in err
    assert "/opt/google/chrome-canary/chrome" in err and "--browser-path" in err


async def test_a_load_extension_folder_without_a_manifest_stops_the_command(
    tmp_path: Path,
) -> None:
    for command in ("ask", "relay", "cdp", "doctor"):
        args = [command, *(["q"] if command == "ask" else [])]
        code, _, err = await _run(*args, "--launch", "--load-extension", str(tmp_path))
        assert code == 2, (command, err)
        assert f"argument --load-extension: {tmp_path}: no manifest.json in it" in err


async def test_ask_at_a_thinking_effort_from_the_terminal(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    """--effort reaches the site (the body's thinking_effort, C13.6) and the result records
    the tier; a tier the menu lacks fails with nothing sent (docs/sites.md#effort)."""
    args = ["--provider", "chatgpt", "--json", *_launched(fake_sites, tmp_path)]
    code, out, err = await _run("ask", "How deep should this go?", "--effort", "high", *args)
    assert code == 0, err
    assert fakes.chatgpt.records[-1].effort == "extended"
    assert json.loads(out)["used"]["effort"]["label"] == "High"
    asked = len(fakes.chatgpt.records)
    code, _, err = await _run("ask", "And at turbo?", "--effort", "turbo", *args)
    assert code == 1
    assert "error [effort_unavailable]" in err and "Extra High" in err
    assert len(fakes.chatgpt.records) == asked
    code, _, err = await _run("ask", "q", "--provider", "gemini", "--effort", "high")
    assert code == 2 and "--deep-think" in err


async def test_ask_gemini_with_deep_think_from_the_terminal(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    """--deep-think turns Deep Think on (the fake records it), the answer is the one after the
    placeholder reply (G10.2); without Deep Think on offer nothing is sent (docs/sites.md#effort)."""
    args = ["--provider", "gemini", "--json", *_launched(fake_sites, tmp_path)]
    code, out, err = await _run("ask", "Why is the sky blue?", "--deep-think", *args)
    assert code == 0, err
    record = fakes.gemini.records[-1]
    assert record.deep_think is True
    result = json.loads(out)
    assert result["used"]["deep_think"] is True
    assert "I'm on it" not in result["answer"]
    assert record.answer.splitlines()[-1] in result["answer"]
    asked = len(fakes.gemini.records)
    fakes.gemini.set_behaviour(Behaviour(deep_think="disabled"))
    code, _, err = await _run("ask", "And deeper?", "--deep-think", "--new-chat", *args)
    assert code == 1
    assert "error [effort_unavailable]" in err and "disabled" in err
    assert len(fakes.gemini.records) == asked


async def test_ask_saves_a_generated_image_where_told_and_a_refused_file_fails(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    """--outputs DIR: the image the answer generated is saved there; its path goes to stderr,
    the answer alone to stdout (docs/sites.md#outputs)."""
    fakes.chatgpt.set_behaviour(Behaviour(image=True))
    out_dir = tmp_path / "images"
    state = tmp_path / "state"
    args = ["--provider", "chatgpt", "--outputs", str(out_dir), *_launched(fake_sites, state)]
    code, out, err = await _run("ask", "Draw a boat.", *args)
    assert code == 0, err
    [saved] = list(out_dir.iterdir())
    assert saved.read_bytes() == png(fakes.chatgpt.records[-1].id)
    assert f"saved image: {saved} (" in err
    assert str(saved) not in out
    # A generated file the site refuses to hand over ends the ask with its name and why
    # (docs/sites.md#outputs); nothing is written for it.
    fakes.chatgpt.set_behaviour(Behaviour(files=("plot.csv",), download="refused"))
    code, _, err = await _run("ask", "Plot it as a CSV.", *args)
    assert code == 1 and "error [download_refused]" in err and "'plot.csv'" in err, err
    assert [p.name for p in out_dir.iterdir()] == [saved.name]


async def test_ask_with_research_from_the_terminal(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    """--research waits for the report and prints it with its sources; not offered: nothing
    is sent (exit 1); misused flags are usage errors (docs/sites.md#research)."""
    fakes.chatgpt.set_behaviour(Behaviour(research="offered"))
    args = ["--provider", "chatgpt", *_launched(fake_sites, tmp_path)]
    question = "Research the history of Python decorators."
    code, out, err = await _run("ask", question, "--research", "--new-chat", *args)
    assert code == 0, err
    assert fakes.chatgpt.records[-1].research == "plan"
    assert "## Sources" in out and "https://docs.example.org/" in out
    asked = len(fakes.chatgpt.records)
    fakes.chatgpt.set_behaviour(Behaviour(research="absent"))
    code, _, err = await _run("ask", question, "--research", "--new-chat", *args)
    assert code == 1 and "error [research_unavailable]" in err
    assert len(fakes.chatgpt.records) == asked
    code, _, err = await _run("ask", "q", "--research-answers", "x", *args)
    assert code == 2 and "--research" in err
    # Both sites at once: each report printed under its site, with its sources.
    fakes.chatgpt.set_behaviour(Behaviour(research="offered"))
    fakes.gemini.set_behaviour(Behaviour(research="offered"))
    both = ["--provider", "both", *_launched(fake_sites, tmp_path)]
    code, out, err = await _run("ask", question, "--research", "--new-chat", *both)
    assert code == 0, err
    assert fakes.chatgpt.records[-1].research == fakes.gemini.records[-1].research == "plan"
    # Each side printed the moment it ends, whichever first: its own section.
    parts = re.split(r"^## (chatgpt|gemini)$", out, flags=re.MULTILINE)[1:]
    sections = dict(zip(parts[::2], parts[1::2], strict=True))
    assert sorted(sections) == ["chatgpt", "gemini"] and "error [" not in out
    assert "## Sources" in sections["chatgpt"]
    _, gemini_sources = plain_report(question)
    assert gemini_sources[-1]["url"] in sections["gemini"]
