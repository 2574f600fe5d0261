"""``python -m bridge.fakes [--port N]``: serve the fake sites for a person to explore.

Prints the Chromium flags that load them at the real URLs, then serves until Ctrl-C. Use the
flags with a throwaway profile (``--user-data-dir`` of a temporary directory), never your own.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import threading
from collections.abc import Sequence
from types import FrameType

from bridge.fakes.behaviour import Behaviour
from bridge.fakes.server import CHATGPT_URL, GEMINI_URL, FakeSites

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bridge.fakes",
        description="Serve fake ChatGPT and Gemini sites at their real URLs, locally.",
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any)")
    parser.add_argument("--locale", choices=("en", "de", "ja"), default="en", help="UI language")
    parser.add_argument(
        "--thinking-ms", type=int, default=0, help="ChatGPT's Thinking phase per answer"
    )
    parser.add_argument(
        "--chunk-interval-ms", type=int, default=40, help="pause between streamed chunks"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    behaviour = Behaviour(
        locale=args.locale,
        thinking_ms=args.thinking_ms,
        chunk_interval_ms=args.chunk_interval_ms,
    )
    sites = FakeSites(port=args.port)
    sites.chatgpt.set_behaviour(behaviour)
    sites.gemini.set_behaviour(behaviour)
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    sites.start()
    try:
        flags = " ".join(shlex.quote(arg) for arg in sites.chromium_args())
        print(f"Fake sites on 127.0.0.1:{sites.port}: {CHATGPT_URL}  {GEMINI_URL}")
        print("Start a Chromium with a throwaway profile and these flags:")
        print(f"  chromium --user-data-dir=$(mktemp -d) {flags} {CHATGPT_URL} {GEMINI_URL}")
        print("Never add these flags to your own profile. Ctrl-C stops.", flush=True)
        stopping.wait()
    finally:
        sites.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
