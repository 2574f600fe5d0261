"""The "dom" tool group: read-only DOM exploration of any tab, open shadow roots pierced.

Page-wide reads take a ``PageScript`` made by ``dom_page(tab)``; element reads take an
``Element`` (``bridge.tools.element``) and run in that element's own frame. Both go through
one in-page script, ``bridge/js/dom.js`` (``window.__bridgeDom``), injected once per document
(per frame for elements) and then called into. It is also the ask tools' DOM read
(``get_page_dom``: ``get_matching_html``), so both tool groups query the DOM one way.

Every result is JSON data (dicts and lists, snake_case keys) bounded in size:

- element text in listings and accessible names: 100 characters;
- query_dom: up to 10 attributes per element (``id`` and ``class`` have their own keys),
  values cut at 100 characters; ``limit`` at most ``MAX_LIMIT``;
- get_attributes: up to 100 attributes (``attributes_omitted`` counts the rest), values,
  field values and metadata values cut at 1000 characters;
- get_computed_styles: up to 100 properties, values cut at 300 characters;
- get_visible_text: ``max_chars`` (at most ``MAX_TEXT_CHARS``);
- get_page_metadata: up to 30 ``og:*`` and 30 ``twitter:*`` entries;
- get_filtered_aria_tree: up to 300 nodes;
- get_form_values: up to 20 forms, 100 fields per form (and outside forms), 50 selected
  options per select.

Cut text ends with a marker saying how much was cut (``… [42 more chars]``). Passwords are
never read back: a non-empty password field's value is ``"••••"``.

A selector the page cannot parse raises ``JavaScriptError`` with the browser's message; so
does a ``selector`` argument that matches nothing (get_visible_text, get_form_values).
"""

from __future__ import annotations

from typing import Any, cast

from bridge.cdp.page_script import PageScript
from bridge.tools.element import Element
from bridge.tools.scripts import DOM_SCRIPT, dom_page

__all__ = [
    "DOM_SCRIPT",
    "MAX_LIMIT",
    "MAX_TEXT_CHARS",
    "check_element_state",
    "check_visibility",
    "count_elements",
    "dom_page",
    "find_by_text",
    "get_attributes",
    "get_computed_styles",
    "get_filtered_aria_tree",
    "get_form_values",
    "get_matching_html",
    "get_page_metadata",
    "get_visible_text",
    "query_dom",
]

#: Most elements one listing returns (query_dom, find_by_text).
MAX_LIMIT = 200
#: Most characters get_visible_text returns.
MAX_TEXT_CHARS = 200_000


def _bounded(value: int, name: str, most: int) -> int:
    if value < 0:
        raise ValueError(f"{name} must be 0 or more, not {value}")
    return min(value, most)


async def _page(page: PageScript, function: str, *args: Any) -> dict[str, Any]:
    return cast(dict[str, Any], await page.call(function, *args))


async def _element(element: Element, function: str, *args: Any) -> dict[str, Any]:
    """``window.__bridgeDom.<function>(element, *args)`` in the element's own frame."""
    return cast(dict[str, Any], await element.run(DOM_SCRIPT, function, *args))


# -- page-wide reads ------------------------------------------------------------------------


async def query_dom(page: PageScript, selector: str, limit: int = 20) -> dict[str, Any]:
    """Elements matching ``selector``, in document order (a shadow tree after its host).

    ``{"total", "truncated", "elements": [{"tag", "id", "classes", "text", "attributes",
    "visible", "in_shadow_root", "selector"}]}``: ``text`` is the first 100 characters of
    the innerText (whitespace collapsed); ``visible`` means rendered with a non-empty box
    (not display:none, visibility:hidden or opacity:0), wherever it is scrolled;
    ``selector`` is a CSS path that finds this element with ``query_selector`` (unique in
    the page when its own tree allows).
    """
    return await _page(page, "queryDom", selector, _bounded(limit, "limit", MAX_LIMIT))


async def get_matching_html(page: PageScript, selector: str, max_chars: int) -> dict[str, Any]:
    """The HTML of the elements ``query_dom`` lists for ``selector`` (the same matches, in
    the same order), whitespace collapsed, cut so that all of it stays within ``max_chars``:
    ``{"total", "shown", "items": [{"inShadowRoot", "html"}]}`` (the ask tools'
    ``get_page_dom``; its camelCase key is that tool's)."""
    return await _page(
        page, "htmlMatches", selector, _bounded(max_chars, "max_chars", MAX_TEXT_CHARS)
    )


async def get_visible_text(
    page: PageScript, selector: str | None = None, max_chars: int = 20000
) -> dict[str, Any]:
    """The rendered text of the element matching ``selector`` (or the body), open shadow
    trees included where they render: ``{"text", "truncated", "chars"}``, ``chars`` being
    the full length before any cut."""
    limit = _bounded(max_chars, "max_chars", MAX_TEXT_CHARS)
    return await _page(page, "visibleText", selector, limit)


async def count_elements(page: PageScript, selector: str) -> dict[str, Any]:
    """``{"count", "in_shadow_roots"}``: matches in the page, and how many of them are
    inside open shadow roots."""
    return await _page(page, "countElements", selector)


