"""Reading the answer request through the transport seam (no browser): the Network events
a page's traffic produces, played by the test; bodies from the fakes' own encoders."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bridge.cdp.browser import Browser
from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError, LoginRequired, RateLimited, TabClosed
from bridge.link.transport import MockConnector, MockTransport
from bridge.providers.network_answer import answer_stream
from bridge.providers.pack import load_pack

Params = dict[str, Any]
URL = "https://chatgpt.com/backend-api/f/conversation"
RULE = load_pack("chatgpt", Path("/nonexistent-state-dir")).stream_rule
SSE = (
    'event: delta_encoding\ndata: "v1"\n\n'
    'event: delta\ndata: {"p": "", "o": "add", "v": {"message": {"id": "m1", "author": '
    '{"role": "assistant"}, "content": {"content_type": "text", "parts": [""]}, "status": '
    '"in_progress", "channel": "final"}, "conversation_id": "c1"}}\n\n'
    'event: delta\ndata: {"p": "/message/content/parts/0", "o": "append", "v": "## Hi\\n\\n"}\n\n'
    'event: delta\ndata: {"v": "`x` **y**"}\n\n'
    'event: delta\ndata: {"p": "", "o": "patch", "v": [{"p": "/message/status", "o": '
    '"replace", "v": "finished_successfully"}]}\n\n'
    'data: {"type": "message_stream_complete", "conversation_id": "c1"}\n\n'
    "data: [DONE]\n\n"
)


class Page:
    """The extension's answers: the bodies Chrome kept, by request id."""

    def __init__(self) -> None:
        self.bodies: dict[str, str] = {}
        self.enabled: list[str] = []

    def __call__(self, method: str, params: Params) -> Params:
        if method != "cdpCommand":
            return {}
        cdp = params["method"]
        if cdp in ("Network.enable", "Network.disable"):
            self.enabled.append(cdp)
        if cdp == "Network.getResponseBody":
            return {"body": self.bodies[params["params"]["requestId"]], "base64Encoded": False}
        return {}


@pytest.fixture
async def tab() -> tuple[CdpSession, MockTransport, Page]:
    page = Page()
    connector = MockConnector()
    transport = connector.connect_new(page)
    browser = Browser(connector, connect_timeout=1.0)
    return await browser.attach(1), transport, page


def traffic(
    transport: MockTransport,
    request_id: str,
    url: str,
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
    method: str = "POST",
    finish: bool = True,
) -> None:
    transport.cdp_event(
        1,
        "Network.requestWillBeSent",
        {"requestId": request_id, "request": {"method": method, "url": url}},
    )
    transport.cdp_event(
        1,
        "Network.responseReceived",
        {"requestId": request_id, "response": {"status": status, "headers": headers or {}}},
    )
    if finish:
        transport.cdp_event(1, "Network.loadingFinished", {"requestId": request_id})


async def test_the_answer_is_read_from_the_matching_request(
    tab: tuple[CdpSession, MockTransport, Page],
) -> None:
    session, transport, page = tab
    failures: list[BridgeError] = []
    page.bodies = {"r1": "ignored", "r2": SSE}
    async with answer_stream(session, "chatgpt", RULE, failures.append) as stream:
        traffic(transport, "r1", "https://chatgpt.com/backend-api/me", method="GET")
        traffic(transport, "r2", URL)
        answer, why = await stream.answer(5)
    assert why == ""
    assert answer is not None
    assert (answer.text, answer.complete) == ("## Hi\n\n`x` **y**", True)
    assert not failures
    # The domain was on only for the ask: an idle tab reports no traffic.
    assert page.enabled == ["Network.enable", "Network.disable"]


async def test_network_stays_on_when_someone_else_turned_it_on(
    tab: tuple[CdpSession, MockTransport, Page],
) -> None:
    session, _, page = tab
    await session.send("Network.enable")
    async with answer_stream(session, "chatgpt", RULE, lambda _: None):
        pass
    assert page.enabled == ["Network.enable"]


async def test_no_request_means_no_network_answer(
    tab: tuple[CdpSession, MockTransport, Page],
) -> None:
    session, _, _ = tab
    async with answer_stream(session, "chatgpt", RULE, lambda _: None) as stream:
        answer, why = await stream.answer(5)
    assert answer is None
    assert why == "no answer request seen"


async def test_429_is_a_rate_limit_with_the_sites_reset_time(
    tab: tuple[CdpSession, MockTransport, Page],
) -> None:
    session, transport, page = tab
    failures: list[BridgeError] = []
    detail = {"detail": {"message": "You've reached our limit of messages per hour."}}
    page.bodies = {"r1": json.dumps(detail)}
    async with answer_stream(session, "chatgpt", RULE, failures.append) as stream:
        traffic(transport, "r1", URL, status=429, headers={"Retry-After": "3600"})
        with pytest.raises(RateLimited) as caught:
            await stream.answer(5)
    assert caught.value.reset == "3600"
    assert "reached our limit" in caught.value.notice
    assert "Try again after 3600" in str(caught.value)
    assert failures == [caught.value]  # the wait was ended too, not only the extraction


async def test_401_is_a_lost_login(tab: tuple[CdpSession, MockTransport, Page]) -> None:
    session, transport, page = tab
    failures: list[BridgeError] = []
    page.bodies = {"r1": '{"detail": "Unauthorized"}'}
    async with answer_stream(session, "chatgpt", RULE, failures.append) as stream:
        traffic(transport, "r1", URL, status=401)
        with pytest.raises(LoginRequired):
            await stream.answer(5)
    assert isinstance(failures[0], LoginRequired)


async def test_an_open_request_is_waited_for_and_a_closed_tab_ends_the_wait(
    tab: tuple[CdpSession, MockTransport, Page],
) -> None:
    session, transport, page = tab
    page.bodies = {"r1": SSE}
    async with answer_stream(session, "chatgpt", RULE, lambda _: None) as stream:
        traffic(transport, "r1", URL, finish=False)
        answer, why = await stream.answer(0.05)
        assert answer is None
        assert "still open" in why
        waiting = asyncio.ensure_future(stream.answer(30))
        await asyncio.sleep(0)
        transport.cdp_event(1, "Network.loadingFinished", {"requestId": "r1"})
        answer, why = await asyncio.wait_for(waiting, 5)
        assert answer is not None
        assert answer.text.startswith("## Hi")
        traffic(transport, "r2", URL, finish=False)
        waiting = asyncio.ensure_future(stream.answer(30))
        await asyncio.sleep(0)
        transport.emit("tabRemoved", {"tabId": 1})
        with pytest.raises(TabClosed):
            await asyncio.wait_for(waiting, 5)  # at once, not after 30 s
