"""``pytest --bridge-capture DIR`` as a user's project runs it (pytester, in a subprocess:
its own browser): each capture one test, a changed site named with the override that fixes
it (docs/captures.md#checking-a-capture)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
KEPT = ROOT / "tests" / "captures" / "chatgpt-fake.json"


@pytest.fixture(autouse=True)
def this_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))


def _renamed_send_button(capture: dict) -> dict:  # type: ignore[type-arg]
    """The same capture as if the site had renamed its send button's test id."""
    for page in capture["phases"].values():
        for node in page["nodes"]:
            if node["attrs"].get("data-testid") == "send-button":
                node["attrs"]["data-testid"] = "composer-submit-button"
    return capture


def test_each_capture_is_a_test_and_a_changed_site_fails_with_its_fix(
    pytester: pytest.Pytester,
) -> None:
    folder = pytester.mkdir("captures-in")
    capture = json.loads(KEPT.read_text(encoding="utf-8"))
    (folder / "fine.json").write_text(json.dumps(capture), encoding="utf-8")
    changed = _renamed_send_button(json.loads(KEPT.read_text(encoding="utf-8")))
    (folder / "changed.json").write_text(json.dumps(changed), encoding="utf-8")
    pytester.makepyfile(test_other="def test_not_run():\n    raise AssertionError('ran')\n")
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::DeprecationWarning",
        "--bridge-capture",
        str(folder),
    )
    result.assert_outcomes(passed=1, failed=1)  # only the captures: no test paths were named
    text = result.stdout.str()
    assert "FAILED captures-in/changed.json::capture[changed]" in text, text
    assert "FAIL  selectors.send_button: typed: none of its selectors matches" in text
    assert 'button[data-testid=\\"composer-submit-button\\"]' in text
    assert "an override that makes the selectors match this capture" in text


def test_a_missing_folder_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--bridge-capture", "no-such-folder")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--bridge-capture*no-such-folder*no such folder or file*"])
