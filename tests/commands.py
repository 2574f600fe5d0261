"""The console scripts pip installed into this environment, for tests that run bridge's
commands as a person does (``bridge``, ``bridge-mcp``) rather than ``python -m``."""

from __future__ import annotations

import sys
from pathlib import Path


def installed_command(name: str) -> str:
    path = Path(sys.executable).with_name(name)
    assert path.exists(), f"{path} is missing: reinstall bridge (bash .ci/bootstrap.sh)"
    return str(path)
