"""Markdown fidelity, end to end: every corpus answer (bridge/fakes/corpus), served by the
fake sites over their network streams, asked for through the same code the MCP server
uses; the returned answer must equal the source markdown after whitespace normalisation
for at least 99% of the corpus, for both providers (docs/sites.md#answer-sources)."""

from __future__ import annotations

import pytest

from bridge.app.facade import Bridge
from bridge.bench.fidelity import measure_source, normalize, same
from bridge.fakes import FakeSites
from bridge.fakes.corpus import corpus

pytestmark = pytest.mark.e2e


def test_whitespace_normalisation_is_all_that_is_forgiven() -> None:
    assert normalize(" a\n\n  b\tc ") == "a b c"
    assert same("```py\nx = 1\n```\n", "```py\nx = 1\n```")
    assert not same("```py\nx = 1\n```", "```\nx = 1\n```")  # a lost fence language counts
    assert not same("[a](https://x.y)", "a")  # a lost link target counts


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_answers_are_the_sites_markdown(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    entries = corpus()
    assert len(entries) >= 40
    figure = await measure_source(bridge, fakes, provider, "auto", entries)  # type: ignore[arg-type]
    print(f"{provider}: {figure.exact}/{figure.total} exact, sources {figure.used}")
    assert figure.share >= 0.99, f"{provider}: answers that differ: {figure.differ}"
    assert figure.used.get("network", 0) >= 0.99 * figure.total
