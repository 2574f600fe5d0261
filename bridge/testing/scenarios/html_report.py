"""The run report as a page a person opens: ``reports/<timestamp>.html`` beside its JSON.

A pure function of the JSON report (:meth:`RunReport.to_dict`), so the page always says what
the file says. One self-contained document: inline CSS, the failure screenshots as ``data:``
URIs, no script, nothing fetched, so it opens from disk, from a CI artifact or from an
e-mail attachment alike. Everything taken from the report is escaped: answers are markdown
and may hold HTML, and a DOM excerpt is HTML.

Layout: a header with the run's status, counts and settings, then one row per scenario.
Scenarios that did not pass (failed, error) come first, in the order they ran, then the
others: the rows a person opened the page for are at the top, and a red edge marks them. Each
row shows the scenario, its outcome (in words and colour, never colour alone), its duration,
every check with what was expected and what came, each provider's timings, steps, error and
answer (its start shown, the whole in a ``<details>``, which needs no script to open), a
skipped scenario's reason, and for a failure the pytest message, the screenshot of each
provider tab and an excerpt of its DOM (:mod:`.evidence` says which part).
"""

from __future__ import annotations

from html import escape
from typing import Any

__all__ = ["render_html"]

_PREVIEW_SHOWN = 600  # characters of an answer shown; the whole is one click away
_FIRST = ("failed", "error")
_OUTCOME_WORDS = {"passed": "passed", "failed": "FAILED", "error": "ERROR", "skipped": "skipped"}
# The timings bridge measures (bridge.providers.results.Timings), in words; any other is shown
# by name.
_TIMINGS = {
    "total_ms": "total",
    "connect_ms": "open tab",
    "wait_input_ms": "composer ready",
    "input_ms": "type",
    "send_ms": "send",
    "wait_response_ms": "answer",
}
# Keys the header shows in sentences; any other meta of the report is listed as it is.
_HEADER_KEYS = {"format", "status", "started_at", "finished_at", "mode", "args", "cwd"}
_HEADER_KEYS |= {"python", "pytest", "summary", "results"}

_CSS = """
:root { color-scheme: light; --ok: #1a7f37; --bad: #c0262d; --skip: #7a5d00; --muted: #5b636d; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
       color: #1f2328; background: #f6f8fa; }
header { padding: 16px 24px; background: #fff; border-bottom: 1px solid #d0d7de; }
h1 { font-size: 20px; margin: 0 0 6px; }
.meta { color: var(--muted); margin: 2px 0; }
.counts span { margin-right: 12px; font-weight: 600; }
main { padding: 16px 24px; }
table { border-collapse: collapse; width: 100%; background: #fff; table-layout: fixed; }
col.scenario { width: 17%; } col.outcome { width: 7.5em; } col.checks { width: 30%; }
td { overflow-wrap: anywhere; }
th, td { border: 1px solid #d0d7de; padding: 8px; vertical-align: top; text-align: left; }
th { background: #eaeef2; }
tr.scenario.failed > td:first-child, tr.scenario.error > td:first-child {
  border-left: 6px solid var(--bad); }
tr.scenario.passed > td:first-child { border-left: 6px solid var(--ok); }
tr.scenario.skipped > td:first-child { border-left: 6px solid var(--skip); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff;
         font-weight: 700; white-space: nowrap; }
.badge.passed { background: var(--ok); } .badge.failed, .badge.error { background: var(--bad); }
.badge.skipped { background: var(--skip); }
.id, .file { font-family: ui-monospace, monospace; font-size: 12px; color: var(--muted); }
ul.checks { list-style: none; margin: 0; padding: 0; }
ul.checks li { margin: 2px 0; }
.pass { color: var(--ok); font-weight: 700; } .fail { color: var(--bad); font-weight: 700; }
.provider { margin-bottom: 10px; } .provider h3 { font-size: 14px; margin: 0 0 4px; }
.timings, .steps { color: var(--muted); font-size: 12px; }
pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa; padding: 6px;
      margin: 4px 0; max-height: 28em; overflow: auto; font-size: 12px; }
.error-text { color: var(--bad); }
tr.failure td { background: #fff8f8; }
figure { display: inline-block; margin: 4px 12px 4px 0; }
figure img { max-width: min(480px, 100%); border: 1px solid #d0d7de; display: block; }
figcaption { font-size: 12px; color: var(--muted); }
"""


