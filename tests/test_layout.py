"""The module layout's promises, checked: seams stay seams.

- ``bridge.cdp`` (and the transport seam under it) load without ``bridge.browser``;
- no module imports a private name (``_x``) from another module;
- nothing imports the ask driver's old private classes.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "bridge"


@pytest.mark.parametrize("module", ["bridge.cdp", "bridge.transport", "bridge.waiting"])
def test_session_layer_loads_without_the_browser(module: str) -> None:
    code = (
        f"import sys, {module}; "
        "bad = sorted(m for m in ('bridge.browser', 'bridge.relay', 'bridge.link') "
        "if m in sys.modules); print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _private_imports(path: Path) -> list[str]:
    """``module.name`` for each ``from module import _name`` in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        f"{node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]


def test_no_module_imports_another_modules_private_names() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}: {hit}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for hit in _private_imports(path)
    ]
    assert offenders == []


def test_the_private_name_check_can_fail(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from bridge.providers.flow import _secret\nfrom os import path\n")
    assert _private_imports(sample) == ["bridge.providers.flow._secret"]
