"""Captures as tests (docs/captures.md#checking-a-capture): ``pytest --bridge-capture DIR``
checks bridge against every capture in DIR, without a network; captures kept in a folder
named ``captures`` (tests/captures/) are checked in every run.

Each capture file is one test: the pack's selectors against the captured structure (matched
by the test browser's CSS engine, in a blank tab that loads nothing), the stream parser
against the captured framing, the completion detector against the captured signals. A
failure lists every finding that failed, each naming the pack entry, the stream event or the
signal, with the override that would fix a selector where the capture shows one.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bridge.providers.capture.check import check_capture
from bridge.providers.capture.findings import Finding
from bridge.providers.capture.matching import capture_matcher
from bridge.providers.capture.model import CaptureFileError, load_capture
from bridge.providers.specs import provider_spec
from bridge.testing.session_loop import run_on

__all__ = ["CAPTURE_ITEM", "CAPTURE_OPTION", "CaptureFailed", "capture_shaped"]

CAPTURE_OPTION = "--bridge-capture"
#: The name of a capture's test: ``capture[<file stem>]``.
CAPTURE_ITEM = "capture"
_CAPTURE_KEY = re.compile(r'"bridge_capture"\s*:')
_CAPTURE: pytest.StashKey[dict[str, Any]] = pytest.StashKey()
_ROOTS: pytest.StashKey[tuple[Path, ...]] = pytest.StashKey()


class CaptureFailed(AssertionError):
    """A capture's check found what bridge no longer reads as the site shows it."""


def capture_shaped(path: Path) -> bool:
    """A JSON file written as a bridge capture (its top level says ``bridge_capture``)."""
    try:
        with path.open(encoding="utf-8") as file:
            head = file.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    return _CAPTURE_KEY.search(head) is not None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "capture: checks bridge against a capture of a site")
    roots = tuple(Path(p).resolve() for p in config.getoption(CAPTURE_OPTION, default=[]) or [])
    for root in roots:
        if not root.exists():
            raise pytest.UsageError(
                f"{CAPTURE_OPTION} {root}: no such folder or file (captures are written by "
                "`bridge doctor --live --capture DIR`)"
            )
    config.stash[_ROOTS] = roots
    if roots:
        # Only the captures when no test paths were named; with paths, the captures too.
        if config.args_source is not pytest.Config.ArgsSource.ARGS:
            config.args[:] = [str(r) for r in roots]
        else:
            config.args.extend(str(r) for r in roots)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CaptureFile | None:
    if file_path.suffix != ".json":
        return None
    resolved = file_path.resolve()
    asked = any(resolved == r or resolved.is_relative_to(r) for r in parent.config.stash[_ROOTS])
    kept = file_path.parent.name == "captures"
    if (asked or kept) and capture_shaped(file_path):
        return CaptureFile.from_parent(parent, path=file_path)
    return None


class CaptureFile(pytest.File):
    """One capture file: one test (an unreadable file fails its collection, saying why)."""

    def collect(self) -> Iterator[pytest.Item]:
        try:
            capture = load_capture(self.path)
        except CaptureFileError as exc:
            raise self.CollectError(str(exc)) from None
        # "capture[…]": never a scenario's id (those are plain words), so the scenarios'
        # report (which counts "<file>.json::<id>" items) leaves captures out.
        name = f"{CAPTURE_ITEM}[{self.path.stem}]"
        item = pytest.Function.from_parent(self, name=name, callobj=_capture_test)
        item.stash[_CAPTURE] = capture
        item.add_marker("capture")
        item.add_marker("e2e")  # the structure is matched in the test browser
        item.add_marker(str(capture["provider"]))
        yield item


def _capture_test(
    request: pytest.FixtureRequest, bridge_scenario_loop: asyncio.AbstractEventLoop
) -> None:
    """The body of a capture's test: every check, every failed finding in the failure."""
    capture = request.node.stash[_CAPTURE]
    bridge = request.getfixturevalue("bridge")
    spec = provider_spec(capture["provider"], bridge.store.root)

    async def check() -> list[Finding]:
        async with capture_matcher(bridge.browser) as matcher:
            return await check_capture(capture, spec, matcher)

    findings = run_on(bridge_scenario_loop, check())
    failed = [f for f in findings if not f.ok]
    if failed:
        lines = [f"{len(failed)} of {len(findings)} checks failed:"]
        lines += [f.line() for f in failed]
        proposals = [f.proposal for f in failed if f.proposal]
        if proposals:
            merged: dict[str, Any] = {}
            for proposal in proposals:
                for section, entries in proposal.items():
                    merged.setdefault(section, {}).update(entries)
            lines.append(
                "an override that makes the selectors match this capture "
                f"(<state dir>/packs/{capture['provider']}.json): {json.dumps(merged)}"
            )
        raise CaptureFailed("\n".join(lines))
