"""Reliability case 28: a read-only state directory or a full disk costs the record, never
the answer, and is said once per Bridge (one warning, one note in a result).

Faults are injected through the seam bridge/store/state.py keeps under every state file
(``_open``, ``_write``, ``_read_text``): these tests run as root here, and root ignores
permission bits, so ``chmod`` alone proves nothing (its test runs only as another user).
One fault is the kernel's own: ``history.jsonl`` pointing at ``/dev/full`` (ENOSPC).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.app.facade import Bridge
from bridge.fakes import FakeSites
from bridge.providers.results import AskResult
from bridge.store import state
from bridge.store.state import StateStore

QUESTION = "How do I read files asynchronously in Python?"
CONVERSATION_BASE = "https://chatgpt.com/c/"


def _read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every open for writing fails as on a read-only mount (EROFS); reading still works."""
    real = state._open

    def read_only_open(path: Path, flags: int) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real(path, flags)

    monkeypatch.setattr(state, "_open", read_only_open)


def _disk_full(monkeypatch: pytest.MonkeyPatch, room: int = 10) -> None:
    """The disk has ``room`` bytes left: the first write takes what fits (a short write, as
    the kernel does), every later one fails with ENOSPC."""
    left = [room]

    def full_write(fd: int, data: bytes | memoryview) -> int:
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written = os.write(fd, data[: left[0]])
        left[0] -= written
        return written

    monkeypatch.setattr(state, "_write", full_write)


def _unreadable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading a state file fails (EIO: a bad disk, a broken network mount)."""

    def broken_read(path: Path) -> str:
        raise OSError(errno.EIO, os.strerror(errno.EIO), str(path))

    monkeypatch.setattr(state, "_read_text", broken_read)


def _state_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "bridge.store.state" and r.levelno >= logging.WARNING
    ]


def _later_faults(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "bridge.store.state"
        and r.levelno == logging.DEBUG
        and r.getMessage().startswith("state: could not")
    ]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.DEBUG, logger="bridge.store.state")
    yield caplog


# -- the store alone (no browser) -------------------------------------------------------


@pytest.mark.reliability(28)
def test_state_that_cannot_be_read_is_no_saved_session_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logs: pytest.LogCaptureFixture
) -> None:
    store = StateStore(tmp_path)
    store.put_session("p", "chatgpt", "https://chatgpt.com/c/1", 3)
    _unreadable(monkeypatch)
    assert store.get_session("p", "chatgpt") is None
    assert store.get_session("p", "gemini") is None
    warnings = _state_warnings(logs)
    assert len(warnings) == 1 and "could not read" in warnings[0], warnings
    assert os.strerror(errno.EIO) in warnings[0] and str(store.sessions_path) in warnings[0]
    assert len(_later_faults(logs)) == 1  # the second failure: seen, not repeated aloud
    assert store.take_fault_note() == warnings[0]
    assert store.take_fault_note() is None  # one result carries it, not every one


@pytest.mark.reliability(28)
def test_a_read_only_directory_still_reads_the_saved_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logs: pytest.LogCaptureFixture
) -> None:
    store = StateStore(tmp_path)
    store.put_session("p", "chatgpt", "https://chatgpt.com/c/1", 3)
    _read_only(monkeypatch)
    entry = store.get_session("p", "chatgpt")  # no lock to take: read without it
    assert entry is not None and entry.url == "https://chatgpt.com/c/1"
    assert _state_warnings(logs) == []
    with pytest.raises(OSError) as raised:
        store.put_session("p", "chatgpt", "https://chatgpt.com/c/2", 3)
    assert raised.value.errno == errno.EROFS  # writers raise; their callers report


@pytest.mark.reliability(28)
def test_a_full_disk_leaves_the_state_files_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = StateStore(tmp_path)
    store.put_session("p", "chatgpt", "https://chatgpt.com/c/1", 3)
    store.append_history({"n": 1})
    before = _snapshot(tmp_path)
    for room in (0, 10, 100):  # nothing fits; part of a line fits; most of it fits
        _disk_full(monkeypatch, room)
        with pytest.raises(OSError) as raised:
            store.append_history({"n": 2, "answer": "x" * 500})
        assert raised.value.errno == errno.ENOSPC
        with pytest.raises(OSError) as raised:
            store.put_session("p", "chatgpt", "https://chatgpt.com/c/" + "y" * 500, 4)
        assert raised.value.errno == errno.ENOSPC
        assert _snapshot(tmp_path) == before  # no torn line, no half file, no temporary
    monkeypatch.undo()
    store.append_history({"n": 3})  # space again: the history goes on, whole
    assert [r["n"] for r in store.history()] == [1, 3]


# -- asks (real Chromium, the fake ChatGPT) --------------------------------------------


def _answered(result: AskResult, fakes: FakeSites) -> None:
    """The answer is the one the fake site just sent for this question."""
    sent = fakes.chatgpt.records[-1]
    assert sent.text == result.question
    assert result.answer.splitlines()[-1] == sent.answer.strip().splitlines()[-1]


async def _ask_twice(bridge: Bridge, fakes: FakeSites) -> tuple[list[str], list[str]]:
    """Two asks; each answers; returns each result's notes."""
    first = await bridge.ask("chatgpt", QUESTION, new_chat=True)
    _answered(first, fakes)
    second = await bridge.ask("chatgpt", "And how do I write one asynchronously?")
    _answered(second, fakes)
    assert "notes" not in second.to_dict()
    assert first.to_dict()["notes"] == first.notes
    return first.notes, second.notes


