"""``bridge capture show FILE`` and ``bridge capture diff A B`` (docs/captures.md): what a
capture kept, read before sharing it; and every difference that matters to bridge between
two captures — a fake's and a live one, to bring the fakes in line with the site, or two
live ones, to see what the site changed."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from bridge.providers.capture.diff import diff_captures, render_diff
from bridge.providers.capture.model import CaptureFileError, load_capture
from bridge.providers.capture.review import review

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="capture_command", required=True)
    show = actions.add_parser("show", help="what a capture kept (read it before sharing)")
    show.add_argument("file", type=Path)
    diff = actions.add_parser(
        "diff", help="the differences that matter to bridge between two captures"
    )
    diff.add_argument("a", type=Path, help="e.g. a fake's capture (tests/captures/…)")
    diff.add_argument("b", type=Path, help="e.g. a live capture")
    diff.add_argument("--json", action="store_true", help="print the findings as JSON")


def run(args: argparse.Namespace) -> int:
    """0: shown, or no difference; 1: differences; 2: a file that is no capture."""
    try:
        if args.capture_command == "show":
            print(review(load_capture(args.file), args.file))
            return 0
        a, b = load_capture(args.a), load_capture(args.b)
    except CaptureFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if a.get("provider") != b.get("provider"):
        print(
            f"error: {args.a} is {a.get('provider')}'s and {args.b} is {b.get('provider')}'s: "
            "compare captures of one site",
            file=sys.stderr,
        )
        return 2
    findings = diff_captures(a, b, a_name=args.a.name, b_name=args.b.name)
    if args.json:
        print(json.dumps([asdict(f) for f in findings], indent=2, ensure_ascii=False))
    else:
        print(render_diff(findings))
    return 1 if any(not f.ok for f in findings) else 0