async def get_page_metadata(page: PageScript) -> dict[str, Any]:
    """``{"title", "url", "lang", "charset", "description", "canonical", "og", "twitter",
    "counts": {"links", "images", "forms", "iframes"}, "ready_state"}``; ``og`` and
    ``twitter`` map the part after the prefix (``og:title`` -> ``"title"``) to its content,
    the first of each; absent strings are None."""
    return await _page(page, "pageMetadata")


async def get_filtered_aria_tree(
    page: PageScript,
    roles: list[str] | None = None,
    name: str | None = None,
    max_depth: int = 10,
) -> dict[str, Any]:
    """Elements with an ARIA role (explicit, or implicit from their tag), read from the DOM.

    Hidden elements (display:none, visibility:hidden, aria-hidden, inert) are left out, and
    a closed ``<select>``'s options. ``roles`` keeps only those roles, ``name`` only
    accessible names containing it (case-insensitive); ``depth`` counts the kept ancestors
    (0 = none), so a filtered tree nests as its kept nodes do, and nodes at ``max_depth``
    or deeper are left out. ``{"nodes": [{"role", "name", "depth", "selector", "states",
    "level" (headings), "value" (text fields, when not empty)}], "total", "truncated"}``:
    ``total`` counts every node that passed the filters, at any depth.
    """
    if max_depth < 0:
        raise ValueError(f"max_depth must be 0 or more, not {max_depth}")
    return await _page(page, "ariaTree", roles, name, max_depth)


async def find_by_text(
    page: PageScript, text: str, exact: bool = False, limit: int = 20
) -> dict[str, Any]:
    """Elements whose text contains ``text`` (case-insensitive), or equals it (trimmed,
    whitespace collapsed, case-sensitive) when ``exact``; also text fields by value, and
    elements by placeholder or aria-label. Only the innermost element of a text match is
    kept, not its ancestors. ``{"total", "truncated", "elements": [{"tag", "text",
    "matched_by" ("text", "value", "placeholder", "aria-label"), "selector", "visible"}]}``.
    """
    return await _page(page, "findByText", text, exact, _bounded(limit, "limit", MAX_LIMIT))


async def get_form_values(page: PageScript, selector: str | None = None) -> dict[str, Any]:
    """Every form's fields (or those of the element matching ``selector``: a form, or any
    container), and with no selector the fields outside any form.

    ``{"forms": [{"selector", "id", "name", "action", "method", "fields"}], "outside_forms":
    fields, "truncated"}``; a field is ``{"name", "id", "type", "label", "value", "checked"
    (checkboxes and radios, else None), "selected" ([{"value", "text"}] for selects, else
    None), "disabled", "required"}``. Buttons are not fields.
    """
    return await _page(page, "formValues", selector)


# -- element reads ---------------------------------------------------------------------------


async def get_computed_styles(
    element: Element, properties: list[str] | None = None
) -> dict[str, Any]:
    """Computed values by property name (CSS names; camelCase is accepted too). Without
    ``properties``: display, visibility, opacity, position, z-index, width, height, color,
    background-color, font-size, font-weight, overflow, pointer-events, cursor."""
    return await _element(element, "computedStyles", properties)


async def check_visibility(element: Element) -> dict[str, Any]:
    """Could a person see the element now, and if not, why.

    ``{"visible", "reason", "rendered", "in_viewport", "box": {"x", "y", "width",
    "height"}}``. ``reason`` (None when visible) is the first that applies of:
    ``"not attached to the document"``, ``"display:none on div#x"`` (the element or the
    ancestor that hides it), ``"visibility:hidden on …"``, ``"opacity:0 on …"``, ``"not
    rendered (no layout box)"``, ``"zero size (0x20)"``, ``"scrolled out of view inside
    div#list (scroll needed)"``, ``"outside the viewport (scroll needed)"``, ``"covered by
    <selector> at its centre"`` (the topmost element at the centre of its part in the
    viewport). ``rendered`` is the query_dom sense of visible: false for the reasons up to
    zero size. ``in_viewport``: some of its box is in its frame's viewport; ``box`` is in
    that viewport's CSS pixels.
    """
    return await _element(element, "checkVisibility")


async def get_attributes(element: Element) -> dict[str, Any]:
    """``{"tag", "attributes": {name: value}}`` plus the live properties that apply:
    ``value`` (form controls, option, li, meter, progress, output, data), ``checked``
    (checkbox, radio), ``disabled`` (form controls), ``selected`` (option)."""
    return await _element(element, "attributes")


async def check_element_state(element: Element) -> dict[str, Any]:
    """``{"attached", "visible", "enabled", "editable", "checked", "focused", "selected",
    "in_viewport"}``. ``visible`` is the query_dom sense; ``enabled`` is false for a disabled
    control (a disabled fieldset's too) or under aria-disabled; ``editable`` applies to
    text fields, selects and contenteditable (else None); ``checked`` to checkboxes, radios
    and aria-checked roles; ``selected`` to options and aria-selected (else None)."""
    return await _element(element, "elementState")
