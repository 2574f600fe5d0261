"""Asking, measured with the fakes' own timestamps: noticing, overhead, both at once,
and the spec's 1 s polling design (docs/flows.md#departures) as the baseline (kept here
only, never in the product)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass

from bridge.app.facade import Bridge
from bridge.bench.stats import Figure, median, p95
from bridge.fakes import Behaviour, FakeSites
from bridge.providers.completion import Phase, Verdict
from bridge.providers.completion_loop import CompletionSettings, Observations, feed
from bridge.providers.composer import INPUT_METHODS, InputMethod
from bridge.providers.context import AskContext
from bridge.providers.flow import AskFlow
from bridge.providers.results import PROVIDERS, AskResult, Provider
from bridge.providers.specs import CompletionDetector

__all__ = ["measure_asks", "spec_polling_flow"]

# Streams for ~0.3 s: long enough to be an answer, short enough for many runs (both at once).
ANSWER = Behaviour(chunk_chars=24, chunk_interval_ms=15)
# Streams for 3 s, as real answers take at least: the noticing figures and the 1 s polling
# baseline run on these. On a 0.3 s answer a 1 s poll's first look already finds it done,
# which flatters the ratio; on a 3 s answer the poll waits out its phase like a real one.
REALISTIC = Behaviour(chunk_chars=24, duration_ms=3000)


#: --quick's stand-in for REALISTIC: 1 s instead of 3 s. A smoke run checks that every
#: figure is measured, not its value; 1 s still outlasts the poll's first look more often
#: than not (with the phase spread below), so the baseline still waits like a real one.
QUICK_REALISTIC_MS = 1000


def realistic(n: int, base_ms: int = 3000) -> Behaviour:
    """A 3–4 s answer (``base_ms`` plus up to 1 s): a phase spread over the poll's period
    (n × 397 ms mod 1 s), so a 1 s poll that starts with the question is not lined up with
    the answer's end (a whole-second answer would be noticed by it at once, and flatter the
    baseline)."""
    return dataclasses.replace(REALISTIC, duration_ms=base_ms + (n * 397) % 1000)


IDEAL_POLL_MS = 500.0  # a 1 s poll notices on average half a period late
# Streams for ~2 s (about 160 characters a second), closer to the real sites.
PACED = Behaviour(chunk_chars=24, chunk_interval_ms=150)
#: --quick's paced answers: exactly 2 s whatever the corpus answer's length (PACED's pace
#: makes a typical corpus answer of a kilobyte or more stream for 7 s and up, which a smoke
#: run cannot afford three times over).
QUICK_PACED = Behaviour(chunk_chars=24, duration_ms=2000)
QUESTION = "How do I read files asynchronously in Python? ({n})"


def _with_fixed_waits(method: InputMethod) -> InputMethod:
    """The spec's fixed waits around input: 500 ms "SPA rendering stabilization" before,
    200 ms "post-input wait" after (docs/sites.md#timeouts). The baseline only."""

    async def apply(ctx: AskContext) -> None:
        await asyncio.sleep(0.5)
        await method.apply(ctx)
        await asyncio.sleep(0.2)

    return InputMethod(method.name, method.phase, apply)


async def _poll_every_second(
    ctx: AskContext,
    detector: CompletionDetector,
    reports: Observations,
    settings: CompletionSettings,
) -> Verdict:
    """The spec's completion wait: read the page once a second (the reports are ignored)."""
    while True:
        await asyncio.sleep(1.0)
        verdict = feed(ctx, detector, await ctx.page.call("observe", ctx.provider))
        if verdict.phase is Phase.DONE:
            return verdict
        if verdict.phase in (Phase.FAILED, Phase.STUCK):
            raise RuntimeError(f"baseline ask ended {verdict.phase}: {verdict.reason}")


def spec_polling_flow() -> AskFlow:
    """The design bridge was specified from, as the reference its figures are measured
    against: fixed waits and 1 s polling. Kept here only, never in the product."""
    return AskFlow(
        input_methods=[_with_fixed_waits(INPUT_METHODS["script"])],
        completion=_poll_every_second,
    )


@dataclass
class _Sample:
    noticing_ms: float  # ask returned − the page reached its completed state
    overhead_ms: float  # ask total − the fake's own answer time (question received → complete)
    total_ms: float


async def _one(
    bridge: Bridge,
    fakes: FakeSites,
    provider: Provider,
    n: int,
    *,
    new_chat: bool,
    polling: bool,
    behaviour: Behaviour | None = None,
    realistic_ms: int = 3000,
) -> _Sample:
    # The baseline shares the browser, the state and the session key: the same tabs.
    baseline = Bridge(
        bridge.browser,
        state_dir=bridge.store.root,
        session_key=bridge.session_key,
        flow=spec_polling_flow(),
    )
    site = fakes.chatgpt if provider == "chatgpt" else fakes.gemini
    site.queue(behaviour or realistic(n, realistic_ms))
    question = QUESTION.format(n=n)
    started = time.time()
    result: AskResult = await (baseline if polling else bridge).ask(
        provider, question, new_chat=new_chat
    )
    assert result.answer
    returned = time.time()
    record = await site.wait_for_record_async(
        lambda r: r.text == question and r.completed_at is not None, 30
    )
    assert record.completed_at is not None
    return _Sample(
        noticing_ms=(returned - record.completed_at) * 1000,
        overhead_ms=((returned - started) - (record.completed_at - record.received_at)) * 1000,
        total_ms=(returned - started) * 1000,
    )


async def measure_asks(
    bridge: Bridge, fakes: FakeSites, *, runs: int, quick: bool = False
) -> tuple[list[Figure], dict[str, object]]:
    """Noticing and overhead on 3 s answers, against the spec's 1 s polling measured on the
    same answers and against an ideal 1 s poll; then both providers at once. ``quick``:
    existing chats only, 1 s answers instead of 3 s, and paced answers cut to 2 s (every
    figure still measured, roughly)."""
    realistic_ms = QUICK_REALISTIC_MS if quick else 3000
    seconds = f"{realistic_ms // 1000} s"
    paced_answer = QUICK_PACED if quick else PACED
    figures: list[Figure] = []
    raw: dict[str, object] = {}
    fakes.chatgpt.reset()
    fakes.gemini.reset()
    n = 0
    singles: dict[Provider, list[float]] = {"chatgpt": [], "gemini": []}
    realistic_runs = max(1, runs // 2)  # 3 s each, and as many polled: half the runs
    for provider in PROVIDERS:
        for mode in ("existing chat",) if quick else ("new chat", "existing chat"):
            event: list[_Sample] = []
            poll: list[_Sample] = []
            for i in range(realistic_runs):
                new_chat = mode == "new chat" or i == 0
                # Interleaved, so drift on a shared machine hits both the same.
                n += 1
                event.append(
                    await _one(
                        bridge,
                        fakes,
                        provider,
                        n,
                        new_chat=new_chat,
                        polling=False,
                        realistic_ms=realistic_ms,
                    )
                )
                n += 1
                poll.append(
                    await _one(
                        bridge,
                        fakes,
                        provider,
                        n,
                        new_chat=new_chat,
                        polling=True,
                        realistic_ms=realistic_ms,
                    )
                )
            for _ in range(runs if mode == "existing chat" else 0):
                n += 1  # short answers: the single-ask time the both-at-once figure compares
                short = await _one(
                    bridge, fakes, provider, n, new_chat=False, polling=False, behaviour=ANSWER
                )
                singles[provider].append(short.total_ms)
            notice = [s.noticing_ms for s in event]
            figures.append(
                Figure(
                    f"{provider} {mode}: noticing, median",
                    "ms",
                    median(notice),
                    None,
                    "",
                    100.0,
                    note=f"p95 {p95(notice):.0f} ms",
                )
            )
            figures.append(
                Figure(
                    f"{provider} {mode}: noticing vs spec 1 s polling ({seconds} answers)",
                    "ms",
                    median(notice),
                    median([s.noticing_ms for s in poll]),
                    "spec polling",
                    None,
                    note=f"the same {seconds} answers, interleaved",
                )
            )
            figures.append(
                Figure(
                    f"{provider} {mode}: noticing vs an ideal 1 s poll",
                    "ms",
                    median(notice),
                    IDEAL_POLL_MS,
                    "ideal 1 s poll (mean 500 ms)",
                    0.2,
                )
            )
            figures.append(
                Figure(
                    f"{provider} {mode}: overhead beyond the answer",
                    "ms",
                    median([s.overhead_ms for s in event]),
                    median([s.overhead_ms for s in poll]),
                    "spec polling",
                    None,
                )
            )
            raw[f"{provider} {mode}"] = {
                "event": [s.__dict__ for s in event],
                "spec_polling": [s.__dict__ for s in poll],
            }
    walls: list[float] = []
    for _ in range(runs):
        n += 1
        fakes.chatgpt.queue(ANSWER)
        fakes.gemini.queue(ANSWER)
        both = await bridge.ask_both(QUESTION.format(n=n))
        assert both.all_ok, both.errors
        walls.append(both.wall_ms)
    slower = max(median(singles["chatgpt"]), median(singles["gemini"]))
    figures.append(
        Figure(
            "ask_both wall time (0.2 s answers)",
            "ms",
            median(walls),
            slower,
            "slower single ask",
            1.1,
            note="fixed costs of two tabs at once on a shared machine weigh most here",
        )
    )
    raw["ask_both_ms"] = walls
    # Answers that stream for ~2 s, closer to the real sites' pace.
    paced: dict[str, list[float]] = {"chatgpt": [], "gemini": [], "both": []}
    for _ in range(max(1, runs // 2)):
        for provider in PROVIDERS:
            n += 1
            (fakes.chatgpt if provider == "chatgpt" else fakes.gemini).queue(paced_answer)
            started = time.monotonic()
            await bridge.ask(provider, QUESTION.format(n=n))
            paced[provider].append((time.monotonic() - started) * 1000)
        n += 1
        fakes.chatgpt.queue(paced_answer)
        fakes.gemini.queue(paced_answer)
        both = await bridge.ask_both(QUESTION.format(n=n))
        assert both.all_ok, both.errors
        paced["both"].append(both.wall_ms)
    figures.append(
        Figure(
            "ask_both wall time (2 s answers)",
            "ms",
            median(paced["both"]),
            max(median(paced["chatgpt"]), median(paced["gemini"])),
            "slower single ask",
            1.1,
        )
    )
    raw["paced_ms"] = paced
    return figures, raw