@pytest.mark.e2e
@pytest.mark.reliability(28)
async def test_asks_answer_with_a_read_only_state_directory(
    bridge: Bridge,
    fakes: FakeSites,
    monkeypatch: pytest.MonkeyPatch,
    logs: pytest.LogCaptureFixture,
) -> None:
    conversation = fakes.chatgpt.create_conversation([("Earlier question", "Earlier answer.")])
    saved = CONVERSATION_BASE + conversation
    bridge.store.put_session(bridge.session_key, "chatgpt", saved, None)
    before = _snapshot(bridge.store.root)
    _read_only(monkeypatch)
    continued = await bridge.ask("chatgpt", "What is a Python context manager?")
    _answered(continued, fakes)
    assert continued.url == saved  # the saved conversation was still read, and continued
    again = await bridge.ask("chatgpt", "And what is a Python decorator?")
    _answered(again, fakes)
    assert again.url == saved
    await bridge.provider_tab("chatgpt")  # connecting records the session too: no error
    warnings = _state_warnings(logs)
    assert len(warnings) == 1, warnings
    assert os.strerror(errno.EROFS) in warnings[0] and str(bridge.store.root) in warnings[0]
    assert len(_later_faults(logs)) >= 3  # every later failure was met, and kept quiet
    assert continued.notes == warnings and again.notes == []
    assert _snapshot(bridge.store.root) == before


@pytest.mark.e2e
@pytest.mark.reliability(28)
async def test_asks_answer_on_a_full_disk(
    bridge: Bridge,
    fakes: FakeSites,
    monkeypatch: pytest.MonkeyPatch,
    logs: pytest.LogCaptureFixture,
) -> None:
    bridge.store.put_session("another-project", "gemini", "https://gemini.google.com/app/1", 5)
    bridge.store.append_history({"project": "another-project", "outcome": "ok"})
    before = _snapshot(bridge.store.root)
    _disk_full(monkeypatch)
    first_notes, second_notes = await _ask_twice(bridge, fakes)
    warnings = _state_warnings(logs)
    assert len(warnings) == 1 and os.strerror(errno.ENOSPC) in warnings[0], warnings
    assert first_notes == warnings and second_notes == []
    assert len(_later_faults(logs)) >= 2
    assert _snapshot(bridge.store.root) == before  # the earlier records are whole
    assert not list(bridge.store.root.glob(".*.tmp"))


@pytest.mark.e2e
@pytest.mark.reliability(28)
async def test_unreadable_sessions_mean_a_new_conversation(
    bridge: Bridge,
    fakes: FakeSites,
    monkeypatch: pytest.MonkeyPatch,
    logs: pytest.LogCaptureFixture,
) -> None:
    conversation = fakes.chatgpt.create_conversation([("Earlier question", "Earlier answer.")])
    bridge.store.put_session(bridge.session_key, "chatgpt", CONVERSATION_BASE + conversation, None)
    _unreadable(monkeypatch)
    result = await bridge.ask("chatgpt", QUESTION)  # would continue the saved conversation
    _answered(result, fakes)
    assert conversation not in result.url  # treated as no saved session: a new chat
    warnings = _state_warnings(logs)
    assert len(warnings) == 1 and "could not read" in warnings[0], warnings
    assert result.notes == warnings
    monkeypatch.undo()
    assert bridge.store.history()[-1]["answer"] == result.answer  # writing still worked


@pytest.mark.e2e
@pytest.mark.reliability(28)
async def test_history_on_a_device_that_is_full(
    bridge: Bridge, fakes: FakeSites, logs: pytest.LogCaptureFixture
) -> None:
    """The kernel's own ENOSPC, no injection: ``history.jsonl`` is ``/dev/full``."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    bridge.store.root.mkdir(parents=True, exist_ok=True)
    bridge.store.history_path.symlink_to("/dev/full")
    first_notes, second_notes = await _ask_twice(bridge, fakes)
    warnings = _state_warnings(logs)
    assert len(warnings) == 1 and "append to" in warnings[0], warnings
    assert os.strerror(errno.ENOSPC) in warnings[0]
    assert first_notes == warnings and second_notes == []
    saved = json.loads(bridge.store.sessions_path.read_text())  # what could be written, was
    assert saved["projects"][bridge.session_key]["chatgpt"]["url"].startswith(CONVERSATION_BASE)


@pytest.mark.e2e
@pytest.mark.reliability(28)
@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores permission bits"
)
async def test_asks_answer_with_a_state_directory_without_write_permission(
    bridge: Bridge, fakes: FakeSites, logs: pytest.LogCaptureFixture
) -> None:
    root = bridge.store.root
    root.mkdir(parents=True, exist_ok=True)
    mode = root.stat().st_mode
    root.chmod(stat.S_IRUSR | stat.S_IXUSR)  # 0500
    try:
        first_notes, second_notes = await _ask_twice(bridge, fakes)
    finally:
        root.chmod(mode)
    warnings = _state_warnings(logs)
    assert len(warnings) == 1 and os.strerror(errno.EACCES) in warnings[0], warnings
    assert first_notes == warnings and second_notes == []
