"""``python -m tests.reliability.table``: docs/RELIABILITY.md from the cases and the last run.

The results come from ``reports/reliability.json``, which every pytest run that includes
reliability-marked tests updates (tests/conftest.py): a test that did not run this time
keeps its last result, with its date.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.reliability.cases import CASES, NOTES

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "reports" / "reliability.json"
DOC = ROOT / "docs" / "RELIABILITY.md"

HEADER = """# Reliability and security

Every fault and abuse case a browser bridge meets, what bridge promises for it, and the
test that proves it, in real Chromium with the real extension where the case is about the
browser. Faults are injected only through supported means: the DevTools port of a browser
the tests launched, signals to processes, closing sockets; nothing test-only runs in the
extension.

Run them: `.venv/bin/pytest -m reliability -n 2` (part of the README's test command too).
Refresh this table from the last run: `.venv/bin/python -m tests.reliability.table`.

| # | Case | bridge promises | Test(s) | Last result |
|---|---|---|---|---|
"""


def load() -> dict[str, Any]:
    if not RESULTS.exists():
        return {"tests": {}}
    data: dict[str, Any] = json.loads(RESULTS.read_text(encoding="utf-8"))
    return data


def render(results: dict[str, Any]) -> str:
    by_case: dict[int, list[tuple[str, dict[str, Any]]]] = {n: [] for n in CASES}
    for nodeid, entry in sorted(results.get("tests", {}).items()):
        for case in entry.get("cases", []):
            by_case.setdefault(int(case), []).append((nodeid, entry))
    rows = []
    for n, (case, promise) in CASES.items():
        tests = by_case.get(n, [])
        bases: dict[str, int] = {}
        for nodeid, _ in tests:  # parametrised variants as one line, with their count
            base = nodeid.split("[", 1)[0]
            bases[base] = bases.get(base, 0) + 1
        names = (
            "<br>".join(f"`{b}`" + (f" (×{k})" if k > 1 else "") for b, k in bases.items()) or "—"
        )
        if not tests:
            status = "no test"
        else:
            outcomes = {entry["outcome"] for _, entry in tests}
            when = max(entry["when"] for _, entry in tests)[:10]
            status = ("passed" if outcomes == {"passed"} else "/".join(sorted(outcomes))) + (
                f" ({when})"
            )
        note = f" *{NOTES[n]}*" if n in NOTES else ""
        rows.append(f"| {n} | {case} | {promise}.{note} | {names} | {status} |")
    return HEADER + "\n".join(rows) + "\n"


def main() -> int:
    DOC.write_text(render(load()), encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
