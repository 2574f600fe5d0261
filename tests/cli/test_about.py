"""``bridge --version``, ``bridge-mcp --version`` and ``bridge extension-path``, through the
commands pip installed (as a person runs them), and the extension that ships in the package."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from bridge import __version__
from bridge.cli.about import DISTRIBUTION, extension_version, version_line
from bridge.wire.extension import extension_dir
from tests.commands import installed_command

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, cwd: Path) -> str:
    done = subprocess.run(args, capture_output=True, text=True, cwd=cwd, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def test_both_commands_print_the_version(tmp_path: Path) -> None:
    for command in ("bridge", "bridge-mcp"):
        out = _run(installed_command(command), "--version", cwd=tmp_path)
        assert out.strip() == version_line(command)
        assert out.startswith(f"{command} {__version__} ({DISTRIBUTION}; extension ")


def test_the_extension_ships_with_the_same_version() -> None:
    """The extension inside the package is the one this bridge speaks to: one version."""
    assert extension_version() == __version__


def test_extension_path_is_the_packaged_folder_with_its_manifest(tmp_path: Path) -> None:
    printed = Path(_run(installed_command("bridge"), "extension-path", cwd=tmp_path).strip())
    assert printed == extension_dir()
    assert printed.parent == ROOT / "bridge"  # inside the package, so a wheel carries it
    manifest = json.loads((printed / "manifest.json").read_text())
    assert manifest["manifest_version"] == 3
    assert (printed / manifest["background"]["service_worker"]).is_file()


def test_the_checkouts_top_level_extension_is_the_same_folder() -> None:
    """The design card's top-level ``extension`` stays where a clone's reader looks for it."""
    assert (ROOT / "extension").resolve() == extension_dir().resolve()
