"""``bridge doctor --bundle [PATH]``: one zip a person can attach to a bug report.

It holds what a maintainer asks first, and nothing a person would not post in public:

- ``versions.json``: bridge, Python, the OS, the browser the doctor found, the shipped
  extension's manifest version (the connected extension's is in the doctor's output);
- ``doctor.txt`` and ``doctor.json``: the doctor's checks, as printed;
- ``log-tail.txt``: the last lines of the log file (``--log-file`` or ``BRIDGE_LOG_FILE``), when
  one is known;
- ``README.txt``: what the bundle holds and what it leaves out.

Left out by construction: tokens and the person's secret (the doctor reports their files' modes,
never their values), the state directory's files (sessions, history, jobs: questions and
answers), cookies and profiles, debug dumps (page HTML). Every member still passes through
``bridge.logs.redact`` (the tokens the doctor read are registered with it), and the log tail
too: lines written before redaction existed, or by another program, are cleaned as they go in.
"""

from __future__ import annotations

import io
import json
import platform
import time
import zipfile
from collections import deque
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from bridge import __version__
from bridge.cli.about import DISTRIBUTION, extension_version
from bridge.cli.doctor import Check, render
from bridge.logs import redact

__all__ = ["LOG_LINES", "default_bundle_path", "write_bundle"]

#: Enough for the minutes around a failure at info level; small enough to read.
LOG_LINES = 500

README = """\
A bridge diagnostics bundle (bridge doctor --bundle), for a bug report.

versions.json   bridge, Python, OS, browser, extension versions
doctor.txt      bridge doctor's checks (doctor.json: the same as data)
log-tail.txt    the last {lines} lines of {log} (when a log file was known)

Not in it: tokens, the secret, questions, answers, page text, cookies, the state directory's
files. Secrets in the log lines are replaced by [redacted]. Look inside before you send it.
"""


def default_bundle_path() -> Path:
    """``bridge-doctor-<UTC time>.zip`` in the working directory (never overwrites an older)."""
    return Path(f"bridge-doctor-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.zip")


def _log_tail(path: Path, lines: int) -> str:
    """The last ``lines`` lines of the log, redacted; or why there are none."""
    try:
        with path.open(encoding="utf-8", errors="backslashreplace") as f:
            tail = deque(f, maxlen=lines)
    except OSError as exc:
        return f"(the log file {path} could not be read: {exc.strerror or exc})\n"
    return "".join(redact(line) for line in tail)


def _browser(checks: Sequence[Check]) -> str:
    found = [c.detail for c in checks if c.name == "browser"]
    return found[0] if found else "not checked"


def write_bundle(
    path: Path, checks: Sequence[Check], log_file: Path | None, *, lines: int = LOG_LINES
) -> list[str]:
    """Write the bundle to ``path`` (made, never overwritten: ``FileExistsError``); returns
    its members' names."""
    versions = {
        "bridge": __version__,
        "distribution": DISTRIBUTION,
        "python": platform.python_version(),
        "os": platform.platform(),
        "browser": _browser(checks),
        "extension_manifest": extension_version(),
    }
    members = {
        "README.txt": README.format(lines=lines, log=log_file or "no log file (none was known)"),
        "versions.json": json.dumps(versions, indent=2, ensure_ascii=False) + "\n",
        "doctor.txt": render(checks) + "\n",
        "doctor.json": json.dumps([asdict(c) for c in checks], indent=2, ensure_ascii=False),
    }
    if log_file is not None:
        members["log-tail.txt"] = _log_tail(log_file, lines)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in members.items():
            zf.writestr(name, redact(text))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("xb") as f:  # "x": a bundle a person already has is never replaced
        f.write(buffer.getvalue())
    return list(members)
