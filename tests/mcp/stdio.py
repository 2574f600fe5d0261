"""``python -m bridge.mcp`` over stdio for the MCP tests: one server per block, as a person
runs it (``--launch --headless --isolated``, the fake sites mapped in through
``--chrome-arg``), and the module-long client fixture pattern."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client

from bridge.fakes import FakeSites
from bridge.providers.dumps import ENV_SCREENSHOT_S

ROOT = Path(__file__).resolve().parents[2]


def server_args(fake_sites: FakeSites, state: Path, *extra: str) -> list[str]:
    args = ["-m", "bridge.mcp", "--launch", "--headless", "--isolated", "--state-dir", str(state)]
    args += [f"--chrome-arg={arg}" for arg in fake_sites.chromium_args()]
    return [*args, *extra]


@contextlib.asynccontextmanager
async def stdio_server(
    fake_sites: FakeSites,
    state: Path,
    *extra: str,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Client]:
    """A stdio server for the length of the block (entered and left by the same task; its
    stderr in ``state/stderr.log``). A server killed inside the block is gone: leaving it
    only tidies the client up. ``extra`` arguments, the working directory and environment
    changes (e.g. ``HOME``) are the server's as a person would start it."""
    state.mkdir(parents=True, exist_ok=True)
    params = StdioServerParameters(
        command=sys.executable,
        args=server_args(fake_sites, state, *extra),
        cwd=str(cwd),
        # What the client passes by default, plus the checkout (the working directory may
        # be elsewhere), the suite's short dump screenshot wait (tests/conftest.py: its
        # background tabs paint no frame) and the changes asked for.
        env={
            **get_default_environment(),
            "PYTHONPATH": str(ROOT),
            **{k: os.environ[k] for k in (ENV_SCREENSHOT_S,) if k in os.environ},
            **(env or {}),
        },
    )
    with open(state / "stderr.log", "a") as errlog:
        client = Client(stdio_client(params, errlog=errlog))
        await client.__aenter__()
        try:
            yield client
        finally:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(15):  # in this task: its cancel scopes are ours
                    await client.__aexit__(None, None, None)


async def owned(
    open_client: Callable[[], AbstractAsyncContextManager[Client]],
) -> AsyncIterator[Client]:
    """The body of a module-scoped client fixture. anyio cancel scopes must be left by the
    task that entered them, and pytest-asyncio may tear a fixture down in another task: so
    one task owns the client for the whole module."""
    ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def own_client() -> None:
        async with open_client() as client:
            ready.set_result(client)
            await done.wait()

    owner = asyncio.ensure_future(own_client())
    owner.add_done_callback(
        lambda t: ready.done() or ready.set_exception(t.exception() or RuntimeError("client ended"))
    )
    try:
        yield await asyncio.wait_for(ready, 60)
    finally:
        done.set()
        await asyncio.wait_for(owner, 20)
