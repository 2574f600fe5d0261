"""A capture against bridge as it is now (docs/captures.md#checking-a-capture): the pack's
selectors against the captured structure, the stream parser against the captured framing,
the completion detector against the captured signals. No network: the structure is matched
by a browser's CSS engine in a blank page of its own (``Matcher``), the rest is pure.

Which entries must match when is a property of an ordinary ask, not of a site: the composer
is there when the page is ready, the send button once text is typed (C1.10, G15.1), the stop
button while the answer comes (C1.7, G1.5), the turns, the answer and the controls under it
once it is done (C2.6, G2.6, G2.7). An entry the pack lacks is not expected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from bridge.providers.capture.dom import Node, describe, shape
from bridge.providers.capture.findings import Finding
from bridge.providers.capture.propose import LABELS, candidates, selectors_for
from bridge.providers.capture.signals import check_signals
from bridge.providers.capture.streams import check_stream
from bridge.providers.network_answer import FORMATS
from bridge.providers.specs import ProviderSpec

__all__ = [
    "EXPECTED",
    "LabelTexts",
    "Matcher",
    "check_capture",
    "check_label",
    "check_selectors",
    "label_texts",
    "pack_labels",
]

#: Per phase of an ordinary ask, the pack entries that must match something.
EXPECTED: Mapping[str, tuple[str, ...]] = {
    "ready": ("input",),
    "typed": ("input", "send_button"),
    "answering": ("stop_button",),
    "done": (
        "user_message",
        "assistant_message",
        "answer",
        "turn",
        "action_bar",
        "copy_button",
        "response_complete",
    ),
}


class Matcher(Protocol):
    """Matches CSS against a capture's structure (``matching.CaptureMatcher``)."""

    async def match(
        self, nodes: Sequence[Node], selectors: Sequence[str]
    ) -> dict[str, list[int] | str]: ...


#: Per selector entry, the pack's texts entry that labels its control and that entry's texts
#: by language: what the label check compares the page's label with.
LabelTexts = Mapping[str, tuple[str, Mapping[str, Sequence[str]]]]


def label_texts(spec: ProviderSpec) -> dict[str, tuple[str, Mapping[str, Sequence[str]]]]:
    """The pack's label texts for each entry of ``LABELS`` (its first texts entry)."""
    out: dict[str, tuple[str, Mapping[str, Sequence[str]]]] = {}
    for entry, names in LABELS.items():
        texts = spec.pack.text(names[0])
        if texts is not None:
            out[entry] = (names[0], texts.texts)
    return out


def _placeholder(text: str) -> bool:
    return set(text) <= {"x"}


def check_label(
    name: str,
    nodes: Sequence[Node],
    index: int,
    known: LabelTexts,
    language: str,
) -> Finding | None:
    """The label the page shows on an entry's control (its own aria-label or its nearest
    labelled ancestor's, kept in the capture) against the pack's label texts: page.js falls
    back to those labels when the entry's selectors stop matching (C1.5, G1.3), so a label
    the pack lacks is a fallback that would find nothing. None: nothing to compare."""
    if name not in known:
        return None
    texts_name, by_language = known[name]
    node: Node | None = nodes[index]
    for _ in range(4):
        if node is None:
            return None
        label = node["attrs"].get("aria-label")
        if label and not _placeholder(label):
            break
        node = nodes[node["p"]] if node["p"] >= 0 else None
    else:
        return None
    assert node is not None
    shown = str(node["attrs"]["aria-label"]).strip()
    every = {t.casefold() for values in by_language.values() for t in values}
    subject = f"texts.{texts_name}"
    if shown.casefold() in every:
        return Finding("selectors", subject, True, f"the page's label {shown!r} is known")
    lang = (language or "en").split("-")[0].lower()
    proposal = {"texts": {texts_name: {"texts": {lang: [*by_language.get(lang, ()), shown]}}}}
    return Finding(
        "selectors",
        subject,
        False,
        f"the page labels selectors.{name} {shown!r}, which {subject} lacks: if its selectors "
        f"stop matching, the label fallback finds nothing. Override "
        f"(docs/sites.md#provider-packs): {json.dumps(proposal, ensure_ascii=False)}",
        proposal=proposal,
    )


def pack_labels(spec: ProviderSpec) -> dict[str, list[str]]:
    """Per selector entry, the labels the pack knows for its control (every language)."""
    out: dict[str, list[str]] = {}
    for entry, names in LABELS.items():
        found: list[str] = []
        for name in names:
            texts = spec.pack.text(name)
            if texts is not None:
                found.extend(t for values in texts.texts.values() for t in values)
        out[entry] = found
    return out


