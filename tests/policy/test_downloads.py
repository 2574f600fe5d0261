"""Downloads copied for DevTools clients (bridge.policy.downloads): the checks as a table, the
copy against swaps and planted links, and the endpoint seam with a forged extension.

The attacker is a local program speaking the relay protocol in the extension's place (the
relay only checks the ``Origin`` header, which any program can send): it announces downloads
with hostile guids and names files it wants copied. The CDP client is an honest one (as
Playwright would be) that asked for downloads by guid. After each attack the file system is
compared whole: nothing may appear anywhere but the honest copy in the client's directory.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Any

import pytest
import pytest_asyncio
from websockets.asyncio.client import ClientConnection, connect

from bridge.cdp.browser import Browser
from bridge.cdp.endpoint import CdpEndpoint
from bridge.link.relay import Relay
from bridge.policy.downloads import (
    CLOCK_SLACK,
    DownloadRefused,
    DownloadStart,
    SourceFacts,
    copy_download,
    download_target,
    source_facts,
)
from bridge.waiting import scaled
from bridge.wire import protocol, trust
from bridge.wire.extension import DEFAULT_ORIGIN
from tests.raw_cdp import RawCdp, raw_cdp

GUID = "0f8fad5b-d9cb-469f-a165-70867728950e"
NOW = 1_700_000_000.0
START = DownloadStart("https://example.com/report.csv", "report.csv", NOW)
BROWSER_DIR = PurePath("/home/p/.profile/Downloads")
GOOD = SourceFacts(
    path=BROWSER_DIR / "report.csv",
    folder=BROWSER_DIR,
    mode=stat.S_IFREG | 0o644,
    mtime=NOW + 1,
    device=1,
    inode=2,
)


# -- download_target: the checks, as a table ----------------------------------------------

ACCEPTED = [
    pytest.param({}, "/tmp/pw/" + GUID, id="chrome-s-own-download"),
    pytest.param({"guid": GUID.upper()}, "/tmp/pw/" + GUID.upper(), id="upper-case-guid"),
    pytest.param({"browser_dir": None}, "/tmp/pw/" + GUID, id="browser-dir-unknown"),
    pytest.param(
        {"source": replace(GOOD, path=BROWSER_DIR / "report (1).csv")},
        "/tmp/pw/" + GUID,
        id="name-taken-so-chrome-numbered-it",
    ),
    pytest.param(
        {
            "start": replace(START, name="a.tar.gz"),
            "source": replace(GOOD, path=BROWSER_DIR / "a (2).tar.gz"),
        },
        "/tmp/pw/" + GUID,
        id="numbered-before-a-double-extension",
    ),
    pytest.param(
        {"source": replace(GOOD, mtime=NOW - CLOCK_SLACK + 0.5)},
        "/tmp/pw/" + GUID,
        id="written-just-before-the-event-arrived",
    ),
    pytest.param({"client_dir": "/tmp/pw/"}, "/tmp/pw/" + GUID, id="client-dir-trailing-slash"),
]

REFUSED = [
    pytest.param({"guid": "/home/p/.bashrc"}, "not a UUID", id="absolute-guid"),
    pytest.param({"guid": "../../.bashrc"}, "not a UUID", id="dotdot-guid"),
    pytest.param({"guid": ".."}, "not a UUID", id="dotdot"),
    pytest.param({"guid": ""}, "not a UUID", id="empty-guid"),
    pytest.param({"guid": None}, "not a UUID", id="no-guid"),
    pytest.param({"guid": GUID + "/../x"}, "not a UUID", id="uuid-then-dotdot"),
    pytest.param({"guid": GUID + "\n"}, "not a UUID", id="uuid-then-newline"),
    pytest.param({"guid": GUID.replace("-", "")}, "not a UUID", id="uuid-without-dashes"),
    pytest.param({"client_dir": "relative/dir"}, "not absolute", id="relative-client-dir"),
    pytest.param({"start": None}, "no Page.downloadWillBegin", id="never-announced"),
    pytest.param(
        {"source": replace(GOOD, path=PurePath("report.csv"))}, "not an absolute", id="rel-source"
    ),
    pytest.param(
        {"source": replace(GOOD, mode=stat.S_IFLNK | 0o777)}, "is a symlink", id="symlink-source"
    ),
    pytest.param(
        {"source": replace(GOOD, mode=stat.S_IFDIR | 0o755)}, "not a regular file", id="dir-source"
    ),
    pytest.param(
        {"source": replace(GOOD, mode=stat.S_IFIFO | 0o644)}, "not a regular file", id="fifo"
    ),
    pytest.param(
        {"source": replace(GOOD, path=PurePath("/home/p/report.csv"), folder=PurePath("/home/p"))},
        "not in the browser's download directory",
        id="source-outside-the-download-dir",
    ),
    pytest.param(
        {"source": replace(GOOD, folder=BROWSER_DIR / "sub")},
        "not in the browser's download directory",
        id="source-in-a-subfolder",
    ),
    pytest.param(
        {"source": replace(GOOD, path=BROWSER_DIR / "id_ed25519")},
        "not named as the download was announced",
        id="another-name",
    ),
    pytest.param(
        {"source": replace(GOOD, path=BROWSER_DIR / "report (x).csv")},
        "not named as the download was announced",
        id="not-a-number",
    ),
    pytest.param(
        {"start": replace(START, name=""), "source": replace(GOOD, path=BROWSER_DIR / "x")},
        "not named as the download was announced",
        id="no-name-announced",
    ),
    pytest.param(
        {"source": replace(GOOD, mtime=NOW - CLOCK_SLACK - 1)},
        "before the download began",
        id="an-old-file",
    ),
    pytest.param(
        {"browser_dir": None, "source": replace(GOOD, mtime=NOW - 86_400)},
        "before the download began",
        id="old-file-browser-dir-unknown",
    ),
    pytest.param(
        {"browser_dir": None, "source": replace(GOOD, mode=stat.S_IFLNK | 0o777)},
        "is a symlink",
        id="symlink-browser-dir-unknown",
    ),
]


def _target(**given: Any) -> Path:
    args: dict[str, Any] = {
        "guid": GUID,
        "client_dir": "/tmp/pw",
        "start": START,
        "source": GOOD,
        "browser_dir": BROWSER_DIR,
    }
    args.update(given)
    guid = args.pop("guid")
    return download_target(guid, **args)


@pytest.mark.parametrize(("given", "expected"), ACCEPTED)
def test_a_download_chrome_made_is_copied_to_its_guid(given: dict[str, Any], expected: str) -> None:
    assert _target(**given) == Path(expected)


@pytest.mark.parametrize(("given", "reason"), REFUSED)
def test_anything_else_is_refused_with_the_reason(given: dict[str, Any], reason: str) -> None:
    with pytest.raises(DownloadRefused, match=reason) as refused:
        _target(**given)
    assert refused.value.code == "download_not_copied"


# -- source_facts and copy_download: the file system -----------------------------------------


def test_source_facts_see_a_symlink_not_what_it_points_to(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s")
    link = tmp_path / "report.csv"
    link.symlink_to(secret)
    facts = source_facts(str(link))
    assert stat.S_ISLNK(facts.mode) and facts.folder == tmp_path.resolve()
    with pytest.raises(DownloadRefused, match="not an absolute path"):
        source_facts("report.csv")


def test_a_file_swapped_after_the_check_is_not_copied(tmp_path: Path) -> None:
    checked = tmp_path / "report.csv"
    checked.write_text("honest")
    facts = source_facts(str(checked))
    secret = tmp_path / "secret"
    secret.write_text("secret")
    checked.unlink()
    checked.symlink_to(secret)  # swapped for a link between the check and the copy
    with pytest.raises(DownloadRefused, match="cannot be opened"):
        copy_download(facts, tmp_path / "out" / GUID)
    os.replace(secret, checked)  # swapped for another file
    with pytest.raises(DownloadRefused, match="changed while checked"):
        copy_download(facts, tmp_path / "out" / GUID)
    assert not (tmp_path / "out" / GUID).exists()


def test_a_link_planted_at_the_target_is_replaced_not_written_through(tmp_path: Path) -> None:
    source = tmp_path / "report.csv"
    source.write_text("a,b\n")
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    client_dir = tmp_path / "client"
    client_dir.mkdir()
    (client_dir / GUID).symlink_to(victim)
    copy_download(source_facts(str(source)), client_dir / GUID)
    assert victim.read_text() == "untouched"
    assert not (client_dir / GUID).is_symlink() and (client_dir / GUID).read_text() == "a,b\n"
    assert sorted(p.name for p in client_dir.iterdir()) == [GUID]  # no temporary left


# -- the endpoint seam: a forged extension feeds hostile events ------------------------------

TOKEN = "the-right-token"
TAB = 7
TARGET = "TARGET-7"
PAGE = "https://example.com/"


def _free_port() -> int:
    """Outside the relay range the real extension scans: no browser links to this relay."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ForgedExtension:
    """A link that speaks the relay protocol as if it were the extension and answers the
    relay's commands and sends whatever events it likes. Since the trust handshake an
    impostor cannot link at all (tests/reliability/test_trust.py); this one holds the secret,
    as a compromised extension would: the endpoint's checks of what a link reports are the
    defence behind the handshake."""

    relay: Relay
    #: The ``path`` its ``downloadInfo`` replies name: the file it wants copied.
    reported_path: str = ""
    ws: ClientConnection | None = None
    _serving: asyncio.Task[None] | None = None
    asked: list[str] = field(default_factory=list)

    async def __aenter__(self) -> ForgedExtension:
        self.ws = await connect(self.relay.url, origin=DEFAULT_ORIGIN, proxy=None)  # type: ignore[arg-type]
        nonce = trust.new_nonce()
        hello = {"protocolVersion": protocol.PROTOCOL_VERSION, "nonce": nonce}
        await self.ws.send(json.dumps({"method": "hello", "params": hello}))
        challenge = json.loads(await self.ws.recv())["params"]
        proof = trust.extension_proof(self.relay.secret, nonce, challenge["nonce"], self.relay.port)
        prove = {"proof": proof, "instanceId": "forged"}
        await self.ws.send(json.dumps({"method": "prove", "params": prove}))
        assert json.loads(await self.ws.recv())["method"] == "welcome"
        self._serving = asyncio.ensure_future(self._serve())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.ws is not None and self._serving is not None
        await self.ws.close()
        self._serving.cancel()

    async def _serve(self) -> None:
        assert self.ws is not None
        async for frame in self.ws:
            decoded = json.loads(frame)
            for message in decoded if isinstance(decoded, list) else [decoded]:
                if isinstance(message.get("id"), int) and "method" in message:
                    result = self._answer(message["method"], message.get("params") or {})
                    await self.ws.send(json.dumps({"id": message["id"], "result": result}))

    def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(method)
        if method == "listTabs":
            tab = {"tabId": TAB, "url": PAGE, "title": "x", "active": True, "targetId": TARGET}
            return {"tabs": [tab]}
        if method == "attachTab":
            return {"tabId": TAB, "url": PAGE, "reused": False}
        if method == "downloadInfo":
            return {"path": self.reported_path, "state": "complete"}
        if method == "cdpCommand" and params.get("method") == "Page.getNavigationHistory":
            return {"currentIndex": 0, "entries": [{"id": 1, "url": PAGE}]}
        return {}

    async def download(self, guid: str, name: str = "report.csv") -> None:
        """Announce a download and its end, as Chrome's events through the extension."""
        begin = {"guid": guid, "url": PAGE + name, "suggestedFilename": name, "frameId": TARGET}
        await self._cdp_event("Page.downloadWillBegin", begin)
        await self._cdp_event("Page.downloadProgress", {"guid": guid, "state": "completed"})

    async def _cdp_event(self, method: str, params: dict[str, Any]) -> None:
        assert self.ws is not None
        event = {"tabId": TAB, "method": method, "params": params}
        await self.ws.send(json.dumps({"method": "cdpEvent", "params": event}))


