"""The dom tool group (bridge.tools.dom) against real pages in Chromium: exact results for
forms, hidden, covered and scrolled-away elements, open shadow roots, landmarks, tables and
meta tags."""

from __future__ import annotations

import json

import pytest

from bridge.cdp.page_script import PageScript
from bridge.cdp.session import CdpSession, JavaScriptError
from bridge.tools import dom
from bridge.tools.element import Element, query_selector

pytestmark = pytest.mark.e2e


async def _open(
    tab: CdpSession, pages: str, body: str, shadow: str = "", head: str = ""
) -> PageScript:
    """The test page: ``body`` in the body, ``shadow`` in an open shadow root of ``#host``."""
    await tab.navigate(f"{pages}/")
    script = f"document.body.innerHTML = {json.dumps(body)};"
    if head:
        script += f"document.head.innerHTML = {json.dumps(head)};"
    if shadow:
        script += (
            "document.querySelector('#host').attachShadow({mode: 'open'}).innerHTML = "
            f"{json.dumps(shadow)};"
        )
    await tab.evaluate(script)
    return dom.dom_page(tab)


async def _element(tab: CdpSession, selector: str) -> Element:
    element = await query_selector(tab, selector)
    assert element is not None, selector
    return element


async def _text_of(tab: CdpSession, selector: str) -> str:
    element = await _element(tab, selector)
    return str(await element.call("function() { return this.textContent; }"))


SHOP = """
<h1 id="title">Shop</h1>
<ul class="items"><li class="item">Apple</li><li class="item" data-price="3" title="yellow">Banana</li><li class="item" hidden>Cherry</li></ul>
<div id="host"><span class="item">slotted</span></div>
<p>Footer</p>
"""
SHOP_SHADOW = '<ul><li class="item">Durian</li></ul><slot></slot><button id="buy">Buy</button>'


async def test_query_dom_lists_matches_in_document_order_through_shadow_roots(
    tab: CdpSession, pages: str
) -> None:
    page = await _open(tab, pages, SHOP, SHOP_SHADOW)

    found = await dom.query_dom(page, ".item")

    assert found == {
        "total": 5,
        "truncated": False,
        "elements": [
            {
                "tag": "li",
                "id": None,
                "classes": ["item"],
                "text": "Apple",
                "attributes": {},
                "visible": True,
                "in_shadow_root": False,
                "selector": "body > ul > li:nth-of-type(1)",
            },
            {
                "tag": "li",
                "id": None,
                "classes": ["item"],
                "text": "Banana",
                "attributes": {"data-price": "3", "title": "yellow"},
                "visible": True,
                "in_shadow_root": False,
                "selector": "li:nth-of-type(2)",
            },
            {
                "tag": "li",
                "id": None,
                "classes": ["item"],
                "text": "Cherry",
                "attributes": {"hidden": ""},
                "visible": False,
                "in_shadow_root": False,
                "selector": "li:nth-of-type(3)",
            },
            {
                "tag": "li",
                "id": None,
                "classes": ["item"],
                "text": "Durian",
                "attributes": {},
                "visible": True,
                "in_shadow_root": True,
                "selector": "ul > li",
            },
            {
                "tag": "span",
                "id": None,
                "classes": ["item"],
                "text": "slotted",
                "attributes": {},
                "visible": True,
                "in_shadow_root": False,
                "selector": "span",
            },
        ],
    }
    # Each selector finds its element again (the shadow one is unique only in its own tree).
    for element, text in [(0, "Apple"), (1, "Banana"), (2, "Cherry"), (4, "slotted")]:
        assert await _text_of(tab, found["elements"][element]["selector"]) == text
    assert await _text_of(tab, "#buy") == "Buy"

    limited = await dom.query_dom(page, "li", limit=1)
    assert (limited["total"], limited["truncated"], len(limited["elements"])) == (4, True, 1)
    assert (await dom.query_dom(page, "#buy"))["elements"][0]["selector"] == "#buy"


