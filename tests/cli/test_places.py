"""``python -m bridge ask`` with a place (docs/sites.md#where), in a subprocess as a person runs
it: the fake site records where the question arrived; a bad form is refused before any
browser starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge.fakes import Behaviour, FakeSites
from tests.cli.test_commands import _run

pytestmark = pytest.mark.e2e
PROJECT = "g-p-0123456789abcdef0123456789abcdef"


def _launch(fake_sites: FakeSites, state: Path) -> list[str]:
    chrome = [f"--chrome-arg={a}" for a in fake_sites.chromium_args()]
    return ["--launch", "--headless", "--isolated", "--state-dir", str(state), *chrome]


async def test_ask_in_a_project_and_in_a_temporary_chat(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    fakes.chatgpt.add_place(PROJECT)
    code, out, err = await _run(
        "ask", "What is in this project?", "--provider", "chatgpt", "--project", PROJECT,
        "--json", *_launch(fake_sites, tmp_path),
    )  # fmt: skip
    assert code == 0, err
    assert fakes.chatgpt.records[-1].place == PROJECT  # conversation_mode.gizmo_id (C12.2)
    assert json.loads(out)["used"]["place"]["id"] == PROJECT
    code, out, err = await _run(
        "ask", "Is this temporary?", "--provider", "chatgpt", "--temporary", "--json",
        *_launch(fake_sites, tmp_path),
    )  # fmt: skip
    assert code == 0, err
    assert fakes.chatgpt.records[-1].temporary
    sessions = (tmp_path / "sessions.json").read_text(encoding="utf-8")
    assert "temporary-chat" not in sessions and PROJECT in sessions


async def test_a_missing_gem_and_no_temporary_chat_fail_closed(
    fake_sites: FakeSites, fakes: FakeSites, tmp_path: Path
) -> None:
    code, _, err = await _run(
        "ask", "Hello?", "--provider", "gemini", "--gem", "4221cfdd4fe7",
        *_launch(fake_sites, tmp_path),
    )  # fmt: skip
    assert code == 1 and "[place_not_found]" in err, err
    fakes.gemini.set_behaviour(Behaviour(temporary_chat=False))  # no temporary-chat button
    code, _, err = await _run(
        "ask", "Hello?", "--provider", "gemini", "--temporary", *_launch(fake_sites, tmp_path),
    )  # fmt: skip
    assert code == 1 and "[temporary_chat_unavailable]" in err, err
    assert fakes.gemini.records == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--provider", "gemini", "--project", PROJECT], "--project is a chatgpt place"),
        (["--provider", "chatgpt", "--conversation", "https://evil.example/c/1"], "other host"),
        (["--provider", "both", "--conversation", "abc"], "chatgpt=URL|ID"),
        (["--provider", "chatgpt", "--conversation", "x", "--temporary"], "contradiction"),
    ],
)
async def test_bad_places_are_refused_before_a_browser_starts(
    args: list[str], says: str, tmp_path: Path
) -> None:
    # No --launch and no extension: only the refusal can answer in time.
    code, _, err = await _run("ask", "Hello?", *args, "--state-dir", str(tmp_path), timeout=30)
    assert code == 2 and says in err, err