@dataclass
class Scene:
    root: Path  # everything the attack could reach lives under it
    browser_dir: Path  # where Chrome saves (the launched profile's Downloads)
    client_dir: Path  # the client's downloadPath
    extension: ForgedExtension
    client: RawCdp

    def tree(self) -> dict[str, bytes | str]:
        """Every path under root: a file's bytes, a link's target, a directory's mark."""
        found: dict[str, bytes | str] = {}
        for path in sorted(self.root.rglob("*")):
            key = str(path.relative_to(self.root))
            if path.is_symlink():
                found[key] = "-> " + os.readlink(path)
            elif path.is_dir():
                found[key] = "dir"
            else:
                found[key] = path.read_bytes()
        return found

    async def progress(self, guid: str) -> str:
        """The state the client is told a download ended in (Browser.downloadProgress)."""
        event = await self.client.next_event(
            lambda e: (
                e.get("method") == "Browser.downloadProgress" and e["params"].get("guid") == guid
            )
        )
        return str(event["params"]["state"])

    async def honest_download(self) -> str:
        """A download as Chrome makes it, completed and copied: proof that the seam works
        and that everything sent before it has been dealt with (events are handled in
        order). Its guid."""
        guid = str(uuid.uuid4())
        saved = self.browser_dir / "honest.csv"
        saved.write_bytes(b"a,b\n1,2\n")
        self.extension.reported_path = str(saved)
        await self.extension.download(guid, "honest.csv")
        assert await self.progress(guid) == "completed"
        assert (self.client_dir / guid).read_bytes() == b"a,b\n1,2\n"
        saved.unlink()
        (self.client_dir / guid).unlink()
        return guid