async def test_query_dom_cuts_long_text_and_attributes_with_a_marker(
    tab: CdpSession, pages: str
) -> None:
    body = f'<p id="long" data-a="{"v" * 150}" a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11>{"w" * 130}</p>'
    page = await _open(tab, pages, body)

    [element] = (await dom.query_dom(page, "#long"))["elements"]

    assert element["text"] == "w" * 100 + "… [30 more chars]"
    assert element["attributes"] == {
        "data-a": "v" * 100 + "… [50 more chars]",
        **{f"a{i}": "" for i in range(1, 10)},
    }


async def test_count_elements_counts_shadow_roots_apart(tab: CdpSession, pages: str) -> None:
    page = await _open(tab, pages, SHOP, SHOP_SHADOW)

    assert await dom.count_elements(page, "li") == {"count": 4, "in_shadow_roots": 1}
    assert await dom.count_elements(page, "button") == {"count": 1, "in_shadow_roots": 1}
    assert await dom.count_elements(page, "table") == {"count": 0, "in_shadow_roots": 0}


async def test_a_selector_the_page_cannot_parse_is_a_javascript_error(
    tab: CdpSession, pages: str
) -> None:
    page = await _open(tab, pages, SHOP, SHOP_SHADOW)

    with pytest.raises(JavaScriptError, match="is not a valid selector"):
        await dom.query_dom(page, "li[")
    with pytest.raises(JavaScriptError, match="is not a valid selector"):
        await dom.count_elements(page, "::nope(")
    with pytest.raises(JavaScriptError, match="no element matches #missing"):
        await dom.get_visible_text(page, "#missing")
    with pytest.raises(ValueError, match="limit must be 0 or more"):
        await dom.query_dom(page, "li", limit=-1)


TEXT = """
<h1>Title</h1>
<p>First <span style="display:none">secret</span>line</p>
<div id="host"><span>slotted</span></div>
<div style="visibility:hidden">ghost</div>
<div id="after">After</div>
<div id="long">abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij</div>
"""
TEXT_SHADOW = '<p class="inner">Shadow text</p><slot></slot>'


async def test_visible_text_includes_shadow_trees_in_place_and_skips_hidden_text(
    tab: CdpSession, pages: str
) -> None:
    page = await _open(tab, pages, TEXT, TEXT_SHADOW)

    assert await dom.get_visible_text(page) == {
        "text": (
            "Title\n\nFirst line\n\n"
            "Shadow text\n\nslotted\n"
            "After\nabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"
        ),
        "truncated": False,
        "chars": 96,
    }
    assert await dom.get_visible_text(page, "#host") == {
        "text": "Shadow text\n\nslotted",
        "truncated": False,
        "chars": 20,
    }
    assert await dom.get_visible_text(page, "p.inner") == {
        "text": "Shadow text",
        "truncated": False,
        "chars": 11,
    }
    assert await dom.get_visible_text(page, "#long", max_chars=10) == {
        "text": "abcdefghij\n… [truncated: 40 more chars]",
        "truncated": True,
        "chars": 50,
    }


async def test_visible_text_of_a_hidden_element_is_empty(tab: CdpSession, pages: str) -> None:
    page = await _open(tab, pages, '<div id="wrap" style="display:none"><p id="x">gone</p></div>')

    assert await dom.get_visible_text(page, "#x") == {"text": "", "truncated": False, "chars": 0}


VISIBILITY = """
<style>body { margin: 0 } .at { position: absolute; left: 10px; width: 80px; height: 30px }</style>
<button id="ok" class="at" style="top: 10px">OK</button>
<div id="wrap" style="display: none"><span id="gone">gone</span></div>
<div id="ghost" class="at" style="top: 50px; visibility: hidden">ghost</div>
<div id="veil" class="at" style="top: 50px; left: 100px; visibility: hidden"><span id="veiled">veiled</span></div>
<div id="clear" class="at" style="top: 50px; left: 200px; opacity: 0"><span id="faded">faded</span></div>
<div id="empty" class="at" style="top: 50px; left: 300px; width: 0; height: 10px"></div>
<div id="list" class="at" style="top: 100px; left: 400px; height: 40px; overflow: auto">
  <div style="height: 200px"></div><div id="deep" style="width: 40px; height: 17px">in list</div>
</div>
<button id="under" class="at" style="top: 200px">under</button>
<div id="overlay" style="position: fixed; top: 180px; left: 0; width: 300px; height: 100px; z-index: 10"></div>
<div id="below" class="at" style="top: 3000px">far below</div>
<div class="at" style="top: 5000px"></div>
<div id="host" class="at" style="top: 60px; left: 500px"></div>
"""
VISIBILITY_SHADOW = '<button id="inner" style="width: 50px; height: 20px">in shadow</button>'


