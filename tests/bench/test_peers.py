"""The comparison with playwright-mcp (bridge/bench/peers.py): it skips cleanly without Node.js
or the package, and a one-round run measures every task through both servers and leaves no
process behind."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from bridge.bench.peers import (
    INSTALL_HINT,
    PEER,
    SETTLE_OFF,
    _figures,
    find_peer,
    main,
    measure_peers,
    tasks,
)


async def test_without_node_it_skips_with_a_note() -> None:
    figures, raw = await measure_peers(rounds=1, quick=True, node="/nonexistent/node")
    assert figures == []
    assert set(raw) == {"skipped"}
    assert "Node.js not found" in raw["skipped"] and "npm install" in raw["skipped"]


async def test_without_the_package_it_skips_with_a_note(tmp_path: Path) -> None:
    figures, raw = await measure_peers(rounds=1, quick=True, prefix=tmp_path / "empty")
    assert figures == []
    assert "@playwright/mcp is not installed" in raw["skipped"] and INSTALL_HINT in raw["skipped"]


def test_the_command_writes_the_note_when_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--quick", "--node", "/nonexistent/node", "--out", str(tmp_path)]) == 0
    (report,) = tmp_path.glob("peers-*.json")
    data = json.loads(report.read_text())
    assert data["figures"] == [] and "Node.js not found" in data["peers"]["skipped"]
    assert "peer comparison skipped" in capsys.readouterr().out


def test_the_package_is_found_by_its_package_json(tmp_path: Path) -> None:
    package = tmp_path / "node_modules" / "@playwright" / "mcp"
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"version": "9.9.9", "bin": {"playwright-mcp": "cli.js"}})
    )
    assert isinstance(find_peer(prefix=tmp_path), str)  # no cli.js yet
    (package / "cli.js").write_text("")
    peer = find_peer(node="python3", prefix=tmp_path)  # any executable stands in for node
    assert not isinstance(peer, str)
    assert peer.version == "9.9.9" and peer.cli == package / "cli.js"


def _missing() -> str | None:
    """Why the optional peer cannot run here (find_peer says it as text), else None."""
    found = find_peer()
    return found if isinstance(found, str) else None


@pytest.mark.e2e
@pytest.mark.skipif(
    _missing() is not None, reason=f"optional peer {PEER} not installed: {_missing()}"
)
async def test_one_round_through_both_servers() -> None:
    figures, raw = await asyncio.wait_for(measure_peers(rounds=1, quick=True), 300)
    assert "skipped" not in raw, raw.get("skipped")
    names = {f.name for f in figures}
    by_name = {f.name: f for f in figures}
    for task in tasks("http://x"):
        assert f"tool call: {task.name}" in names
        # The same call against playwright-mcp with its settle wait off: the target's row.
        settle_off = by_name[f"tool call (settle off): {task.name}"]
        assert settle_off.reference_name == SETTLE_OFF and settle_off.target == 1.0
        record = raw["tasks"][task.name]
        assert record["errors"] == []
        assert len(record["bridge_ms"]) == len(record[f"{PEER}_ms"]) == 1
        assert len(record[f"{SETTLE_OFF}_ms"]) == 1
    for page in ("form", "article", "table"):
        assert f"snapshot size: {page} page" in names
    assert raw["pages"]["table"]["elements"] > 2000
    # The click happened on both sides, and both read it back.
    for side in ("bridge", PEER):
        assert "Team members: 1" in raw["tasks"]["read text (form)"][f"{side}_sample"]
    for f in figures:
        assert f.reference is not None and f.ratio is not None and f.ratio > 0, f
    versions = raw["servers"]
    assert versions["bridge"]["version"] and versions[PEER]["version"]
    assert versions[PEER]["command"][0].endswith("node")
    assert "--timeout-settle=0" in versions[SETTLE_OFF]["command"]
    assert "--timeout-settle=0" not in versions[PEER]["command"]
    # Both servers and both browsers are gone: their working directory or profile was in
    # the run's directory, and no process refers to it any more.
    assert raw["killed_leftovers"] == []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            assert raw["tmp_root"] not in cmdline and not cwd.startswith(raw["tmp_root"])


def test_the_lean_calls_get_size_rows_against_the_peer() -> None:
    """Every snapshot and search task has a size row (bridge ÷ playwright-mcp); the diff
    task's peer is asked for what it has (the whole snapshot), and the row says so."""
    task_list = tasks("http://x")
    raw: dict[str, Any] = {"start_ms": {"bridge": 1.0, PEER: 2.0}, "pages": {}, "tasks": {}}
    for n, task in enumerate(task_list, start=1):
        raw["tasks"][task.name] = {
            "bridge_ms": [1.0],
            f"{PEER}_ms": [2.0],
            "bridge_chars": [100 * n],
            f"{PEER}_chars": [400 * n],
            "errors": [],
        }
    by_name = {f.name: f for f in _figures(task_list, raw)}
    for label in (
        "snapshot size: form page",
        "snapshot size: snapshot diff after click+type (form)",
        "snapshot size: snapshot depth=2 (article)",
        "snapshot size: snapshot target=nav (article)",
        "snapshot size: snapshot depth=3 (table)",
        "snapshot size: snapshot target=thead (table)",
        "find size: find (form)",
        "find size: find (table)",
        "tool call: find (article)",
        "tool call: snapshot depth=2 (article)",
    ):
        assert label in by_name, label
    assert by_name["find size: find (table)"].ratio == pytest.approx(0.25)
    diff = by_name["snapshot size: snapshot diff after click+type (form)"]
    assert '{"diff": true}' in diff.note and f"{PEER}: {{}}" in diff.note
    (diff_task,) = [t for t in task_list if t.args.get("diff")]
    assert diff_task.args_for(PEER) == {} and diff_task.args_for("bridge") == {"diff": True}
    # Calls without a size of interest have none.
    assert not any(name.endswith("click (form)") for name in by_name if "size" in name)
