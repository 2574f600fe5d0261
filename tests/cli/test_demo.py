"""The offline demo: ``bridge ask --demo`` and ``bridge-mcp --demo`` run the whole flow against
the built-in fake sites in a headless Chromium of their own, with no account and no state
left behind; and the demo's summary (pure)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from bridge.app.runtime import RuntimeOptions
from bridge.cli.demo import DEMO_NOTE, demo_summary, refuse_demo_options
from tests.commands import installed_command

QUESTION = "What is a Python decorator?"


def test_options_that_contradict_the_demo_are_refused_with_what_to_drop() -> None:
    assert refuse_demo_options(RuntimeOptions()) is None
    assert "drop --profile-dir" in (
        refuse_demo_options(RuntimeOptions(profile_dir=Path("p"))) or ""
    )
    assert "drop --link" in (refuse_demo_options(RuntimeOptions(link="native")) or "")


def _history(provider: str, answer: str) -> dict[str, Any]:
    timings = {"connect_ms": 120, "input_ms": 30, "send_ms": 10, "wait_response_ms": 900}
    return {
        "ts": "2026-11-23T00:00:00.000Z",
        "provider": provider,
        "question": QUESTION,
        "answer": answer,
        "url": f"https://{provider}.example/c/1",
        "timings": {**timings, "total_ms": 1100},
        "outcome": "ok",
        "used": {"tab": "new_tab"},
    }


def test_summary_names_the_fakes_the_timings_and_a_shortened_history_line() -> None:
    answer = "A decorator wraps a function. " * 10
    history = [_history("chatgpt", answer), _history("gemini", "short")]
    lines = demo_summary(history, wall_ms=1234.0)
    assert lines[0].startswith("timings: chatgpt: 1.10 s in all (open tab 0.12 s, type 0.03 s")
    assert lines[0].endswith(f"{len(answer)} chars from https://chatgpt.example/c/1")
    assert lines[2] == "timings: the whole command, browser start included: 1.23 s"
    shown = json.loads(lines[3].removeprefix("history: "))
    assert shown["answer"] == f"{answer[:60]}… ({len(answer)} chars)"
    assert shown["timings"] == "{…}" and shown["used"] == "{…}"
    assert shown["provider"] == "chatgpt" and shown["question"] == QUESTION
    assert json.loads(lines[4].removeprefix("history: "))["answer"] == "short"


def test_summary_of_a_failed_ask_shows_its_history_line_but_no_timings() -> None:
    failed = {"provider": "gemini", "question": QUESTION, "outcome": "timeout", "error": "slow"}
    lines = demo_summary([failed], wall_ms=None)
    assert not any(line.startswith("timings:") for line in lines)
    assert json.loads(lines[-1].removeprefix("history: "))["outcome"] == "timeout"


@pytest.mark.e2e
async def test_mcp_demo_answers_from_both_fakes_without_any_setup(tmp_path: Path) -> None:
    """No fake_sites fixture, no --launch, no --chrome-arg: ``--demo`` brings its own."""
    env = {k: v for k, v in os.environ.items() if k != "BRIDGE_STATE_DIR"}
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    env["HOME"] = str(home)  # the demo must not need, nor touch, the person's state
    params = StdioServerParameters(
        command=installed_command("bridge-mcp"), args=["--demo"], cwd=str(project), env=env
    )
    with open(tmp_path / "stderr.log", "w") as errlog:
        async with asyncio.timeout(90), Client(stdio_client(params, errlog=errlog)) as client:
            result = await client.call_tool("ask_chatgpt_gemini_web", {"question": QUESTION})
    text = "\n".join(getattr(part, "text", "") for part in result.content)
    assert not result.is_error, text
    assert "## ChatGPT" in text and "## Gemini" in text
    assert text.lower().count("decorator") >= 2
    assert DEMO_NOTE in (tmp_path / "stderr.log").read_text()
    assert list(project.iterdir()) == []  # no state in the working directory
    assert not (home / ".local" / "state" / "bridge").exists()  # nor in the person's


@pytest.mark.e2e
async def test_ask_demo_answers_from_each_provider_with_timings_and_history(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "BRIDGE_STATE_DIR"}
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    env["HOME"] = str(home)
    proc = await asyncio.create_subprocess_exec(
        installed_command("bridge"),
        "ask",
        "--demo",
        QUESTION,
        "--provider",
        "both",
        cwd=str(project),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out_b, err_b = await asyncio.wait_for(proc.communicate(), 90)
    out, err = out_b.decode(), err_b.decode()
    assert proc.returncode == 0, err
    assert DEMO_NOTE in err
    sections = {part.split("\n", 1)[0]: part for part in out.split("## ")[1:]}
    assert set(sections) == {"chatgpt", "gemini"}
    for provider, body in sections.items():
        assert "decorator" in body.split("\n", 1)[1].lower(), body
        assert f"timings: {provider}: " in out
    history = [line for line in out.splitlines() if line.startswith("history: ")]
    assert sorted(json.loads(h.removeprefix("history: "))["provider"] for h in history) == [
        "chatgpt",
        "gemini",
    ]
    assert list(project.iterdir()) == []
    assert not (home / ".local" / "state" / "bridge").exists()


def test_demo_refuses_a_profile_of_the_persons_own(tmp_path: Path) -> None:
    done = subprocess.run(
        [installed_command("bridge"), "ask", "--demo", QUESTION, "--profile-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "drop --profile-dir" in done.stderr
    assert list(tmp_path.iterdir()) == []
