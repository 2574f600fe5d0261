"""Choosing the site's mode (model, thinking or instant) before a question (docs/sites.md#modes).

Both sites put the choice in a picker by the composer: ChatGPT's composer pill (C8.1) opens a
menu of radio items, one per mode, with test ids ``model-switcher-<slug>`` (C8.2); Gemini's
mode switch opens ``gem-menu[data-test-id="gem-mode-menu"]`` with one ``gem-menu-item`` per mode
(G1.6). bridge opens the picker with a trusted click, picks the item the caller named (by
its id or its label, :func:`match_mode`), and then **fails closed**: the ask goes on only
once the page itself shows that item chosen (the pack's ``selectors.mode_selected``); a mode
the picker does not offer, or one the page will not show chosen, ends the ask before
anything is typed (``ModeUnavailable``, ``ModeUnconfirmed``). A question sent in a mode
nobody can vouch for would cost the person a slow, wrong answer they did not ask for.

Matching is pure and first: the page work comes after it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bridge.errors import BridgeError, ModeUnavailable, ModeUnconfirmed
from bridge.providers.composer import press_key, trusted_click
from bridge.providers.context import AskContext
from bridge.providers.dumps import dump
from bridge.providers.results import Provider
from bridge.waiting import scaled

__all__ = ["ModeItem", "choose_mode", "match_mode", "mode_key"]

log = logging.getLogger(__name__)

PICKER_S = 5.0  # the picker is drawn with the composer, which is ready by now: a little grace
MENU_S = 8.0  # a click on the picker (or an item) to the menu's answer
_NEEDED = ("mode_button", "mode_item", "mode_selected")


@dataclass(frozen=True)
class ModeItem:
    """One item of the site's mode menu as the page shows it."""

    id: str  # e.g. "gpt-5-5-thinking" (ChatGPT's test id), "thinking" (Gemini's); may be ""
    label: str  # its name on the page, e.g. "Thinking"
    selected: bool = False
    disabled: bool = False

    @classmethod
    def from_page(cls, data: dict[str, Any]) -> ModeItem:
        return cls(
            id=str(data.get("id") or ""),
            label=str(data.get("label") or ""),
            selected=bool(data.get("selected")),
            disabled=bool(data.get("disabled")),
        )

    def describe(self) -> str:
        """How an error names it: ``Thinking (gpt-5-5-thinking)``."""
        if self.id and mode_key(self.id) != mode_key(self.label):
            return f"{self.label or '(no label)'} ({self.id})"
        return self.label or self.id or "(unnamed)"

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "label": self.label}


def mode_key(text: str) -> str:
    """A name as matching compares it: lower case, runs of spaces, dots, dashes and
    underscores as one dash ("GPT-5.5 Thinking" and "gpt_5_5-thinking" are one key)."""
    return re.sub(r"[\s._\-]+", "-", text.strip().lower()).strip("-")


def match_mode(provider: Provider, wanted: str, items: Sequence[ModeItem]) -> ModeItem:
    """The item ``wanted`` names: its id or label exactly (see :func:`mode_key`), else the
    one item whose id or label holds it as whole words ("thinking" is ChatGPT's
    ``gpt-5-5-thinking``). ``ModeUnavailable`` when none does, several do, or it is
    disabled (the account's plan or quota may not allow it)."""
    key = mode_key(wanted)
    offered = [i.describe() for i in items]
    if not key:
        raise ModeUnavailable(provider, wanted, "the mode is empty", offered)

    def keys(item: ModeItem) -> list[str]:
        return [k for k in (mode_key(item.id), mode_key(item.label)) if k]

    found = [i for i in items if key in keys(i)]
    if not found:
        found = [i for i in items if any(f"-{key}-" in f"-{k}-" for k in keys(i))]
    if not found:
        raise ModeUnavailable(provider, wanted, "the picker has no such mode", offered)
    if len(found) > 1:
        several = ", ".join(i.describe() for i in found)
        raise ModeUnavailable(provider, wanted, f"it matches several modes ({several})", offered)
    item = found[0]
    if item.disabled:
        raise ModeUnavailable(
            provider, wanted, f"{item.describe()} is shown but disabled for this account", offered
        )
    return item


