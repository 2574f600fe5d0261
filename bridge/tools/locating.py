"""Playwright locators for page elements, and the Playwright code of an action (``--codegen
python``, the testing group): the page script gathers facts and counts matches
(``dom.js``: ``locatorFacts``, ``locatorMatches``, ``locatorFind``), ``bridge.tools.codegen``
decides. Thin I/O around that pure core."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bridge.tools import codegen
from bridge.tools.codegen import Locator, LocatorSpec, Match
from bridge.tools.element import Element
from bridge.tools.scripts import DOM_SCRIPT, dom_page
from bridge.tools.snapshot_render import parse_ref
from bridge.tools.targets import TabState

__all__ = ["CodeStep", "InFrame", "facts", "find", "locate"]


class InFrame(ValueError):
    """The element is inside an iframe: its locator would need ``frame_locator``, which
    bridge does not generate (its test line says so instead)."""


@dataclass(frozen=True)
class CodeStep:
    """An action as code: its elements (each with how the tool named it) and the lines made
    from their locators' code (``page.get_by_role(...)``), in the order given."""

    lines: Callable[[Sequence[str]], list[str]]
    elements: tuple[tuple[Element, str], ...] = ()
    #: A dialog's handler: Playwright needs it before the action that opened the dialog.
    before_last: bool = False
    #: Lines made by the action itself as it goes (fill_form finds each field in turn):
    #: rendered once it ran, not before.
    late: bool = False


async def facts(element: Element) -> dict[str, Any]:
    """What a locator can be made of, and the element's value and checked state."""
    found: dict[str, Any] = await element.run(DOM_SCRIPT, "locatorFacts")
    return found


async def locate(element: Element, target: str) -> Locator:
    """The best Playwright locator that finds exactly ``element`` in its page (see
    ``codegen.choose``). ``InFrame`` for an element in an iframe."""
    ref = parse_ref(target)
    if element.session_id is not None or (ref is not None and ref[0]):
        raise InFrame(f"{target} is inside an iframe: no page-level locator finds it")
    specs = codegen.candidates(await facts(element))
    raw = await element.run(DOM_SCRIPT, "locatorMatches", [s.to_js() for s in specs])
    return codegen.choose(specs, [Match(int(m["count"]), int(m["index"])) for m in raw])


async def find(state: TabState, specs: Sequence[LocatorSpec]) -> list[dict[str, Any]]:
    """Per spec, in the tab's top document: how many match, the first visible one, and for
    a role the names of that role's visible elements (``locatorFind``)."""
    found: list[dict[str, Any]] = await dom_page(state.tab).call(
        "locatorFind", [s.to_js() for s in specs]
    )
    return found
