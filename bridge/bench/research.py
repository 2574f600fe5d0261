"""``python -m bridge.bench.research``: how soon a finished Deep Research report reaches the
caller (docs/sites.md#research, the closing figure).

Each run starts a research job on the fake chatgpt.com (``Bridge.start_job(research=True)``,
what the MCP ask tools do), then waits for it as ``get_answer`` does (``Bridge.wait_job``).
The fake knows when it finished the report (``QuestionRecord.research_done_at``, its server
clock); the figure is the time from then to ``wait_job`` returning the report. bridge's wait
re-reads the conversation at each DOM change of the page and backs off to 30 s without one,
so this measures whether the page's own "done" change is what brings the report in.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from bridge.bench import fake_site_runtime
from bridge.bench.stats import median
from bridge.fakes import Behaviour

__all__ = ["measure_research"]

QUESTION = "Research the history of Python decorators and how they are used today. Run {n}."


async def measure_research(runs: int, research_ms: int) -> dict[str, Any]:
    """``runs`` researches of ``research_ms`` (site time) each: the latency of each report."""
    latencies: list[float] = []
    with fake_site_runtime("research") as (fakes, runtime):
        await runtime.start()
        try:
            await runtime.relay.wait_for_link(30)
            bridge = runtime.bridge
            fakes.chatgpt.set_behaviour(Behaviour(research="offered", research_ms=research_ms))
            for n in range(runs):
                job = await bridge.start_job(
                    "chatgpt", QUESTION.format(n=n), new_chat=True, research=True, timeout=300
                )
                while job.status == "running":
                    job = await bridge.wait_job(job.id, 50)
                returned = time.time()
                if job.status != "done":
                    raise RuntimeError(f"run {n}: the research job ended {job.status}: {job.error}")
                record = fakes.chatgpt.records[-1]
                assert record.research_done_at is not None
                latencies.append((returned - record.research_done_at) * 1000)
        finally:
            await runtime.stop()
    return {
        "runs": runs,
        "research_ms": research_ms,
        "done_to_answer_ms": [round(v, 1) for v in latencies],
        "median_ms": round(median(latencies), 1),
        "max_ms": round(max(latencies), 1),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bridge.bench.research", description=__doc__)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--research-ms", type=int, default=3000, help="each research's length")
    args = p.parse_args(argv)
    raw = asyncio.run(measure_research(args.runs, args.research_ms))
    print(
        f"report done -> answer returned: median {raw['median_ms']:.0f} ms, "
        f"max {raw['max_ms']:.0f} ms over {raw['runs']} researches"
    )
    print(json.dumps(raw, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
