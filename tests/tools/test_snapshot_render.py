"""The snapshot renderer, rule by rule, on small synthetic AX trees."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import pytest

from bridge.tools.snapshot_render import FrameTree, NodeNotInTree, RefTable, parse_ref, render

_backend_ids = itertools.count(1000)
AUTO = -1


@dataclass
class Spec:
    role: str
    name: str | None = None
    children: tuple[Spec, ...] = ()
    props: dict[str, Any] = field(default_factory=dict)
    value: Any = None
    ignored: bool = False
    backend: int | None = AUTO


def el(
    role: str,
    name: str | None = None,
    *children: Spec,
    value: Any = None,
    ignored: bool = False,
    backend: int | None = AUTO,
    **props: Any,
) -> Spec:
    return Spec(role, name, children, props, value, ignored, backend)


def txt(text: str) -> Spec:
    return el("StaticText", text)


def ax_nodes(root: Spec) -> list[dict[str, Any]]:
    """CDP-shaped nodes for a spec tree, in document order (as getFullAXTree lists them)."""
    out: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    ids = itertools.count(1)
    stack: list[tuple[Spec, str | None]] = [(root, None)]
    while stack:
        spec, parent = stack.pop()
        node: dict[str, Any] = {
            "nodeId": str(next(ids)),
            "ignored": spec.ignored,
            "role": {"type": "role", "value": spec.role},
            "childIds": [],
            "properties": [
                {"name": key, "value": {"type": "x", "value": val}}
                for key, val in spec.props.items()
            ],
        }
        if spec.name is not None:
            node["name"] = {"type": "computedString", "value": spec.name}
        if spec.value is not None:
            node["value"] = {"type": "string", "value": spec.value}
        backend = next(_backend_ids) if spec.backend == AUTO else spec.backend
        if backend is not None:
            node["backendDOMNodeId"] = backend
        if parent is not None:
            node["parentId"] = parent
            by_id[parent]["childIds"].append(node["nodeId"])
        out.append(node)
        by_id[node["nodeId"]] = node
        stack.extend((child, node["nodeId"]) for child in reversed(spec.children))
    return out


def page(*children: Spec) -> list[dict[str, Any]]:
    return ax_nodes(el("RootWebArea", "Page title", *children))


def show(*children: Spec) -> str:
    return render(FrameTree(page(*children)), RefTable())


def lines(*rows: str) -> str:
    return "\n".join(rows)


CASES: list[tuple[str, list[Spec], str]] = [
    ("empty page", [], ""),
    (
        "the example",
        [
            el("heading", "Orders", txt("Orders"), level=1),
            el("link", "Docs", txt("Docs"), url="https://example.test/docs"),
            el("textbox", "Email", value="alice@example.test", focused=True),
            el("checkbox", "Agree", checked="true"),
            el("button", "Send", txt("Send"), disabled=True),
            el("list", None, el("listitem", None, txt("First item"))),
            el("paragraph", None, txt("Some paragraph text"), backend=None),
        ],
        lines(
            '- heading "Orders" [level=1] [ref=e1]',
            '- link "Docs" [ref=e2] [url=https://example.test/docs]',
            '- textbox "Email" [ref=e3]: alice@example.test',
            '- checkbox "Agree" [checked] [ref=e4]',
            '- button "Send" [disabled] [ref=e5]',
            "- list [ref=e6]:",
            "  - listitem [ref=e7]: First item",
            "- paragraph: Some paragraph text",
        ),
    ),
    # --- hoisting
    (
        "unnamed generic, none, presentation are transparent",
        [
            el(
                "generic",
                None,
                el("none", None, el("button", "A")),
                el("presentation", None, el("button", "B")),
            )
        ],
        lines('- button "A" [ref=e1]', '- button "B" [ref=e2]'),
    ),
    (
        "a named generic is printed",
        [el("generic", "Card", el("button", "A"))],
        lines('- generic "Card" [ref=e1]:', '  - button "A" [ref=e2]'),
    ),
    (
        "ignored nodes vanish, their children are hoisted",
        [el("group", "Hidden", el("button", "A"), ignored=True), txt("x")],
        lines('- button "A" [ref=e1]', "- text: x"),
    ),
    (
        "ignored text is not shown",
        [el("StaticText", "aria-hidden", ignored=True), txt("shown")],
        "- text: shown",
    ),
    (
        "hoisting keeps the depth of the printed parent",
        [el("list", None, el("generic", None, el("generic", None, el("listitem", "One"))))],
        lines("- list [ref=e1]:", '  - listitem "One" [ref=e2]'),
    ),
    (
        "InlineTextBox and LineBreak are transparent even with a name",
        [el("paragraph", None, txt("a"), el("LineBreak", "\n"), txt("b"))],
        "- paragraph [ref=e1]: a b",
    ),
    (
        "a node without backend id gets no ref",
        [el("button", "Native", backend=None)],
        '- button "Native"',
    ),
    # --- states
    (
        "states in a fixed order, whatever order Chrome gives",
        [
            el(
                "treeitem",
                "T",
                selected=True,
                required=True,
                pressed="true",
                level=2,
                expanded=True,
                disabled=True,
                checked="true",
            )
        ],
        '- treeitem "T" [checked] [disabled] [expanded] [level=2] [pressed] [required] '
        "[selected] [ref=e1]",
    ),
    (
        "mixed checked and pressed",
        [el("checkbox", "C", checked="mixed"), el("button", "P", pressed="mixed")],
        lines('- checkbox "C" [checked=mixed] [ref=e1]', '- button "P" [pressed=mixed] [ref=e2]'),
    ),
    (
        "false states and focused print nothing",
        [
            el(
                "checkbox",
                "C",
                checked="false",
                disabled=False,
                expanded=False,
                focused=True,
                selected=False,
            )
        ],
        '- checkbox "C" [ref=e1]',
    ),
    # --- values
    (
        "value roles show their value",
        [
            el("searchbox", "Q", value="shoes"),
            el("combobox", "Size", value="M"),
            el("spinbutton", "N", value=3),
            el("slider", "Vol", value=50.0),
            el("textbox", "Empty", value=""),
        ],
        lines(
            '- searchbox "Q" [ref=e1]: shoes',
            '- combobox "Size" [ref=e2]: M',
            '- spinbutton "N" [ref=e3]: 3',
            '- slider "Vol" [ref=e4]: 50',
            '- textbox "Empty" [ref=e5]',
        ),
    ),
    (
        "other roles do not show a value",
        [el("button", "B", value="ignored")],
        '- button "B" [ref=e1]',
    ),
    (
        "a textbox's own text child repeating its value is dropped",
        [el("textbox", "Email", el("generic", None, txt("a@b.test")), value="a@b.test")],
        '- textbox "Email" [ref=e1]: a@b.test',
    ),
    (
        "a value node keeping children lists them under its value line",
        [el("combobox", "Size", el("listbox", None, el("option", "M", selected=True)), value="M")],
        lines(
            '- combobox "Size" [ref=e1]: M',
            "  - listbox [ref=e2]:",
            '    - option "M" [selected] [ref=e3]',
        ),
    ),
    (
        "multi-line values stay on one line",
        [el("textbox", "Note", value="line one\nline   two")],
        '- textbox "Note" [ref=e1]: line one line two',
    ),
    # --- urls
    (
        "a link's url follows its ref",
        [el("link", None, txt("Home"), url="https://a.test/")],
        "- link [ref=e1] [url=https://a.test/]: Home",
    ),
    (
        "url only on links",
        [el("image", "Logo", url="https://a.test/logo.png")],
        '- image "Logo" [ref=e1]',
    ),
    # --- inline and children
    (
        "a single text child prints inline",
        [el("listitem", None, txt("First item"))],
        "- listitem [ref=e1]: First item",
    ),
    (
        "text plus an element makes a block",
        [el("listitem", None, txt("Buy"), el("button", "Now"))],
        lines("- listitem [ref=e1]:", "  - text: Buy", '  - button "Now" [ref=e2]'),
    ),
    (
        "a lone element child makes a block",
        [el("navigation", "Main", el("link", "Home"))],
        lines('- navigation "Main" [ref=e1]:', '  - link "Home" [ref=e2]'),
    ),
    # --- text merging
    (
        "inline pieces merge without doubling spaces",
        [el("paragraph", None, txt("Hello "), txt("world"), txt("!"))],
        "- paragraph [ref=e1]: Hello world!",
    ),
    (
        "pieces from hoisted blocks get a space between them",
        [el("generic", None, txt("alpha")), el("generic", None, txt("beta"))],
        "- text: alpha beta",
    ),
    (
        "whitespace collapses",
        [txt("  many\n\n   spaces\there  ")],
        "- text: many spaces here",
    ),
    (
        "an element splits text runs",
        [txt("before"), el("button", "B"), txt("after")],
        lines("- text: before", '- button "B" [ref=e1]', "- text: after"),
    ),
    (
        "text equal to the parent's name is dropped",
        [el("button", "Send", txt(" Send "))],
        '- button "Send" [ref=e1]',
    ),
    (
        "merged text equal to the parent's name is dropped too",
        [el("link", "Read more", txt("Read "), txt("more"))],
        '- link "Read more" [ref=e1]',
    ),
    (
        "text differing from the name is kept",
        [el("link", "Docs", txt("Read the docs"))],
        '- link "Docs" [ref=e1]: Read the docs',
    ),
    (
        "text at the top is kept even if it equals the page title",
        [txt("Page title")],
        "- text: Page title",
    ),
    # --- names
    (
        "names are JSON-quoted",
        [el("button", 'Say "hi" \\ ünïcode')],
        '- button "Say \\"hi\\" \\\\ ünïcode" [ref=e1]',
    ),
    (
        "long names are cut at 200 characters",
        [el("button", "x" * 250)],
        '- button "' + "x" * 200 + '…" [ref=e1]',
    ),
    (
        "a name of 200 characters is kept whole",
        [el("button", "y" * 200)],
        '- button "' + "y" * 200 + '" [ref=e1]',
    ),
    (
        "whitespace in names collapses",
        [el("button", " Two\n words ")],
        '- button "Two words" [ref=e1]',
    ),
]


@pytest.mark.parametrize(
    ("children", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_render(children: list[Spec], expected: str) -> None:
    assert show(*children) == expected


def test_a_root_that_is_not_a_web_area_is_printed() -> None:
    nodes = ax_nodes(el("dialog", "Confirm", el("button", "OK")))
    assert render(FrameTree(nodes), RefTable()) == lines(
        '- dialog "Confirm" [ref=e1]:', '  - button "OK" [ref=e2]'
    )


def test_no_nodes_renders_nothing() -> None:
    assert render(FrameTree([]), RefTable()) == ""


def test_missing_children_are_skipped_and_cycles_do_not_hang() -> None:
    nodes = page(el("group", "G", el("button", "B")))
    group = next(n for n in nodes if n["role"]["value"] == "group")
    group["childIds"] += ["999", nodes[0]["nodeId"], group["nodeId"]]  # unknown, root, itself
    assert render(FrameTree(nodes), RefTable()) == lines(
        '- group "G" [ref=e1]:', '  - button "B" [ref=e2]'
    )


# --- iframes


def test_iframe_children_come_from_the_frame_tree_with_its_prefix() -> None:
    inner_most = FrameTree(page(el("link", "Deep", backend=7)), prefix="f2")
    inner = FrameTree(
        page(txt("frame text"), el("button", "Inside", backend=5), el("Iframe", backend=6)),
        prefix="f1",
        children={6: inner_most},
    )
    main = FrameTree(
        page(el("button", "Top", backend=5), el("Iframe", "Ads", backend=40)),
        children={40: inner},
    )
    refs = RefTable()
    assert render(main, refs) == lines(
        '- button "Top" [ref=e1]',
        '- iframe "Ads" [ref=e2]:',
        "  - text: frame text",
        '  - button "Inside" [ref=f1e1]',
        "  - iframe [ref=f1e2]:",
        '    - link "Deep" [ref=f2e1]',
    )
    # The same backend id in two frames is two nodes.
    assert refs.lookup("e1") == ("", 5)
    assert refs.lookup("f1e1") == ("f1", 5)
    assert refs.lookup("f2e1") == ("f2", 7)


def test_an_iframe_without_a_frame_tree_renders_its_own_children() -> None:
    main = FrameTree(page(el("Iframe", None, el("button", "Same process"), backend=9)))
    assert render(main, RefTable()) == lines(
        "- iframe [ref=e1]:", '  - button "Same process" [ref=e2]'
    )


def test_an_iframe_with_an_empty_frame_tree_has_no_children() -> None:
    main = FrameTree(page(el("Iframe", "Empty", backend=9)), children={9: FrameTree([], "f1")})
    assert render(main, RefTable()) == '- iframe "Empty" [ref=e1]'


# --- refs


def test_refs_are_stable_across_snapshots() -> None:
    refs = RefTable()
    before = page(el("button", "One", backend=1), el("button", "Two", backend=2))
    assert render(FrameTree(before), refs) == lines(
        '- button "One" [ref=e1]', '- button "Two" [ref=e2]'
    )
    after = page(
        el("button", "One", backend=1),
        el("button", "New", backend=3),
        el("button", "Two", backend=2),
    )
    assert render(FrameTree(after), refs) == lines(
        '- button "One" [ref=e1]', '- button "New" [ref=e3]', '- button "Two" [ref=e2]'
    )
    assert refs.lookup("e3") == ("", 3)


def test_ref_table() -> None:
    refs = RefTable()
    assert refs.ref_for("", 10) == "e1"
    assert refs.ref_for("f1", 10) == "f1e1"
    assert refs.ref_for("", 11) == "e2"
    assert refs.ref_for("", 10) == "e1"
    assert len(refs) == 3
    refs.forget("e1")
    refs.forget("e1")  # twice is fine
    refs.forget("nonsense")
    assert refs.lookup("e1") is None
    assert refs.ref_for("", 10) == "e3", "numbers are not reused after forget"
    assert refs.lookup("e3") == ("", 10)
    assert refs.lookup("e9") is None


@pytest.mark.parametrize("prefix", ["x", "f0", "F1", "f", "e1"])
def test_ref_table_rejects_bad_prefixes(prefix: str) -> None:
    with pytest.raises(ValueError, match="prefix"):
        RefTable().ref_for(prefix, 1)


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("e1", ("", 1)),
        ("e12", ("", 12)),
        ("e0", ("", 0)),
        ("f1e4", ("f1", 4)),
        ("f12e3", ("f12", 3)),
        (" e5 ", ("", 5)),
        ("#id", None),
        ("button.e2", None),
        ("E1", None),
        ("e-1", None),
        ("e", None),
        ("e01", None),
        ("f0e1", None),
        ("f1", None),
        ("fe1", None),
        ("e1 e2", None),
        ("", None),
        ("e1.x", None),
    ],
)
def test_parse_ref(text: str, parsed: tuple[str, int] | None) -> None:
    assert parse_ref(text) == parsed


# --- size


def test_max_chars_cuts_lines_and_says_how_many() -> None:
    children = [el("button", f"Button {i:02d}", backend=i + 1) for i in range(20)]
    full = show(*children).split("\n")
    assert len(full) == 20
    out = render(FrameTree(page(*children)), RefTable(), max_chars=200).split("\n")
    assert len("\n".join(out)) <= 200
    kept = out[:-1]
    assert kept == full[: len(kept)]
    assert 0 < len(kept) < 20
    assert out[-1] == (
        f"- … ({20 - len(kept)} more lines not shown; use a selector-based tool or scroll)"
    )


def test_max_chars_that_fits_changes_nothing() -> None:
    children = [el("button", "A", backend=1), el("button", "B", backend=2)]
    text = show(*children)
    assert render(FrameTree(page(*children)), RefTable(), max_chars=len(text)) == text


def test_max_chars_too_small_for_any_line_leaves_the_footer() -> None:
    out = render(FrameTree(page(el("button", "A"))), RefTable(), max_chars=5)
    assert out == "- … (1 more lines not shown; use a selector-based tool or scroll)"


def _chain(depth: int, role: str) -> list[dict[str, Any]]:
    """Root -> ``depth`` nested ``role`` nodes -> a text leaf, built without recursion."""
    nodes: list[dict[str, Any]] = [
        {"nodeId": "0", "ignored": False, "role": {"value": "RootWebArea"}, "childIds": ["1"]}
    ]
    for i in range(1, depth + 1):
        nodes.append(
            {
                "nodeId": str(i),
                "parentId": str(i - 1),
                "ignored": False,
                "role": {"value": role},
                "childIds": [str(i + 1)],
                "backendDOMNodeId": i,
            }
        )
    nodes.append(
        {
            "nodeId": str(depth + 1),
            "parentId": str(depth),
            "ignored": False,
            "role": {"value": "StaticText"},
            "name": {"value": "bottom"},
            "childIds": [],
        }
    )
    return nodes


def test_a_deep_tree_renders_without_recursion() -> None:
    out = render(FrameTree(_chain(3000, "group")), RefTable()).split("\n")
    assert len(out) == 3000
    assert out[0] == "- group [ref=e1]:"
    assert out[-1] == "  " * 2999 + "- group [ref=e3000]: bottom"


def test_a_deep_chain_of_transparent_nodes_hoists_to_the_top() -> None:
    assert render(FrameTree(_chain(3000, "generic")), RefTable()) == "- text: bottom"


def test_ten_thousand_nodes() -> None:
    children = [
        el("list", f"L{i}", *(el("listitem", None, txt(f"item {i}.{j}")) for j in range(50)))
        for i in range(100)
    ]
    nodes = page(*children)
    assert len(nodes) > 10_000
    out = render(FrameTree(nodes), RefTable()).split("\n")
    assert len(out) == 100 * 51
    assert out[-1] == "  - listitem [ref=e5100]: item 99.49"


# --- a partial render (browser_snapshot target=…)


def _framed() -> FrameTree:
    inner = FrameTree(page(el("list", None, el("listitem", "One", backend=8), backend=7)), "f1")
    return FrameTree(
        page(
            el("button", "Top", backend=5),
            el("navigation", "Menu", el("link", "Home", backend=11), backend=10),
            el("generic", None, el("button", "Hoisted", backend=21), backend=20),
            el("Iframe", "Ads", backend=40),
        ),
        children={40: inner},
    )


def test_root_renders_only_that_subtree_with_the_same_refs() -> None:
    refs = RefTable()
    whole = render(_framed(), refs)
    part = render(_framed(), refs, root=("", 10))
    assert part == lines('- navigation "Menu" [ref=e2]:', '  - link "Home" [ref=e3]')
    assert part in whole  # the same lines, the same refs as the whole page's


def test_root_in_an_iframe_and_a_transparent_root() -> None:
    refs = RefTable()
    assert render(_framed(), refs, root=("f1", 7)) == lines(
        "- list [ref=f1e1]:", '  - listitem "One" [ref=f1e2]'
    )
    # A node that prints nothing: its printed children stand in its place.
    assert render(_framed(), refs, root=("", 20)) == '- button "Hoisted" [ref=e1]'


def test_root_not_in_the_tree_is_an_error() -> None:
    with pytest.raises(NodeNotInTree):
        render(_framed(), RefTable(), root=("", 999))
    with pytest.raises(NodeNotInTree):  # backend 7 exists, but in frame f1, not the main one
        render(_framed(), RefTable(), root=("", 7))
