"""``python -m bridge.bench.tools_bench``: the browser tools on real-world-shaped pages.

- snapshot size (characters) of a long article, a 500-row data table and a web-mail-like
  app, against the page's own visible text (``innerText``) as the reference;
- time per click (median): ``BrowserTools.click`` (element resolution, actionability
  checks, input events, change report) against direct CDP sending the same three mouse
  events to the same tab (the browser's DevTools port, the floor of any click).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Mapping

from bridge.app.runtime import Runtime, RuntimeOptions
from bridge.bench import serve_pages
from bridge.cdp.direct import DirectCdp


def _article() -> str:
    nav = "".join(f'<li><a href="#s{i}">Section {i}</a></li>' for i in range(30))
    body = "".join(
        f'<h2 id="s{i}">Section {i}: how generators work</h2>'
        + "".join(
            f"<p>Paragraph {j} of section {i}. Generators produce values lazily; each next() "
            "resumes the function where it yielded, so pipelines process one item at a time "
            "and memory stays flat however long the input is.</p>"
            for j in range(5)
        )
        for i in range(60)
    )
    return f"<title>Article</title><nav><ul>{nav}</ul></nav><main><h1>Generators</h1>{body}</main>"


def _table() -> str:
    head = "".join(f"<th>{c}</th>" for c in ("Id", "Name", "Email", "City", "Plan", "Spent"))
    rows = "".join(
        f"<tr><td>{i}</td><td>User {i}</td><td>user{i}@example.test</td><td>City {i % 40}</td>"
        f"<td>{'pro' if i % 3 else 'free'}</td><td>{i * 7.5:.2f}</td></tr>"
        for i in range(500)
    )
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    return f"<title>Customers</title><h1>Customers</h1>{table}"


def _mail() -> str:
    folders = "".join(
        f'<li><a href="#f{i}">{n}</a></li>'
        for i, n in enumerate(
            [
                "Inbox",
                "Starred",
                "Snoozed",
                "Sent",
                "Drafts",
                "Spam",
                "Trash",
                "Work",
                "Family",
                "Travel",
            ]
        )
    )
    tools = "".join(
        f'<button aria-label="{n}">{n}</button>'
        for n in [
            "Archive",
            "Report spam",
            "Delete",
            "Mark as read",
            "Move to",
            "Labels",
            "More",
            "Refresh",
        ]
    )
    rows = "".join(
        f'<div role="row"><input type="checkbox" aria-label="Select message {i}">'
        f'<button aria-label="Star">☆</button><span>Sender {i}</span>'
        f'<a href="#m{i}">Subject line number {i} about the quarterly plan</a>'
        f"<span>Nov {1 + i % 28}</span></div>"
        for i in range(100)
    )
    return (
        '<title>Mail</title><header><input type="search" aria-label="Search mail">'
        '<button id="compose" onclick="this.dataset.n = (+this.dataset.n || 0) + 1;'
        " this.textContent = 'Compose ' + this.dataset.n\">Compose</button></header>"
        f'<nav aria-label="Folders"><ul>{folders}</ul></nav><main><div role="toolbar">{tools}</div>'
        f'<div role="grid" aria-label="Messages">{rows}</div>'
        "<article><h2>Quarterly plan</h2><p>"
        + "Body text of the open message. " * 40
        + "</p></article></main>"
    )


PAGES = {"/article": _article(), "/table": _table(), "/mail": _mail()}


def _page(path: str, query: Mapping[str, list[str]]) -> str | None:
    page = PAGES.get(path)
    return None if page is None else "<!doctype html>" + page


async def measure(clicks: int) -> dict[str, object]:
    out: dict[str, object] = {}
    with serve_pages(_page) as base:
        runtime = Runtime(
            RuntimeOptions(launch=True, headless=True, isolated=True, remote_debugging=True)
        )
        async with runtime:
            await runtime.connected(30)
            tools = runtime.bridge.browser_tools("bench")
            for path in PAGES:
                await tools.navigate(base + path)
                snapshot = await tools.snapshot()
                text = await tools.evaluate("() => document.body.innerText.length")
                out[path.strip("/")] = {"snapshot_chars": len(snapshot), "inner_text_chars": text}
            # Clicks on the article's heading. (Repeated clicks on one <button> of the mail
            # page stall ~1 s each in headless Chromium, through bridge and direct CDP alike:
            # the browser waits for an input ack; a figure of that would measure the stall.)
            await tools.navigate(base + "/article")
            bridge_ms = []
            for _ in range(clicks):
                t0 = time.perf_counter()
                await tools.click("h1")
                bridge_ms.append((time.perf_counter() - t0) * 1000)
            launched = runtime.launched
            assert launched is not None and launched.devtools_url
            point = await tools.evaluate(
                "() => { const r = document.querySelector('h1').getBoundingClientRect();"
                " return [r.left + r.width / 2, r.top + r.height / 2]; }"
            )
            async with DirectCdp(launched.devtools_url) as direct:
                target = next(
                    t for t in await direct.targets("page") if t["url"].endswith("/article")
                )
                sid = await direct.attach(target["targetId"])
                await direct.call("Emulation.setFocusEmulationEnabled", {"enabled": True}, sid)
                direct_ms = []
                for _ in range(clicks):
                    t0 = time.perf_counter()
                    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
                        params = {"type": kind, "x": point[0], "y": point[1]}
                        if kind != "mouseMoved":
                            params.update(button="left", clickCount=1)
                        await direct.call("Input.dispatchMouseEvent", params, sid)
                    direct_ms.append((time.perf_counter() - t0) * 1000)
                await direct.call("Target.detachFromTarget", {"sessionId": sid})
            b, d = statistics.median(bridge_ms), statistics.median(direct_ms)
            out["click"] = {
                "bridge_ms": round(b, 2),
                "direct_cdp_ms": round(d, 2),
                "ratio": round(b / d, 2),
            }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bridge.bench.tools_bench", description=__doc__)
    p.add_argument("--clicks", type=int, default=30)
    args = p.parse_args(argv)
    print(json.dumps(asyncio.run(measure(args.clicks)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
