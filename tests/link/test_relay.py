"""The relay on its own: discovery, origin and host checks, the handshake, bad frames."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from bridge.link.relay import Relay
from bridge.wire import protocol, trust
from bridge.wire.extension import (
    CLOSE_REFUSED,
    CLOSE_UNTRUSTED,
    DEFAULT_ORIGIN,
    EXTENSION_ID,
    PORT_RANGE,
    extension_dir,
)
from tests.standin import StandIn


@pytest_asyncio.fixture(loop_scope="session")
async def lone_relay() -> AsyncIterator[Relay]:
    # Not announced to native hosts: the session's real browser must not take it over
    # while a stand-in is being refused (the browsers here find relays by push).
    async with Relay(register=False) as relay:
        yield relay


def _get(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, headers=headers)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


async def http_get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    return await asyncio.to_thread(_get, url, headers)


def test_extension_id_is_derived_from_the_manifest_key() -> None:
    # Chrome's rule: sha256 of the DER public key, first 32 hex digits mapped 0-f -> a-p.
    manifest = json.loads((extension_dir() / "manifest.json").read_text())
    digest = hashlib.sha256(base64.b64decode(manifest["key"])).hexdigest()[:32]
    assert "".join(chr(ord("a") + int(c, 16)) for c in digest) == EXTENSION_ID


def test_extension_scans_the_relay_port_range() -> None:
    js = (extension_dir() / "protocol.js").read_text()
    assert f"PORT_FIRST = {PORT_RANGE[0]};" in js and f"PORT_LAST = {PORT_RANGE[1]};" in js


@pytest.mark.reliability(4)
async def test_relay_listens_on_loopback_in_the_port_range(lone_relay: Relay) -> None:
    assert lone_relay.host == "127.0.0.1"
    assert PORT_RANGE[0] <= lone_relay.port <= PORT_RANGE[1]


@pytest.mark.reliability(24)
async def test_taken_port_moves_to_the_next_free_one(lone_relay: Relay) -> None:
    async with Relay(port_range=(lone_relay.port, PORT_RANGE[1])) as second:
        assert second.port > lone_relay.port


async def test_relay_info_answers_the_extension(lone_relay: Relay) -> None:
    # What Chromium sends for an extension's fetch (no Origin, Sec-Fetch-Site: none).
    status, headers, body = await http_get(
        f"http://127.0.0.1:{lone_relay.port}/relay-info", **{"Sec-Fetch-Site": "none"}
    )
    assert status == 200
    info = json.loads(body)
    assert info["service"] == "bridge-relay"
    assert info["protocolVersion"] == protocol.PROTOCOL_VERSION
    assert not any(h.lower().startswith("access-control-") for h in headers)


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"Origin": "https://evil.example"}, id="foreign-origin"),
        pytest.param({"Origin": "null"}, id="null-origin"),
        pytest.param({"Sec-Fetch-Site": "cross-site"}, id="no-cors-page-fetch"),
        pytest.param({"Origin": "chrome-extension://aaaabbbbccccdddd"}, id="other-extension"),
    ],
)
@pytest.mark.reliability(1)
async def test_relay_info_refuses_web_pages(lone_relay: Relay, headers: dict[str, str]) -> None:
    status, resp_headers, _ = await http_get(
        f"http://127.0.0.1:{lone_relay.port}/relay-info", **headers
    )
    assert status == 403
    assert not any(h.lower().startswith("access-control-") for h in resp_headers)


@pytest.mark.reliability(1)
async def test_foreign_host_is_refused_against_dns_rebinding(lone_relay: Relay) -> None:
    status, _, _ = await http_get(
        f"http://127.0.0.1:{lone_relay.port}/relay-info", Host=f"evil.example:{lone_relay.port}"
    )
    assert status == 421


async def test_unknown_path_is_404(lone_relay: Relay) -> None:
    status, _, _ = await http_get(f"http://127.0.0.1:{lone_relay.port}/json/version")
    assert status == 404


@pytest.mark.parametrize("origin", ["https://evil.example", None], ids=["foreign", "missing"])
@pytest.mark.reliability(2)
async def test_extension_socket_refuses_other_origins_with_403(
    lone_relay: Relay, origin: str | None
) -> None:
    with pytest.raises(InvalidStatus) as info:
        async with connect(lone_relay.url, origin=origin, proxy=None):  # type: ignore[arg-type]
            pass
    assert info.value.response.status_code == 403
    assert lone_relay.link is None


@pytest.mark.reliability(5)
@pytest.mark.reliability(27)
async def test_version_mismatch_is_refused_naming_both_versions(lone_relay: Relay) -> None:
    theirs = protocol.PROTOCOL_VERSION + 1
    async with connect(lone_relay.url, origin=DEFAULT_ORIGIN, proxy=None) as ws:  # type: ignore[arg-type]
        await ws.send(json.dumps({"method": "hello", "params": {"protocolVersion": theirs}}))
        refused = json.loads(await ws.recv())
        assert refused["method"] == "refused"
        assert f"relay speaks {protocol.PROTOCOL_VERSION}" in refused["params"]["message"]
        assert f"extension speaks {theirs}" in refused["params"]["message"]
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == CLOSE_REFUSED
    assert lone_relay.link is None


async def test_handshake_then_request_and_reply(lone_relay: Relay) -> None:
    async with StandIn(lone_relay) as ext:
        assert ext.welcome["method"] == "welcome"
        link = await lone_relay.wait_for_link(5)
        pending = asyncio.ensure_future(link.request("listTabs"))
        command = await ext.serve_once({"result": {"tabs": []}})
        assert command["method"] == "listTabs"
        assert await pending == {"tabs": []}


malformed = st.one_of(
    st.text(max_size=40).filter(lambda s: not s.strip().startswith("{")),
    st.just("[]"),
    st.just('[{"id": 1}, 7, "x"]'),
    st.just("{}"),
    st.just('{"id": "x", "result": {}}'),
    st.just('{"method": "cdpEvent", "params": {"tabId": 1}}'),
    st.just('{"id": 1}'),
    st.builds(
        lambda n: json.dumps({"method": "tabRemoved", "params": {"tabId": str(n)}}), st.integers()
    ),
)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(frames=st.lists(malformed, min_size=1, max_size=5))
@pytest.mark.reliability(5)
async def test_every_malformed_frame_gets_an_error_and_the_relay_keeps_serving(
    frames: list[str],
) -> None:
    async with Relay() as relay, StandIn(relay) as ext:
        link = await relay.wait_for_link(5)
        assert ext.ws is not None
        for frame in frames:
            await ext.ws.send(frame)
            notice = json.loads(await ext.ws.recv())  # one frame back per bad frame
            notices = notice if isinstance(notice, list) else [notice]
            assert notices and all(n["error"]["code"] == "malformed" for n in notices)
        # Still serving: a normal request/reply round trip on the same connection.
        pending = asyncio.ensure_future(link.request("ping"))
        await ext.serve_once()
        assert await pending == {}
        assert link.malformed_frames == len(frames)


async def test_a_batch_of_replies_resolves_every_request(lone_relay: Relay) -> None:
    async with StandIn(lone_relay) as ext:
        link = await lone_relay.wait_for_link(5)
        assert ext.ws is not None
        pending = [asyncio.ensure_future(link.request("ping")) for _ in range(5)]
        ids: list[int] = []
        while len(ids) < 5:  # the relay batches requests issued together
            frame = json.loads(await ext.ws.recv())
            ids += [m["id"] for m in (frame if isinstance(frame, list) else [frame])]
        await ext.ws.send(json.dumps([{"id": i, "result": {"n": i}} for i in reversed(ids)]))
        assert [r["n"] for r in await asyncio.gather(*pending)] == ids


@pytest.mark.reliability(5)
async def test_a_malformed_frame_is_answered_once_and_an_error_reply_never(
    lone_relay: Relay, caplog: pytest.LogCaptureFixture
) -> None:
    async with StandIn(lone_relay) as ext:
        link = await lone_relay.wait_for_link(5)
        assert ext.ws is not None
        await ext.ws.send("not json")
        notice = json.loads(await ext.ws.recv())
        assert notice["id"] is None and notice["error"]["code"] == "malformed"
        assert "not JSON" in notice["error"]["message"]
        # The extension's answer to a frame it could not read has this very shape. Answering it
        # (as malformed: its id is null) is how relay and extension ping-ponged errors forever.
        await ext.ws.send(json.dumps({"id": None, "error": {"code": "malformed", "message": "?"}}))
        # In order, so the relay's answer to that error (if any) would arrive before this one's.
        await ext.ws.send("[]")
        second = json.loads(await ext.ws.recv())
        assert "at least one message" in second["error"]["message"], second
        # One frame, two messages: only the bad one is answered, the error reply never.
        await ext.ws.send(json.dumps([{"error": "no id"}, 7]))
        third = json.loads(await ext.ws.recv())
        assert not isinstance(third, list) and "JSON object" in third["error"]["message"], third
        # Still serving, and nothing else came back in between.
        pending = asyncio.ensure_future(link.request("ping"))
        await ext.serve_once()
        assert await pending == {}
        assert ext.notices.empty()
        assert link.malformed_frames == 3  # "not json", "[]", 7; never the error replies
    reported = [r.getMessage() for r in caplog.records if r.name == "bridge.link.extension_link"]
    assert any("the extension reports an error: [malformed] ?" in m for m in reported)


# -- the trust handshake (bridge/wire/trust.py): impostors at the relay's seam ----------------------


@pytest.mark.reliability(32)
async def test_an_extension_that_cannot_prove_the_secret_gets_nothing(lone_relay: Relay) -> None:
    async with StandIn(lone_relay, secret="a guess", insist=True) as forged:
        assert forged.relay_proved is False  # it could not even check the relay
        assert forged.ws is not None
        refused = forged.welcome
        assert refused["method"] == "refused" and "did not prove" in refused["params"]["message"]
        with pytest.raises(ConnectionClosed) as closed:
            await forged.ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == CLOSE_UNTRUSTED
    assert lone_relay.link is None and lone_relay.stats.refused_links == 1


@pytest.mark.reliability(32)
async def test_the_relays_own_proof_sent_back_is_no_proof(lone_relay: Relay) -> None:
    async with connect(lone_relay.url, origin=DEFAULT_ORIGIN, proxy=None) as ws:  # type: ignore[arg-type]
        hello = {"protocolVersion": protocol.PROTOCOL_VERSION, "nonce": trust.new_nonce()}
        await ws.send(json.dumps({"method": "hello", "params": hello}))
        challenge = json.loads(await ws.recv())["params"]
        # Reflected: the only MAC of this transcript an impostor holds is the relay's own.
        await ws.send(json.dumps({"method": "prove", "params": {"proof": challenge["proof"]}}))
        assert json.loads(await ws.recv())["method"] == "refused"
    assert lone_relay.link is None


@pytest.mark.reliability(32)
@pytest.mark.parametrize(
    "second",
    [
        {"id": 1, "result": {"tabs": []}},
        {"method": "tabShared", "params": {"tabId": 1, "shared": True}},
        {"method": "claim", "params": {}},
        [{"method": "prove", "params": {"proof": "x"}}],
    ],
)
async def test_nothing_but_a_proof_is_taken_after_the_challenge(
    lone_relay: Relay, second: object
) -> None:
    async with connect(lone_relay.url, origin=DEFAULT_ORIGIN, proxy=None) as ws:  # type: ignore[arg-type]
        hello = {"protocolVersion": protocol.PROTOCOL_VERSION, "nonce": trust.new_nonce()}
        await ws.send(json.dumps({"method": "hello", "params": hello}))
        assert json.loads(await ws.recv())["method"] == "challenge"
        await ws.send(json.dumps(second))
        assert json.loads(await ws.recv())["method"] == "refused"
    assert lone_relay.link is None


async def test_a_relay_that_cannot_prove_the_secret_is_left_before_anything_is_said(
    lone_relay: Relay,
) -> None:
    # The extension's side, played by the stand-in: it checks the relay's proof first.
    async with StandIn(lone_relay, secret="another person's secret") as ext:
        assert ext.relay_proved is False and ext.welcome == {}
    assert lone_relay.link is None


@pytest.mark.reliability(42)
async def test_pairing_hands_the_secret_only_to_whoever_shows_the_code(lone_relay: Relay) -> None:
    async with StandIn(lone_relay, code=trust.new_code()) as ext:
        refused = ext.welcome
    assert refused["method"] == "refused" and "bridge pair" in refused["params"]["message"]
    offer = lone_relay.start_pairing()
    # A wrong code: the relay's proof does not check out, nothing is unsealed or proved.
    async with StandIn(lone_relay, code=trust.new_code()) as wrong:
        assert wrong.relay_proved is False and wrong.secret == ""
    assert not offer.done.done()
    async with StandIn(lone_relay, code=offer.code.lower().replace("-", " ")) as ext:
        assert ext.relay_proved and ext.secret == lone_relay.secret
        assert ext.welcome["method"] == "welcome"
        hello = await asyncio.wait_for(offer.done, 5)
        assert hello.instance_id == "standin"
    assert not offer.open  # one time only
    async with StandIn(lone_relay, code=offer.code) as again:
        assert again.welcome["method"] == "refused"


@pytest.mark.reliability(42)
async def test_a_pairing_code_dies_after_five_wrong_proofs(lone_relay: Relay) -> None:
    offer = lone_relay.start_pairing()
    for _ in range(5):  # someone who guessed the code's proof but not the secret
        async with StandIn(lone_relay, code=trust.new_code(), insist=True) as guess:
            assert guess.welcome["method"] == "refused"
    assert not offer.open
    async with StandIn(lone_relay, code=offer.code) as late:
        assert late.welcome["method"] == "refused"


async def test_a_second_browser_waits_on_standby_until_claimed_or_the_first_goes(
    lone_relay: Relay, caplog: pytest.LogCaptureFixture
) -> None:
    async with StandIn(lone_relay, instance_id="first") as first:
        assert first.serving is True
        first_link = await lone_relay.wait_for_link(5)
        async with StandIn(lone_relay, instance_id="second") as second:
            assert second.serving is False
            assert lone_relay.link is first_link  # never switched silently
            assert any("waits on standby" in r.getMessage() for r in caplog.records)
            assert second.ws is not None and first.ws is not None
            await second.ws.send(json.dumps({"method": "claim", "params": {}}))
            told = json.loads(await first.ws.recv())
            assert told == {"method": "serving", "params": {"serving": False}}
            assert lone_relay.link is not None and lone_relay.link.instance_id == "second"
            assert any("the person chose it" in r.getMessage() for r in caplog.records)
        # The one serving went away: the first serves again, and is told.
        told = json.loads(await first.ws.recv())
        assert told == {"method": "serving", "params": {"serving": True}}
        assert lone_relay.link is first_link


@pytest.mark.reliability(41)
async def test_with_switch_newest_a_later_browser_serves_at_once_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with (
        Relay(register=False, switch="newest") as relay,
        StandIn(relay, instance_id="first") as first,
    ):
        assert first.serving is True
        async with StandIn(relay, instance_id="second") as second:
            assert second.serving is True
            assert first.ws is not None
            told = json.loads(await first.ws.recv())
            assert told == {"method": "serving", "params": {"serving": False}}
            assert relay.link is not None and relay.link.instance_id == "second"
            assert any("switch=newest" in r.getMessage() for r in caplog.records)


def test_the_newest_browser_flag_reaches_the_relay() -> None:
    import argparse

    from bridge.app.runtime import add_runtime_arguments, options_from_args

    parser = argparse.ArgumentParser()
    add_runtime_arguments(parser)
    assert options_from_args(parser.parse_args([])).switch == "first"
    assert options_from_args(parser.parse_args(["--newest-browser"])).switch == "newest"
