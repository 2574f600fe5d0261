"""Fixtures of the Claude extension tests: the pages they act on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.claude_extension.site import Pages
from tests.local_http import serve_http


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """Base URL of the pages."""
    for url, _ in serve_http(Pages):
        yield url
