"""The script builder: a script of bridge/js joined with deep.js inside one function (nothing
leaks into the page's globals), its version from its content and data, called by name."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from bridge.cdp.page_script import MISSING, SHARED, Script, script_file


def test_a_script_is_deep_js_and_the_file_inside_one_function() -> None:
    script = Script.load("actions.js", "__bridgeActions")
    assert script.declaration.startswith("function () {\n")
    assert script_file(SHARED).strip() in script.declaration
    assert script_file("actions.js").split("\n", 1)[1].strip()[:40] in script.declaration
    assert script.source == f"({script.declaration})()\n//# sourceURL=bridge/actions.js"
    assert "__BRIDGE_PAGE_VERSION__" not in script.source
    assert f"'{script.version}'" in script.source


def test_data_is_part_of_the_version() -> None:
    plain = Script.load("page.js", "__bridgePage", data={"__BRIDGE_PACKS__": "{}"})
    other = Script.load("page.js", "__bridgePage", data={"__BRIDGE_PACKS__": '{"x": 1}'})
    again = Script.load("page.js", "__bridgePage", data={"__BRIDGE_PACKS__": "{}"})
    assert plain.version == again.version != other.version
    assert "__BRIDGE_PACKS__" not in plain.source and '{"x": 1}' in other.source


def test_a_call_passes_json_and_says_when_the_script_is_missing() -> None:
    script = Script.load("actions.js", "__bridgeActions")
    call = script.call_expression("kind", "a 'quoted' \u2028 text", [1, None])
    assert json.dumps("a 'quoted' \u2028 text", ensure_ascii=False) in call
    assert f"'{MISSING}'" in call and "window.__bridgeActions" in call


def test_installing_defines_only_the_global() -> None:
    """In a bare JavaScript realm (Node): the script's global appears, none of deep.js's
    functions do, a second install keeps the first, and a call reaches the script."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("Node.js is needed: run `bash .ci/bootstrap.sh --tests`", pytrace=False)
    script = Script.load("actions.js", "__bridgeActions")
    program = f"""
globalThis.window = globalThis;
const first = eval({json.dumps(script.source)});
const api = window.__bridgeActions;
const second = eval({json.dumps(script.source)});
console.log(JSON.stringify({{
  first, second, same: api === window.__bridgeActions,
  leaked: ['deepQuery', 'shadowRoots', 'describe', 'isShadowRoot'].filter((n) => n in globalThis),
  kind: eval({json.dumps(script.call_expression("kind", {"tagName": "SELECT"}))}),
  missing: eval({json.dumps(Script.load("dom.js", "__bridgeDom").call_expression("pageHtml"))}),
}}));
"""
    done = subprocess.run(
        [node, "-e", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == {
        "first": script.version,
        "second": script.version,
        "same": True,
        "leaked": [],
        "kind": "select",
        "missing": MISSING,
    }