async def test_check_visibility_says_why_an_element_cannot_be_seen(
    tab: CdpSession, pages: str
) -> None:
    await _open(tab, pages, VISIBILITY, VISIBILITY_SHADOW)
    zero = {"x": 0, "y": 0, "width": 0, "height": 0}

    async def check(selector: str) -> dict[str, object]:
        return await dom.check_visibility(await _element(tab, selector))

    assert await check("#ok") == {
        "visible": True,
        "reason": None,
        "rendered": True,
        "in_viewport": True,
        "box": {"x": 10, "y": 10, "width": 80, "height": 30},
    }
    assert await check("#inner") == {
        "visible": True,
        "reason": None,
        "rendered": True,
        "in_viewport": True,
        "box": {"x": 500, "y": 60, "width": 50, "height": 20},
    }
    assert await check("#gone") == {
        "visible": False,
        "reason": "display:none on div#wrap",
        "rendered": False,
        "in_viewport": False,
        "box": zero,
    }
    assert (await check("#ghost"))["reason"] == "visibility:hidden on div#ghost"
    assert (await check("#veiled"))["reason"] == "visibility:hidden on div#veil"
    assert (await check("#faded"))["reason"] == "opacity:0 on div#clear"
    assert await check("#empty") == {
        "visible": False,
        "reason": "zero size (0x10)",
        "rendered": False,
        "in_viewport": False,
        "box": {"x": 300, "y": 50, "width": 0, "height": 10},
    }
    assert await check("#deep") == {
        "visible": False,
        "reason": "scrolled out of view inside div#list (scroll needed)",
        "rendered": True,
        "in_viewport": True,
        "box": {"x": 400, "y": 300, "width": 40, "height": 17},
    }
    assert await check("#under") == {
        "visible": False,
        "reason": "covered by #overlay at its centre",
        "rendered": True,
        "in_viewport": True,
        "box": {"x": 10, "y": 200, "width": 80, "height": 30},
    }
    assert await check("#below") == {
        "visible": False,
        "reason": "outside the viewport (scroll needed)",
        "rendered": True,
        "in_viewport": False,
        "box": {"x": 10, "y": 3000, "width": 80, "height": 30},
    }

    # Scrolled into view, the far element is seen.
    below = await _element(tab, "#below")
    await below.call("function() { this.scrollIntoView(); }")
    assert await dom.check_visibility(below) == {
        "visible": True,
        "reason": None,
        "rendered": True,
        "in_viewport": True,
        "box": {"x": 10, "y": 0, "width": 80, "height": 30},
    }


STATES = """
<input id="name" value="x">
<input id="ro" readonly value="y">
<input id="off" disabled>
<fieldset disabled><input id="inner"></fieldset>
<input type="checkbox" id="cb" checked>
<input type="radio" id="radio">
<select id="sel"><option id="o1">One</option><option id="o2" selected>Two</option></select>
<div id="edit" contenteditable="true">edit me</div>
<div role="switch" id="sw" aria-checked="false" aria-disabled="true">switch</div>
<div role="tab" id="tab1" aria-selected="true">Tab</div>
<div id="plain">plain</div>
<div id="host"></div>
<button id="far" style="margin-top: 3000px">far</button>
"""


