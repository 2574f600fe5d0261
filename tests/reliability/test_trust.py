"""Only bridge's own relay and bridge's own extension: impostors in real Chromium.

"The person's own Chrome" is played by a browser launched here that is not an island: its
native host (when it has one) hands over the person's secret, as in their everyday Chrome
(``LaunchOptions(island=False)``), and the person's secret is this test run's own
(``BRIDGE_TRUST_DIR``, tests/conftest.py). Impostors are programs that do not read that
secret: a process of another user could not (the file is 0600 in a 0700 directory).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from bridge.app.launcher import LaunchedBrowser, LaunchOptions
from bridge.cdp.browser import Browser
from bridge.cdp.direct import DirectCdp
from bridge.errors import TabClosed
from bridge.link.registry import ENV_RUNTIME_DIR
from bridge.link.relay import Relay
from bridge.policy.tabs import TabNotShared
from bridge.tools.browsing import ToolHub
from bridge.waiting import scaled, wait_for
from bridge.wire import protocol, trust
from bridge.wire.extension import CLOSE_UNTRUSTED, DEFAULT_ORIGIN, EXTENSION_ID
from tests.extension_worker import extension_status, in_worker
from tests.impostors import RogueRelay

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="host in the profile: Linux"),
]

ROOT = Path(__file__).resolve().parents[2]


# Resolves with the extension's status once discovery has decided what it is (not starting).
async def settled(cdp: DirectCdp) -> dict[str, Any]:
    """The extension's status once discovery has decided what it is (not starting)."""
    return await wait_status(cdp, "s.mode !== 'starting'")


async def wait_status(cdp: DirectCdp, predicate: str, timeout: float = 20.0) -> dict[str, Any]:
    """The extension's status once ``predicate`` (JavaScript over ``s``) holds. The worker's
    status has no event to subscribe to: it is read every 50 ms, in the worker, until then
    (a worker just started defines ``bridgeStatus`` once its modules have loaded)."""
    script = f"""new Promise((resolve) => {{
      const check = () => {{
        const s = typeof bridgeStatus === 'function' ? bridgeStatus() : null;
        if (s && ({predicate})) resolve(s); else setTimeout(check, 50);
      }};
      check();
    }})"""
    status: dict[str, Any] = await in_worker(cdp, script, timeout=scaled(timeout))
    return status


class Popup:
    """bridge's popup, opened as a page of its own through the browser's DevTools port,
    clicked and typed into as the person would."""

    def __init__(self, cdp: DirectCdp, session: str, target: str) -> None:
        self.cdp = cdp
        self.session = session
        self.target = target

    @classmethod
    async def open(cls, cdp: DirectCdp) -> Popup:
        target = (await cdp.call("Target.createTarget", {"url": "about:blank"}))["targetId"]
        popup = cls(cdp, await cdp.attach(target), target)
        loaded = cdp.expect_event("Page.loadEventFired")
        await cdp.call("Page.enable", {}, popup.session)
        url = f"chrome-extension://{EXTENSION_ID}/popup.html"
        await cdp.call("Page.navigate", {"url": url}, popup.session)
        await wait_for(loaded, scaled(20.0), "the popup page")
        await popup.text_of("state", "s => s && s !== 'looking…'")
        return popup

    async def run(self, expression: str) -> Any:
        params = {"expression": expression, "awaitPromise": True, "returnByValue": True}
        result = await self.cdp.call("Runtime.evaluate", params, self.session)
        return result["result"].get("value")

    async def text_of(self, element_id: str, predicate: str = "s => !!s") -> str:
        """The element's text once ``predicate`` holds for it (the popup re-renders each second)."""
        script = f"""new Promise((resolve) => {{
          const ok = {predicate};
          const check = () => {{
            const e = document.getElementById({json.dumps(element_id)});
            const s = e ? e.innerText : '';
            if (ok(s)) resolve(s); else setTimeout(check, 50);
          }};
          check();
        }})"""
        return str(await self.run(script))

    async def pair(self, code: str) -> None:
        await self.run(
            f"""(() => {{
              document.getElementById('code').value = {json.dumps(code)};
              document.getElementById('pair').click();
            }})()"""
        )

    async def close(self) -> None:
        await self.cdp.call("Target.closeTarget", {"targetId": self.target})


