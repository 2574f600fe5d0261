"""Files with the question, read and sorted (docs/sites.md#attachments). Pure: no browser.

A file travels one of two ways:

- **inline**: a small UTF-8 text file is put into the question itself, after it, each as
  ``<file name="notes.txt">`` … ``</file>`` on lines of their own (no Markdown that a
  composer could turn into formatting while typing);
- **upload**: every other file (binary, or text too long to inline) goes through the site's
  own upload control, as a person would attach it: bridge intercepts the file chooser
  (``Page.setInterceptFileChooserDialog``), clicks the control with a trusted CDP click
  (C1.13; Gemini's menu item after its "Upload & tools" menu opens, G8.1), and puts the
  files into the input the chooser belongs to (``Page.fileChooserOpened`` names it).

Every path passes the file policy first (``bridge.policy.files``, docs/flows.md#file-policy:
inside the working directory or an ``--allow-path``, nothing hidden, no credential store),
before any file is read (``PathNotAllowed``); then the files are read and checked against
:class:`Limits` by :func:`prepare_files` before anything is typed (``AttachmentRefused``);
``bridge.providers.uploads`` carries the uploads.
"""

from __future__ import annotations

import mimetypes
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from bridge.errors import AttachmentRefused
from bridge.policy.files import FilePolicy

__all__ = ["KB", "LIMITS", "MB", "Attachments", "FilePart", "Limits", "prepare_files"]

KB = 1000
MB = 1000 * KB


@dataclass(frozen=True)
class Limits:
    """What one question may carry (docs/sites.md#attachments says why these values)."""

    max_files: int = 10
    max_file_bytes: int = 25 * MB
    max_total_bytes: int = 50 * MB
    #: A text file up to this many characters goes into the question itself …
    inline_file_chars: int = 20_000
    #: … while all inlined files together stay under this (C1.15: ~60k-character prompts
    #: can be refused by ChatGPT's composer, so the question stays well below that).
    inline_total_chars: int = 40_000


LIMITS = Limits()


@dataclass(frozen=True)
class FilePart:
    """One file as read: its bytes, and its text when it is UTF-8 text."""

    given: str  # the path as the caller wrote it (for messages)
    path: Path  # resolved (symlinks followed) and allowed by the file policy
    name: str  # what the site and the question show: the file's name
    data: bytes = field(repr=False)
    text: str | None = field(repr=False)
    mime: str
    modified_ms: int

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass(frozen=True)
class Attachments:
    """The files of one question, sorted into what is inlined and what is uploaded."""

    inline: tuple[FilePart, ...] = ()
    uploads: tuple[FilePart, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.inline or self.uploads)

    def compose(self, question: str) -> str:
        """The question as typed: the question, then each inlined file in its tags."""
        if not self.inline:
            return question
        blocks = [question.rstrip()]
        for part in self.inline:
            body = (part.text or "").rstrip("\n")
            blocks.append(f'<file name="{_attribute(part.name)}">\n{body}\n</file>')
        return "\n\n".join(blocks)

    def summary(self, methods: Sequence[str] = ()) -> list[dict[str, Any]]:
        """For ``used.attachments``: each file, how it went, and by which method."""
        out: list[dict[str, Any]] = [
            {"name": p.name, "bytes": p.size, "sent_as": "inline", "method": ""}
            for p in self.inline
        ]
        for index, part in enumerate(self.uploads):
            method = methods[index] if index < len(methods) else ""
            out.append(
                {"name": part.name, "bytes": part.size, "sent_as": "upload", "method": method}
            )
        return out


def _attribute(name: str) -> str:
    return name.replace("&", "&amp;").replace('"', "&quot;").replace("\n", " ")


def _size(n: int) -> str:
    if n >= MB:
        return f"{n / MB:.1f} MB"
    if n >= KB:
        return f"{n / KB:.1f} kB"
    return f"{n} bytes"


def _as_text(data: bytes) -> str | None:
    """The file's text when it is UTF-8 (a BOM allowed) without NUL bytes, else None."""
    if b"\x00" in data:
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return text.replace("\r\n", "\n")


def prepare_files(
    paths: Sequence[str | PathLike[str]],
    limits: Limits = LIMITS,
    *,
    policy: FilePolicy | None = None,
) -> Attachments:
    """Read ``paths`` and decide how each travels. ``PathNotAllowed`` when the file policy
    (default: the working directory only) refuses one, checked for every path before any is
    read; ``AttachmentRefused`` names the first file that cannot go (missing, not a file,
    unreadable, over a limit) and what to do."""
    policy = policy if policy is not None else FilePolicy.create()
    if len(paths) > limits.max_files:
        raise AttachmentRefused(
            str(paths[limits.max_files]),
            f"{len(paths)} files were given and at most {limits.max_files} go with one question",
            "Send fewer files (small text files can be joined into one), or ask in several "
            "questions",
        )
    allowed = policy.check_all(paths)  # all of them before any is read
    parts: list[FilePart] = []
    total = 0
    for raw, path in zip(paths, allowed, strict=True):
        given = str(raw)
        try:
            info = path.stat()
        except FileNotFoundError:
            raise AttachmentRefused(
                given,
                "it does not exist",
                f"Check the path (a relative path is read from {policy.base}, where bridge runs)",
            ) from None
        except OSError as exc:
            raise AttachmentRefused(
                given,
                f"it cannot be read ({exc.strerror or exc})",
                "Check the path and its permissions",
            ) from None
        if not stat.S_ISREG(info.st_mode):
            what = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise AttachmentRefused(given, f"it is {what}", "Give the files themselves, one by one")
        _check_size(given, info.st_size, total, limits)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise AttachmentRefused(
                given,
                f"it cannot be read ({exc.strerror or exc})",
                "Check the file's permissions",
            ) from None
        _check_size(given, len(data), total, limits)  # it may have grown since stat
        total += len(data)
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        parts.append(
            FilePart(
                given=given,
                path=path,
                name=path.name,  # the name Chrome gives the upload: the real file's
                data=data,
                text=_as_text(data),
                mime=mime,
                modified_ms=int(info.st_mtime * 1000),
            )
        )
    inline: list[FilePart] = []
    uploads: list[FilePart] = []
    inlined_chars = 0
    for part in parts:
        text = part.text
        if (
            text is not None
            and len(text) <= limits.inline_file_chars
            and inlined_chars + len(text) <= limits.inline_total_chars
        ):
            inline.append(part)
            inlined_chars += len(text)
        else:
            uploads.append(part)
    return Attachments(tuple(inline), tuple(uploads))


def _check_size(given: str, size: int, before: int, limits: Limits) -> None:
    if size > limits.max_file_bytes:
        raise AttachmentRefused(
            given,
            f"it is {_size(size)}, over the limit of {_size(limits.max_file_bytes)} per file",
            "Send a smaller file (an excerpt, a compressed copy) or split it into parts",
        )
    if before + size > limits.max_total_bytes:
        raise AttachmentRefused(
            given,
            f"with it the files come to {_size(before + size)}, over the limit of "
            f"{_size(limits.max_total_bytes)} for one question",
            "Send fewer or smaller files, or ask in several questions",
        )
