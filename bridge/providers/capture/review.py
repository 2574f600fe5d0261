"""What a capture kept, said so a person can read it before sharing it (pure): which pages,
which pack entries matched, the stream's shape, the signals, and every string kept
verbatim (docs/captures.md#what-a-person-runs-and-sees)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["review"]


def review(capture: Mapping[str, Any], path: Path | None = None) -> str:
    """A few lines per part of the capture; the verbatim strings all listed."""
    lines = [f"{capture.get('provider')} capture" + (f": {path}" if path else "")]
    site = capture.get("site", {})
    versions = capture.get("versions", {})
    lines.append(
        f"  site {site.get('url') or '?'}, UI language {site.get('ui_language') or '?'}; "
        f"browser {versions.get('browser') or '?'}, bridge {versions.get('bridge')}"
    )
    ask = capture.get("ask", {})
    lines.append(
        f"  ask: {ask.get('outcome')}"
        + (f" ({ask.get('completion')})" if ask.get("completion") else "")
        + f"; question {ask.get('question_chars')} characters, answer "
        f"{ask.get('answer_chars')} (neither is in the file)"
    )
    for phase, page in dict(capture.get("phases", {})).items():
        entries = dict(page.get("entries", {}))
        matched = sorted(n for n, rows in entries.items() if any(r.get("count") for r in rows))
        lines.append(
            f"  page {phase} ({page.get('t_ms')} ms after send): {len(page.get('nodes', []))} "
            f"elements, text as lengths only; {len(matched)} of {len(entries)} pack entries "
            f"matched: {', '.join(matched) or 'none'}"
        )
    for phase, why in dict(capture.get("missing", {})).items():
        lines.append(f"  page {phase}: not taken ({why})")
    stream = capture.get("stream")
    if stream:
        lines.append(
            f"  answer request: {stream.get('method')} {stream.get('url')} → "
            f"{stream.get('status')} {stream.get('content_type') or ''}; "
            f"{len(stream.get('events', []))} events, every text replaced by x's of its length"
        )
    else:
        lines.append("  answer request: none captured")
    signals = capture.get("signals", {})
    timeline = list(signals.get("timeline", []))
    lines.append(
        f"  completion signals: {len(signals.get('observations', []))} observations, "
        f"{len(timeline)} changes; verdict {(signals.get('verdicts') or ['?'])[-1]}"
    )
    kept = list(capture.get("kept_texts", []))
    lines.append(f"  kept verbatim ({len(kept)} UI labels; read them before sharing):")
    lines.extend(f"    {text!r}" for text in kept)
    lines.append("  nothing was sent anywhere: the file stays on this machine until you share it")
    return "\n".join(lines)
