"""The ask flow's in-page script (``page.js``): ``window.__bridgePage``, injected once per
document by ``bridge.page_script.PageScript``."""

from __future__ import annotations

from pathlib import Path

from bridge.cdp import CdpSession
from bridge.page_script import PageScript, Script

__all__ = ["PAGE_JS", "PAGE_SCRIPT", "PAGE_VERSION", "provider_page"]

PAGE_SCRIPT = Script.load(Path(__file__).with_name("page.js"), "__bridgePage")
PAGE_VERSION = PAGE_SCRIPT.version
#: The script as an expression: evaluating it defines ``window.__bridgePage``.
PAGE_JS = PAGE_SCRIPT.source


def provider_page(tab: CdpSession) -> PageScript:
    return PageScript(tab, PAGE_SCRIPT)
