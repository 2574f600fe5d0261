"""The bridge extension's service worker, reached through a launched browser's own DevTools
port (tests only): read what it says of itself, or stop it as Chrome might."""

from __future__ import annotations

from typing import Any

from bridge.direct import DirectCdp
from bridge.relay import EXTENSION_ID
from bridge.waiting import wait_for


def _is_worker(info: dict[str, Any]) -> bool:
    return info.get("type") == "service_worker" and str(info.get("url", "")).startswith(
        f"chrome-extension://{EXTENSION_ID}/"
    )


async def worker_target(cdp: DirectCdp, timeout: float = 30.0) -> str:
    """The DevTools target id of the extension's service worker (waited for: a browser just
    started registers it a moment later)."""
    found = next((t for t in await cdp.targets("service_worker") if _is_worker(t)), None)
    if found is not None:
        return str(found["targetId"])
    created = cdp.expect_event("Target.targetCreated", lambda p: _is_worker(p["targetInfo"]))
    # Discovery reports every existing target at once, then each new one.
    await cdp.call("Target.setDiscoverTargets", {"discover": True})
    try:
        info = await wait_for(created, timeout, "the extension's service worker")
    finally:
        await cdp.call("Target.setDiscoverTargets", {"discover": False})
    return str(info["targetInfo"]["targetId"])


async def in_worker(cdp: DirectCdp, expression: str, timeout: float = 60.0) -> Any:
    """Evaluate ``expression`` (a promise is awaited) in the worker; its value.

    A worker just started has a target before its script has run (no ``setTimeout``, no
    ``chrome``): then this waits for Chrome's ``Inspector.workerScriptLoaded`` first."""
    loaded = cdp.expect_event("Inspector.workerScriptLoaded")
    session = await cdp.attach(await worker_target(cdp))
    try:
        ready = {"expression": "typeof setTimeout === 'function'", "returnByValue": True}
        if not (await cdp.call("Runtime.evaluate", ready, session))["result"].get("value"):
            await wait_for(loaded, timeout, "the extension's service worker script")
        params = {"expression": expression, "awaitPromise": True, "returnByValue": True}
        result = await cdp.call("Runtime.evaluate", params, session, timeout=timeout)
        return result["result"]["value"]
    finally:
        loaded.cancel()
        await cdp.call("Target.detachFromTarget", {"sessionId": session})


async def extension_status(cdp: DirectCdp) -> dict[str, Any]:
    """What discovery knows (``bridgeStatus()``, as the popup shows it)."""
    status: dict[str, Any] = await in_worker(cdp, "bridgeStatus()")
    return status


async def stop_worker(cdp: DirectCdp) -> None:
    """Stop the worker, as Chrome does to an idle or crashed one."""
    await cdp.call("Target.closeTarget", {"targetId": await worker_target(cdp)})
