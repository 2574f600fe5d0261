"""What a tab shows, for a person or an agent looking into a wrong answer: the one path behind
the MCP tool ``take_cdp_snapshot`` and ``bridge snapshot``.

A target is ``chatgpt`` or ``gemini`` (the tab an ask would use: during a running ask, that
ask's tab) or a tab id. :func:`parse_target` checks it before anything starts, so a typo costs
no browser launch; :func:`resolve_target` finds the tab; :func:`take_snapshot` reads its
accessibility outline and a screenshot (JPEG for MCP clients' message limits, PNG for a file
a person opens).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from bridge.cdp.session import CdpSession
from bridge.providers.results import PROVIDERS, Provider
from bridge.tools.outline import accessibility_outline, screenshot

if TYPE_CHECKING:
    from bridge.app.facade import Bridge

__all__ = ["TARGET_HELP", "TabSnapshot", "parse_target", "resolve_target", "take_snapshot"]

TARGET_HELP = "'chatgpt', 'gemini', or a tab id (a number) from the browser"


def parse_target(target: str) -> Provider | int:
    """The provider or the tab id ``target`` names; ValueError saying what to pass."""
    name = target.strip().lower()
    if name in PROVIDERS:
        provider: Provider = "chatgpt" if name == "chatgpt" else "gemini"
        return provider
    if name.isdigit():
        return int(name)
    raise ValueError(f"unknown target {target!r}: use {TARGET_HELP}")


async def resolve_target(bridge: Bridge, target: str) -> CdpSession:
    """The tab ``target`` names, connected (a provider's is opened if none is)."""
    parsed = parse_target(target)
    if isinstance(parsed, int):
        return await bridge.browser.attach(parsed)
    return await bridge.provider_tab(parsed)


@dataclass(frozen=True)
class TabSnapshot:
    """A tab as ``take_cdp_snapshot`` and ``bridge snapshot`` show it: its URL, its
    accessibility outline, and a screenshot in the format asked for."""

    url: str
    outline: str
    image: bytes
    image_format: Literal["jpeg", "png"]


async def take_snapshot(
    bridge: Bridge, target: str, *, image_format: Literal["jpeg", "png"] = "jpeg"
) -> TabSnapshot:
    """The tab's URL, accessibility outline (roles and names) and a screenshot."""
    tab = await resolve_target(bridge, target)
    outline = await accessibility_outline(tab)
    image = await screenshot(tab, image_format=image_format)
    url = str(await tab.evaluate("location.href"))
    return TabSnapshot(url, outline, image, image_format)
