"""The one logging set-up of every bridge process: ``bridge …``, ``python -m bridge.mcp`` and
the native host.

What a person can turn on, and send with a bug report (README, "When something does not work"):

- ``BRIDGE_LOG=debug|info|warning``: how much bridge logs (default: warning; ``info`` for the
  MCP server's ``--verbose``). Any other value is an error naming the valid ones, not a guess.
- ``--log-file PATH`` (or ``BRIDGE_LOG_FILE``, which reaches the native host too: the
  browser starts it with no arguments): the same lines appended to a file. The file is
  created with mode 0600 (its parent too, 0700, when missing), opened ``O_APPEND`` and never
  truncated, so the lines of an earlier run stay for the report.

One line per event: ``2025-01-31T12:00:00.123Z WARNING bridge.link.relay: message``. UTC, so
lines from the MCP server, the native host and a terminal command sort together whatever the
zones; newlines in a message or a traceback are written as ``\\n`` so an event stays one line
and a message cannot forge another line.

What never reaches a log line, at any level:

- tokens and the person's secret: every handler carries :class:`RedactSecrets`, which rewrites
  tokens in URLs' queries and ``Authorization`` headers, ``token=``/``secret=`` pairs, and any
  value registered with :func:`never_log` (bridge registers each token and secret it loads,
  so even a value in an unexpected place is caught);
- page contents, questions and answers: bridge's own log calls say what happened (ids, states,
  sizes), never what a page or a person wrote; third-party libraries whose debug lines dump
  whole frames or requests (websockets, the MCP SDK, uvicorn, httpx) stay at INFO or above
  whatever ``BRIDGE_LOG`` says, because their frames carry the CDP commands that type the
  question and the page text that holds the answer.

A foundation (no bridge import): the native host in ``link`` and every face use it.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Final, TextIO

__all__ = [
    "ENV_LOG",
    "ENV_LOG_FILE",
    "LEVELS",
    "REDACTED",
    "LogSetupError",
    "RedactSecrets",
    "add_log_arguments",
    "log_file_from",
    "never_log",
    "redact",
    "setup_logging",
]

ENV_LOG: Final = "BRIDGE_LOG"
ENV_LOG_FILE: Final = "BRIDGE_LOG_FILE"
LEVELS: Final = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}
REDACTED: Final = "[redacted]"
#: Loggers of libraries that log whole frames or requests at DEBUG (page text, questions,
#: tokens): never below INFO.
NOISY_LIBRARIES: Final = ("websockets", "mcp", "uvicorn", "httpx", "httpcore", "asyncio")

_SECRETS = re.compile(
    r"(?P<query>(?:[?&]|%3[fF]|%26)(?:token|access_token)(?:=|%3[dD]))[^&#\s'\"]+"
    r"|(?P<header>\b(?:authorization|proxy-authorization)\b[\"']?\s*[:=,]\s*[\"']?"
    r"(?:bearer|basic|token)?\s*)[^\s'\",)]+"
    # A name bridge gives a secret, then its value: token=…, "secret": "…", secret: …
    r"|(?P<pair>\b(?:token|secret|mcp[-_]token|cdp[-_]token|bridge_secret)[\"']?\s*[:=]\s*"
    r"[\"']?)[A-Za-z0-9_\-]{16,}",
    re.IGNORECASE,
)
#: Values shorter than this are not registered: redacting them would blank common words.
_MIN_SECRET = 16
_known: set[str] = set()
_known_lock = threading.Lock()


def never_log(*values: str) -> None:
    """Remember values (a token, the secret) that no log line may show, wherever they appear.

    Called where bridge loads or makes them, so a value that ends up in an exception's message
    or a library's line is caught even when no pattern would recognise it."""
    with _known_lock:
        _known.update(v for v in values if len(v) >= _MIN_SECRET)


def redact(text: str) -> str:
    """``text`` with every token in a query (``?token=…``, ``&access_token=…``), every
    ``Authorization`` header value, every ``token=``/``secret=`` value, and every value given
    to :func:`never_log` replaced by ``[redacted]``."""

    def keep_name(match: re.Match[str]) -> str:
        return (match.group("query") or match.group("header") or match.group("pair")) + REDACTED

    text = _SECRETS.sub(keep_name, text)
    with _known_lock:
        known = sorted(_known, key=len, reverse=True)
    for value in known:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


