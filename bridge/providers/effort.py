"""Choosing the thinking effort before a question (docs/sites.md#effort).

ChatGPT: the composer pill opens the unified "Intelligence" picker
(``[data-testid="composer-intelligence-picker-content"]``, SITE-FACTS C13.2); its "Advanced"
item reveals the "Effort" submenu opener (labelled with the current tier, "EffortHigh"),
whose rows are the tiers (C13.3). bridge opens each level with a trusted click, picks the row
the caller named (:func:`match_effort`, across the tier names of C13.3), clicks it, closes the
menus with Escape and **reads the pill back** (C13.4: oracle polls the row's state, else
re-reads the pill; BTW closes the menu first and checks the pill). A tier the picker lacks,
one shown disabled (its row-owned notice, C13.5, is the error's text), or one the page does
not show chosen ends the ask before anything is typed (``EffortUnavailable``,
``EffortUnconfirmed``).

Gemini: Deep Think is a ``[role="menuitemcheckbox"]`` of the Tools drawer
(``button.toolbox-drawer-button``), confirmed by its "Deselect Deep Think" chip (G10.1). Its
placeholder replies ("I'm on it", G10.2) are the completion detector's business: page.js
reports them as ``placeholder_reply`` and ``GeminiCompletion`` keeps waiting through them.

Matching is pure and first: the page work comes after it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bridge.errors import BridgeError, EffortUnavailable, EffortUnconfirmed
from bridge.providers.composer import press_key, trusted_click
from bridge.providers.context import AskContext
from bridge.providers.dumps import dump
from bridge.providers.modes import mode_key
from bridge.providers.results import Provider
from bridge.waiting import scaled

__all__ = [
    "EFFORT_TIERS",
    "EffortRow",
    "choose_deep_think",
    "choose_effort",
    "match_effort",
    "tier_of",
]

log = logging.getLogger(__name__)

PICKER_S = 5.0  # the pill is drawn with the composer, which is ready by now
MENU_S = 8.0  # a click on the pill (or an item) to the menu's answer
#: A click on Deep Think to its "Deselect Deep Think" chip: a menu's answer like the others.
#: Its own name so that a test of a page that never shows the chip can shorten this wait alone.
DEEP_THINK_CHIP_S = MENU_S
_NEEDED = ("effort_button", "effort_menu", "effort_menu_item", "effort_item", "effort_selected")

#: The tier names that mean one tier, across layouts and languages (SITE-FACTS C13.3; the
#: wire values standard/extended/max of C13.6; BTW's pill texts Max, High, Medium, Low,
#: Standard; "heavy" is the old layout's top thinking tier, C13.1). The first of each is
#: the name bridge uses for the tier.
EFFORT_TIERS: tuple[tuple[str, ...], ...] = (
    ("light", "instant", "low", "sofort", "最速", "轻", "极速"),
    ("standard", "medium", "mittel", "中程度", "标准", "中"),
    ("extended", "high", "hoch", "高い", "扩展", "深度", "高"),
    ("max", "extra high", "heavy", "sehr hoch", "非常に高い", "极高"),
    ("pro", "pro extended"),
)
_TIER_OF = {mode_key(name): group[0] for group in EFFORT_TIERS for name in group}


def tier_of(name: str) -> str | None:
    """The tier a name means (``"High"`` and ``"extended"`` are ``"extended"``), else None."""
    return _TIER_OF.get(mode_key(name))


@dataclass(frozen=True)
class EffortRow:
    """One row of ChatGPT's Effort submenu as the page shows it."""

    label: str
    selected: bool = False
    disabled: bool = False
    notice: str = ""  # a disabled row's own notice (C13.5)

    @classmethod
    def from_page(cls, data: dict[str, Any]) -> EffortRow:
        return cls(
            label=str(data.get("label") or ""),
            selected=bool(data.get("selected")),
            disabled=bool(data.get("disabled")),
            notice=str(data.get("notice") or ""),
        )


def match_effort(provider: Provider, wanted: str, rows: Sequence[EffortRow]) -> EffortRow:
    """The row ``wanted`` names: its label exactly (case, spaces and dashes aside), else the
    one row naming the same tier (C13.3: "extended" is the row "High"). ``EffortUnavailable``
    when none does, several do, or the row is disabled (with its notice)."""
    key, tier = mode_key(wanted), tier_of(wanted)
    offered = [r.label for r in rows]
    if not key:
        raise EffortUnavailable(provider, wanted, "the effort is empty", offered)
    found = [r for r in rows if mode_key(r.label) == key]
    if not found and tier is not None:
        found = [r for r in rows if tier_of(r.label) == tier]
    if not found:
        raise EffortUnavailable(provider, wanted, "the effort menu has no such tier", offered)
    if len(found) > 1:
        several = ", ".join(r.label for r in found)
        raise EffortUnavailable(provider, wanted, f"it matches several tiers ({several})", offered)
    row = found[0]
    if row.disabled:
        raise EffortUnavailable(
            provider, wanted, f"{row.label} is shown but disabled", offered, row.notice
        )
    return row


