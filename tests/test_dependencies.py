"""What bridge/ imports is what pyproject.toml declares, no more and no less."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _imported_top_levels() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "bridge").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return {n for n in names if n != "bridge" and n not in sys.stdlib_module_names}


def _names(requirements: list[str]) -> set[str]:
    return {_canonical(re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0]) for d in requirements}


def _project() -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project


def _declared() -> set[str]:
    return _names(_project()["dependencies"])


def _optional() -> set[str]:
    """Extras a user installs for one feature (e.g. playwright for its benchmark)."""
    extras = _project().get("optional-dependencies", {})
    return set().union(*(_names(v) for k, v in extras.items() if k != "dev"))


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_import_is_declared_and_every_declaration_imported() -> None:
    dists = packages_distributions()
    imported: dict[str, str] = {}
    for module in sorted(_imported_top_levels()):
        owners = dists.get(module)
        assert owners, f"bridge imports {module!r}, which no installed distribution provides"
        imported[_canonical(owners[0])] = module
    declared = _declared()
    undeclared = {
        dist: module
        for dist, module in imported.items()
        if dist not in declared and dist not in _optional()
    }
    assert undeclared == {}, f"imported but not declared in pyproject.toml: {undeclared}"
    # allure-pytest is a pytest plugin bridge relies on (it writes --alluredir results from
    # the steps bridge records); nothing imports it by name.
    unused = declared - set(imported) - {"allure-pytest"}
    assert unused == set(), f"declared but never imported by bridge/: {unused}"
