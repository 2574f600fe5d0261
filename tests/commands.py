"""The console scripts pip installed into this environment, for tests that run bridge's
commands as a person does (``bridge``, ``bridge-mcp``) rather than ``python -m``."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from bridge.waiting import scaled


def installed_command(name: str) -> str:
    path = Path(sys.executable).with_name(name)
    assert path.exists(), f"{path} is missing: reinstall bridge (bash .ci/bootstrap.sh)"
    return str(path)


@dataclass
class Started:
    """A command started as a person starts it, both of its streams read all along."""

    proc: asyncio.subprocess.Process
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    readers: list[asyncio.Future[None]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.out) + "".join(self.err)


@contextlib.asynccontextmanager
async def started_command(
    command: str, *args: str, ready: str | None, cwd: Path, env: dict[str, str] | None = None
) -> AsyncIterator[Started]:
    """``command`` running until the block ends (then stdin closed and SIGTERM), once a line
    with ``ready`` came on either stream (``None``: once it has ended on its own)."""
    proc = await asyncio.create_subprocess_exec(
        installed_command(command),
        *args,
        cwd=str(cwd),
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    started = Started(proc)
    seen = asyncio.Event()

    async def read(stream: asyncio.StreamReader | None, into: list[str]) -> None:
        assert stream is not None
        while raw := await stream.readline():
            into.append(raw.decode())
            if ready is not None and ready in into[-1]:
                seen.set()
        seen.set()  # ended: the caller's check says how

    started.readers = [
        asyncio.ensure_future(read(proc.stdout, started.out)),
        asyncio.ensure_future(read(proc.stderr, started.err)),
    ]
    try:
        if ready is None:
            await asyncio.wait_for(proc.wait(), scaled(120.0))
        else:
            await asyncio.wait_for(seen.wait(), scaled(90.0))
            assert ready in started.text, started.text
        yield started
    finally:
        if proc.returncode is None:
            # Both: `bridge cdp` reads stdin on a thread that only its closing ends.
            assert proc.stdin is not None
            proc.stdin.close()
            proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), scaled(20.0))
        await asyncio.wait_for(asyncio.gather(*started.readers), scaled(10.0))
