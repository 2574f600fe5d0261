"""``bridge snapshot chatgpt|gemini|<tab id>``: what a tab shows, from a terminal.

The accessibility outline (roles and names) printed, or written with ``--outline PATH``, and a
PNG screenshot written to a file whose path is printed. The same code as the MCP tool
``take_cdp_snapshot`` (``bridge.app.tab_snapshot``): a person sees what an agent would.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from bridge.app.runtime import Runtime, add_runtime_arguments, options_from_args, start_error
from bridge.app.tab_snapshot import TARGET_HELP, parse_target, take_snapshot
from bridge.errors import BridgeError

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", help=f"the tab to look at: {TARGET_HELP}")
    parser.add_argument(
        "--screenshot",
        type=Path,
        metavar="PATH",
        help="where to write the PNG (default: bridge-snapshot-<target>-<UTC time>.png here)",
    )
    parser.add_argument(
        "--outline",
        type=Path,
        metavar="PATH",
        help="write the outline to PATH instead of printing it",
    )
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        help="seconds to wait for the extension to connect (default 10)",
    )
    add_runtime_arguments(parser)


async def run(args: argparse.Namespace) -> int:
    try:  # before any browser starts: a typo costs nothing
        parse_target(args.target)
    except ValueError as exc:
        print(f"error: {exc} (e.g. bridge snapshot chatgpt)", file=sys.stderr)
        return 2
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    image_path: Path = args.screenshot or Path(f"bridge-snapshot-{args.target}-{stamp}.png")
    options = options_from_args(args)
    options.connect_timeout = args.connect_timeout
    runtime = Runtime(options)
    try:
        await runtime.start()
        shot = await take_snapshot(runtime.bridge, args.target, image_format="png")
    except BridgeError as exc:
        print(f"error [{exc.code}]: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {start_error(exc, args.relay_port)}", file=sys.stderr)
        return 1
    finally:
        await runtime.stop()
    text = f"url: {shot.url}\n\n{shot.outline}\n"
    try:
        await asyncio.to_thread(_write, image_path, shot.image, args.outline, text)
    except OSError as exc:
        print(f"error: cannot write the snapshot: {exc}; pass a writable path", file=sys.stderr)
        return 1
    if args.outline is None:
        print(text, flush=True)
    else:
        print(f"outline: {args.outline}", flush=True)
    print(f"screenshot: {image_path}", flush=True)
    return 0


def _write(image_path: Path, image: bytes, outline_path: Path | None, text: str) -> None:
    image_path.parent.mkdir(parents=True, exist_ok=True)
    image_path.write_bytes(image)
    if outline_path is not None:
        outline_path.parent.mkdir(parents=True, exist_ok=True)
        outline_path.write_text(text, encoding="utf-8")
