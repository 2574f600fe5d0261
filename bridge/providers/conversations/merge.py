"""Merging and checking conversation readings (pure): assistant messages joined as the
page shows them, a network reading checked against the page turn by turn, and a
virtualized history's windows folded into one list of turns."""

from __future__ import annotations

from collections.abc import Sequence

from bridge.providers.answer_sources import AGREEMENT_THRESHOLD, agreement
from bridge.providers.conversations.turns import PageTurn, Turn

__all__ = ["cross_check", "merge_runs", "merge_window"]


def merge_runs(turns: Sequence[Turn]) -> list[Turn]:
    """Consecutive assistant messages as one turn (the page shows a tool-using answer's
    messages in one turn), complete only if each of them is; questions are never joined
    (an unanswered one stands alone)."""
    out: list[Turn] = []
    for turn in turns:
        if out and turn.role == "assistant" and out[-1].role == "assistant":
            joined = "\n\n".join(t for t in (out[-1].markdown, turn.markdown) if t)
            out[-1] = Turn("assistant", joined, out[-1].complete and turn.complete)
        else:
            out.append(turn)
    return out


def cross_check(network: Sequence[Turn], page: Sequence[Turn]) -> tuple[float, str]:
    """How well the page agrees with a network reading: ``(worst agreement, why not)``,
    ``why`` empty when it is believed.

    The page may show fewer turns (a virtualized list shows the newest), never more; its
    turns are compared with the reading's last ones, role by role, each turn's words by
    :func:`agreement` (rendering drops markup, never words)."""
    if not page:
        return 1.0, ""
    if len(page) > len(network):
        return 0.0, f"the page shows {len(page)} turns, the read response {len(network)}"
    offset = len(network) - len(page)
    worst, where = 1.0, 0
    for i, (ours, shown) in enumerate(zip(network[offset:], page, strict=True), offset + 1):
        if ours.role != shown.role:
            return 0.0, f"turn {i} is a {shown.role} turn on the page, {ours.role} in the response"
        score = agreement(ours.markdown, shown.markdown)
        if score < worst:
            worst, where = score, i
    if worst < AGREEMENT_THRESHOLD:
        return worst, f"turn {where} disagrees with the page ({worst:.2f})"
    return worst, ""


def merge_window(collected: list[PageTurn], window: Sequence[PageTurn]) -> int:
    """Fold the turns rendered now into those collected so far, in order; returns how many
    were new.

    A virtualized history renders a contiguous slice of the conversation: a new turn goes
    before the next turn of the slice that is already known (or after the last known one).
    A slice that shares no turn with what is known lies above it (the walk goes up)."""
    known = {t.key for t in collected}
    if not any(t.key in known for t in window):
        fresh = list({t.key: t for t in window}.values())
        collected[:0] = fresh
        return len(fresh)
    added = 0
    pending: list[PageTurn] = []
    after = 0
    for turn in window:
        if turn.key in known:
            at = next(i for i, t in enumerate(collected) if t.key == turn.key)
            collected[at:at] = pending
            added += len(pending)
            after = at + len(pending) + 1
            pending = []
        elif all(p.key != turn.key for p in pending):
            pending.append(turn)
    collected[after:after] = pending
    return added + len(pending)
