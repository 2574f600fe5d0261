"""The in-page script (``page.js``) as an expression the driver can inline."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["PAGE_JS", "PAGE_VERSION"]

_PAGE_JS_PATH = Path(__file__).with_name("page.js")
_PAGE_JS_SOURCE = _PAGE_JS_PATH.read_text(encoding="utf-8")
PAGE_VERSION = hashlib.sha256(_PAGE_JS_SOURCE.encode()).hexdigest()[:12]
# An expression (no trailing semicolon), so it can be inlined as "(PAGE_JS, window.__bridgePage)".
PAGE_JS = _PAGE_JS_SOURCE.replace("__BRIDGE_PAGE_VERSION__", PAGE_VERSION).strip().rstrip(";")
