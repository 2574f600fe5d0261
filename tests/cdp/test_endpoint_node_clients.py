"""The DevTools endpoint with the Node clients the README names: Puppeteer
(``puppeteer.connect``) and Playwright for Node (``connectOverCDP`` by HTTP URL and header),
each a real Node process through the extension in real Chromium.

The clients live in tests/node (installed by ``.ci/bootstrap.sh --tests`` with ``npm ci``; no browser
download: they connect).
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bridge.app.runtime import Runtime
from bridge.cdp.browser import Browser
from bridge.waiting import scaled
from tests.tools.site import serve

pytestmark = pytest.mark.e2e

NODE_DIR = Path(__file__).resolve().parents[1] / "node"


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    yield from serve()


@pytest.fixture(scope="module")
def node() -> str:
    node = shutil.which("node")
    if node is None or not (NODE_DIR / "node_modules").is_dir():
        pytest.fail(
            "the Node clients are not installed: run `bash .ci/bootstrap.sh --tests` "
            "(it installs Node.js when missing and runs npm ci in tests/node)",
            pytrace=False,
        )
    return node


async def _run(node: str, script: str, *args: str) -> dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        node,
        str(NODE_DIR / script),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), scaled(120.0))
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode == 0, err.decode(errors="replace")
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return result


async def test_puppeteer_connects_and_drives_a_page(
    node: str, bridge_cdp_url: str, extension_link: Browser, site: str
) -> None:
    before = {t.tab_id for t in await extension_link.list_tabs()}
    seen = await _run(node, "puppeteer_client.mjs", bridge_cdp_url, site)
    assert seen["existing"] >= 1  # the tabs already open are listed, as in a real browser
    assert json.loads(seen["out"])["name"] == "Ada"
    assert seen["shotChars"] > 1000 and seen["cdp"] == 42
    assert re.match(r"(Headless)?Chrome/\d+\.", seen["version"])
    assert {t.tab_id for t in await extension_link.list_tabs()} == before  # page.close()


async def test_playwright_for_node_connects_by_http_url_and_header(
    node: str, bridge_cdp_url: str, bridge_runtime: Runtime, site: str
) -> None:
    token = bridge_cdp_url.rpartition("token=")[2]
    seen = await _run(node, "playwright_client.mjs", bridge_runtime.cdp_http_url, token, site)
    assert json.loads(seen["out"])["name"] == "Grace"