@pytest.fixture
def person_runtime_dir() -> Any:
    """The runtime directory of "the person" in these tests (short: socket paths)."""
    path = Path(tempfile.mkdtemp(prefix="bridge-rt-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def _persons_browser(
    *, native_host: bool, runtime_dir: Path | None = None
) -> LaunchedBrowser:
    env = {ENV_RUNTIME_DIR: str(runtime_dir)} if runtime_dir else {}
    browser = LaunchedBrowser(
        LaunchOptions(
            headless=True,
            isolated=True,
            island=False,
            native_host=native_host,
            debug_pipe=True,
            env=env,
        )
    )
    return await browser.start()


@pytest_asyncio.fixture(loop_scope="session")
async def without_host() -> AsyncIterator[LaunchedBrowser]:
    """The person's Chrome with the extension loaded and no native host registered."""
    browser = await _persons_browser(native_host=False)
    try:
        yield browser
    finally:
        await browser.stop()


# -- case 31: a rogue relay ----------------------------------------------------------------------


@pytest.mark.reliability(31)
async def test_unpaired_and_without_a_host_the_extension_serves_nothing_and_says_how(
    without_host: LaunchedBrowser,
) -> None:
    async with without_host.direct_cdp() as cdp:
        status = await settled(cdp)
        assert status["mode"] == "unpaired" and status["secretSource"] == ""
        assert status["probeRounds"] == 0  # nothing is even looked for
        popup = await Popup.open(cdp)
        assert "no bridge secret" in await popup.text_of("state")
        setup = await popup.text_of("setup")
        assert "bridge install-native-host" in setup and "bridge pair" in setup


@pytest.mark.reliability(31)
@pytest.mark.reliability(42)
async def test_paired_by_hand_it_serves_only_relays_that_prove_the_secret(
    without_host: LaunchedBrowser, caplog: pytest.LogCaptureFixture
) -> None:
    async with without_host.direct_cdp() as cdp:
        await settled(cdp)
        popup = await Popup.open(cdp)
        # The person's path: `bridge pair` shows a code, the person types it in the popup.
        async with Relay(register=False) as pairing_relay:
            offer = pairing_relay.start_pairing()
            await popup.pair("not a code")
            assert "16 letters and digits" in await popup.text_of("pairing")
            await popup.pair(offer.code.lower())
            hello = await asyncio.wait_for(offer.done, scaled(20.0))
            assert "Paired with the bridge" in await popup.text_of(
                "pairing", "s => /Paired/.test(s)"
            )
            link = await pairing_relay.wait_for_link(scaled(5.0))
            assert link.instance_id == hello.instance_id
            assert await Browser(pairing_relay).list_tabs()
        status = await extension_status(cdp)
        assert status["secretSource"] == "paired" and status["mode"] == "probe"
        # A rogue relay in the range: found by probing, never served.
        async with RogueRelay() as rogue:
            await rogue.wait_closed(1, scaled(20.0))
            hello_frame, *rest = rogue.received[0]
            assert hello_frame["method"] == "hello"
            assert set(hello_frame["params"]) == {"protocolVersion", "nonce", "mode"}
            # Its commands got "not ready" at most: no listing, no cookie, no prove.
            for frame in rest:
                for msg in frame if isinstance(frame, list) else [frame]:
                    assert msg.get("error", {}).get("code") == "not_ready", msg
            assert rogue.closed_with[0] == CLOSE_UNTRUSTED
            refused = await wait_status(
                cdp, f"s.relays.some(r => r.port === {rogue.port} && r.state === 'refused')"
            )
            (entry,) = [r for r in refused["relays"] if r["port"] == rogue.port]
            assert "did not prove your bridge secret" in entry["message"]
            # The person's own relay, started now, is found by probing and served.
            async with Relay(register=False) as everyday:
                await everyday.wait_for_link(scaled(15.0))
                assert everyday.stats.info_requests >= 1
                assert await Browser(everyday).list_tabs()
            assert all(
                not isinstance(m, dict) or m.get("method") != "prove"
                for frames in rogue.received
                for m in frames
            )


@pytest.mark.reliability(31)
async def test_with_the_host_no_port_is_probed_so_a_rogue_relay_is_never_even_met(
    extension_link: Browser, launched_browser: LaunchedBrowser | None, direct_cdp: DirectCdp
) -> None:
    assert launched_browser is not None
    async with RogueRelay() as rogue:
        async with launched_browser.relay() as relay:
            await relay.wait_for_link(scaled(10.0))
            assert relay.stats.info_requests == 0  # announced by the host
        status = await extension_status(direct_cdp)
        assert status["mode"] == "native" and status["island"] is True
        assert rogue.info_requests == 0 and rogue.received == []


# -- case 32: a forged extension -----------------------------------------------------------------


@pytest.mark.reliability(32)
async def test_a_forged_extension_gets_no_command_and_the_real_browser_keeps_serving(
    extension_link: Browser, relay: Relay, caplog: pytest.LogCaptureFixture
) -> None:
    serving = await relay.wait_for_link(scaled(10.0))
    before = relay.stats.refused_links
    # A local program may send any Origin: it passes the browser-only check, then has to prove.
    async with connect(relay.url, origin=DEFAULT_ORIGIN, proxy=None) as ws:  # type: ignore[arg-type]
        hello = {"protocolVersion": protocol.PROTOCOL_VERSION, "nonce": trust.new_nonce()}
        await ws.send(json.dumps({"method": "hello", "params": hello}))
        challenge = json.loads(await ws.recv())
        assert challenge["method"] == "challenge" and set(challenge["params"]) == {"nonce", "proof"}
        guess = {"proof": trust.new_nonce(), "instanceId": serving.instance_id}  # poses as it
        await ws.send(json.dumps({"method": "prove", "params": guess}))
        received = [json.loads(await ws.recv())]
        with pytest.raises(ConnectionClosed) as closed:
            received.append(json.loads(await ws.recv()))
    assert closed.value.rcvd is not None and closed.value.rcvd.code == CLOSE_UNTRUSTED
    assert [m["method"] for m in received] == ["refused"]  # no welcome, no command, no tab
    assert relay.stats.refused_links == before + 1
    assert any("did not prove bridge's secret" in r.getMessage() for r in caplog.records)
    assert relay.link is serving and not serving.is_closed
    assert await extension_link.list_tabs()  # the person's browser still serves


# -- case 34: a second bridge --------------------------------------------------------------------


@pytest.mark.reliability(34)
async def test_the_demo_and_a_launched_bridge_leave_the_everyday_server_its_browser(
    person_runtime_dir: Path, tmp_path: Path
) -> None:
    browser = await _persons_browser(native_host=True, runtime_dir=person_runtime_dir)
    try:
        async with Relay(runtime_dir=person_runtime_dir) as everyday:
            link = await everyday.wait_for_link(scaled(30.0))
            env = {**os.environ, "PYTHONPATH": str(ROOT), ENV_RUNTIME_DIR: str(person_runtime_dir)}
            demo = await asyncio.create_subprocess_exec(
                sys.executable,
                *("-m", "bridge", "ask", "--demo", "What is a decorator?", "--provider", "chatgpt"),
                cwd=str(tmp_path),
                env=env,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await asyncio.wait_for(demo.communicate(), scaled(120.0))
            assert demo.returncode == 0, err.decode()[-2000:]
            assert "decorator" in out.decode()  # the demo had its own browser answer it
            # The everyday server never saw another browser, nor lost its own.
            assert everyday.links == [link] and not link.is_closed
            assert everyday.link is link and everyday.stats.refused_links == 0
            async with browser.direct_cdp() as cdp:
                status = await extension_status(cdp)
            assert [r["port"] for r in status["relays"]] == [everyday.port]
    finally:
        await browser.stop()


# -- case 41: two of the person's browsers -------------------------------------------------------


@pytest.mark.reliability(41)
async def test_a_second_browser_waits_until_the_person_chooses_it_in_its_popup(
    person_runtime_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "bridge.link.relay")
    first = await _persons_browser(native_host=True, runtime_dir=person_runtime_dir)
    second: LaunchedBrowser | None = None
    try:
        async with Relay(runtime_dir=person_runtime_dir) as relay:
            first_link = await relay.wait_for_link(scaled(30.0))
            browser = Browser(relay)
            tab = await browser.new_tab("about:blank")
            second = await _persons_browser(native_host=True, runtime_dir=person_runtime_dir)
            async with second.direct_cdp() as cdp:
                await wait_status(cdp, "s.relays.some(r => r.serving === false)", 30.0)
                assert relay.link is first_link  # never switched silently
                assert await tab.evaluate("1 + 1") == 2
                assert any("waits on standby" in r.getMessage() for r in caplog.records)
                popup = await Popup.open(cdp)
                await popup.text_of("relays", "s => /standby/.test(s)")
                await popup.run(
                    "[...document.querySelectorAll('#relays button')]"
                    ".find(b => b.textContent === 'Use this browser').click()"
                )
                await wait_status(cdp, "s.relays.some(r => r.serving === true)")
            assert relay.link is not None and relay.link is not first_link
            assert any("the person chose it" in r.getMessage() for r in caplog.records)
            # The first browser's tab is not the serving browser's: said so, typed, at once.
            with pytest.raises(TabClosed, match="another of your browsers"):
                await tab.evaluate("1")
            # The chosen browser goes away: the first serves again, and the switch is logged.
            await second.stop()
            second = None
            await relay.wait_until(lambda: relay.link is first_link, scaled(10.0))
            assert any("went away" in r.getMessage() for r in caplog.records)
    finally:
        if second is not None:
            await second.stop()
        await first.stop()


# -- case 40: the person's other tabs -------------------------------------------------------------


@pytest.mark.reliability(40)
async def test_a_client_acts_on_the_persons_tab_only_once_the_person_shares_it(
    person_runtime_dir: Path, pages: str
) -> None:
    person = await _persons_browser(native_host=True, runtime_dir=person_runtime_dir)
    try:
        async with Relay(runtime_dir=person_runtime_dir) as relay:
            await relay.wait_for_link(scaled(30.0))
            browser = Browser(relay)
            browser.tab_scope = "own"  # as in the person's own browser (bridge.app.runtime)
            tools = ToolHub(browser).client("agent")
            async with person.direct_cdp() as cdp:
                # A tab the person opened: their bank, say.
                created = await cdp.call("Target.createTarget", {"url": f"{pages}/"})
                listed = {t["url"]: t for t in (await tools.tabs("list"))["tabs"]}
                theirs = listed[f"{pages}/"]
                assert theirs["access"] == "not shared" and "share" in theirs["how"]
                for act in (
                    tools.snapshot(tab=theirs["tab"]),
                    tools.evaluate("() => document.cookie", tab=theirs["tab"]),
                    tools.tabs("select", tab=theirs["tab"]),
                    tools.tabs("close", tab=theirs["tab"]),
                ):
                    with pytest.raises(TabNotShared, match="Share this tab with bridge"):
                        await act
                attached = (await extension_status(cdp))["tabs"]
                assert all(t["tabId"] != theirs["tab"] for t in attached)  # never attached
                # Tabs the client opens are its own.
                mine = await tools.tabs("new", url=f"{pages}/console")
                assert "console" in await tools.snapshot(tab=mine["tab"])
                # The person shares it, through the popup's message to the worker.
                popup = await Popup.open(cdp)
                shared = await popup.run(
                    "chrome.runtime.sendMessage("
                    f"{{type: 'share', tabId: {theirs['tab']}, shared: true}})"
                )
                assert shared == {"ok": True}
                assert "bridge test page" in await tools.snapshot(tab=theirs["tab"])
                listed = {t["tab"]: t for t in (await tools.tabs("list"))["tabs"]}
                assert listed[theirs["tab"]]["access"] == "shared"
                await popup.run(
                    "chrome.runtime.sendMessage("
                    f"{{type: 'share', tabId: {theirs['tab']}, shared: false}})"
                )
                await browser.list_tabs()  # what the extension says now (its event may lag)
                with pytest.raises(TabNotShared):
                    await tools.snapshot(tab=theirs["tab"])
                await cdp.call("Target.closeTarget", {"targetId": created["targetId"]})
    finally:
        await person.stop()


# -- case 44: the test browsers' own DevTools --------------------------------------------------


@pytest.mark.reliability(44)
async def test_the_session_browser_offers_no_devtools_port_only_its_pipe(
    launched_browser: LaunchedBrowser | None, direct_cdp: DirectCdp
) -> None:
    assert launched_browser is not None and launched_browser.pid is not None
    assert launched_browser.profile is not None
    args = Path(f"/proc/{launched_browser.pid}/cmdline").read_bytes().split(b"\0")
    assert b"--remote-debugging-pipe" in args
    assert not any(a.startswith(b"--remote-debugging-port") for a in args)
    assert not (launched_browser.profile / "DevToolsActivePort").exists()
    assert launched_browser.devtools_url is None
    # The tests' own access to the browser works through the pipe only this process holds.
    assert (await direct_cdp.call("Browser.getVersion"))["product"].startswith("Chrome/")
