"""``python -m bridge.bench``: every figure a ratio against a reference measured in the same run."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bridge.fakes import FakeSites
from bridge.runtime import Runtime, RuntimeOptions

__all__ = ["fake_site_runtime"]


@contextlib.contextmanager
def fake_site_runtime(session_key: str, **options: object) -> Iterator[tuple[FakeSites, Runtime]]:
    """The fake sites and a runtime (not started) that launches its own headless, isolated
    Chromium with them mapped in and a throwaway state directory: what every benchmark
    asks through. ``options`` are further ``RuntimeOptions`` fields."""
    with FakeSites() as fakes, tempfile.TemporaryDirectory(prefix=f"bridge-{session_key}-") as tmp:
        runtime = Runtime(
            RuntimeOptions(
                launch=True,
                headless=True,
                isolated=True,
                chrome_args=fakes.chromium_args(),
                state_dir=Path(tmp) / "state",
                session_key=session_key,
                **options,  # type: ignore[arg-type]
            )
        )
        yield fakes, runtime
