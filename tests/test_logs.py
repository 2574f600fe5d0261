"""bridge.logs: the one logging set-up (levels, the log file, one line per event), and what
never reaches a log line. The attacker reads the log file a person attached to a bug report."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.logs import (
    ENV_LOG,
    REDACTED,
    LogSetupError,
    never_log,
    redact,
    setup_logging,
)
from tests.raw_cdp import raw_cdp

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR) [\w.]+: .*")


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """setup_logging changes the root logger: put back what pytest had."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    setup_logging(log_file=None, environ={})  # closes the file handlers it installed
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("bridge").setLevel(logging.NOTSET)


def test_an_unknown_level_is_an_error_naming_the_valid_ones(restore_logging: None) -> None:
    with pytest.raises(LogSetupError) as raised:
        setup_logging(environ={ENV_LOG: "loud"})
    assert "'loud'" in str(raised.value)
    assert all(name in str(raised.value) for name in ("debug", "info", "warning"))


def test_the_log_file_is_private_appended_and_one_line_per_event(
    tmp_path: Path, restore_logging: None
) -> None:
    path = tmp_path / "made" / "bridge.log"
    setup_logging(log_file=path, environ={ENV_LOG: "debug"}, stream=io.StringIO())
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    logging.getLogger("bridge.test").debug("first\nforged 2025-01-01T00:00:00.000Z ERROR x: y")
    setup_logging(log_file=path, environ={ENV_LOG: "info"}, stream=io.StringIO())
    logging.getLogger("bridge.test").debug("not at info")
    logging.getLogger("bridge.test").info("second")
    lines = path.read_text().splitlines()
    assert len(lines) == 2, lines  # the first run's line kept; the message's newline escaped
    assert all(LINE.fullmatch(line) for line in lines), lines
    assert lines[0].endswith(
        " DEBUG bridge.test: first\\nforged 2025-01-01T00:00:00.000Z ERROR x: y"
    )
    assert lines[1].endswith(" INFO bridge.test: second")


def test_libraries_that_dump_frames_stay_quiet_at_debug(restore_logging: None) -> None:
    setup_logging(environ={ENV_LOG: "debug"}, stream=io.StringIO())
    assert logging.getLogger("bridge.anything").isEnabledFor(logging.DEBUG)
    for name in ("websockets.server", "mcp.server.lowlevel", "uvicorn.access"):
        assert not logging.getLogger(name).isEnabledFor(logging.DEBUG), name


def test_registered_secrets_and_named_values_are_redacted_anywhere() -> None:
    secret = "Zq8v-registered-secret-value_0123456789ab"
    never_log(secret)
    assert redact(f"proof failed for {secret}!") == f"proof failed for {REDACTED}!"
    assert redact('{"token": "abcdefghijklmnop0123"}') == f'{{"token": "{REDACTED}"}}'
    assert redact("secret=abcdefghijklmnop0123 rest") == f"secret={REDACTED} rest"
    # Not a secret's value: paths and short words stay readable.
    assert redact("secret: /home/me/.config/bridge/secret") == (
        "secret: /home/me/.config/bridge/secret"
    )


def test_a_traceback_is_redacted_and_one_line(tmp_path: Path, restore_logging: None) -> None:
    path = tmp_path / "bridge.log"
    setup_logging(log_file=path, environ={}, stream=io.StringIO())
    try:
        raise RuntimeError("GET /cdp?token=abcdefghijklmnopqrstuvwxyz0123 failed")
    except RuntimeError:
        logging.getLogger("bridge.test").exception("it failed")
    text = path.read_text()
    assert "abcdefghijklmnopqrstuvwxyz0123" not in text and REDACTED in text
    assert len(text.splitlines()) == 1


def test_a_bad_level_stops_a_command_with_what_to_pass(tmp_path: Path) -> None:
    done = _bridge("extension-path", env={ENV_LOG: "verbose"})
    assert done[0] == 2
    assert "BRIDGE_LOG='verbose'" in done[2] and "debug, info, warning" in done[2]


def _bridge(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "bridge", *args],
        cwd=str(ROOT),
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.e2e
async def test_debug_logs_hold_no_token_and_no_question(tmp_path: Path) -> None:
    """The attacker's read: ``bridge cdp`` at debug level with a log file, while a client
    sends the token in its URL (where websockets logs request lines) and a question travels
    in CDP frames to a page and back as page text (where websockets logs frames)."""
    log_file = tmp_path / "logs" / "bridge.log"
    question = "What is the capital of Burkina Faso, asked by nobody-else-7781?"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        "cdp",
        "--launch",
        "--headless",
        "--isolated",
        "--relay-port",
        str(_free_port()),
        "--state-dir",
        str(tmp_path / "state"),
        "--log-file",
        str(log_file),
        cwd=str(ROOT),
        env={**os.environ, ENV_LOG: "debug"},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        token = (tmp_path / "state" / "cdp-token").read_text().strip()
        url = f"{line.removeprefix('CDP endpoint: ').strip()}?token={token}"
        async with raw_cdp(url) as cdp:
            target = await cdp.result("Target.createTarget", {"url": "about:blank"})
            attached = await cdp.result(
                "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
            )
            session = attached["sessionId"]
            expression = (
                f"document.body.textContent = {json.dumps(question)}; document.body.innerText"
            )
            shown = await cdp.result(
                "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session
            )
            assert shown["result"]["value"] == question  # it did pass through, both ways
    finally:
        proc.stdin.close()
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    stderr = (await proc.stderr.read()).decode()
    logged = log_file.read_text()
    # The log is on, at the level asked, in the file asked (else this test proves nothing).
    assert " INFO bridge.link.relay: relay listening on" in logged, logged
    assert logged.splitlines()[0] in stderr  # the same lines on stderr
    assert log_file.stat().st_mode & 0o777 == 0o600
    for where in (logged, stderr):
        assert token not in where
        assert "nobody-else-7781" not in where
