"""A performance trace's short summary: the Core Web Vitals and what slowed them (pure).

Input is the trace Chrome streams after ``Tracing.end`` (the DevTools performance panel's
categories, ``bridge.tools.operations.devtools``): a JSON object with ``traceEvents`` (or a
bare list). Output is what an agent can act on, not the whole trace:

- **LCP**: the last ``largestContentfulPaint::Candidate`` of the traced navigation, its
  element, and its phases as DevTools' LCPBreakdown insight splits them: time to first byte
  (the document's response headers), resource load delay and load time (an image's own
  ``imageLoadStart``/``imageLoadEnd``, else its request's send and finish), render delay;
- **CLS**: layout shifts not caused by recent input, grouped in session windows (a new
  window after a 1 s gap or when a window spans 5 s); CLS is the worst window's sum;
- **INP**: the longest ``EventTiming`` interaction (by ``interactionId``), when the trace
  holds interactions (a plain page load holds none);
- **long tasks**: main-thread ``RunTask`` slices over 50 ms, their count, the longest, and
  their total blocking time (the part of each over 50 ms);
- **render-blocking requests**: ``ResourceSendRequest`` with ``renderBlocking`` "blocking"
  or "in_body_parser_blocking", and how long each took.

Times are milliseconds since the traced navigation started (since the trace's first event
when it traced no navigation). Every rule is here, in functions of plain data, so the unit
tests feed it a handful of synthetic events; the e2e test feeds it a real trace.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bridge.errors import InsightUnknown

__all__ = [
    "INSIGHTS",
    "LONG_TASK_MS",
    "MAX_TEXT",
    "Lcp",
    "TraceSummary",
    "analyze",
    "parse_trace",
    "summarize",
]

Event = Mapping[str, Any]

#: A task longer than this blocks input noticeably (the web's "long task").
LONG_TASK_MS = 50.0
#: CLS session windows: a gap longer than this starts a new window…
WINDOW_GAP_MS = 1000.0
#: …and so does a window that would span longer than this.
WINDOW_SPAN_MS = 5000.0
_BLOCKING = ("blocking", "in_body_parser_blocking")
#: How many items of a list an answer names (the rest are counted).
SHOWN = 5
#: The longest element name or URL an answer repeats: both come from the page (an id, a
#: URL), which may fill them with text meant for the agent; a summary stays a summary.
MAX_TEXT = 200


def parse_trace(data: bytes | str) -> list[dict[str, Any]]:
    """The events of a trace as Chrome streams it (``{"traceEvents": […]}`` or a list);
    ValueError when it is neither."""
    loaded = json.loads(data)
    events = loaded.get("traceEvents") if isinstance(loaded, dict) else loaded
    if not isinstance(events, list):
        raise ValueError("not a trace: no traceEvents list")
    return [e for e in events if isinstance(e, dict)]


@dataclass(frozen=True)
class Lcp:
    """The largest contentful paint of the traced navigation."""

    time_ms: float
    kind: str  # "image" or "text"
    node: str  # as Chrome names it, e.g. "IMG id='hero'"
    url: str = ""  # the image's
    #: ttfb, load_delay, load_time, render_delay (ms); only those the trace has.
    phases: dict[str, float] = field(default_factory=dict)


@dataclass
class TraceSummary:
    """What ``summarize`` found; ``to_text`` is the tool's answer, ``to_dict`` its data."""

    url: str = ""
    navigation: bool = False
    duration_ms: float = 0.0
    lcp: Lcp | None = None
    cls: float = 0.0
    shifts: int = 0
    shifts_after_input: int = 0
    #: The worst CLS window's shifts: (ms, score).
    worst_window: list[tuple[float, float]] = field(default_factory=list)
    #: Images that finished loading within 200 ms before a counted shift (likely unsized).
    shift_images: list[str] = field(default_factory=list)
    interactions: int = 0
    inp_ms: float | None = None
    inp_type: str = ""
    long_tasks: int = 0
    longest_task_ms: float = 0.0
    blocking_ms: float = 0.0
    #: The long tasks: (start ms, duration ms), longest first.
    long_task_list: list[tuple[float, float]] = field(default_factory=list)
    #: Render-blocking requests: url, ms from send to finish (None: not finished in the trace).
    render_blocking: list[tuple[str, float | None]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        lcp = None
        if self.lcp is not None:
            lcp = {
                "time_ms": _ms(self.lcp.time_ms),
                "kind": self.lcp.kind,
                "node": self.lcp.node,
                "url": self.lcp.url,
                "phases": {k: _ms(v) for k, v in self.lcp.phases.items()},
            }
        return {
            "url": self.url,
            "navigation": self.navigation,
            "duration_ms": _ms(self.duration_ms),
            "lcp": lcp,
            "cls": round(self.cls, 4),
            "layout_shifts": self.shifts,
            "layout_shifts_after_input": self.shifts_after_input,
            "inp_ms": None if self.inp_ms is None else _ms(self.inp_ms),
            "interactions": self.interactions,
            "long_tasks": self.long_tasks,
            "longest_task_ms": _ms(self.longest_task_ms),
            "total_blocking_ms": _ms(self.blocking_ms),
            "render_blocking": [
                {"url": u, "ms": None if d is None else _ms(d)} for u, d in self.render_blocking
            ],
            "insights": list(INSIGHTS),
        }

    def to_text(self) -> str:
        what = f"the load of {self.url}" if self.navigation else "the page (no navigation traced)"
        lines = [f"Trace of {what}, {self.duration_ms:.0f} ms."]
        if self.lcp is not None:
            phases = ", ".join(f"{k} {v:.0f} ms" for k, v in self.lcp.phases.items())
            src = f" {self.lcp.url}" if self.lcp.url else ""
            lines.append(
                f"LCP: {self.lcp.time_ms:.0f} ms ({self.lcp.kind} {self.lcp.node}{src})"
                + (f"; {phases}" if phases else "")
            )
        else:
            lines.append("LCP: none in this trace (trace a reload: reload=true).")
        after = (
            f", {self.shifts_after_input} more right after input" if self.shifts_after_input else ""
        )
        lines.append(f"CLS: {self.cls:.4f} ({self.shifts} layout shift(s){after})")
        if self.inp_ms is not None:
            lines.append(
                f"INP: {self.inp_ms:.0f} ms (worst of {self.interactions} interaction(s), "
                f"{self.inp_type})"
            )
        else:
            lines.append("INP: no interactions in this trace.")
        lines.append(
            f"Long tasks: {self.long_tasks} (longest {self.longest_task_ms:.0f} ms, total "
            f"blocking {self.blocking_ms:.0f} ms)"
        )
        if self.render_blocking:
            shown = ", ".join(_request(u, d) for u, d in self.render_blocking[:SHOWN])
            more = len(self.render_blocking) - SHOWN
            lines.append(
                f"Render-blocking requests: {len(self.render_blocking)}: {shown}"
                + (f" and {more} more" if more > 0 else "")
            )
        else:
            lines.append("Render-blocking requests: none.")
        lines.append(
            "Details: performance_analyze_insight with insight_name one of "
            + ", ".join(INSIGHTS)
            + "."
        )
        return "\n".join(lines)


def _ms(value: float) -> float:
    return round(value, 1)


def _request(url: str, ms: float | None) -> str:
    return f"{url} ({ms:.0f} ms)" if ms is not None else f"{url} (unfinished)"


def _short(value: Any) -> str:
    """A page-given string, cut to ``MAX_TEXT`` characters (marked when cut)."""
    text = str(value)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _data(event: Event) -> Mapping[str, Any]:
    args = event.get("args")
    data = args.get("data") if isinstance(args, Mapping) else None
    return data if isinstance(data, Mapping) else {}


def _frame(event: Event) -> Any:
    args = event.get("args")
    frame = args.get("frame") if isinstance(args, Mapping) else None
    return frame if frame is not None else _data(event).get("frame")


def _ts(event: Event) -> float:
    ts = event.get("ts")
    return float(ts) if isinstance(ts, (int, float)) else 0.0


def _navigation(events: Sequence[Event], main_frame: str | None) -> Event | None:
    """The last main-frame navigation that loaded a document (not the empty initial one)."""
    found: Event | None = None
    for event in events:
        if event.get("name") != "navigationStart":
            continue
        data = _data(event)
        if main_frame is not None and _frame(event) != main_frame:
            continue
        if main_frame is None and not data.get(
            "isOutermostMainFrame", data.get("isLoadingMainFrame")
        ):
            continue
        if not data.get("documentLoaderURL"):
            continue
        if found is None or _ts(event) >= _ts(found):
            found = event
    return found


def summarize(events: Sequence[Event], main_frame: str | None = None) -> TraceSummary:
    """The summary of a trace (see the module docstring). ``main_frame``: the traced tab's
    top frame id; other frames' (and other tabs') events are left out when given."""
    timed = [e for e in events if isinstance(e.get("ts"), (int, float)) and e.get("ph") != "M"]
    summary = TraceSummary()
    if not timed:
        return summary
    start = min(_ts(e) for e in timed)
    end = max(_ts(e) + float(e.get("dur") or 0) for e in timed)
    nav = _navigation(timed, main_frame)
    origin = _ts(nav) if nav is not None else start
    if nav is not None:
        summary.navigation = True
        summary.url = _short(_data(nav).get("documentLoaderURL", ""))
    summary.duration_ms = (end - origin) / 1000
    in_page = [e for e in timed if _ts(e) >= origin]
    mine = [e for e in in_page if main_frame is None or _frame(e) in (None, main_frame)]
    summary.lcp = _lcp(mine, nav, origin, main_frame)
    _cls(summary, mine, origin, main_frame)
    _inp(summary, in_page)
    _long_tasks(summary, timed, nav, origin)
    summary.render_blocking = _render_blocking(mine, main_frame)
    return summary


def _requests(events: Iterable[Event]) -> tuple[dict[str, Event], dict[str, Event]]:
    """Sent and finished requests, by request id."""
    sent: dict[str, Event] = {}
    finished: dict[str, Event] = {}
    for event in events:
        name = event.get("name")
        rid = _data(event).get("requestId")
        if not isinstance(rid, str):
            continue
        if name == "ResourceSendRequest":
            sent.setdefault(rid, event)
        elif name == "ResourceFinish":
            finished[rid] = event
    return sent, finished


def _ttfb(events: Sequence[Event], nav: Event | None, origin: float) -> float | None:
    """When the document's response headers came, from its ``ResourceReceiveResponse``."""
    if nav is None:
        return None
    doc = _data(nav).get("navigationId")
    for event in events:
        if event.get("name") != "ResourceReceiveResponse":
            continue
        data = _data(event)
        if data.get("requestId") != doc:
            continue
        # When the renderer got the headers. Network throttling (DevTools', browser_emulate's)
        # delays the delivery, not the request's own timing: the later of the two is when
        # the page could start.
        received = (_ts(event) - origin) / 1000
        timing = data.get("timing")
        if isinstance(timing, Mapping) and isinstance(timing.get("requestTime"), (int, float)):
            headers = timing.get("receiveHeadersStart", timing.get("receiveHeadersEnd", 0))
            at = float(timing["requestTime"]) * 1e6 + float(headers or 0) * 1e3
            return max(0.0, (at - origin) / 1000, received)
        return max(0.0, received)
    return None


def _lcp(
    events: Sequence[Event], nav: Event | None, origin: float, main_frame: str | None
) -> Lcp | None:
    nav_id = _data(nav).get("navigationId") if nav is not None else None
    candidates = [
        e
        for e in events
        if e.get("name") == "largestContentfulPaint::Candidate"
        and (nav_id is None or _data(e).get("navigationId") == nav_id)
        and (main_frame is not None or _data(e).get("isOutermostMainFrame", True))
    ]
    if not candidates:
        return None
    last = max(candidates, key=lambda e: (_data(e).get("candidateIndex", 0), _ts(e)))
    data = _data(last)
    time_ms = (_ts(last) - origin) / 1000
    kind = str(data.get("type", ""))
    node = _short(data.get("nodeName", ""))
    url = ""
    # The image's URL is on the LargestImagePaint candidate painted at the same moment.
    for event in events:
        if event.get("name") == "LargestImagePaint::Candidate" and _ts(event) == _ts(last):
            url = _short(_data(event).get("imageUrl", ""))
    phases: dict[str, float] = {}
    ttfb = _ttfb(events, nav, origin)
    if ttfb is not None:
        phases["ttfb"] = ttfb
    if kind == "image":
        load_start, load_end = data.get("imageLoadStart"), data.get("imageLoadEnd")
        if not isinstance(load_start, (int, float)) or not isinstance(load_end, (int, float)):
            load_start, load_end = _image_request(events, url, origin)
        if isinstance(load_start, (int, float)) and isinstance(load_end, (int, float)):
            base = ttfb or 0.0
            phases["load_delay"] = max(0.0, float(load_start) - base)
            phases["load_time"] = max(0.0, float(load_end) - float(load_start))
            phases["render_delay"] = max(0.0, time_ms - float(load_end))
    elif ttfb is not None:
        phases["render_delay"] = max(0.0, time_ms - ttfb)
    return Lcp(time_ms, kind, node, url, phases)


def _image_request(
    events: Sequence[Event], url: str, origin: float
) -> tuple[float | None, float | None]:
    """When the LCP image's request was sent and finished (ms), from the network events."""
    if not url:
        return None, None
    sent, finished = _requests(events)
    for rid, event in sent.items():
        if _data(event).get("url") == url and rid in finished:
            return (_ts(event) - origin) / 1000, (_ts(finished[rid]) - origin) / 1000
    return None, None


def _cls(
    summary: TraceSummary, events: Sequence[Event], origin: float, main_frame: str | None
) -> None:
    shifts: list[tuple[float, float]] = []
    for event in events:
        if event.get("name") != "LayoutShift":
            continue
        data = _data(event)
        if main_frame is None and data.get("is_main_frame") is False:
            continue
        if data.get("had_recent_input"):
            summary.shifts_after_input += 1
            continue
        score = data.get("weighted_score_delta", data.get("score", 0))
        if isinstance(score, (int, float)):
            shifts.append(((_ts(event) - origin) / 1000, float(score)))
    shifts.sort()
    summary.shifts = len(shifts)
    windows: list[list[tuple[float, float]]] = []
    for shift in shifts:
        current = windows[-1] if windows else None
        if (
            current is None
            or shift[0] - current[-1][0] > WINDOW_GAP_MS
            or shift[0] - current[0][0] > WINDOW_SPAN_MS
        ):
            windows.append([shift])
        else:
            current.append(shift)
    if windows:
        worst = max(windows, key=lambda w: sum(s for _, s in w))
        summary.worst_window = worst
        summary.cls = sum(s for _, s in worst)
    # Likely culprits: an image arriving (response to 200 ms after its last byte) when a
    # counted shift happened: an image without a size moves what follows when it comes.
    sent, finished = _requests(events)
    responded = {
        _data(e).get("requestId"): e for e in events if e.get("name") == "ResourceReceiveResponse"
    }
    for rid, done in finished.items():
        request = _data(sent.get(rid, {}))
        if request.get("resourceType") != "Image" or not request.get("url"):
            continue
        began = (_ts(responded.get(rid, done)) - origin) / 1000
        ended = (_ts(done) - origin) / 1000 + 200
        if any(began <= t <= ended for t, _ in shifts):
            summary.shift_images.append(_short(request["url"]))


def _inp(summary: TraceSummary, events: Sequence[Event]) -> None:
    """The worst interaction (≤ 50 interactions: the longest; more: the 98th percentile)."""
    worst: dict[int, tuple[float, str]] = {}
    for event in events:
        if event.get("name") != "EventTiming" or event.get("ph") not in ("b", "X"):
            continue
        data = _data(event)
        interaction, duration = data.get("interactionId"), data.get("duration")
        if not isinstance(interaction, int) or interaction <= 0:
            continue
        if not isinstance(duration, (int, float)):
            continue
        if interaction not in worst or duration > worst[interaction][0]:
            worst[interaction] = (float(duration), str(data.get("type", "")))
    summary.interactions = len(worst)
    if worst:
        ranked = sorted(worst.values(), reverse=True)
        summary.inp_ms, summary.inp_type = ranked[min(len(ranked) // 50, len(ranked) - 1)]


def _long_tasks(
    summary: TraceSummary, events: Sequence[Event], nav: Event | None, origin: float
) -> None:
    """Long ``RunTask`` slices on the page's main thread (the navigation's thread; without a
    navigation, every renderer main thread the trace names)."""
    threads: set[tuple[Any, Any]] = set()
    if nav is not None:
        threads.add((nav.get("pid"), nav.get("tid")))
    else:
        for event in events:
            if event.get("name") == "navigationStart" or event.get("name") == "markAsMainFrame":
                threads.add((event.get("pid"), event.get("tid")))
    tasks: list[tuple[float, float]] = []
    for event in events:
        if event.get("name") != "RunTask" or event.get("ph") != "X":
            continue
        if threads and (event.get("pid"), event.get("tid")) not in threads:
            continue
        dur = event.get("dur")
        if isinstance(dur, (int, float)) and dur / 1000 > LONG_TASK_MS:
            tasks.append(((_ts(event) - origin) / 1000, dur / 1000))
    tasks.sort(key=lambda t: t[1], reverse=True)
    summary.long_task_list = tasks
    summary.long_tasks = len(tasks)
    summary.longest_task_ms = tasks[0][1] if tasks else 0.0
    summary.blocking_ms = sum(d - LONG_TASK_MS for _, d in tasks)


def _render_blocking(
    events: Sequence[Event], main_frame: str | None
) -> list[tuple[str, float | None]]:
    sent, finished = _requests(events)
    out: list[tuple[str, float | None]] = []
    for rid, event in sent.items():
        data = _data(event)
        if data.get("renderBlocking") not in _BLOCKING:
            continue
        if main_frame is not None and data.get("frame") not in (None, main_frame):
            continue
        done = finished.get(rid)
        ms = (_ts(done) - _ts(event)) / 1000 if done is not None else None
        out.append((_short(data.get("url", "")), ms))
    return out


def _lcp_breakdown(s: TraceSummary) -> str:
    if s.lcp is None:
        return "No LCP in this trace: trace a page load (performance_start_trace reload=true)."
    lcp = s.lcp
    lines = [
        f"LCP {lcp.time_ms:.0f} ms: {lcp.kind} {lcp.node}" + (f" ({lcp.url})" if lcp.url else "")
    ]
    for name, ms in lcp.phases.items():
        share = f" ({ms / lcp.time_ms:.0%})" if lcp.time_ms > 0 else ""
        lines.append(f"- {name}: {ms:.0f} ms{share}")
    if lcp.kind == "image" and "load_delay" in lcp.phases:
        lines.append(
            "A long load delay means the image was found late (set by script, lazy-loaded, "
            "or behind CSS): put it in the HTML, consider fetchpriority=high."
        )
    return "\n".join(lines)


def _cls_culprits(s: TraceSummary) -> str:
    lines = [f"CLS {s.cls:.4f}: {s.shifts} counted layout shift(s)"]
    if s.shifts_after_input:
        lines[0] += f"; {s.shifts_after_input} within 500 ms of input or a resize (not counted)"
    for at, score in s.worst_window[:SHOWN]:
        lines.append(f"- at {at:.0f} ms: {score:.4f}")
    if s.shift_images:
        lines.append(
            "Images that finished loading just before a shift (give them width and height): "
            + ", ".join(s.shift_images[:SHOWN])
        )
    return "\n".join(lines)


def _inp_breakdown(s: TraceSummary) -> str:
    if s.inp_ms is None:
        return (
            "No interactions in this trace: start a trace without auto_stop, click or type "
            "in the page, then performance_stop_trace."
        )
    return f"INP {s.inp_ms:.0f} ms ({s.inp_type}), the worst of {s.interactions} interaction(s)."


def _long_task_list(s: TraceSummary) -> str:
    if not s.long_tasks:
        return "No main-thread task over 50 ms."
    lines = [f"{s.long_tasks} long task(s), total blocking {s.blocking_ms:.0f} ms:"]
    for at, ms in s.long_task_list[:SHOWN]:
        lines.append(f"- at {at:.0f} ms: {ms:.0f} ms")
    return "\n".join(lines)


def _render_blocking_list(s: TraceSummary) -> str:
    if not s.render_blocking:
        return "No render-blocking requests."
    lines = [f"{len(s.render_blocking)} render-blocking request(s) (defer, async or inline them):"]
    lines += [f"- {_request(u, d)}" for u, d in s.render_blocking]
    return "\n".join(lines)


def _document_latency(s: TraceSummary) -> str:
    ttfb = s.lcp.phases.get("ttfb") if s.lcp is not None else None
    if ttfb is None:
        return "No document request in this trace (trace a reload: reload=true)."
    return f"The document's first byte came after {ttfb:.0f} ms (server time plus network)."


#: The insights ``analyze`` explains, by DevTools' names where it has one.
INSIGHTS = {
    "LCPBreakdown": _lcp_breakdown,
    "CLSCulprits": _cls_culprits,
    "INPBreakdown": _inp_breakdown,
    "RenderBlocking": _render_blocking_list,
    "LongTasks": _long_task_list,
    "DocumentLatency": _document_latency,
}


def analyze(summary: TraceSummary, name: str) -> str:
    """One insight of a summary, in more detail; ``InsightUnknown`` names the known ones."""
    explain = INSIGHTS.get(name)
    if explain is None:
        raise InsightUnknown(f"no insight {name!r}: use one of {', '.join(INSIGHTS)}")
    return explain(summary)