async def choose_mode(ctx: AskContext, wanted: str) -> dict[str, str]:
    """Make the page's picker show ``wanted`` chosen, or raise; returns what ``used.mode``
    records: the item's ``id`` and ``label``, what was ``requested`` and ``how`` ("already"
    chosen, or "chosen" now)."""
    missing = [n for n in _NEEDED if n not in ctx.spec.pack.selectors]
    if missing:
        raise ModeUnavailable(
            ctx.provider,
            wanted,
            f"the {ctx.provider} pack names no mode picker "
            f"({', '.join('selectors.' + n for n in missing)}; docs/sites.md#modes)",
            [],
        )
    items = await _open_menu(ctx, wanted)
    try:
        item = match_mode(ctx.provider, wanted, items)
        if item.selected:
            return _record(wanted, item, "already")
        index = items.index(item)
        target = await ctx.page.call("modeItemTarget", ctx.provider, index)
        if not target:
            raise ModeUnconfirmed(ctx.provider, wanted, "no item to click (the menu closed)")
        await trusted_click(ctx, target)
        wait_s = scaled(MENU_S)
        state = await ctx.page.call(
            "whenModeChosen", ctx.provider, index, int(wait_s * 1000), timeout=wait_s + 5
        )
        log.debug("%s: after choosing %r the menu said %r", ctx.provider, wanted, state)
        if state != "selected":
            # The menu closed on the click (as menus do): open it again and look.
            items = await _open_menu(ctx, wanted)
        now = [i for i in items if mode_key(i.id) == mode_key(item.id) and i.label == item.label]
        if not (now and now[0].selected):
            shown = [i.describe() for i in items if i.selected]
            await dump(ctx, f"mode {wanted} not confirmed")
            raise ModeUnconfirmed(
                ctx.provider, wanted, " and ".join(shown) + " chosen" if shown else "no mode chosen"
            )
        return _record(wanted, item, "chosen")
    finally:
        await _close_menu(ctx)


def _record(wanted: str, item: ModeItem, how: str) -> dict[str, str]:
    return {"requested": wanted, **item.to_dict(), "how": how}


async def _open_menu(ctx: AskContext, wanted: str) -> list[ModeItem]:
    """Click the picker (trusted, C1.13) and read the menu's items once it shows them."""
    p = ctx.provider
    wait_s = scaled(PICKER_S)
    shown = await ctx.page.call(
        "whenVisible", p, "mode_button", int(wait_s * 1000), timeout=wait_s + 5
    )
    target = await ctx.page.call("controlTarget", p, "mode_button") if shown else None
    if not target:
        await dump(ctx, "no mode picker")
        raise ModeUnavailable(p, wanted, f"the {p} page shows no mode picker", [])
    await trusted_click(ctx, target)
    wait_s = scaled(MENU_S)
    opened = await ctx.page.call("whenModeMenu", p, True, int(wait_s * 1000), timeout=wait_s + 5)
    if opened != "open":
        await dump(ctx, "mode picker opened no menu")
        raise ModeUnavailable(p, wanted, f"its mode picker opened no menu within {wait_s:.0f}s", [])
    return [ModeItem.from_page(d) for d in await ctx.page.call("modeItems", p)]


async def _close_menu(ctx: AskContext) -> None:
    """Escape closes an open menu (the site's own key); the composer must be free to type.
    A menu that stays open is said in the log and the dump, not raised: the choice stands."""
    if ctx.tab.ended is not None:
        return
    try:
        if await ctx.page.call("whenModeMenu", ctx.provider, False, 0) == "closed":
            return
        await press_key(ctx, "Escape")
        wait_s = scaled(MENU_S)
        closed = await ctx.page.call(
            "whenModeMenu", ctx.provider, False, int(wait_s * 1000), timeout=wait_s + 5
        )
        if closed != "closed":
            log.warning("%s: the mode menu stayed open after Escape", ctx.provider)
            await dump(ctx, "mode menu stayed open")
    except BridgeError as exc:
        log.info("%s: closing the mode menu: %s", ctx.provider, exc)
