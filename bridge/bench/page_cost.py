"""``python -m bridge.bench.page_cost``: what an ask costs inside a long conversation page.

A fake conversation of ``--turns`` earlier exchanges (about 1 MB of text at 200 turns) is
opened for each provider; then ``--asks`` questions are asked in it, and the page's own
CPU per ask is read from CDP ``Performance.getMetrics`` (``ScriptDuration``: JavaScript;
``TaskDuration``: all main-thread work) before and after each ask. Only public API is
used, so the same script measures an older checkout for a before/after comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys

from bridge.bench import fake_site_runtime
from bridge.cdp import CdpSession
from bridge.fakes import Behaviour
from bridge.results import Provider

PARAGRAPH = (
    "Generators in Python produce values lazily: each call to next() resumes the function "
    "where it yielded, so a pipeline of generators processes one item at a time. "
)


def _answer(i: int) -> str:
    body = "\n\n".join(f"{PARAGRAPH}({i}.{k})" for k in range(30))  # about 5 kB
    return f"## Part {i}\n\n{body}\n\n```python\ndef gen():\n    yield {i}\n```"


async def _metrics(tab: CdpSession) -> dict[str, float]:
    got = await tab.send("Performance.getMetrics")
    return {m["name"]: float(m["value"]) for m in got["metrics"]}


async def measure(turns: int, asks: int) -> dict[str, object]:
    out: dict[str, object] = {"turns": turns, "asks": asks}
    with fake_site_runtime("pagecost") as (fakes, runtime):
        await runtime.start()
        try:
            await runtime.relay.wait_for_link(30)
            bridge = runtime.bridge
            providers: tuple[Provider, ...] = ("chatgpt", "gemini")
            for provider in providers:
                site = getattr(fakes, provider)
                history = [(f"Earlier question {i}?", _answer(i)) for i in range(turns)]
                conversation = site.create_conversation(history)
                base = (
                    "https://chatgpt.com/c/"
                    if provider == "chatgpt"
                    else ("https://gemini.google.com/app/")
                )
                bridge.store.put_session("pagecost", provider, base + conversation, None)
                script_ms: list[float] = []
                task_ms: list[float] = []
                tab: CdpSession | None = None
                for n in range(asks + 1):
                    site.queue(Behaviour(chunk_chars=8))  # about 60 reports per answer
                    before: dict[str, float] | None = (
                        await _metrics(tab) if tab is not None else None
                    )
                    await bridge.ask(provider, f"What is a Python generator? ({n})")
                    if tab is None:
                        entry = bridge.store.get_session("pagecost", provider)
                        assert entry is not None and entry.tab_id is not None
                        tab = runtime.browser.sessions[entry.tab_id]
                        await tab.send("Performance.enable")
                        continue  # the first ask loads the page: not counted
                    after = await _metrics(tab)
                    assert before is not None
                    script_ms.append((after["ScriptDuration"] - before["ScriptDuration"]) * 1000)
                    task_ms.append((after["TaskDuration"] - before["TaskDuration"]) * 1000)
                assert tab is not None
                text = await tab.evaluate("document.body.innerText.length")
                out[provider] = {
                    "page_text_chars": text,
                    "script_ms_per_ask_median": round(statistics.median(script_ms), 1),
                    "task_ms_per_ask_median": round(statistics.median(task_ms), 1),
                    "script_ms": [round(x, 1) for x in script_ms],
                }
        finally:
            await runtime.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bridge.bench.page_cost", description=__doc__)
    p.add_argument("--turns", type=int, default=200)
    p.add_argument("--asks", type=int, default=5)
    args = p.parse_args(argv)
    print(json.dumps(asyncio.run(measure(args.turns, args.asks)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
