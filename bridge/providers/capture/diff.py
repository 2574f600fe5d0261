"""Two captures of one site compared (pure): every difference that matters to bridge, and
nothing that always differs (docs/captures.md#the-fakes-meet-reality).

What matters: which pack entries an ask relies on match in which page (``check.EXPECTED``;
others come and go with the account and the moment, and are listed without counting), what
the first match of any entry is (tag, role,
test id, label, classes, the tags and test ids of its nearest ancestors), the answer
request's framing (method, URL shape, status, content type, format, the set of event
shapes), the completion signals that came and the order they first came in, the UI
language. What always differs and is ignored: times, element counts, dates, ids (already
pseudonyms), versions (listed once, for information).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from bridge.providers.capture.check import EXPECTED
from bridge.providers.capture.dom import describe
from bridge.providers.capture.findings import Finding
from bridge.providers.capture.streams import event_shape

__all__ = ["diff_captures", "render_diff"]

_SHAPE_FIELDS = ("tag", "role", "testid", "aria_label")
_ANCESTORS = 3


def _first_match(rows: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    return next((r for r in rows if r.get("count")), None)


def _shape_text(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return "nothing matched"
    return f"{describe(row.get('first') or {})} (by {row.get('css')})"


def _shape_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    out = [
        f"{field} {a.get(field)!r} vs {b.get(field)!r}"
        for field in _SHAPE_FIELDS
        if a.get(field) != b.get(field)
    ]
    only_a = sorted(set(a.get("classes") or []) - set(b.get("classes") or []))
    only_b = sorted(set(b.get("classes") or []) - set(a.get("classes") or []))
    if only_a or only_b:
        out.append(f"classes only in a: {only_a}, only in b: {only_b}")

    def line(shape: Mapping[str, Any]) -> list[tuple[Any, Any]]:
        return [(x.get("tag"), x.get("testid")) for x in (shape.get("ancestors") or [])][
            :_ANCESTORS
        ]

    if line(a) != line(b):
        out.append(f"ancestors {line(a)} vs {line(b)}")
    return out


def _pages(a: Mapping[str, Any], b: Mapping[str, Any], names: tuple[str, str]) -> list[Finding]:
    findings: list[Finding] = []
    pages_a, pages_b = dict(a.get("phases", {})), dict(b.get("phases", {}))
    for phase in dict.fromkeys([*pages_a, *pages_b]):
        if phase not in pages_a or phase not in pages_b:
            has = names[0] if phase in pages_a else names[1]
            findings.append(Finding("diff", f"page {phase}", False, f"only {has} has it"))
            continue
        entries_a = dict(pages_a[phase].get("entries", {}))
        entries_b = dict(pages_b[phase].get("entries", {}))
        for entry in sorted(set(entries_a) | set(entries_b)):
            first_a = _first_match(entries_a.get(entry, []))
            first_b = _first_match(entries_b.get(entry, []))
            subject = f"selectors.{entry} in page {phase}"
            if first_a is None and first_b is None:
                continue
            sides = f"{names[0]}: {_shape_text(first_a)}; {names[1]}: {_shape_text(first_b)}"
            if (first_a is None) != (first_b is None):
                # An entry every ask relies on here is a difference; another one (history
                # items, a rate-limit notice, a research pill) comes and goes with the
                # account's state and the moment, so it is said, not counted.
                relied_on = entry in EXPECTED.get(phase, ())
                findings.append(Finding("diff", subject, not relied_on, sides))
                continue
            assert first_a is not None and first_b is not None
            changes = _shape_differences(first_a.get("first") or {}, first_b.get("first") or {})
            if changes:
                findings.append(Finding("diff", subject, False, f"{'; '.join(changes)} ({sides})"))
    return findings


def _stream(a: Mapping[str, Any], b: Mapping[str, Any], names: tuple[str, str]) -> list[Finding]:
    stream_a, stream_b = a.get("stream"), b.get("stream")
    if not stream_a or not stream_b:
        if bool(stream_a) != bool(stream_b):
            has = names[0] if stream_a else names[1]
            return [Finding("diff", "stream", False, f"only {has} captured an answer request")]
        return []
    findings = [
        Finding("diff", f"stream {key}", False, f"{stream_a.get(key)!r} vs {stream_b.get(key)!r}")
        for key in ("method", "url", "status", "content_type", "format")
        if stream_a.get(key) != stream_b.get(key)
    ]
    shapes_a = Counter(event_shape(e) for e in stream_a.get("events", []))
    shapes_b = Counter(event_shape(e) for e in stream_b.get("events", []))
    for shape in sorted(set(shapes_a) ^ set(shapes_b)):
        has = names[0] if shape in shapes_a else names[1]
        findings.append(Finding("diff", "stream event", False, f"only {has} has events {shape}"))
    return findings


def _appearances(capture: Mapping[str, Any]) -> list[str]:
    """The signals that became true (or non-zero), in the order they first did."""
    order: list[str] = []
    for row in capture.get("signals", {}).get("timeline", []):
        if row.get("value") not in (False, 0, None) and row.get("signal") not in order:
            order.append(str(row.get("signal")))
    return order


def _signals(a: Mapping[str, Any], b: Mapping[str, Any], names: tuple[str, str]) -> list[Finding]:
    order_a, order_b = _appearances(a), _appearances(b)
    findings = [
        Finding(
            "diff", f"signal {s}", False, f"only {names[0] if s in order_a else names[1]} saw it"
        )
        for s in sorted(set(order_a) ^ set(order_b))
    ]
    common_a = [s for s in order_a if s in order_b]
    common_b = [s for s in order_b if s in order_a]
    if common_a != common_b:
        findings.append(
            Finding(
                "diff",
                "signal order",
                False,
                f"{names[0]}: {' → '.join(common_a)}; {names[1]}: {' → '.join(common_b)}",
            )
        )
    return findings


def diff_captures(
    a: Mapping[str, Any], b: Mapping[str, Any], *, a_name: str = "a", b_name: str = "b"
) -> list[Finding]:
    """Every difference between ``a`` and ``b`` that matters to bridge (failed findings),
    after one finding with both sides' versions (for information)."""
    names = (a_name, b_name)
    versions = (
        f"{a_name}: {json.dumps(a.get('versions', {}), sort_keys=True)}; "
        f"{b_name}: {json.dumps(b.get('versions', {}), sort_keys=True)}"
    )
    findings = [Finding("diff", "versions", True, versions)]
    language_a = a.get("site", {}).get("ui_language")
    language_b = b.get("site", {}).get("ui_language")
    if language_a != language_b:
        findings.append(Finding("diff", "UI language", False, f"{language_a!r} vs {language_b!r}"))
    findings += _pages(a, b, names)
    findings += _stream(a, b, names)
    findings += _signals(a, b, names)
    return findings


def render_diff(findings: Sequence[Finding]) -> str:
    """Differences first, each on its line; then how many."""
    differences = [f for f in findings if not f.ok]
    lines = [f"{f.subject}: {f.message}" for f in differences]
    lines += [f"({f.subject}: {f.message})" for f in findings if f.ok]
    lines.append(
        f"{len(differences)} difference(s)"
        if differences
        else "no difference that matters to bridge"
    )
    return "\n".join(lines)
