"""Persistent state under the state directory (``.local/bridge/`` by default).

- ``sessions.json``: per session key and provider, the conversation url, tab id, last use;
- ``history.jsonl``: one line per ask, appended;
- ``debug/``: dumps of suspicious answers and anomalies.

Nothing is lost when two processes write at once: every read-modify-write of
``sessions.json`` holds an exclusive ``flock`` on a lock file and replaces the file
atomically (write a temporary file, fsync, rename); a history line is written with one
``write`` on an ``O_APPEND`` descriptor under the same lock.

``flock`` waits for another process and ``fsync`` waits for the disk, so async code calls
the ``*_async`` variants, which do the same work on a worker thread: a slow disk or a busy
neighbour never stalls the event loop that carries every CDP round trip.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["SessionEntry", "StateStore", "default_state_dir", "project_key"]


def default_state_dir() -> Path:
    env = os.environ.get("BRIDGE_STATE_DIR")
    return Path(env) if env else Path.cwd() / ".local" / "bridge"


def project_key() -> str:
    """The per-project session key: the working directory's name (docs/flows.md#state-files)."""
    return Path.cwd().name or "default"


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class SessionEntry:
    url: str
    tab_id: int | None
    last_used: str


class StateStore:
    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or default_state_dir()).expanduser()
        self.sessions_path = self.root / "sessions.json"
        self.history_path = self.root / "history.jsonl"
        self.debug_dir = self.root / "debug"
        self._lock_path = self.root / ".lock"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._lock_path, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    # -- sessions -------------------------------------------------------------------

    def _read_sessions(self) -> dict[str, Any]:
        try:
            data = json.loads(self.sessions_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"projects": {}}
        except json.JSONDecodeError:
            # Never written by us (our writes are atomic): keep it aside rather than lose it.
            aside = self.sessions_path.with_suffix(f".corrupt-{int(time.time())}.json")
            self.sessions_path.rename(aside)
            return {"projects": {}}
        if not isinstance(data, dict) or not isinstance(data.get("projects"), dict):
            return {"projects": {}}
        return data

    def get_session(self, key: str, provider: str) -> SessionEntry | None:
        with self._locked():
            entry = self._read_sessions()["projects"].get(key, {}).get(provider)
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            return None
        tab = entry.get("tabId")
        return SessionEntry(
            entry["url"], tab if isinstance(tab, int) else None, str(entry.get("lastUsed", ""))
        )

    def put_session(self, key: str, provider: str, url: str, tab_id: int | None) -> None:
        with self._locked():
            data = self._read_sessions()
            data["projects"].setdefault(key, {})[provider] = {
                "url": url,
                "tabId": tab_id,
                "lastUsed": _now_iso(),
            }
            _atomic_write(self.sessions_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def forget_session(self, key: str, provider: str) -> None:
        with self._locked():
            data = self._read_sessions()
            if data["projects"].get(key, {}).pop(provider, None) is not None:
                _atomic_write(
                    self.sessions_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n"
                )

    async def get_session_async(self, key: str, provider: str) -> SessionEntry | None:
        return await asyncio.to_thread(self.get_session, key, provider)

    async def put_session_async(
        self, key: str, provider: str, url: str, tab_id: int | None
    ) -> None:
        await asyncio.to_thread(self.put_session, key, provider, url, tab_id)

    # -- history --------------------------------------------------------------------

    async def append_history_async(self, record: dict[str, Any]) -> None:
        await asyncio.to_thread(self.append_history, record)

    def append_history(self, record: dict[str, Any]) -> None:
        line = json.dumps({"ts": _now_iso(), **record}, ensure_ascii=False, separators=(",", ":"))
        data = (line + "\n").encode("utf-8")
        with self._locked():
            fd = os.open(self.history_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)

    def history(self) -> list[dict[str, Any]]:
        try:
            text = self.history_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    # -- debug dumps ----------------------------------------------------------------

    def write_debug(self, provider: str, payload: dict[str, Any], screenshot: bytes | None) -> Path:
        self.debug_dir.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S_%f")
        path = self.debug_dir / f"{provider}-{stamp}-{os.getpid()}.json"
        if screenshot:
            png = path.with_suffix(".png")
            _atomic_write_bytes(png, screenshot)
            payload = {**payload, "screenshot": png.name}
        _atomic_write(path, json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")
        return path

    async def write_debug_async(
        self, provider: str, payload: dict[str, Any], screenshot: bytes | None
    ) -> Path:
        return await asyncio.to_thread(self.write_debug, provider, payload, screenshot)


def _atomic_write(path: Path, text: str) -> None:
    _atomic_write_bytes(path, text.encode("utf-8"))


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
