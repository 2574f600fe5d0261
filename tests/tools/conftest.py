"""Fixtures for the browser tools' tests: the local site (``hub`` and ``tools`` are shared,
in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.tools.site import serve


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    yield from serve()