def pill_names(pill: str, row: EffortRow, rows: Sequence[EffortRow]) -> bool:
    """Whether the composer pill's text names ``row``: the offered label it ends with (the
    longest, so "Extra High" is not "High"), else the tier its last words mean."""
    key = mode_key(pill)
    ends = [r for r in rows if key == mode_key(r.label) or key.endswith("-" + mode_key(r.label))]
    if ends:
        return max(ends, key=lambda r: len(mode_key(r.label))) == row
    words = key.split("-")
    for n in range(len(words), 0, -1):  # the longest tail that names a tier
        tier = tier_of("-".join(words[-n:]))
        if tier is not None:
            return tier == tier_of(row.label)
    return False


async def choose_effort(ctx: AskContext, wanted: str) -> dict[str, str]:
    """Make the page hold the tier ``wanted``, or raise; returns what ``used.effort`` records:
    ``requested``, the row's ``label``, the ``tier`` it means (C13.3, "" if none), the pill's
    text after the menus closed (``shown``) and ``how`` ("already" or "chosen")."""
    p = ctx.provider
    missing = [n for n in _NEEDED if n not in ctx.spec.pack.selectors]
    if missing:
        raise EffortUnavailable(
            p,
            wanted,
            f"the {p} pack names no effort picker "
            f"({', '.join('selectors.' + n for n in missing)}; docs/sites.md#effort)",
            [],
        )
    try:
        rows = await _open_rows(ctx, wanted)
        row = match_effort(p, wanted, rows)
        how = "already" if row.selected else "chosen"
        state = "selected"
        if not row.selected:
            index = rows.index(row)
            target = await ctx.page.call("effortTarget", p, index)
            if not target:
                raise EffortUnconfirmed(p, wanted, "no row to click (the menu closed)")
            await trusted_click(ctx, target)
            wait_s = scaled(MENU_S)
            state = await ctx.page.call(
                "whenEffort", p, f"chosen:{index}", int(wait_s * 1000), timeout=wait_s + 5
            )
            log.debug("%s: after choosing effort %r the menu said %r", p, wanted, state)
        await _close_menus(ctx)
        shown = str(await ctx.page.call("effortPill", p))
        # C13.4: the row's own state, else the pill once the menus are closed.
        if state != "selected" and not pill_names(shown, row, rows):
            await dump(ctx, f"effort {wanted} not confirmed")
            raise EffortUnconfirmed(p, wanted, f"the composer pill {shown!r}")
        return {
            "requested": wanted,
            "label": row.label,
            "tier": tier_of(row.label) or "",
            "shown": shown,
            "how": how,
        }
    finally:
        await _close_menus(ctx)


async def _click(ctx: AskContext, wanted: str, what: str, problem: str) -> None:
    target = await ctx.page.call("effortTarget", ctx.provider, what)
    if not target:
        await dump(ctx, f"effort picker: {problem}")
        raise EffortUnavailable(ctx.provider, wanted, problem, [])
    await trusted_click(ctx, target)


async def _wait(ctx: AskContext, what: str) -> bool:
    wait_s = scaled(MENU_S)
    got = await ctx.page.call(
        "whenEffort", ctx.provider, what, int(wait_s * 1000), timeout=wait_s + 5
    )
    return bool(got)


async def _open_rows(ctx: AskContext, wanted: str) -> list[EffortRow]:
    """Pill → Intelligence picker → "Advanced" (when the opener is not shown yet) → "Effort…"
    → the tier rows, each with a trusted click (C1.13), each level waited for on mutations."""
    p = ctx.provider
    wait_s = scaled(PICKER_S)
    shown = await ctx.page.call(
        "whenVisible", p, "effort_button", int(wait_s * 1000), timeout=wait_s + 5
    )
    target = await ctx.page.call("controlTarget", p, "effort_button") if shown else None
    if not target:
        await dump(ctx, "no effort picker")
        raise EffortUnavailable(p, wanted, f"the {p} page shows no composer pill", [])
    await trusted_click(ctx, target)
    if not await _wait(ctx, "menu"):
        await dump(ctx, "effort picker opened no menu")
        raise EffortUnavailable(p, wanted, "the composer pill opened no Intelligence picker", [])
    state = await ctx.page.call("effortState", p)
    if not state.get("opener"):
        if not state.get("advanced"):
            await dump(ctx, "effort picker without Advanced")
            raise EffortUnavailable(p, wanted, "the Intelligence picker shows no Advanced item", [])
        await _click(ctx, wanted, "advanced", "the Advanced item went away")
        if not await _wait(ctx, "opener"):
            await dump(ctx, "Advanced showed no Effort opener")
            raise EffortUnavailable(p, wanted, "Advanced shows no Effort submenu", [])
    await _click(ctx, wanted, "opener", "the Effort submenu opener went away")
    if not await _wait(ctx, "rows"):
        await dump(ctx, "Effort opened no rows")
        raise EffortUnavailable(p, wanted, "the Effort submenu showed no tiers", [])
    state = await ctx.page.call("effortState", p)
    return [EffortRow.from_page(r) for r in state.get("rows") or []]


