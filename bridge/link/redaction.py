"""No token in any log: request lines and headers are redacted where servers log them.

A DevTools client that cannot send headers puts the token in the WebSocket URL's query
(``/cdp?token=…``), and websockets logs every request line and header at DEBUG
(``< GET /cdp?token=… HTTP/1.1``, ``< Authorization: Bearer …``); uvicorn's access log
writes request paths at INFO. bridge keeps those loggers at WARNING, but a person (or a
test harness, or an embedding program) may turn them up, and MCP clients keep a server's
stderr in files. So the loggers that see requests carry a filter that rewrites a record's
message before any handler formats it: the token's value becomes ``[redacted]``, the rest of
the line stays for debugging.

A logger's filter applies to the records made on that logger, whatever handlers the
program set up, so it is attached to the loggers that emit, not to their parents.
"""

from __future__ import annotations

import logging
import re

__all__ = [
    "REDACTED",
    "UVICORN_LOGGERS",
    "WEBSOCKETS_LOGGERS",
    "RedactSecrets",
    "redact",
    "redact_request_logs",
]

REDACTED = "[redacted]"
#: What websockets' servers and clients log through (their protocol objects included).
WEBSOCKETS_LOGGERS = ("websockets.server", "websockets.client")
#: uvicorn's request and error logs.
UVICORN_LOGGERS = ("uvicorn.access", "uvicorn.error")

_SECRETS = re.compile(
    r"(?P<query>(?:[?&]|%3[fF]|%26)(?:token|access_token)(?:=|%3[dD]))[^&#\s'\"]+"
    r"|(?P<header>\b(?:authorization|proxy-authorization)\b[\"']?\s*[:=,]\s*[\"']?"
    r"(?:bearer|basic|token)?\s*)[^\s'\",)]+",
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """``text`` with every token in a query (``?token=…``, ``&access_token=…``) and every
    ``Authorization`` header value replaced by ``[redacted]``."""

    def keep_name(match: re.Match[str]) -> str:
        return (match.group("query") or match.group("header")) + REDACTED

    return _SECRETS.sub(keep_name, text)


class RedactSecrets(logging.Filter):
    """Rewrites a record whose message (or traceback text) holds a token; lets it through."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is the logging module's to report
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


_FILTER = RedactSecrets()


def redact_request_logs(*names: str) -> None:
    """Attach the filter to each named logger (once: calling again changes nothing)."""
    for name in names or (*WEBSOCKETS_LOGGERS, *UVICORN_LOGGERS):
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
