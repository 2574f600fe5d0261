"""The extension as both ends of a link know it: its id and origin, where relays listen, the
limits and close codes of a link, and where its files ship (no I/O).

``extension/protocol.js`` mirrors the port range and the close codes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

__all__ = [
    "CLOSE_REFUSED",
    "CLOSE_UNTRUSTED",
    "DEFAULT_ORIGIN",
    "EXTENSION_ID",
    "KEEPALIVE_S",
    "LINK_MODES",
    "MAX_FRAME",
    "PORT_RANGE",
    "extension_dir",
]

# Fixed by the manifest "key": the same id on every machine, so the origin can be pinned.
EXTENSION_ID: Final = "iomhiibonjdeegefpemgdjbgoabaphda"
DEFAULT_ORIGIN: Final = f"chrome-extension://{EXTENSION_ID}"
PORT_RANGE: Final = (19222, 19250)
# Full-page screenshots at scale 2 exceed 8 MiB; leave room for much larger ones.
MAX_FRAME: Final = 256 * 1024 * 1024
# MV3 service workers need traffic at least every ~20-30 s: the relay pings this often.
KEEPALIVE_S: Final = 15.0

# Close codes the extension understands.
CLOSE_REFUSED: Final = 4001  # version mismatch or bad hello: do not retry quickly
CLOSE_UNTRUSTED: Final = 4004  # the peer did not prove the secret (either side closes with it)

#: How the extension may link to a relay: a loopback WebSocket, or through the native host.
LINK_MODES: Final = ("websocket", "native")


def extension_dir() -> Path:
    """Where the unpacked extension lives: inside the package, so an installed wheel carries it
    (``bridge extension-path`` prints it for "Load unpacked"; a checkout's top-level
    ``extension`` is a link to the same folder)."""
    return Path(__file__).resolve().parents[1] / "extension"