def render_html(report: dict[str, Any]) -> str:
    """The whole page for one run report (the dict the JSON file holds)."""
    results: list[dict[str, Any]] = list(report.get("results") or [])
    ordered = [r for r in results if r.get("outcome") in _FIRST] + [
        r for r in results if r.get("outcome") not in _FIRST
    ]
    status = str(report.get("status", "?"))
    title = f"bridge scenarios: {status}, {_counts_text(report.get('summary') or {})}"
    rows = "\n".join(_scenario_rows(r) for r in ordered) or (
        '<tr><td colspan="4">No scenario has finished yet.</td></tr>'
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{escape(title)}</title>
<style>{_CSS}</style>
</head>
<body>
<header>
<h1>bridge scenario run: {escape(status)}</h1>
{_header_lines(report)}
</header>
<main>
<table>
<colgroup><col class="scenario"><col class="outcome"><col class="checks"><col></colgroup>
<thead><tr><th>Scenario</th><th>Outcome</th><th>Checks</th><th>Answers and timings</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
</main>
</body>
</html>
"""


def _counts(summary: dict[str, Any]) -> list[str]:
    """The counts in words ("1 passed"…), with those not run once the plan is known."""
    parts = [f"{summary.get(k, 0)} {k}" for k in ("passed", "failed", "error", "skipped")]
    if "not_run" in summary:
        parts.append(f"{summary['not_run']} not run")
    return parts


def _counts_text(summary: dict[str, Any]) -> str:
    return ", ".join(_counts(summary))


def _header_lines(report: dict[str, Any]) -> str:
    summary = report.get("summary") or {}
    counts = "".join(f"<span>{escape(part)}</span>" for part in _counts(summary))
    mode = report.get("mode")
    sites = "the real sites in your Chrome" if mode == "live" else "bridge's fake sites"
    lines = [
        f'<p class="counts">{counts}</p>',
        f'<p class="meta">Started {escape(str(report.get("started_at") or "?"))}, finished '
        f"{escape(str(report.get('finished_at') or 'not yet'))}; against {escape(sites)}.</p>",
        f'<p class="meta">pytest {escape(" ".join(map(str, report.get("args") or [])))} in '
        f"{escape(str(report.get('cwd') or '?'))} (Python {escape(str(report.get('python', '?')))}"
        f", pytest {escape(str(report.get('pytest', '?')))})</p>",
    ]
    extra = [f"{key}: {value}" for key, value in report.items() if key not in _HEADER_KEYS]
    if extra:
        lines.append(f'<p class="meta">{escape("; ".join(extra))}</p>')
    return "\n".join(lines)


def _scenario_rows(record: dict[str, Any]) -> str:
    """The scenario's row; for a failure or an error, a full-width row of evidence under it."""
    outcome = str(record.get("outcome", "?"))
    css = outcome if outcome in _OUTCOME_WORDS else "error"
    duration = record.get("duration_ms")
    seconds = f"{float(duration) / 1000:.2f} s" if isinstance(duration, int | float) else ""
    about = f"provider: {record.get('provider', '?')}"
    if record.get("tags"):
        about += f" · tags: {', '.join(map(str, record['tags']))}"
    reason = ""
    if outcome == "skipped" and record.get("message"):
        reason = f'<div class="meta">{escape(str(record["message"]))}</div>'
    row = (
        f'<tr class="scenario {css}" id="{escape(str(record.get("id", "")), quote=True)}">'
        f"<td><strong>{escape(str(record.get('name') or record.get('id') or '?'))}</strong>"
        f'<div class="id">{escape(str(record.get("id", "")))}</div>'
        f"<div>{escape(about)}</div>"
        f'<div class="file">{escape(str(record.get("file", "")))}</div></td>'
        f'<td><span class="badge {css}">{escape(_OUTCOME_WORDS.get(outcome, outcome))}</span>'
        f"<div>{escape(seconds)}</div>{reason}</td>"
        f"<td>{_checks(record.get('checks') or [])}</td>"
        f"<td>{_providers(record)}</td></tr>"
    )
    return row + (_failure(record) if outcome in _FIRST else "")


def _checks(checks: list[dict[str, Any]]) -> str:
    if not checks:
        return '<span class="meta">no checks ran</span>'
    items = []
    for check in checks:
        ok = bool(check.get("passed"))
        mark = '<span class="pass">✓ pass</span>' if ok else '<span class="fail">✗ FAIL</span>'
        who = f" ({escape(str(check['provider']))})" if check.get("provider") else ""
        items.append(
            f"<li>{mark} <strong>{escape(str(check.get('name', '?')))}</strong>{who}: got "
            f"<code>{escape(_short(check.get('actual')))}</code>, expected "
            f"<code>{escape(_short(check.get('expected')))}</code></li>"
        )
    return f'<ul class="checks">{"".join(items)}</ul>'


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _providers(record: dict[str, Any]) -> str:
    providers: dict[str, Any] = record.get("providers") or {}
    parts = []
    if record.get("question"):
        parts.append(f'<div class="meta">Question: {escape(str(record["question"]))}</div>')
    for provider, data in providers.items():
        parts.append(_provider(str(provider), data or {}))
    return "".join(parts) or '<span class="meta">not asked</span>'


def _provider(provider: str, data: dict[str, Any]) -> str:
    out = [f'<div class="provider"><h3>{escape(provider)}</h3>']
    timings: dict[str, Any] = data.get("timings") or {}
    known = [key for key in _TIMINGS if key in timings]
    shown = [
        f"{_TIMINGS.get(key) or key.removesuffix('_ms').replace('_', ' ')} "
        f"{float(timings[key]) / 1000:.2f} s"
        for key in [*known, *(key for key in timings if key not in _TIMINGS)]
        if isinstance(timings[key], int | float)
    ]
    if shown:
        out.append(f'<div class="timings">{escape(" · ".join(shown))}</div>')
    steps = [
        f"{step.get('step', '?')} {float(step.get('duration_ms') or 0) / 1000:.2f} s"
        + (f" (attempt {step['attempt']})" if step.get("attempt") else "")
        for step in data.get("steps") or []
        if isinstance(step, dict)
    ]
    if steps:
        out.append(f'<div class="steps">steps: {escape(" → ".join(steps))}</div>')
    error = data.get("error")
    if error:
        out.append(
            f'<div class="error-text">error [{escape(str(error.get("code", "?")))}]: '
            f"{escape(str(error.get('message', '')))}</div>"
        )
    out.append(_answer(data))
    if data.get("url"):
        out.append(f'<div class="meta">{escape(str(data["url"]))}</div>')
    out.append("</div>")
    return "".join(out)


def _answer(data: dict[str, Any]) -> str:
    """The answer's start, and the whole of it in a ``<details>`` when there is more (reports
    written before they held whole answers have only the preview: then it says so)."""
    answer = data.get("answer")
    text = answer if isinstance(answer, str) else data.get("answer_preview")
    if not isinstance(text, str):
        return ""
    length = data.get("answer_length")
    length = length if isinstance(length, int) else len(text)
    shown = text[:_PREVIEW_SHOWN]
    out = f'<pre class="answer">{escape(shown)}{"…" if len(shown) < length else ""}</pre>'
    if len(text) > len(shown):
        out += (
            f"<details><summary>The whole answer ({length} characters)</summary>"
            f'<pre class="answer">{escape(text)}</pre></details>'
        )
    elif len(text) < length:
        out += f'<div class="meta">The first {len(text)} of {length} characters.</div>'
    return out


def _failure(record: dict[str, Any]) -> str:
    parts = []
    if record.get("message"):
        parts.append(f"<strong>What failed</strong><pre>{escape(str(record['message']))}</pre>")
    for item in record.get("evidence") or []:
        name = escape(str(item.get("name", "evidence")))
        kind = str(item.get("kind", "text"))
        if kind in ("png", "jpeg") and isinstance(item.get("data"), str):
            # base64 holds only [A-Za-z0-9+/=]: nothing in it can leave the attribute.
            data = escape(item["data"], quote=True)
            parts.append(
                f'<figure><img alt="{name}" src="data:image/{kind};base64,{data}">'
                f"<figcaption>{name}</figcaption></figure>"
            )
        elif kind == "html":
            text = str(item.get("text", ""))
            of = f": {escape(str(item['excerpt_of']))}" if item.get("excerpt_of") else ""
            parts.append(
                f"<details><summary>{name}{of} ({len(text)} characters)</summary>"
                f"<pre>{escape(text)}</pre></details>"
            )
        else:
            parts.append(f"<div>{name}: {escape(str(item.get('text', '')))}</div>")
    if not parts:
        return ""
    return f'<tr class="failure"><td colspan="4">{"".join(parts)}</td></tr>'
