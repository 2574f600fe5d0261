"""A job's record (bridge.app.jobs.record, docs/flows.md#jobs-file): what makes a file no
record, and any valid record round-trips through its file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.app.jobs import Job, JobUnreadable

PATH = Path("/state/jobs/chatgpt-0123456789.json")
GOOD: dict[str, Any] = {
    "format": 2,
    "id": "chatgpt-0123456789",
    "provider": "chatgpt",
    "question": "How do I read files asynchronously in Python?",
    "session_key": "proj",
    "status": "running",
    "created": "2026-01-01T00:00:00.000Z",
    "updated": "2026-01-01T00:00:00.000Z",
    "created_at": 1767225600.0,
    "updated_at": 1767225600.0,
    "timeout_s": 480.0,
    "owner": {"pid": 4242, "start": 1767225500.25},
}


def _why(**changes: Any) -> str:
    with pytest.raises(JobUnreadable) as caught:
        Job.from_text(json.dumps({**GOOD, **changes}), PATH)
    return caught.value.why


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        (
            {"status": "paused"},
            "missing or wrong field: status: Input should be 'running', 'done' or 'failed'",
        ),
        ({"provider": "claude"}, "missing or wrong field: provider:"),
        ({"created_at": "yesterday"}, "missing or wrong field: created_at:"),
        ({"chars": -1}, "missing or wrong field: chars:"),
        ({"tab_id": "7"}, "missing or wrong field: tab_id:"),
        (
            {"status": "done"},
            "missing or wrong field: the record: Value error, done, but no result",
        ),
        ({"id": "gemini-0123456789"}, "it names job 'gemini-0123456789'"),
        ({"owner": {"pid": 1, "host": "x"}}, "missing or wrong field: owner.host:"),
        ({"surprise": 1}, "missing or wrong field: surprise: Extra inputs are not permitted"),
    ],
)
def test_what_makes_a_file_no_record(changes: dict[str, Any], why: str) -> None:
    assert _why(**changes).startswith(why)


def test_not_json_says_so() -> None:
    with pytest.raises(JobUnreadable, match="not JSON"):
        Job.from_text('{"id": "half a rec', PATH)


def test_a_format_1_owner_start_is_clock_ticks_and_no_longer_compared() -> None:
    job = Job.from_text(json.dumps({**GOOD, "format": 1, "owner": {"pid": 9, "start": 123}}), PATH)
    assert (job.owner.pid, job.owner.start) == (9, None)


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
_epoch = st.floats(0, 4e9)
_records = st.builds(
    lambda provider, digits, **fields: {
        "id": f"{provider}-{digits}",
        "provider": provider,
        **fields,
    },
    st.sampled_from(["chatgpt", "gemini"]),
    st.from_regex(r"[0-9a-f]{10}", fullmatch=True),
    question=_text,
    session_key=_text,
    status=st.sampled_from(["running", "failed"]),
    created_at=_epoch,
    updated_at=_epoch,
    timeout_s=st.floats(0, 1e5),
    new_chat=st.booleans(),
    mode=st.none() | _text,
    owner=st.fixed_dictionaries({"pid": st.integers(0, 2**22), "start": st.none() | _epoch}),
    url=st.none() | _text,
    tab_id=st.none() | st.integers(0, 2**31),
    phase=_text,
    chars=st.integers(0, 10**7),
    resumed=st.integers(0, 10),
    error=st.none() | st.fixed_dictionaries({"code": _text, "message": _text}),
)


@settings(max_examples=60, deadline=None)
@given(_records, st.none() | st.dictionaries(_text, st.integers() | _text, max_size=3))
def test_any_valid_record_round_trips_through_its_file(record: dict[str, Any], result: Any) -> None:
    if result is not None:
        record = {**record, "status": "done", "result": result}
    path = PATH.with_name(f"{record['id']}.json")
    job = Job.from_text(json.dumps(record), path)
    back = Job.from_text(job.to_text(), path)
    assert back == job
    assert json.loads(back.to_text()) == json.loads(job.to_text())
