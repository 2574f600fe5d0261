"""What a capture costs an ask (docs/captures.md): the same short answer asked with a capture
riding along and without, interleaved on the same tabs, so both see the same machine.

A capture reads the page four times (ready, typed, answering, done) and keeps the answer
request's body; it is a diagnosis a person runs rarely, so the bound is generous, but it must
not turn a one-second ask into a slow one.
"""

from __future__ import annotations

import time

from bridge.app.captures import take_capture
from bridge.app.facade import Bridge
from bridge.bench.ask_bench import ANSWER, QUESTION
from bridge.bench.stats import Figure, median
from bridge.fakes import FakeSites
from bridge.providers.results import PROVIDERS

__all__ = ["measure_capture"]

#: A capture may make an ask this much slower at most (the target of the ratio).
CAPTURE_TARGET = 1.25


async def measure_capture(
    bridge: Bridge, fakes: FakeSites, *, runs: int
) -> tuple[list[Figure], dict[str, object]]:
    """Per provider: the median ask with a capture ÷ the median plain ask (existing chat,
    the same short answers, alternating)."""
    figures: list[Figure] = []
    raw: dict[str, object] = {}
    n = 0
    for provider in PROVIDERS:
        site = fakes.chatgpt if provider == "chatgpt" else fakes.gemini
        plain: list[float] = []
        captured: list[float] = []
        for _ in range(max(1, runs)):
            for capturing in (False, True):
                n += 1
                site.queue(ANSWER)
                question = QUESTION.format(n=n)
                started = time.monotonic()
                if capturing:
                    capture, _, error = await take_capture(
                        bridge, provider, question, new_chat=False
                    )
                    assert error is None and capture["phases"], error
                    captured.append((time.monotonic() - started) * 1000)
                else:
                    await bridge.ask(provider, question)
                    plain.append((time.monotonic() - started) * 1000)
        figures.append(
            Figure(
                f"{provider}: ask with a capture riding along",
                "ms",
                median(captured),
                median(plain),
                "the same ask without",
                CAPTURE_TARGET,
                note="four page reads and the stream kept; alternating asks, same tab",
            )
        )
        raw[provider] = {"captured_ms": captured, "plain_ms": plain}
    return figures, raw
