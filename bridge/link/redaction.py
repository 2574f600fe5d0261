"""No token in any log: request lines and headers are redacted where servers log them.

A DevTools client that cannot send headers puts the token in the WebSocket URL's query
(``/cdp?token=…``), and websockets logs every request line and header at DEBUG
(``< GET /cdp?token=… HTTP/1.1``, ``< Authorization: Bearer …``); uvicorn's access log
writes request paths at INFO. bridge keeps those loggers at WARNING, but a person (or a
test harness, or an embedding program) may turn them up, and MCP clients keep a server's
stderr in files. So the loggers that see requests carry a filter that rewrites a record's
message before any handler formats it: the token's value becomes ``[redacted]``, the rest of
the line stays for debugging.

The redaction itself is :mod:`bridge.logs`'s (every handler bridge installs carries it too);
this module puts it on the loggers that emit requests, for programs with handlers of their own.

A logger's filter applies to the records made on that logger, whatever handlers the
program set up, so it is attached to the loggers that emit, not to their parents.
"""

from __future__ import annotations

import logging

from bridge.logs import REDACTED, RedactSecrets, redact

__all__ = [
    "REDACTED",
    "UVICORN_LOGGERS",
    "WEBSOCKETS_LOGGERS",
    "RedactSecrets",
    "redact",
    "redact_request_logs",
]

#: What websockets' servers and clients log through (their protocol objects included).
WEBSOCKETS_LOGGERS = ("websockets.server", "websockets.client")
#: uvicorn's request and error logs.
UVICORN_LOGGERS = ("uvicorn.access", "uvicorn.error")


_FILTER = RedactSecrets()


def redact_request_logs(*names: str) -> None:
    """Attach the filter to each named logger (once: calling again changes nothing)."""
    for name in names or (*WEBSOCKETS_LOGGERS, *UVICORN_LOGGERS):
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
