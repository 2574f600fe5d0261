"""Long asks as jobs: one record per ask in ``<state dir>/jobs/<id>.json`` that outlives the
process that asked (docs/flows.md#jobs).

Thinking and Pro answers take 10 to 40 minutes, and many MCP clients cut a tool call at
60 s. So an ask is a *job*: the ask tool waits ``max_wait`` seconds, then returns the job's
id and its progress, and ``get_answer`` collects the answer later. A job is a file rather
than a process's memory because the process may be gone by then (an MCP client restarts
its server, a terminal is closed), while the answer is not: the sites finish an answer on
their servers, and the job says where to read it (conversation URL, tab), so another
bridge process can pick it up there (``bridge.providers.resume``).

The modules: ``record`` (the record's format, one pydantic model), ``owner`` (the process
that runs a job, told apart from a later one with the same pid), ``store`` (the records on
disk: atomic writes, one writer per job through its lock), ``watch`` (waiting for another
process's lock), ``recorder`` (the running side of one job), ``runner`` (starting, waiting
for, resuming and listing jobs: what ``Bridge`` delegates to).
"""

from bridge.app.jobs.owner import owner_alive, process_start
from bridge.app.jobs.record import Job, JobNotFound, JobStatus, JobUnreadable, Owner
from bridge.app.jobs.recorder import PROGRESS_WRITE_S, JobRecorder
from bridge.app.jobs.runner import JobHost, JobRunner
from bridge.app.jobs.store import KEEP_FINISHED_S, JobLock, JobStore

__all__ = [
    "KEEP_FINISHED_S",
    "PROGRESS_WRITE_S",
    "Job",
    "JobHost",
    "JobLock",
    "JobNotFound",
    "JobRecorder",
    "JobRunner",
    "JobStatus",
    "JobStore",
    "JobUnreadable",
    "Owner",
    "owner_alive",
    "process_start",
]