async def test_check_element_state_reports_what_applies(tab: CdpSession, pages: str) -> None:
    await _open(tab, pages, STATES, '<input id="inside">')
    await tab.evaluate(
        "document.querySelector('#host').shadowRoot.querySelector('#inside').focus()"
    )

    async def state(selector: str) -> dict[str, object]:
        return await dom.check_element_state(await _element(tab, selector))

    base = {
        "attached": True,
        "visible": True,
        "enabled": True,
        "editable": None,
        "checked": None,
        "focused": False,
        "selected": None,
        "in_viewport": True,
    }
    assert await state("#name") == {**base, "editable": True}
    assert await state("#ro") == {**base, "editable": False}
    assert await state("#off") == {**base, "enabled": False, "editable": False}
    assert await state("#inner") == {**base, "enabled": False, "editable": False}
    assert await state("#cb") == {**base, "checked": True}
    assert await state("#radio") == {**base, "checked": False}
    assert await state("#sel") == {**base, "editable": True}
    assert await state("#o2") == {**base, "visible": False, "selected": True, "in_viewport": False}
    assert await state("#o1") == {**base, "visible": False, "selected": False, "in_viewport": False}
    assert await state("#edit") == {**base, "editable": True}
    assert await state("#sw") == {**base, "enabled": False, "checked": False}
    assert await state("#tab1") == {**base, "selected": True}
    assert await state("#plain") == base
    assert await state("#inside") == {**base, "editable": True, "focused": True}
    assert await state("#far") == {**base, "in_viewport": False}

    plain = await _element(tab, "#plain")
    await plain.call("function() { this.remove(); }")
    assert await dom.check_element_state(plain) == {
        **base,
        "attached": False,
        "visible": False,
        "in_viewport": False,
    }


async def test_get_attributes_adds_live_properties_and_masks_passwords(
    tab: CdpSession, pages: str
) -> None:
    body = (
        '<input id="pw" type="password" name="pw" value="secret" class="a b">'
        '<input type="checkbox" id="cb" checked>'
        '<select id="sel"><option id="o1" value="1">One</option><option id="o2">Two</option></select>'
        '<textarea id="ta">start</textarea>'
        f'<div id="plain" data-long="{"z" * 1200}" hidden>x</div>'
        '<button id="go" disabled>Go</button>'
    )
    await _open(tab, pages, body)
    await tab.evaluate(
        "document.querySelector('#cb').checked = false;"
        "document.querySelector('#ta').value = 'typed';"
        "document.querySelector('#o2').selected = true;"
    )

    async def attributes(selector: str) -> dict[str, object]:
        return await dom.get_attributes(await _element(tab, selector))

    assert await attributes("#pw") == {
        "tag": "input",
        "attributes": {
            "id": "pw",
            "type": "password",
            "name": "pw",
            "value": "••••",
            "class": "a b",
        },
        "value": "••••",
        "disabled": False,
    }
    assert await attributes("#cb") == {
        "tag": "input",
        "attributes": {"type": "checkbox", "id": "cb", "checked": ""},
        "value": "on",
        "checked": False,
        "disabled": False,
    }
    assert await attributes("#o1") == {
        "tag": "option",
        "attributes": {"id": "o1", "value": "1"},
        "value": "1",
        "disabled": False,
        "selected": False,
    }
    assert await attributes("#ta") == {
        "tag": "textarea",
        "attributes": {"id": "ta"},
        "value": "typed",
        "disabled": False,
    }
    assert await attributes("#plain") == {
        "tag": "div",
        "attributes": {"id": "plain", "data-long": "z" * 1000 + "… [200 more chars]", "hidden": ""},
    }
    assert await attributes("#go") == {
        "tag": "button",
        "attributes": {"id": "go", "disabled": ""},
        "value": "",
        "disabled": True,
    }


async def test_get_computed_styles_default_set_and_chosen_properties(
    tab: CdpSession, pages: str
) -> None:
    body = (
        '<div id="box" style="display: flex; width: 120px; height: 40px; opacity: 0.5; '
        "z-index: 3; position: relative; color: rgb(255, 0, 0); margin-top: 5px; "
        '--accent: blue; cursor: pointer">box</div>'
    )
    await _open(tab, pages, body)
    box = await _element(tab, "#box")

    assert await dom.get_computed_styles(box) == {
        "display": "flex",
        "visibility": "visible",
        "opacity": "0.5",
        "position": "relative",
        "z-index": "3",
        "width": "120px",
        "height": "40px",
        "color": "rgb(255, 0, 0)",
        "background-color": "rgba(0, 0, 0, 0)",
        "font-size": "16px",
        "font-weight": "400",
        "overflow": "visible",
        "pointer-events": "auto",
        "cursor": "pointer",
    }
    assert await dom.get_computed_styles(box, ["marginTop", "--accent", "no-such-thing"]) == {
        "marginTop": "5px",
        "--accent": "blue",
        "no-such-thing": "",
    }