async def _scene(root: Path, *, browser_dir_known: bool) -> AsyncIterator[Scene]:
    browser_dir, client_dir, home = root / "browser-downloads", root / "client", root / "home"
    for folder in (browser_dir, client_dir, home):
        folder.mkdir()
    (home / ".bashrc").write_text("# the person's\n")
    (home / "id_ed25519").write_text("PRIVATE KEY\n")
    async with Relay(port=_free_port(), register=False) as relay:
        browser = Browser(relay, connect_timeout=scaled(5.0))
        known = browser_dir if browser_dir_known else None
        relay.cdp = CdpEndpoint(browser, TOKEN, downloads_dir=known)
        async with ForgedExtension(relay) as extension:
            await relay.wait_for_link(scaled(5.0))
            async with raw_cdp(f"ws://127.0.0.1:{relay.port}/cdp?token={TOKEN}") as client:
                behaviour = {
                    "behavior": "allowAndName",
                    "downloadPath": str(client_dir),
                    "eventsEnabled": True,
                }
                await client.result("Browser.setDownloadBehavior", behaviour)
                attached = await client.result("Target.attachToTarget", {"targetId": TARGET})
                await client.result("Page.enable", {}, attached["sessionId"])  # taps the tab
                yield Scene(root, browser_dir, client_dir, extension, client)


