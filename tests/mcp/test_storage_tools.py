"""The storage and pdf groups over MCP (in process): playwright-mcp's names and parameters,
what a client reads, and the refusals as tool errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bridge.app.facade import Bridge
from bridge.mcp.server import build_server
from bridge.policy.files import FilePolicy
from tests.tools.site import serve

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    yield from serve()


def _text(result: Any) -> str:
    assert not result.is_error, result.content[0].text
    return str(result.content[0].text)


async def test_storage_and_pdf_tools_over_mcp(bridge: Bridge, site: str, tmp_path: Path) -> None:
    bridge.tools.files = FilePolicy.create(cwd=tmp_path)
    server = build_server(lambda: bridge, groups=("browser", "storage", "pdf"))
    async with Client(server) as client:
        call = client.call_tool
        _text(await call("browser_navigate", {"url": f"{site}/form"}))
        _text(await call("browser_cookie_clear", {}))
        set_text = _text(
            await call(
                "browser_cookie_set",
                {"name": "sid", "value": "v1", "path": "/", "httpOnly": True, "sameSite": "Lax"},
            )
        )
        assert "Cookie 'sid' set" in set_text
        assert _text(await call("browser_cookie_list", {})) == (
            "sid=v1 (domain: 127.0.0.1, path: /)"
        )
        got = _text(await call("browser_cookie_get", {"name": "sid"}))
        assert "httpOnly: true" in got and "sameSite: Lax" in got
        refused = await call("browser_cookie_set", {"name": "x", "value": "y", "domain": "a.test"})
        assert refused.is_error and "[storage_scope]" in refused.content[0].text
        _text(await call("browser_localstorage_set", {"key": "k", "value": "v"}))
        assert _text(await call("browser_localstorage_get", {"key": "k"})) == "k=v"
        assert "not found" in _text(await call("browser_sessionstorage_get", {"key": "k"}))
        saved = await call("browser_storage_state", {"filename": "state.json"})
        path = Path(saved.structured_content["path"])
        assert path == tmp_path / "state.json"
        assert json.loads(path.read_text())["cookies"][0]["name"] == "sid"
        _text(await call("browser_localstorage_clear", {}))
        _text(await call("browser_cookie_delete", {"name": "sid"}))
        restored = _text(await call("browser_set_storage_state", {"filename": "state.json"}))
        assert "1 cookie(s), 1 localStorage item(s)" in restored
        assert _text(await call("browser_localstorage_list", {})) == "k=v"
        outside = await call("browser_storage_state", {"filename": "../out.json"})
        assert outside.is_error and "[path_not_allowed]" in outside.content[0].text
        pdf = await call("browser_pdf_save", {"filename": "page.pdf"})
        assert Path(pdf.structured_content["path"]).read_bytes().startswith(b"%PDF-")
        _text(await call("browser_cookie_clear", {}))
        _text(await call("browser_localstorage_clear", {}))
