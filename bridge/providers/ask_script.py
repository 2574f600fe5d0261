"""The ask flow's in-page script (``bridge/js/page.js``): ``window.__bridgePage``, injected
once per document by ``bridge.cdp.page_script.PageScript``.

page.js is a template: the provider packs (bridge.providers.pack, docs/sites.md#provider-packs)
are substituted for ``__BRIDGE_PACKS__`` when the script is built, and the script's version is
the hash of the result, so a changed pack (a release, or a person's override) gives a new
version and every document gets the new script on its next call.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from bridge.cdp.page_script import PageScript, Script
from bridge.cdp.session import CdpSession
from bridge.providers.pack import Pack, builtin_pack, builtin_providers, load_pack

__all__ = [
    "PACKS_PLACEHOLDER",
    "PAGE_JS",
    "PAGE_SCRIPT",
    "PAGE_VERSION",
    "build_script",
    "current_script",
    "provider_page",
]

PACKS_PLACEHOLDER = "__BRIDGE_PACKS__"
GLOBAL_NAME = "__bridgePage"


def build_script(packs: list[Pack] | tuple[Pack, ...]) -> Script:
    """page.js with these packs in it (one per provider)."""
    data = {pack.provider: pack.page_data() for pack in packs}
    return Script.load(
        "page.js", GLOBAL_NAME, data={PACKS_PLACEHOLDER: json.dumps(data, sort_keys=True)}
    )


_scripts: dict[tuple[str, ...], Script] = {}
_lock = threading.Lock()


def current_script(state_dir: Path | None = None) -> Script:
    """The script with every provider's current pack, overrides under ``state_dir``
    included (re-read when changed; raises ``PackError`` for a broken override)."""
    packs = [load_pack(provider, state_dir) for provider in builtin_providers()]
    key = tuple(pack.fingerprint for pack in packs)
    with _lock:
        script = _scripts.get(key)
        if script is None:
            script = _scripts[key] = build_script(packs)
        return script


#: The script with the built-in packs only (tests and benchmarks inject it directly).
PAGE_SCRIPT = build_script([builtin_pack(p) for p in builtin_providers()])
PAGE_VERSION = PAGE_SCRIPT.version
#: The script as an expression: evaluating it defines ``window.__bridgePage``.
PAGE_JS = PAGE_SCRIPT.source


def provider_page(tab: CdpSession, state_dir: Path | None = None) -> PageScript:
    """The page script for ``tab``, built from the packs as they are now."""
    return PageScript(tab, current_script(state_dir))
