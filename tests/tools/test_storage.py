"""The storage and pdf families in real Chromium with the extension, on the local site
(http://127.0.0.1:PORT; http://localhost:PORT is another site): cookies, web storage and
storage state of the current origin only, files only under an allowed folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge.errors import PathNotAllowed, StorageScopeRefused
from bridge.policy.files import FilePolicy
from bridge.tools.browsing import BrowserTools, ToolHub

pytestmark = pytest.mark.e2e


@pytest.fixture
def folder(hub: ToolHub, tmp_path: Path) -> Path:
    """The hub's allowed folder for this test: its working directory is tmp_path/work."""
    work = tmp_path / "work"
    work.mkdir()
    hub.files = FilePolicy.create(cwd=work)
    return work


def _other(site: str) -> str:
    return site.replace("127.0.0.1", "localhost")


async def _names(tools: BrowserTools) -> list[str]:
    return sorted(c["name"] for c in await tools.cookie_list())


async def test_cookies_of_the_current_page_only(tools: BrowserTools, site: str) -> None:
    # Another site's cookie, set by that site's own page: the client on 127.0.0.1 never sees
    # or deletes it.
    await tools.navigate(_other(site) + "/form")
    await tools.cookie_set("theirs", "keep-me")
    await tools.navigate(site + "/form")
    await tools.cookie_clear()
    await tools.cookie_set("sid", "s3cret")
    await tools.cookie_set("pref", "dark", path="/", same_site="Lax")
    assert await _names(tools) == ["pref", "sid"]
    sid = await tools.cookie_get("sid")
    assert sid is not None and sid["value"] == "s3cret" and sid["domain"] == "127.0.0.1"
    page_sees = await (await tools._state(None)).tab.evaluate("document.cookie")
    assert "sid=s3cret" in page_sees
    assert await tools.cookie_delete("sid") == 1
    assert await tools.cookie_get("sid") is None
    assert await tools.cookie_clear() == 1
    assert await _names(tools) == []
    await tools.navigate(_other(site) + "/form")
    assert await _names(tools) == ["theirs"]  # untouched by the clear on 127.0.0.1
    await tools.cookie_clear()


async def test_a_cookie_for_another_domain_is_refused(tools: BrowserTools, site: str) -> None:
    await tools.navigate(site + "/form")
    for domain in ("localhost", "evil.example", ".com"):
        with pytest.raises(StorageScopeRefused, match="is not the current page's"):
            await tools.cookie_set("planted", "x", domain=domain)
    await tools.navigate(_other(site) + "/form")
    assert "planted" not in await _names(tools)


async def test_local_and_session_storage_even_on_a_page_that_lies(
    tools: BrowserTools, site: str
) -> None:
    await tools.navigate(site + "/form")
    for area in ("local", "session"):
        await tools.web_storage(area, "clear")
        await tools.web_storage(area, "set", "token", f"{area}-1")
        await tools.web_storage(area, "set", "other", "2")
        assert await tools.web_storage(area, "get", "token") == f"{area}-1"
        assert await tools.web_storage(area, "get", "missing") is None
        await tools.web_storage(area, "delete", "other")
        assert await tools.web_storage(area, "list") == [{"name": "token", "value": f"{area}-1"}]
    state = await tools._state(None)
    # A hostile page replaces Storage's methods to hide its items and to read what the agent
    # writes: the tools work in an isolated world, where the page's replacements are not.
    await state.tab.evaluate(
        "window.__seen = [];"
        "Storage.prototype.getItem = function (k) { __seen.push(k); return 'lie'; };"
        "Storage.prototype.setItem = function (k, v) { __seen.push(k + '=' + v); };"
        "Object.defineProperty(Storage.prototype, 'length', { get: () => 0 });"
    )
    assert await tools.web_storage("local", "get", "token") == "local-1"
    await tools.web_storage("local", "set", "written", "by-agent")
    assert await tools.web_storage("local", "list") == [
        {"name": "token", "value": "local-1"},
        {"name": "written", "value": "by-agent"},
    ]
    assert await state.tab.evaluate("window.__seen") == []
    await tools.web_storage("local", "clear")
    await tools.web_storage("session", "clear")
    assert await tools.web_storage("local", "list") == []


