"""Whose page CPU a profile sample is (bridge/bench/page_cost.py ``attribute``): the innermost
script on the stack decides; a site's handler under bridge's call is the site's work."""

from __future__ import annotations

from typing import Any

from bridge.bench.page_cost import BRIDGE_SCRIPT, SITE_SCRIPTS, attribute


def _profile(*stacks: list[tuple[str, str]]) -> dict[str, Any]:
    """One sample per stack (outermost first) of (function, url) frames."""
    nodes: list[dict[str, Any]] = [{"id": 1, "callFrame": {"functionName": "(root)", "url": ""}}]
    samples = []
    for stack in stacks:
        at = 1
        for function, url in stack:
            new = len(nodes) + 1
            nodes.append({"id": new, "callFrame": {"functionName": function, "url": url}})
            nodes[at - 1].setdefault("children", []).append(new)
            at = new
        samples.append(at)
    return {"nodes": nodes, "samples": samples}


BRIDGE = f"https://chatgpt.com/{BRIDGE_SCRIPT}"
SITE = f"https://chatgpt.com{SITE_SCRIPTS}app.js"


def test_the_innermost_script_owns_a_sample() -> None:
    share = attribute(
        _profile(
            [("clickSend", BRIDGE), ("onClick", SITE), ("render", SITE)],  # the site's handler
            [("report", BRIDGE), ("signals", BRIDGE), ("querySelectorAll", "")],  # a report
            [("observe", BRIDGE)],  # bridge's own, outside a report
            [("tick", SITE)],  # the site alone
            [("gc", "")],  # neither
        )
    )
    assert share == {"bridge": 2, "watch": 1, "site": 2, "site_under_bridge": 1, "other": 1}
