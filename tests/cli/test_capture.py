"""``bridge capture show`` and ``bridge capture diff`` as a person runs them (docs/captures.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KEPT = ROOT / "tests" / "captures"


def _bridge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bridge", "capture", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_show_prints_what_a_capture_kept() -> None:
    done = _bridge("show", str(KEPT / "chatgpt-fake.json"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"chatgpt capture: {KEPT / 'chatgpt-fake.json'}")
    assert "kept verbatim" in done.stdout and "'Send prompt'" in done.stdout


def test_diff_of_a_capture_with_itself_is_empty_and_a_change_is_listed(tmp_path: Path) -> None:
    same = _bridge("diff", str(KEPT / "chatgpt-fake.json"), str(KEPT / "chatgpt-fake.json"))
    assert same.returncode == 0 and "no difference that matters to bridge" in same.stdout
    changed = json.loads((KEPT / "chatgpt-fake.json").read_text(encoding="utf-8"))
    for row in changed["phases"]["typed"]["entries"]["send_button"]:
        row["count"], row["first"] = 0, None
    live = tmp_path / "live.json"
    live.write_text(json.dumps(changed), encoding="utf-8")
    done = _bridge("diff", str(KEPT / "chatgpt-fake.json"), str(live), "--json")
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)
    assert [f["subject"] for f in findings if not f["ok"]] == [
        "selectors.send_button in page typed"
    ]


def test_two_sites_or_a_broken_file_are_refused_with_the_reason(tmp_path: Path) -> None:
    sites = _bridge("diff", str(KEPT / "chatgpt-fake.json"), str(KEPT / "gemini-fake.json"))
    assert sites.returncode == 2 and "compare captures of one site" in sites.stderr
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    done = _bridge("show", str(broken))
    assert done.returncode == 2 and "not JSON" in done.stderr
