"""No token reaches a log (bridge.link.redaction): the relay's websockets loggers and uvicorn's
request logs rewrite a token before any handler sees it, at every level a person may turn on.
The attacker here reads the log file an MCP client keeps of the server's stderr."""

from __future__ import annotations

import json
import logging
import socket

import httpx2
import pytest
from websockets.asyncio.client import connect

from bridge.cdp.browser import Browser
from bridge.cdp.endpoint import CdpEndpoint
from bridge.link.redaction import REDACTED, UVICORN_LOGGERS, redact, redact_request_logs
from bridge.link.relay import Relay
from bridge.waiting import scaled

TOKEN = "S3cr3t-token-value_0123456789abcdefghijklmn"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        (f"< GET /cdp?token={TOKEN} HTTP/1.1", f"< GET /cdp?token={REDACTED} HTTP/1.1"),
        (f"GET /json/list?x=1&token={TOKEN}#f", f"GET /json/list?x=1&token={REDACTED}#f"),
        (f"/cdp?access_token={TOKEN}&y=2", f"/cdp?access_token={REDACTED}&y=2"),
        (f"ws://127.0.0.1:1/cdp%3Ftoken%3D{TOKEN}", f"ws://127.0.0.1:1/cdp%3Ftoken%3D{REDACTED}"),
        (f"< Authorization: Bearer {TOKEN}", f"< Authorization: Bearer {REDACTED}"),
        (f"< authorization: {TOKEN}", f"< authorization: {REDACTED}"),
        (
            f"headers={{'Authorization': 'Bearer {TOKEN}'}}",
            f"headers={{'Authorization': 'Bearer {REDACTED}'}}",
        ),
        ("GET /json/version HTTP/1.1", "GET /json/version HTTP/1.1"),
        (
            "resume_conversation_token is a site's field",
            "resume_conversation_token is a site's field",
        ),
    ],
)
def test_redact(line: str, shown: str) -> None:
    assert redact(line) == shown


@pytest.mark.reliability(38)
async def test_the_relay_logs_no_token_with_websockets_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="websockets")
    async with Relay(port=_free_port(), register=False) as relay:
        relay.cdp = CdpEndpoint(Browser(relay, connect_timeout=scaled(2.0)), TOKEN)
        base = f"127.0.0.1:{relay.port}"
        async with connect(f"ws://{base}/cdp?token={TOKEN}", proxy=None) as ws:
            await ws.send(json.dumps({"id": 1, "method": "Browser.getVersion"}))
            assert json.loads(await ws.recv())["id"] == 1
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with connect(f"ws://{base}/cdp", additional_headers=headers, proxy=None):
            pass
        async with httpx2.AsyncClient(trust_env=False) as http:
            assert (await http.get(f"http://{base}/json/version", headers=headers)).is_success
    logged = caplog.text
    assert f"< GET /cdp?token={REDACTED} HTTP/1.1" in logged  # the request line was logged
    assert f"< Authorization: Bearer {REDACTED}" in logged
    assert TOKEN not in logged


def test_uvicorn_request_logs_carry_no_token(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lines uvicorn writes (its access log's format; an error naming the request)."""
    redact_request_logs(*UVICORN_LOGGERS)
    caplog.set_level(logging.DEBUG, logger="uvicorn")
    access = logging.getLogger("uvicorn.access")
    # uvicorn's own config stops its access log at its handler; caplog listens at the root.
    monkeypatch.setattr(access, "propagate", True)
    access.info('%s - "%s %s HTTP/%s" %d', "1.2.3.4:5", "POST", f"/mcp?token={TOKEN}", "1.1", 401)
    try:
        raise ValueError(f"bad request to /mcp?token={TOKEN}")
    except ValueError:
        logging.getLogger("uvicorn.error").exception("Exception in ASGI application")
    assert f"/mcp?token={REDACTED}" in caplog.text
    assert TOKEN not in caplog.text
