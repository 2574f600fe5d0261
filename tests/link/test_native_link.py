"""``--link native``: the foundation tests again, with the session's link tunnelled through
the native host instead of a loopback WebSocket (a pytester run: a browser of its own).

The plugin fails the run unless the session's link really came through the host.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="host in the profile: Linux"),
]

ROOT = Path(__file__).resolve().parents[2]
FOUNDATION = ("tests/test_extension.py", "tests/cdp/test_browser.py", "tests/cdp/test_session.py")


def test_the_foundation_tests_pass_over_the_native_link(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        *(str(ROOT / f) for f in FOUNDATION),
        "--bridge-link=native",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(ROOT),
        "-c",
        str(ROOT / "pyproject.toml"),
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 30 and not outcomes.get("failed"), result.stdout.str()[
        -3000:
    ]
    assert not outcomes.get("errors") and not outcomes.get("skipped")
