"""SiteController's clock controls (bridge/fakes/controller.py): hurrying an answer."""

from __future__ import annotations

import pytest

from bridge.fakes import Behaviour, SiteController


def _asked(site: SiteController) -> str:
    site.time_scale = 0.5
    site.queue(Behaviour(duration_ms=1_800_000))
    return site.open_question("What is a Python generator?", None).id


def test_a_hurried_answer_runs_on_the_new_clock_from_then_on() -> None:
    site = SiteController("chatgpt")
    record_id = _asked(site)
    record = site.record(record_id)
    assert record is not None and site.clock(record) == 0.5  # the clock it began with
    site.time_scale = 0.2  # the site's clock is for the next answers, not this one
    assert site.clock(record) == 0.5
    site.hurry(record_id)
    assert site.clock(record) == 0.001  # the stale record still reads the new clock
    assert site.hurry(record_id, 0.01).time_scale == 0.01


def test_hurrying_an_unknown_answer_or_to_no_clock_is_refused() -> None:
    site = SiteController("gemini")
    with pytest.raises(KeyError, match="no question 'nope' on the fake gemini"):
        site.hurry("nope")
    record_id = _asked(site)
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="positive"):
            site.hurry(record_id, bad)
