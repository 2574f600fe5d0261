"""What ``--version`` and ``extension-path`` print: which bridge this is, and where its
extension lives, so a person can tell an installed command from a checkout's."""

from __future__ import annotations

import json
import platform

from bridge import __version__
from bridge.wire.extension import extension_dir

__all__ = ["DISTRIBUTION", "extension_version", "version_line"]

#: The name on PyPI ("bridge" was taken); the import package and the commands are "bridge".
DISTRIBUTION = "chrome-agent-bridge"


def extension_version() -> str:
    """The version of the extension that ships with this package (its manifest's)."""
    manifest = json.loads((extension_dir() / "manifest.json").read_text(encoding="utf-8"))
    return str(manifest["version"])


def version_line(command: str) -> str:
    return (
        f"{command} {__version__} ({DISTRIBUTION}; extension {extension_version()}; "
        f"Python {platform.python_version()})"
    )
