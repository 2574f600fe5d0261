"""``python -m bridge.bench.fidelity``: how exactly each answer source returns the site's
markdown, on the fidelity corpus (``bridge/fakes/corpus``, served by the fakes over their
network streams).

For each provider and each source (``network``: the site's stream; ``copy``: the turn's
copy action; ``dom``: the rendered page converted back to markdown; ``auto``: what bridge
returns, network first with fallbacks), every corpus answer is asked for and the returned
text compared with the source markdown after whitespace normalisation (runs of
whitespace become one space). Prints JSON: the share of exact answers per source, and the
names of the answers that differ.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import dataclass, field

from bridge.app.facade import Bridge
from bridge.bench import fake_site_runtime
from bridge.fakes import Behaviour, FakeSites
from bridge.fakes.corpus import CorpusAnswer, corpus
from bridge.providers.results import Provider

__all__ = ["Figure", "measure_source", "normalize", "same"]

SOURCES = ("network", "copy", "dom", "auto")


def normalize(text: str) -> str:
    """Whitespace normalisation: what may differ between two faithful copies."""
    return " ".join(text.split())


def same(answer: str, source: str) -> bool:
    return normalize(answer) == normalize(source)


@dataclass
class Figure:
    """How many answers of one provider read through one source equal what the site sent."""

    provider: str
    source: str
    exact: int = 0
    total: int = 0
    differ: list[str] = field(default_factory=list)
    used: dict[str, int] = field(default_factory=dict)  # auto: which source won, how often

    @property
    def share(self) -> float:
        return self.exact / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "exact": self.exact,
            "total": self.total,
            "share": round(self.share, 4),
            "differ": self.differ,
        }
        if self.used:
            out["used"] = self.used
        return out


async def measure_source(
    bridge: Bridge,
    fakes: FakeSites,
    provider: Provider,
    source: str,
    entries: list[CorpusAnswer],
) -> Figure:
    """Ask for every corpus answer in one conversation; count the exact ones."""
    figure = Figure(provider, source)
    site = getattr(fakes, provider)
    for n, entry in enumerate(entries):
        # Big chunks, no pause: the corpus measures fidelity, not streaming cadence.
        site.queue(Behaviour(answer=entry.markdown, chunk_chars=2000, chunk_interval_ms=0))
        result = await bridge.ask(
            provider,
            entry.question,
            new_chat=n == 0,
            answer_source=source,  # type: ignore[arg-type]
        )
        figure.total += 1
        figure.used[result.used.extraction] = figure.used.get(result.used.extraction, 0) + 1
        if same(result.answer, entry.markdown):
            figure.exact += 1
        else:
            figure.differ.append(entry.name)
    if source != "auto":
        figure.used = {}
    return figure


async def measure(sources: tuple[str, ...], providers: tuple[Provider, ...]) -> dict[str, object]:
    entries = corpus()
    out: dict[str, object] = {"answers": len(entries)}
    with fake_site_runtime("fidelity") as (fakes, runtime):
        await runtime.start()
        try:
            await runtime.relay.wait_for_link(30)
            for provider in providers:
                figures: dict[str, object] = {}
                for source in sources:
                    figure = await measure_source(runtime.bridge, fakes, provider, source, entries)
                    figures[source] = figure.to_dict()
                out[provider] = figures
        finally:
            await runtime.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bridge.bench.fidelity", description=__doc__)
    parser.add_argument("--source", action="append", choices=SOURCES, help="default: all")
    parser.add_argument("--provider", action="append", choices=("chatgpt", "gemini"))
    args = parser.parse_args(argv)
    sources = tuple(args.source or SOURCES)
    providers = tuple(args.provider or ("chatgpt", "gemini"))
    result = asyncio.run(measure(sources, providers))
    json.dump(result, sys.stdout, indent=2, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
