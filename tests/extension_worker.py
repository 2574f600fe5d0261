"""The bridge extension's service worker, reached through a launched browser's own DevTools
port (tests only): read what it says of itself, or stop it as Chrome might."""

from __future__ import annotations

from typing import Any

from bridge.cdp.direct import DirectCdp


async def worker_target(cdp: DirectCdp, timeout: float = 30.0) -> str:
    """The DevTools target id of the extension's service worker."""
    return await cdp.extension_worker(timeout)


async def in_worker(cdp: DirectCdp, expression: str, timeout: float = 60.0) -> Any:
    """Evaluate ``expression`` (a promise is awaited) in the worker; its value."""
    return await cdp.in_extension_worker(expression, timeout)


async def extension_status(cdp: DirectCdp) -> dict[str, Any]:
    """What discovery knows (``bridgeStatus()``, as the popup shows it)."""
    status: dict[str, Any] = await in_worker(cdp, "bridgeStatus()")
    return status


async def stop_worker(cdp: DirectCdp) -> None:
    """Stop the worker, as Chrome does to an idle or crashed one."""
    await cdp.call("Target.closeTarget", {"targetId": await worker_target(cdp)})
