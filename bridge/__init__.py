"""bridge: let AI agents use a real, logged-in Chrome, and prove it still works.

The public API, for use from Python (the MCP server, the terminal commands and the pytest
plugin are built on the same):

- ``Runtime`` and ``RuntimeOptions``: the whole stack (relay, browser, facade), started with
  ``async with Runtime(RuntimeOptions(launch=True)) as runtime``;
- ``Bridge``: the facade (``runtime.bridge``): ``ask``, ``ask_both``, jobs, ``browser_tools``;
- ``claude_browser``: the browser tools over the Claude browser extension a person already
  has (``async with claude_browser() as hub: tools = hub.client()``), docs/claude-extension.md;
- ``AskResult``: what an ask returns; ``BridgeError``: the base of every error bridge raises
  on purpose (each with a stable ``code``);
- ``__version__``.

Importing ``bridge`` costs nothing: the names load on first use. The package's rooms, by
layer, are mapped in docs/architecture.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

__all__ = [
    "AskResult",
    "Bridge",
    "BridgeError",
    "Runtime",
    "RuntimeOptions",
    "__version__",
    "claude_browser",
]

_PUBLIC = {
    "AskResult": "bridge.providers.results",
    "Bridge": "bridge.app.facade",
    "BridgeError": "bridge.errors",
    "Runtime": "bridge.app.runtime",
    "RuntimeOptions": "bridge.app.runtime",
    "claude_browser": "bridge.tools.claude",
}

if TYPE_CHECKING:
    from bridge.app.facade import Bridge
    from bridge.app.runtime import Runtime, RuntimeOptions
    from bridge.errors import BridgeError
    from bridge.providers.results import AskResult
    from bridge.tools.claude import claude_browser


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'bridge' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
