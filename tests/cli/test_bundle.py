"""``bridge doctor --bundle``: the zip a person attaches to a bug report holds the versions, the
checks and the log's tail, and none of their secrets or their conversations. The attacker
reads the bundle posted on a public issue."""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

from bridge.link.registry import ENV_RUNTIME_DIR
from bridge.link.trust_root import ENV_TRUST_DIR
from bridge.logs import REDACTED

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "Is my landlord allowed to keep the deposit, asks tenant-4471?"


def _private(path: Path, text: str) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_bundle_holds_the_report_and_no_secret_or_question(tmp_path: Path) -> None:
    state, trust = tmp_path / "state", tmp_path / "trust"
    mcp_token, cdp_token, secret = (secrets.token_urlsafe(32) for _ in range(3))
    _private(state / "mcp-token", mcp_token + "\n")
    _private(state / "cdp-token", cdp_token + "\n")
    _private(trust / "secret", secret + "\n")
    _private(
        state / "history.jsonl",
        json.dumps({"provider": "chatgpt", "question": QUESTION, "answer": "No, tenant-4471."})
        + "\n",
    )
    _private(state / "sessions.json", json.dumps({"x": {"question": QUESTION}}))
    log = tmp_path / "logs" / "bridge.log"
    _private(
        log,
        "2025-01-01T00:00:00.000Z INFO uvicorn.access: GET /cdp?token=" + cdp_token + "\n"
        f"2025-01-01T00:00:01.000Z WARNING some.program: proof with {secret}\n"
        f"2025-01-01T00:00:02.000Z WARNING some.program: bearer {mcp_token}\n",
    )
    bundle = tmp_path / "out" / "report.zip"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bridge",
            "doctor",
            "--bundle",
            str(bundle),
            "--state-dir",
            str(state),
            "--log-file",
            str(log),
            "--connect-timeout",
            "0.5",
            "--relay-port",
            str(_free_port()),
        ],
        cwd=str(ROOT),
        env={**os.environ, ENV_TRUST_DIR: str(trust), ENV_RUNTIME_DIR: str(tmp_path / "rt")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # No extension connects here: the doctor fails that check, and writes the bundle anyway.
    assert done.returncode == 1, done.stderr
    assert f"bundle: {bundle}" in done.stderr
    with zipfile.ZipFile(bundle) as zf:
        members = {name: zf.read(name).decode() for name in zf.namelist()}
    assert sorted(members) == [
        "README.txt",
        "doctor.json",
        "doctor.txt",
        "log-tail.txt",
        "versions.json",
    ]
    versions = json.loads(members["versions.json"])
    assert {"bridge", "python", "os", "browser", "extension_manifest"} <= set(versions)
    assert "token mcp-token" in members["doctor.txt"]  # the checks, as printed
    assert members["log-tail.txt"].count(REDACTED) == 3  # the tail is there, cleaned
    everything = "\n".join(members.values())
    for value in (mcp_token, cdp_token, secret, "tenant-4471"):
        assert value not in everything


def test_a_bundle_never_replaces_a_file(tmp_path: Path) -> None:
    bundle = tmp_path / "report.zip"
    bundle.write_bytes(b"the person's earlier bundle")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bridge",
            "doctor",
            "--bundle",
            str(bundle),
            "--state-dir",
            str(tmp_path / "state"),
            "--connect-timeout",
            "0.2",
            "--relay-port",
            str(_free_port()),
        ],
        cwd=str(ROOT),
        env={**os.environ, ENV_RUNTIME_DIR: str(tmp_path / "rt")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert f"{bundle} exists; pass another path to --bundle" in done.stderr
    assert bundle.read_bytes() == b"the person's earlier bundle"