async def check_selectors(
    capture: Mapping[str, Any],
    selectors: Mapping[str, Sequence[str]],
    labels: Mapping[str, Sequence[str]],
    matcher: Matcher,
    known: LabelTexts | None = None,
) -> list[Finding]:
    """Each expected entry in each captured phase: matched (by which selector, what), or a
    failure that names the entry and proposes the selector that matches in the capture;
    for a matched control the pack knows labels for, its label checked against them."""
    findings: list[Finding] = []
    language = str(capture.get("site", {}).get("ui_language") or "")
    phases: Mapping[str, Any] = capture.get("phases", {})
    missing: Mapping[str, str] = capture.get("missing", {})
    for phase, names in EXPECTED.items():
        wanted = [n for n in names if n in selectors]
        if not wanted:
            continue
        page = phases.get(phase)
        if page is None:
            why = missing.get(phase, "not in the capture")
            for name in wanted:
                findings.append(
                    Finding(
                        "selectors",
                        f"selectors.{name}",
                        True,
                        f"not checked: no {phase} page ({why})",
                    )
                )
            continue
        if page.get("during_answer") is False:
            for name in wanted:
                message = f"not checked: the answer had ended when the {phase} page was read"
                findings.append(Finding("selectors", f"selectors.{name}", True, message))
            continue
        nodes: Sequence[Node] = page["nodes"]
        css = list(dict.fromkeys(c for n in wanted for c in selectors[n]))
        matches = await matcher.match(nodes, css)
        for name in wanted:
            subject = f"selectors.{name}"
            errors = [
                f"{c!r}: {m}" for c in selectors[name] if isinstance(m := matches.get(c), str)
            ]
            hit = next(
                (c for c in selectors[name] if isinstance(m := matches.get(c), list) and m), None
            )
            if hit is not None:
                found = matches[hit]
                assert isinstance(found, list)
                detail = describe(shape(nodes, found[0]))
                findings.append(
                    Finding(
                        "selectors",
                        subject,
                        True,
                        f"{phase}: {hit} matches {len(found)} ({detail})",
                    )
                )
                labelled = check_label(name, nodes, found[0], known or {}, language)
                if labelled is not None:
                    findings.append(labelled)
                continue
            findings.append(
                await _failure(subject, name, phase, nodes, selectors, labels, matcher, errors)
            )
    return findings


async def _failure(
    subject: str,
    name: str,
    phase: str,
    nodes: Sequence[Node],
    selectors: Mapping[str, Sequence[str]],
    labels: Mapping[str, Sequence[str]],
    matcher: Matcher,
    errors: list[str],
) -> Finding:
    tried = ", ".join(selectors[name])
    message = f"{phase}: none of its selectors matches ({tried})"
    if errors:
        message += f"; refused by the browser: {'; '.join(errors)}"
    for index in candidates(nodes, selectors[name], labels.get(name, ())):
        proposals = selectors_for(nodes[index], selectors[name])
        if not proposals:
            continue
        confirmed = await matcher.match(nodes, proposals)
        for css in proposals:
            found = confirmed.get(css)
            if isinstance(found, list) and index in found:
                override = {"selectors": {name: {"css": [css, *selectors[name]]}}}
                return Finding(
                    "selectors",
                    subject,
                    False,
                    f"{message}. In this capture it is most likely "
                    f"{describe(shape(nodes, index))}: {css} matches it"
                    + (f" and {len(found) - 1} more" if len(found) > 1 else "")
                    + f". Override (docs/sites.md#provider-packs): {json.dumps(override)}",
                    proposal=override,
                )
    return Finding(
        "selectors",
        subject,
        False,
        f"{message}, and no element of the capture resembles it: look at the page and write "
        "an override (docs/sites.md#provider-packs)",
    )


async def check_capture(
    capture: Mapping[str, Any], spec: ProviderSpec, matcher: Matcher
) -> list[Finding]:
    """Every check of a capture against ``spec`` (its pack, its parser, its detector)."""
    selectors = {name: tuple(entry.css) for name, entry in spec.pack.selectors.items()}
    findings = await check_selectors(
        capture, selectors, pack_labels(spec), matcher, label_texts(spec)
    )
    stream = capture.get("stream")
    if stream is None:
        findings.append(
            Finding("stream", "stream", True, "not checked: no answer request captured")
        )
    else:
        parse = FORMATS.get(str(stream.get("format")))
        if parse is None:
            findings.append(
                Finding(
                    "stream", "stream", False, f"unknown stream format {stream.get('format')!r}"
                )
            )
        else:
            findings.extend(check_stream(stream, parse))
    signals = capture.get("signals")
    if signals and signals.get("observations"):
        expected = capture.get("ask", {}).get("completion") or None
        findings.extend(check_signals(signals, spec.new_detector, expected, provider=spec.name))
    else:
        findings.append(
            Finding("signals", "signals", True, "not checked: no observations captured")
        )
    return findings
