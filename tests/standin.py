"""A stand-in extension in Python: speaks the wire protocol to a relay, for relay-only tests.

It is deliberately tiny (httpx's MockTransport spirit): it answers ``ping`` and lets a
test script everything else. The real extension is tested in real Chromium elsewhere.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bridge.link.relay import Relay
from bridge.wire import protocol, trust
from bridge.wire.extension import DEFAULT_ORIGIN


class StandIn:
    """Does the trust handshake as the extension does (``secret``: the relay's own unless
    given; a wrong one plays an impostor), then serves."""

    def __init__(
        self,
        relay: Relay,
        *,
        version: int = protocol.PROTOCOL_VERSION,
        secret: str | None = None,
        code: str | None = None,
        instance_id: str = "standin",
        insist: bool = False,
    ) -> None:
        """``code``: pair instead (learn the secret from a relay that proves the code).
        ``insist``: prove anyway when the relay did not (an impostor trying its luck)."""
        self.insist = insist
        self.relay = relay
        self.version = version
        self.code = code
        self.secret = relay.secret if secret is None and code is None else (secret or "")
        self.instance_id = instance_id
        self.ws: ClientConnection | None = None
        self.notices: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def __aenter__(self) -> StandIn:
        self.ws = await connect(self.relay.url, origin=DEFAULT_ORIGIN, proxy=None)  # type: ignore[arg-type]
        nonce = trust.new_nonce()
        mode = "key" if self.code is None else "pair"
        hello = {"protocolVersion": self.version, "nonce": nonce, "mode": mode}
        await self.ws.send(json.dumps({"method": "hello", "params": hello}))
        challenge = json.loads(await self.ws.recv())
        if challenge.get("method") != "challenge":
            self.welcome = challenge  # refused
            return self
        relay_nonce = challenge["params"]["nonce"]
        port = self.relay.port
        #: Whether the relay proved what it had to (the stand-in goes on only if so).
        self.relay_proved = False
        if self.code is not None:
            sealed = challenge["params"]["sealed"]
            expected = trust.pairing_proof(self.code, nonce, relay_nonce, port, sealed)
            if trust.verify(expected, challenge["params"]["proof"]):
                self.secret = trust.unseal(self.code, sealed, nonce, relay_nonce, port)
                self.relay_proved = True
        else:
            expected = trust.relay_proof(self.secret, nonce, relay_nonce, port)
            self.relay_proved = trust.verify(expected, challenge["params"]["proof"])
        if not self.relay_proved and not self.insist:
            # As the extension does: the relay is not ours, it learns nothing more.
            await self.ws.close(4004, "relay did not prove the secret")
            self.welcome = {}
            return self
        proof = trust.extension_proof(self.secret, nonce, relay_nonce, self.relay.port)
        params = {"proof": proof, "instanceId": self.instance_id}
        await self.ws.send(json.dumps({"method": "prove", "params": params}))
        self.welcome = json.loads(await self.ws.recv())
        if self.welcome.get("method") == "welcome":
            serving = json.loads(await self.ws.recv())  # always the next frame
            assert serving.get("method") == "serving", serving
            self.serving = bool(serving["params"]["serving"])
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.ws is not None
        await self.ws.close()

    async def serve_once(self, reply: dict[str, Any] | None = None) -> dict[str, Any]:
        """Read frames until a command arrives; answer it (``reply`` or {}); return it."""
        assert self.ws is not None
        while True:
            msg = json.loads(await self.ws.recv())
            if "method" in msg and "id" in msg and isinstance(msg["id"], int):
                await self.ws.send(json.dumps({"id": msg["id"], **(reply or {"result": {}})}))
                return msg
            await self.notices.put(msg)
