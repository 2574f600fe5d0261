"""The trust handshake's cost (bridge/bench/handshake_bench.py): today's bridge and bridge
before the handshake, each measured in processes of its own with its own extension."""

from __future__ import annotations

import asyncio

import pytest

from bridge.bench.handshake_bench import BEFORE_REF, measure_handshake


def test_without_the_history_there_is_nothing_to_compare() -> None:
    figures, raw = measure_handshake(before_ref="0" * 40, relays=1, rounds=1, calls=1)
    assert figures == [] and "no git history" in str(raw["skipped"])


@pytest.mark.e2e
async def test_both_versions_connect_and_answer_over_their_own_links() -> None:
    figures, raw = await asyncio.wait_for(
        asyncio.to_thread(measure_handshake, relays=1, rounds=1, calls=10), 300
    )
    if "skipped" in raw:  # a shallow clone: the version before the handshake is not there
        pytest.skip(str(raw["skipped"]))
    assert raw["before_ref"] == BEFORE_REF and raw["relays_each"] == 1
    assert raw["calls_each"] == 10
    for key in ("start_to_connected_ms_before", "start_to_connected_ms_after"):
        assert 0 < float(raw[key]) < 60_000  # type: ignore[arg-type]
    added, per_command = figures
    assert added.target == 10.0 and added.reference is None
    assert per_command.reference is not None and per_command.reference > 0
    assert per_command.bridge > 0 and per_command.target == 1.1