async def test_storage_tools_refuse_a_page_without_an_origin(tools: BrowserTools) -> None:
    await tools.navigate("about:blank")
    with pytest.raises(StorageScopeRefused, match="no web origin"):
        await tools.cookie_list()
    with pytest.raises(StorageScopeRefused, match="no web origin"):
        await tools.web_storage("local", "list")


async def test_storage_state_saves_and_restores_the_current_origin(
    tools: BrowserTools, site: str, folder: Path
) -> None:
    await tools.navigate(site + "/form")
    await tools.cookie_clear()
    await tools.web_storage("local", "clear")
    await tools.cookie_set("sid", "s3cret")
    await tools.web_storage("local", "set", "theme", "dark")
    path, cookies, items = await tools.storage_state("states/app.json")
    assert path == folder / "states" / "app.json" and (cookies, items) == (1, 1)
    saved = json.loads(path.read_text())
    assert [c["name"] for c in saved["cookies"]] == ["sid"]
    origin = site.rstrip("/")
    assert saved["origins"] == [
        {"origin": origin, "localStorage": [{"name": "theme", "value": "dark"}]}
    ]
    # Changed meanwhile: restoring puts the saved state back (and clears what came since).
    await tools.cookie_set("later", "x")
    await tools.cookie_delete("sid")
    await tools.web_storage("local", "set", "theme", "light")
    await tools.web_storage("local", "set", "extra", "1")
    done = await tools.set_storage_state("states/app.json")
    assert done["cookies"] == 1 and done["local_storage"] == 1
    assert await _names(tools) == ["sid"]
    assert await tools.web_storage("local", "list") == [{"name": "theme", "value": "dark"}]
    await tools.cookie_clear()
    await tools.web_storage("local", "clear")


async def test_a_state_file_naming_another_origin_is_refused_and_nothing_changes(
    tools: BrowserTools, site: str, folder: Path
) -> None:
    await tools.navigate(site + "/form")
    await tools.cookie_clear()
    await tools.cookie_set("mine", "1")
    other = _other(site).rstrip("/")
    (folder / "planted.json").write_text(
        json.dumps(
            {
                "cookies": [
                    {"name": "ok", "value": "1", "domain": "127.0.0.1", "path": "/"},
                    {"name": "sess", "value": "attacker", "domain": "localhost", "path": "/"},
                ],
                "origins": [{"origin": other, "localStorage": [{"name": "a", "value": "b"}]}],
            }
        )
    )
    with pytest.raises(StorageScopeRefused) as caught:
        await tools.set_storage_state("planted.json")
    assert "'sess' of domain 'localhost'" in str(caught.value)
    assert f"origin '{other}'" in str(caught.value)
    assert await _names(tools) == ["mine"]  # nothing was cleared or set
    await tools.cookie_clear()


@pytest.mark.parametrize("name", ["../escaped.json", "/etc/bridge-state.json", "a\x00b.json"])
async def test_state_files_outside_the_allowed_folders_are_refused(
    tools: BrowserTools, site: str, folder: Path, name: str
) -> None:
    await tools.navigate(site + "/form")
    with pytest.raises(PathNotAllowed):
        await tools.storage_state(name)
    with pytest.raises(PathNotAllowed):
        await tools.set_storage_state(name)
    with pytest.raises(PathNotAllowed):
        await tools.pdf_save(name.replace(".json", ".pdf"))
    assert not (folder.parent / "escaped.json").exists()
    assert [p for p in folder.parent.rglob("*") if p.is_file()] == []


async def test_pdf_save_writes_the_page_under_the_allowed_folder(
    tools: BrowserTools, site: str, folder: Path
) -> None:
    await tools.navigate(site + "/form")
    path = await tools.pdf_save("form.pdf")
    assert path == folder / "form.pdf"
    assert path.read_bytes().startswith(b"%PDF-")
    again = await tools.pdf_save()  # Playwright's default name
    assert again.parent == folder and again.name.startswith("page-") and again.suffix == ".pdf"