async def _close_menus(ctx: AskContext) -> None:
    """Escape closes the open menus (C13.4), one level each: the composer must be free to
    type. Menus that stay open are said in the log and the dump, not raised."""
    if ctx.tab.ended is not None:
        return
    try:
        for _ in range(3):
            if await ctx.page.call("whenEffort", ctx.provider, "closed", 0) == "closed":
                return
            await press_key(ctx, "Escape")
            wait_s = scaled(MENU_S) / 4
            got = await ctx.page.call(
                "whenEffort", ctx.provider, "closed", int(wait_s * 1000), timeout=wait_s + 5
            )
            if got == "closed":
                return
        log.warning("%s: the effort menus stayed open after Escape", ctx.provider)
        await dump(ctx, "effort menus stayed open")
    except BridgeError as exc:
        log.info("%s: closing the effort menus: %s", ctx.provider, exc)


DEEP_THINK = "Deep Think"
_NEEDED_DEEP_THINK = ("deep_think_button", "deep_think_item", "deep_think_chip")


async def deep_think_shown(ctx: AskContext) -> bool:
    """Whether the page shows Deep Think on (its chip) without bridge asking for it: left on
    by the person or an earlier ask, it applies to this question too (G10.1's tools stay
    on), so ``used.deep_think`` says what the site was asked with, not what was requested.
    bridge does not turn it off: that is the person's choice on their page."""
    if "deep_think_chip" not in ctx.spec.pack.selectors:
        return False
    return bool(await ctx.page.call("whenVisible", ctx.provider, "deep_think_chip", 0) == "visible")


async def choose_deep_think(ctx: AskContext) -> bool:
    """Turn Gemini's Deep Think on in the Tools drawer and see its chip, or raise (G10.1):
    Tools (``selectors.deep_think_button``) → the ``menuitemcheckbox`` labelled "Deep Think"
    (``texts.deep_think_labels``) → the "Deselect Deep Think" chip
    (``selectors.deep_think_chip``). A chip already shown needs no click. True once on."""
    p = ctx.provider
    missing = [n for n in _NEEDED_DEEP_THINK if n not in ctx.spec.pack.selectors]
    if missing:
        raise EffortUnavailable(
            p,
            DEEP_THINK,
            f"the {p} pack names no Deep Think control "
            f"({', '.join('selectors.' + n for n in missing)}; docs/sites.md#effort)",
            [],
        )
    if await ctx.page.call("whenVisible", p, "deep_think_chip", 0) == "visible":
        return True
    try:
        wait_s = scaled(PICKER_S)
        shown = await ctx.page.call(
            "whenVisible", p, "deep_think_button", int(wait_s * 1000), timeout=wait_s + 5
        )
        target = await ctx.page.call("controlTarget", p, "deep_think_button") if shown else None
        if not target:
            await dump(ctx, "no Tools button")
            raise EffortUnavailable(p, DEEP_THINK, f"the {p} page shows no Tools button", [])
        await trusted_click(ctx, target)
        wait_s = scaled(MENU_S)
        opened = await ctx.page.call(
            "whenVisible", p, "deep_think_item", int(wait_s * 1000), timeout=wait_s + 5
        )
        tools = await ctx.page.call("deepThinkItems", p) if opened else []
        offered = [str(t.get("label") or "") for t in tools]
        found = [t for t in tools if t.get("deep_think")]
        if not found:
            await dump(ctx, "no Deep Think in Tools")
            raise EffortUnavailable(p, DEEP_THINK, "the Tools menu has no Deep Think", offered)
        if found[0].get("disabled"):
            raise EffortUnavailable(
                p, DEEP_THINK, "Deep Think is shown but disabled", offered, str(found[0]["notice"])
            )
        target = await ctx.page.call("deepThinkTarget", p)
        if not target:
            raise EffortUnconfirmed(p, DEEP_THINK, "no Deep Think item to click (the menu closed)")
        await trusted_click(ctx, target)
        wait_s = scaled(DEEP_THINK_CHIP_S)
        chip = await ctx.page.call(
            "whenVisible", p, "deep_think_chip", int(wait_s * 1000), timeout=wait_s + 5
        )
        if chip != "visible":
            await dump(ctx, "Deep Think not confirmed")
            raise EffortUnconfirmed(p, DEEP_THINK, "no 'Deselect Deep Think' chip")
        return True
    finally:
        await _close_tools(ctx)


async def _close_tools(ctx: AskContext) -> None:
    """The Tools menu closes on a choice; one left open gets Escape, and is logged if it stays."""
    if ctx.tab.ended is not None:
        return
    try:
        if await ctx.page.call("deepThinkItems", ctx.provider):
            await press_key(ctx, "Escape")
            if await ctx.page.call("deepThinkItems", ctx.provider):
                log.warning("%s: the Tools menu stayed open after Escape", ctx.provider)
    except BridgeError as exc:
        log.info("%s: closing the Tools menu: %s", ctx.provider, exc)