META_HEAD = """
<meta charset="utf-8">
<title>Fruit shop</title>
<meta name="description" content="Fresh fruit, delivered">
<link rel="canonical" href="/shop">
<meta property="og:title" content="Fruit shop OG">
<meta property="og:image" content="https://example.test/a.png">
<meta property="og:image" content="https://example.test/b.png">
<meta name="twitter:card" content="summary">
<meta name="Twitter:Site" content="@fruit">
<meta name="viewport" content="width=device-width">
"""
META_BODY = """
<a href="/one">one</a><a href="/two">two</a><a name="anchor">no href</a>
<img alt="logo"><form></form><iframe></iframe>
<div id="host"></div>
"""


async def test_get_page_metadata(tab: CdpSession, pages: str) -> None:
    page = await _open(
        tab, pages, META_BODY, '<a href="/three">three</a><img alt="in shadow">', META_HEAD
    )
    await tab.evaluate("document.documentElement.lang = 'en'")

    assert await dom.get_page_metadata(page) == {
        "title": "Fruit shop",
        "url": f"{pages}/",
        "lang": "en",
        "charset": "UTF-8",
        "description": "Fresh fruit, delivered",
        "canonical": f"{pages}/shop",
        "og": {"title": "Fruit shop OG", "image": "https://example.test/a.png"},
        "twitter": {"card": "summary", "site": "@fruit"},
        "counts": {"links": 3, "images": 2, "forms": 1, "iframes": 1},
        "ready_state": "complete",
    }


ARIA = """
<header><nav aria-label="Main"><a href="/a">Home</a><a href="/b">About</a></nav></header>
<main>
  <h1>Shop</h1>
  <section aria-label="Filters">
    <h2>Filter <em>fruit</em></h2>
    <label for="q">Search</label><input id="q" type="search" value="pear">
    <label><input type="checkbox" checked> In stock</label>
    <select aria-label="Sort"><option>Price</option><option selected>Name</option></select>
    <button disabled>Apply</button>
  </section>
  <section>not a region</section>
  <img alt="Logo"><img alt="">
  <ul><li>One</li><li>Two</li></ul>
  <table><tr><th>Fruit</th><th>Price</th></tr><tr><td>Pear</td><td>2</td></tr></table>
  <div id="host"></div>
  <div role="dialog" aria-labelledby="dlg-title">
    <h3 id="dlg-title">Basket</h3>
    <div role="tablist"><div role="tab" aria-selected="true">Items</div></div>
  </div>
  <div style="display: none"><button>Hidden</button></div>
  <div aria-hidden="true"><button>Also hidden</button></div>
  <div contenteditable="true" aria-label="Notes">note</div>
</main>
<footer>© shop</footer>
"""
ARIA_SHADOW = '<button aria-expanded="false">Menu</button>'


async def test_aria_tree_reads_roles_and_names_from_the_dom(tab: CdpSession, pages: str) -> None:
    page = await _open(tab, pages, ARIA, ARIA_SHADOW)

    tree = await dom.get_filtered_aria_tree(page)

    assert [(n["depth"], n["role"], n["name"], n["states"]) for n in tree["nodes"]] == [
        (0, "banner", "", []),
        (1, "navigation", "Main", []),
        (2, "link", "Home", []),
        (2, "link", "About", []),
        (0, "main", "", []),
        (1, "heading", "Shop", []),
        (1, "region", "Filters", []),
        (2, "heading", "Filter fruit", []),
        (2, "searchbox", "Search", []),
        (2, "checkbox", "In stock", ["checked"]),
        (2, "combobox", "Sort", []),
        (2, "button", "Apply", ["disabled"]),
        (1, "img", "Logo", []),
        (1, "list", "", []),
        (2, "listitem", "One", []),
        (2, "listitem", "Two", []),
        (1, "table", "", []),
        (2, "row", "Fruit Price", []),
        (3, "columnheader", "Fruit", []),
        (3, "columnheader", "Price", []),
        (2, "row", "Pear 2", []),
        (3, "cell", "Pear", []),
        (3, "cell", "2", []),
        (1, "button", "Menu", ["collapsed"]),
        (1, "dialog", "Basket", []),
        (2, "heading", "Basket", []),
        (2, "tablist", "", []),
        (3, "tab", "Items", ["selected"]),
        (1, "textbox", "Notes", []),
        (0, "contentinfo", "", []),
    ]
    assert (tree["total"], tree["truncated"]) == (30, False)
    headings = [n for n in tree["nodes"] if n["role"] == "heading"]
    assert [(n["level"], n["selector"]) for n in headings] == [
        (1, "h1"),
        (2, "h2"),
        (3, "#dlg-title"),
    ]
    fields = {
        n["role"]: n.get("value") for n in tree["nodes"] if n["role"] in ("searchbox", "combobox")
    }
    assert fields == {"searchbox": "pear", "combobox": "Name"}