class RedactSecrets(logging.Filter):
    """Rewrites a record whose message (or traceback text) holds a secret; lets it through.

    On a handler it sees every record that handler writes, from any logger; on a logger, the
    records made on that logger (``bridge.link.redaction`` puts it on the request loggers too,
    for programs that set up their own handlers)."""

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
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


class OneLineFormatter(logging.Formatter):
    """``<UTC time> <LEVEL> <logger>: <message>``, one line whatever the message holds."""

    converter = staticmethod(time.gmtime)

    def __init__(self) -> None:
        super().__init__("%(asctime)s.%(msecs)03dZ %(levelname)s %(name)s: %(message)s")
        self.datefmt = "%Y-%m-%dT%H:%M:%S"

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        return line.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n")


class LogSetupError(ValueError):
    """The log settings cannot be used: the message says which one and what to pass."""


def level_from(environ: Mapping[str, str], default: int) -> int:
    """The level ``BRIDGE_LOG`` names (``default`` when unset or empty)."""
    raw = environ.get(ENV_LOG, "").strip()
    if not raw:
        return default
    level = LEVELS.get(raw.lower())
    if level is None:
        raise LogSetupError(
            f"{ENV_LOG}={raw!r} is not a log level: use {', '.join(LEVELS)} "
            f"(or leave {ENV_LOG} unset for warnings only)"
        )
    return level


def log_file_from(given: Path | None, environ: Mapping[str, str] | None = None) -> Path | None:
    """The log file: ``--log-file`` when given, else ``BRIDGE_LOG_FILE``, else none."""
    if given is not None:
        return given
    raw = (os.environ if environ is None else environ).get(ENV_LOG_FILE, "").strip()
    return Path(raw).expanduser() if raw else None


def open_log_file(path: Path) -> TextIO:
    """``path`` opened to append (made 0600, its parent 0700 when missing); never truncated."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)  # POSIX only
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        raise LogSetupError(
            f"cannot open the log file {path}: {exc.strerror or exc}; pass a path you can "
            "write to (--log-file or BRIDGE_LOG_FILE)"
        ) from None
    return os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace", buffering=1)


class _FileLines(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler on a file opened by :func:`open_log_file` (``FileHandler`` cannot make it
    0600 without changing the process's umask); closing it closes the file."""

    def close(self) -> None:
        try:
            self.acquire()
            try:
                self.stream.close()
            finally:
                self.release()
        finally:
            super().close()


_FILTER = RedactSecrets()
_installed: list[logging.Handler] = []


def setup_logging(
    *,
    log_file: Path | None = None,
    default_level: int = logging.WARNING,
    stream: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Set up the root logger for this process; returns the level in force.

    Lines go to ``stream`` (stderr by default: stdout carries the MCP protocol, or the
    native messaging frames, or a command's output) and, when a log file is given (or
    ``BRIDGE_LOG_FILE`` names one), to that file as well. Raises :class:`LogSetupError` for
    a ``BRIDGE_LOG`` that names no level or a log file that cannot be opened. Calling it
    again replaces what an earlier call installed (tests, embedding programs)."""
    env = os.environ if environ is None else environ
    level = level_from(env, default_level)
    path = log_file_from(log_file, env)
    handlers: list[logging.Handler] = [logging.StreamHandler(stream or sys.stderr)]
    if path is not None:
        handlers.append(_FileLines(open_log_file(path)))
    root = logging.getLogger()
    for old in _installed:
        root.removeHandler(old)
        old.close()  # a stderr handler leaves stderr open; a file handler closes its file
    _installed[:] = handlers
    formatter = OneLineFormatter()
    for handler in handlers:
        handler.setFormatter(formatter)
        handler.addFilter(_FILTER)
        root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("bridge").setLevel(level)
    for name in NOISY_LIBRARIES:
        logging.getLogger(name).setLevel(max(level, logging.INFO))
    # websockets logs one line per connection attempt at INFO (every relay probe): warnings only.
    logging.getLogger("websockets").setLevel(max(level, logging.WARNING))
    return level


def add_log_arguments(parser: argparse.ArgumentParser) -> None:
    """``--log-file PATH``, on every entry point that logs."""
    parser.add_argument(
        "--log-file",
        type=Path,
        metavar="PATH",
        default=None,
        help=f"also append log lines to PATH (made 0600, never truncated; default: "
        f"${ENV_LOG_FILE} if set). How much: {ENV_LOG}=debug|info|warning (default warning). "
        "Tokens, secrets, questions, answers and page text are never logged",
    )
