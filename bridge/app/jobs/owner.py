"""Who owns a job: a process, told apart from a later one given the same pid.

A job record names the process running it (``owner``: pid and start time) for people and
for ``list_jobs``' ``owner_alive``; the job's lock is what decides who runs it
(bridge.app.jobs.store). psutil reads a process's start time and state the same way on
Linux, macOS and Windows, where the standard library has no portable call for either
(Linux's ``/proc/<pid>/stat`` does not exist elsewhere, and macOS needs ``sysctl``).
"""

from __future__ import annotations

import psutil

__all__ = ["owner_alive", "process_start"]


def process_start(pid: int) -> float | None:
    """When the process started (epoch seconds, as the system records it), or None where
    that cannot be read (the process is gone, or the system does not say)."""
    try:
        return psutil.Process(pid).create_time()
    except (psutil.Error, OSError):
        return None


def owner_alive(pid: int, start: float | None) -> bool:
    """Whether the process that owns a job still runs: the pid exists, is no zombie (killed,
    not yet reaped by its parent), and, where ``start`` is known, started then (else the
    system gave its pid to a later process)."""
    if pid <= 0:
        return False
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        return start is None or process.create_time() == start
    except psutil.AccessDenied:
        return True  # it exists, as another user's process
    except (psutil.NoSuchProcess, OSError):
        return False