async def test_aria_tree_filters_by_role_and_name_and_nests_what_it_keeps(
    tab: CdpSession, pages: str
) -> None:
    page = await _open(tab, pages, ARIA, ARIA_SHADOW)

    buttons = await dom.get_filtered_aria_tree(page, roles=["button", "LINK"])
    assert buttons == {
        "nodes": [
            {
                "role": "link",
                "name": "Home",
                "depth": 0,
                "selector": "a:nth-of-type(1)",
                "states": [],
            },
            {
                "role": "link",
                "name": "About",
                "depth": 0,
                "selector": "a:nth-of-type(2)",
                "states": [],
            },
            {
                "role": "button",
                "name": "Apply",
                "depth": 0,
                "selector": "section:nth-of-type(1) > button",
                "states": ["disabled"],
            },
            {
                "role": "button",
                "name": "Menu",
                "depth": 0,
                "selector": "button",
                "states": ["collapsed"],
            },
        ],
        "total": 4,
        "truncated": False,
    }
    named = await dom.get_filtered_aria_tree(page, name="BASKET")
    assert [(n["depth"], n["role"]) for n in named["nodes"]] == [(0, "dialog"), (1, "heading")]
    shallow = await dom.get_filtered_aria_tree(
        page, roles=["main", "list", "listitem"], max_depth=2
    )
    assert [(n["depth"], n["role"]) for n in shallow["nodes"]] == [(0, "main"), (1, "list")]
    assert (shallow["total"], shallow["truncated"]) == (4, True)


FIND = """
<div id="card"><h2>Fresh pears</h2><p>Buy <b>fresh pears</b> today</p><button id="buy">Buy now</button></div>
<input placeholder="Search pears"><input value="pear jam"><button aria-label="Pear menu">≡</button>
<script>var pear = 1;</script>
<div id="host"></div>
<div style="display: none">pear hidden</div>
"""


async def test_find_by_text_keeps_the_innermost_matches(tab: CdpSession, pages: str) -> None:
    page = await _open(tab, pages, FIND, "<span>Pear of the day</span>")

    found = await dom.find_by_text(page, "PEAR")

    assert found == {
        "total": 7,
        "truncated": False,
        "elements": [
            {
                "tag": "h2",
                "text": "Fresh pears",
                "matched_by": "text",
                "selector": "h2",
                "visible": True,
            },
            {
                "tag": "b",
                "text": "fresh pears",
                "matched_by": "text",
                "selector": "b",
                "visible": True,
            },
            {
                "tag": "input",
                "text": "Search pears",
                "matched_by": "placeholder",
                "selector": "input:nth-of-type(1)",
                "visible": True,
            },
            {
                "tag": "input",
                "text": "pear jam",
                "matched_by": "value",
                "selector": "input:nth-of-type(2)",
                "visible": True,
            },
            {
                "tag": "button",
                "text": "Pear menu",
                "matched_by": "aria-label",
                "selector": "body > button",
                "visible": True,
            },
            {
                "tag": "span",
                "text": "Pear of the day",
                "matched_by": "text",
                "selector": "span",
                "visible": True,
            },
            {
                "tag": "div",
                "text": "pear hidden",
                "matched_by": "text",
                "selector": "div:nth-of-type(3)",
                "visible": False,
            },
        ],
    }
    exact = await dom.find_by_text(page, "  Buy now ", exact=True)
    assert [(e["tag"], e["selector"]) for e in exact["elements"]] == [("button", "#buy")]
    assert (await dom.find_by_text(page, "buy now", exact=True))["total"] == 0
    assert [
        e["tag"] for e in (await dom.find_by_text(page, "fresh pears", exact=True))["elements"]
    ] == ["b"]
    # Text spread over inline elements matches their common parent.
    spread = await dom.find_by_text(page, "buy fresh pears today")
    assert [(e["tag"], e["text"]) for e in spread["elements"]] == [("p", "Buy fresh pears today")]
    limited = await dom.find_by_text(page, "pear", limit=2)
    assert (limited["total"], limited["truncated"], len(limited["elements"])) == (7, True, 2)


