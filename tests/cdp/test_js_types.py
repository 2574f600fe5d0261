"""The in-page scripts (bridge/js) type-check: TypeScript's ``tsc`` with ``checkJs``, strict
(tests/node/tsconfig.json), over every script and its declarations (bridge/js/types.d.ts);
the scripts annotated throughout also with ``noImplicitAny`` (tests/node/tsconfig.strict.json).

These scripts run inside other people's pages, where a typo is a runtime error that only a
real page shows; the checker sees it first. TypeScript is one of the Node tools the tests
install (tests/node/package.json, ``npm ci`` in .ci/bootstrap.sh).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bridge.cdp.page_script import JS_DIR

NODE_DIR = Path(__file__).resolve().parents[1] / "node"
TSC = NODE_DIR / "node_modules" / "typescript" / "bin" / "tsc"
CONFIG = NODE_DIR / "tsconfig.json"
#: deep.js, actions.js and element_call.js: annotated throughout, and kept so.
STRICT = NODE_DIR / "tsconfig.strict.json"


@pytest.fixture(scope="module")
def node() -> str:
    node = shutil.which("node")
    if node is None or not TSC.is_file():
        pytest.fail(
            "TypeScript is not installed: run `bash .ci/bootstrap.sh --tests` "
            "(it installs Node.js when missing and runs npm ci in tests/node)",
            pytrace=False,
        )
    return node


def _tsc(node: str, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [node, str(TSC), "--project", str(config), "--pretty", "false"],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("config", [CONFIG, STRICT], ids=["all", "annotated"])
def test_every_in_page_script_type_checks(node: str, config: Path) -> None:
    done = _tsc(node, config)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_in_page_script_asks_for_the_check_itself() -> None:
    """``// @ts-check`` first: an editor checks the file too, with no project around it."""
    scripts = sorted(JS_DIR.glob("*.js"))
    assert {p.name for p in scripts} >= {"deep.js", "page.js", "dom.js", "actions.js"}
    unchecked = [
        p.name for p in scripts if not p.read_text(encoding="utf-8").startswith("// @ts-check\n")
    ]
    assert unchecked == []


def test_the_check_fails_on_a_type_error(node: str, tmp_path: Path) -> None:
    """The same project over a copy of the scripts, one of which calls deep.js wrongly."""
    copy = tmp_path / "js"
    shutil.copytree(JS_DIR, copy)
    broken = copy / "actions.js"
    text = broken.read_text(encoding="utf-8")
    wrong = "const hit = deepElementFromPoint(el.ownerDocument, x, y);"
    assert wrong in text
    # A string where deep.js declares a number: the kind of slip a page would only show live.
    broken.write_text(text.replace(wrong, wrong.replace(", x, y)", ", `${x}`, y)")), "utf-8")
    config = tmp_path / "tsconfig.json"
    settings = json.loads(CONFIG.read_text(encoding="utf-8"))
    settings["include"] = [str(copy / "*.js"), str(copy / "*.d.ts")]
    config.write_text(json.dumps(settings), encoding="utf-8")
    done = _tsc(node, config)
    assert done.returncode != 0
    assert "actions.js" in done.stdout and "error TS2345" in done.stdout, done.stdout
