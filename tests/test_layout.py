"""The module layout's promises, checked: seams stay seams.

- ``bridge.cdp.session`` (and the transport seam under it) load without ``bridge.cdp.browser``;
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


@pytest.mark.parametrize(
    "module", ["bridge.cdp.session", "bridge.link.transport", "bridge.waiting"]
)
def test_session_layer_loads_without_the_browser(module: str) -> None:
    code = (
        f"import sys, {module}; "
        "bad = sorted(m for m in ('bridge.cdp.browser', 'bridge.link.relay', 'bridge.link.extension_link') "
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


# -- the import rule: a lower layer never imports a higher one (docs/architecture.md) ----------

#: Lowest first.
LAYERS: list[tuple[str, frozenset[str]]] = [
    (
        "foundations",
        frozenset(
            {
                "bridge",
                "bridge.errors",
                "bridge.folders",
                "bridge.logs",
                "bridge.signals",
                "bridge.tasks",
                "bridge.validation",
                "bridge.waiting",
            }
        ),
    ),
    ("wire", frozenset({"bridge.wire"})),
    ("policy and store", frozenset({"bridge.policy", "bridge.store"})),
    ("link", frozenset({"bridge.link"})),
    ("cdp", frozenset({"bridge.cdp"})),
    ("providers and tools", frozenset({"bridge.providers", "bridge.tools"})),
    ("app", frozenset({"bridge.app"})),
    (
        "faces",
        frozenset(
            {
                "bridge.mcp",
                "bridge.cli",
                "bridge.testing",
                "bridge.bench",
                "bridge.__main__",
                "bridge.native_host",
            }
        ),
    ),
]
#: Layers whose rooms must not import each other (two ways to do one job's neighbour's job).
INDEPENDENT = frozenset({"policy and store", "providers and tools"})
#: Rooms that only faces may use (the fake sites import nothing of bridge themselves).
FACES_ONLY = frozenset({"bridge.fakes"})
#: The public API re-exports from every layer on purpose (lazily: importing it loads nothing).
EXEMPT = frozenset({"bridge"})


def _room(module: str) -> tuple[int, str]:
    parts = module.split(".")
    for size in (2, 1):
        candidate = ".".join(parts[:size])
        if candidate in FACES_ONLY:
            return -1, candidate
        for level, (_, rooms) in enumerate(LAYERS):
            if candidate in rooms:
                return level, candidate
    raise LookupError(f"{module} is in no layer: add its room to LAYERS (tests/test_layout.py)")


def _imported(tree: ast.AST) -> list[str]:
    """Every bridge module a file imports (``from bridge import x`` names ``bridge.x``)."""
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "bridge":
                out += [f"bridge.{a.name}" for a in node.names if not a.name.startswith("__")]
                out += ["bridge"] if any(a.name.startswith("__") for a in node.names) else []
            elif node.module.startswith("bridge."):
                out.append(node.module)
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.split(".")[0] == "bridge"]
    return out


def layer_violations(package: Path) -> list[str]:
    offenders = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if module in EXEMPT:
            continue
        level, room = _room(module)
        for target in _imported(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            their_level, their_room = _room(target)
            if their_room == room:
                continue
            if their_level == -1:  # a faces-only room
                ok = level in (-1, len(LAYERS) - 1)
            elif level == -1:
                ok = False  # the fake sites stand alone
            else:
                sideways = their_level == level and LAYERS[level][0] not in INDEPENDENT
                ok = their_level < level or sideways
            if not ok:
                offenders.append(f"{module} ({room}) imports {target} ({their_room})")
    return offenders


def test_no_layer_imports_a_higher_one_and_rooms_of_a_layer_stay_apart() -> None:
    assert layer_violations(PACKAGE) == []


def test_the_layer_rule_can_fail(tmp_path: Path) -> None:
    pkg = tmp_path / "bridge"
    for room, code in {
        "wire/protocol.py": "from bridge.link.relay import Relay\n",  # up: wire -> link
        "providers/flow.py": "from bridge.tools import browsing\n",  # sideways in a layer
        "app/facade.py": "from bridge.cdp.browser import Browser\n",  # down: fine
        "fakes/server.py": "from bridge.errors import BridgeError\n",  # fakes stand alone
        "cdp/browser.py": "from bridge import fakes\n",  # only faces use the fakes
    }.items():
        (pkg / room).parent.mkdir(parents=True, exist_ok=True)
        (pkg / room).write_text(code)
    assert layer_violations(pkg) == [
        "bridge.cdp.browser (bridge.cdp) imports bridge.fakes (bridge.fakes)",
        "bridge.fakes.server (bridge.fakes) imports bridge.errors (bridge.errors)",
        "bridge.providers.flow (bridge.providers) imports bridge.tools (bridge.tools)",
        "bridge.wire.protocol (bridge.wire) imports bridge.link.relay (bridge.link)",
    ]