FORMS = """
<form id="signup" name="signup" action="/submit" method="post">
  <label for="user">User name</label><input id="user" name="user" value="ada" required>
  <label>Email <input type="email" name="email" placeholder="you@example.com"></label>
  <input type="password" name="pw" value="secret" aria-label="Password">
  <input type="checkbox" name="news" id="news" checked><label for="news">Newsletter</label>
  <input type="radio" name="plan" value="free" aria-label="Free">
  <input type="radio" name="plan" value="pro" aria-label="Pro" checked>
  <select name="country"><option value="fr">France</option><option value="jp" selected>Japan</option></select>
  <select name="tags" multiple><option value="a" selected>A</option><option value="b">B</option><option value="c" selected>C</option></select>
  <textarea name="bio">Hello</textarea>
  <input type="hidden" name="token" value="t1">
  <input type="number" name="age" value="36" disabled>
  <input type="date" name="born" value="1815-12-10">
  <input type="range" name="level" value="7" min="0" max="10">
  <input type="file" name="avatar">
  <fieldset disabled><input name="locked" value="x"></fieldset>
  <button type="submit">Sign up</button><input type="submit" value="Go">
</form>
<input id="search" type="search" name="q" value="query">
<div id="host"></div>
"""
FORMS_SHADOW = '<form id="mini"><input name="code" value="42" aria-label="Code"></form>'


def _field(name: str, type_: str, value: str, **rest: object) -> dict[str, object]:
    return {
        "name": name,
        "id": None,
        "type": type_,
        "label": None,
        "value": value,
        "checked": None,
        "selected": None,
        "disabled": False,
        "required": False,
        **rest,
    }


async def test_get_form_values_reads_every_field_type(tab: CdpSession, pages: str) -> None:
    page = await _open(tab, pages, FORMS, FORMS_SHADOW)
    await tab.evaluate("document.querySelector('[name=bio]').value = 'Hello there'")

    values = await dom.get_form_values(page)

    signup = [
        _field("user", "text", "ada", id="user", label="User name", required=True),
        _field("email", "email", "", label="Email"),
        _field("pw", "password", "••••", label="Password"),
        _field("news", "checkbox", "on", id="news", label="Newsletter", checked=True),
        _field("plan", "radio", "free", label="Free", checked=False),
        _field("plan", "radio", "pro", label="Pro", checked=True),
        _field("country", "select-one", "jp", selected=[{"value": "jp", "text": "Japan"}]),
        _field(
            "tags",
            "select-multiple",
            "a",
            selected=[{"value": "a", "text": "A"}, {"value": "c", "text": "C"}],
        ),
        _field("bio", "textarea", "Hello there"),
        _field("token", "hidden", "t1"),
        _field("age", "number", "36", disabled=True),
        _field("born", "date", "1815-12-10"),
        _field("level", "range", "7"),
        _field("avatar", "file", ""),
        _field("locked", "text", "x", disabled=True),
    ]
    assert values == {
        "forms": [
            {
                "selector": "#signup",
                "id": "signup",
                "name": "signup",
                "action": f"{pages}/submit",
                "method": "post",
                "fields": signup,
            },
            {
                "selector": "#mini",
                "id": "mini",
                "name": None,
                "action": f"{pages}/",
                "method": "get",
                "fields": [_field("code", "text", "42", label="Code")],
            },
        ],
        "outside_forms": [_field("q", "search", "query", id="search")],
        "truncated": False,
    }
    assert await dom.get_form_values(page, "#mini") == {
        "forms": [values["forms"][1]],
        "outside_forms": [],
        "truncated": False,
    }