@pytest_asyncio.fixture
async def scene(tmp_path: Path) -> AsyncIterator[Scene]:
    async for made in _scene(tmp_path, browser_dir_known=True):
        yield made


@pytest_asyncio.fixture
async def scene_unknown_dir(tmp_path: Path) -> AsyncIterator[Scene]:
    """The person's own Chrome: bridge cannot know where it saves."""
    async for made in _scene(tmp_path, browser_dir_known=False):
        yield made


def _hostile_guid(scene: Scene, kind: str) -> str:
    if kind == "absolute":
        return str(scene.root / "home" / ".bashrc")
    return "../home/.bashrc"  # from the client's directory to the person's file


@pytest.mark.reliability(36)
@pytest.mark.parametrize("kind", ["absolute", "dotdot"])
async def test_a_guid_that_is_a_path_writes_nothing_and_reaches_no_client(
    scene: Scene, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    saved = scene.browser_dir / "report.csv"
    saved.write_bytes(b"attacker's content\n")
    before = scene.tree()
    scene.extension.reported_path = str(saved)
    hostile = _hostile_guid(scene, kind)
    await scene.extension.download(hostile)
    await scene.honest_download()  # handled after the hostile events: they are done with
    assert scene.tree() == before  # ~/.bashrc untouched, nothing planted anywhere
    # Clients read and delete <downloadPath>/<guid>: they never hear of that guid at all.
    assert not [e for e in scene.client.events if hostile in json.dumps(e)]
    assert "not a UUID dropped" in caplog.text and TOKEN not in caplog.text


def _plant(scene: Scene, kind: str) -> Path:
    """The file the forged extension reports as the download, by attack."""
    secret = scene.root / "home" / "id_ed25519"
    if kind == "symlink-source":
        link = scene.browser_dir / "report.csv"
        link.symlink_to(secret)
        os.utime(secret)  # fresh, so only the link gives it away
        return link
    if kind == "source-outside":
        outside = scene.root / "home" / "report.csv"
        outside.write_bytes(b"the person's report\n")  # right name, fresh: wrong folder
        return outside
    if kind == "directory-source":
        folder = scene.browser_dir / "report.csv"
        folder.mkdir()
        return folder
    if kind == "another-name":
        return secret  # the person's key, as it is
    raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind", ["symlink-source", "source-outside", "directory-source", "another-name"]
)
@pytest.mark.reliability(36)
async def test_a_reported_file_that_is_not_the_download_is_not_copied(
    scene: Scene, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    reported = _plant(scene, kind)
    before = scene.tree()
    scene.extension.reported_path = str(reported)
    guid = str(uuid.uuid4())
    await scene.extension.download(guid)
    assert await scene.progress(guid) == "canceled"  # the client hears it failed
    assert scene.tree() == before  # nothing written: not in the client's folder, nowhere
    assert "not copied for the DevTools client" in caplog.text and TOKEN not in caplog.text
    await scene.honest_download()


@pytest.mark.reliability(36)
async def test_without_the_browser_s_folder_an_old_file_or_a_link_is_not_copied(
    scene_unknown_dir: Scene,
) -> None:
    scene = scene_unknown_dir
    old = scene.root / "home" / "report.csv"
    old.write_bytes(b"the person's old report\n")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    link = scene.root / "home" / "notes.txt"
    link.symlink_to(scene.root / "home" / "id_ed25519")
    before = scene.tree()
    for reported, name in ((old, "report.csv"), (link, "notes.txt")):
        scene.extension.reported_path = str(reported)
        guid = str(uuid.uuid4())
        await scene.extension.download(guid, name)
        assert await scene.progress(guid) == "canceled"
    assert scene.tree() == before
    await scene.honest_download()  # a fresh file named as announced is still copied


def test_a_file_written_after_the_download_began_counts_as_such(tmp_path: Path) -> None:
    """A file written now counts as written after a download that began now (the slack is
    about event latency, not clock skew between file system and time.time())."""
    saved = tmp_path / "report.csv"
    began = time.time()
    saved.write_text("x")
    start = DownloadStart("https://example.com/report.csv", "report.csv", began)
    target = download_target(
        GUID,
        client_dir=tmp_path / "client",
        start=start,
        source=source_facts(str(saved)),
        browser_dir=tmp_path.resolve(),
    )
    assert target == tmp_path / "client" / GUID