async def test_the_script_goes_once_per_document_and_elements_bring_it_along(
    tab: CdpSession, pages: str
) -> None:
    page = await _open(tab, pages, SHOP, SHOP_SHADOW)
    await dom.count_elements(page, "li")
    await dom.count_elements(page, "li")
    assert page.injections == 1

    # A new document: an element read injects the script itself, and page reads then find it.
    await _open(tab, pages, SHOP, SHOP_SHADOW)
    assert (await dom.get_attributes(await _element(tab, "#buy")))["tag"] == "button"
    assert await dom.count_elements(page, "li") == {"count": 4, "in_shadow_roots": 1}
    assert page.injections == 1


FRAME = (
    '<body style="margin: 0"><div id="framed" style="width: 50px; height: 20px">in frame</div>'
    '<div id="low" style="margin-top: 500px; width: 40px; height: 10px">low</div></body>'
)


async def test_element_reads_in_an_iframe_use_the_frames_own_viewport(
    tab: CdpSession, pages: str
) -> None:
    await _open(
        tab, pages, '<iframe style="position: absolute; top: 300px; height: 100px"></iframe>'
    )
    await tab.evaluate(
        "new Promise((resolve) => { const f = document.querySelector('iframe');"
        f" f.onload = resolve; f.srcdoc = {json.dumps(FRAME)}; }})",
        await_promise=True,
    )
    frame_document = "document.querySelector('iframe').contentDocument"
    made_in_top = await tab.send(
        "Runtime.evaluate", {"expression": f"{frame_document}.querySelector('#framed')"}
    )
    low = await tab.send(
        "Runtime.evaluate", {"expression": f"{frame_document}.querySelector('#low')"}
    )
    # What snapshot refs do: the node resolved into its own frame's context.
    described = await tab.send("DOM.describeNode", {"objectId": low["result"]["objectId"]})
    resolved = await tab.send(
        "DOM.resolveNode", {"backendNodeId": described["node"]["backendNodeId"]}
    )
    framed = Element(tab, made_in_top["result"]["objectId"], description="#framed")
    low_in_frame = Element(tab, resolved["object"]["objectId"], description="#low")

    assert await dom.check_visibility(framed) == {
        "visible": True,
        "reason": None,
        "rendered": True,
        "in_viewport": True,
        "box": {"x": 0, "y": 0, "width": 50, "height": 20},
    }
    assert await dom.check_visibility(low_in_frame) == {
        "visible": False,
        "reason": "outside the viewport (scroll needed)",
        "rendered": True,
        "in_viewport": False,
        "box": {"x": 0, "y": 520, "width": 40, "height": 10},
    }
    # The second element ran in the frame's own window, so the script went there too.
    assert await tab.evaluate(
        "[!!window.__bridgeDom, !!document.querySelector('iframe').contentWindow.__bridgeDom]"
    ) == [True, True]


async def test_the_ask_tools_dom_read_lists_query_dom_s_matches(
    tab: CdpSession, pages: str
) -> None:
    """One DOM-query path: get_page_dom (get_matching_html) finds what query_dom finds, in
    its order, a shadow tree right after its host (before, it listed shadow roots last)."""
    page = await _open(tab, pages, SHOP, SHOP_SHADOW)
    listed = await dom.query_dom(page, ".item")
    html = await dom.get_matching_html(page, ".item", 10_000)
    assert (html["total"], html["shown"]) == (listed["total"], 5)
    assert [i["inShadowRoot"] for i in html["items"]] == [
        e["in_shadow_root"] for e in listed["elements"]
    ]
    assert [i["inShadowRoot"] for i in html["items"]] == [False, False, False, True, False]
    assert html["items"][3]["html"] == '<li class="item">Durian</li>'
    cut = await dom.get_matching_html(page, ".item", 40)
    assert (cut["total"], cut["shown"]) == (5, 2)  # the budget is for all items together
    assert sum(len(i["html"]) for i in cut["items"]) <= 41
