"""Which downloaded file the DevTools endpoint may copy, and to where.

A client that asks for ``Browser.setDownloadBehavior`` with ``allowAndName`` (Playwright's
``page.expect_download()``) reads each finished download at ``<downloadPath>/<guid>``. The
extension cannot make Chrome save there, so the endpoint copies the file Chrome saved. Both
what names the file (the ``guid`` of ``Page.downloadWillBegin``/``downloadProgress``) and where
it is (the ``path`` of the ``downloadInfo`` reply) come from the extension link, and a local
program can speak the relay protocol in the extension's place. Trusted as they come, a guid
``../../.bashrc`` and a path ``~/.ssh/id_ed25519`` would copy any file the person can read to any
place they can write. So every copy is checked here first (``download_target``, pure) and made
without following links (``copy_download``):

- the guid is a UUID, as Chrome makes them, so the target is a plain name inside the client's
  download directory;
- the source is a regular file, not a symlink, named as the download was announced
  (``suggestedFilename``, or Chrome's " (N)" variant when that name was taken), modified after
  the download began, and, when the browser's download directory is known (a browser bridge
  launched with a temporary profile), directly inside it.

Anything else is refused (``DownloadRefused``); nothing is written then.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePath

from bridge.errors import BridgeError

__all__ = [
    "CLOCK_SLACK",
    "DownloadRefused",
    "DownloadStart",
    "SourceFacts",
    "copy_download",
    "download_target",
    "is_download_guid",
    "source_facts",
]

_GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: Seconds a download's file may predate bridge hearing of the download: Chrome may write a
#: small file before its event has crossed the extension and the relay (more so on a loaded
#: machine), and file times are coarser than the clock.
CLOCK_SLACK = 5.0


class DownloadRefused(BridgeError):
    """A download event or reply names a file the endpoint will not copy; the message says
    why. The client hears the download as canceled."""

    code = "download_not_copied"


@dataclass(frozen=True)
class DownloadStart:
    """What ``Page.downloadWillBegin`` announced, and when bridge heard of it."""

    url: str
    name: str  # suggestedFilename
    began: float  # time.time()


@dataclass(frozen=True)
class SourceFacts:
    """What the file system says of the file a ``downloadInfo`` reply names (``lstat``:
    of the name itself, a symlink is not followed)."""

    path: PurePath  # as reported
    folder: PurePath  # its folder, symlinks resolved
    mode: int
    mtime: float
    device: int
    inode: int


def is_download_guid(guid: object) -> bool:
    """Whether ``guid`` has the shape of Chrome's download guids (a UUID, 8-4-4-4-12 hex)."""
    return isinstance(guid, str) and _GUID.fullmatch(guid) is not None


def download_target(
    guid: object,
    *,
    client_dir: str | PurePath,
    start: DownloadStart | None,
    source: SourceFacts,
    browser_dir: PurePath | None,
) -> Path:
    """Where the copy of ``source`` goes for the client, or DownloadRefused (pure).

    ``client_dir`` is the client's ``downloadPath``; ``browser_dir`` the folder Chrome saves
    downloads into, symlinks resolved, or None when bridge cannot know it (the person's own
    Chrome may save anywhere they choose).
    """
    if not is_download_guid(guid):
        raise DownloadRefused(f"the download guid {guid!r} is not a UUID as Chrome makes them")
    folder = PurePath(client_dir)
    if not folder.is_absolute():
        raise DownloadRefused(f"the client's downloadPath {str(folder)!r} is not absolute")
    target = Path(os.path.normpath(folder / str(guid)))
    if target.parent != Path(os.path.normpath(folder)):
        raise DownloadRefused(f"{str(target)!r} is outside the client's downloadPath")
    if start is None:
        raise DownloadRefused(f"no Page.downloadWillBegin was seen for download {guid}")
    if not source.path.is_absolute():
        raise DownloadRefused(f"the reported file {str(source.path)!r} is not an absolute path")
    if stat.S_ISLNK(source.mode):
        raise DownloadRefused(f"the reported file {str(source.path)!r} is a symlink")
    if not stat.S_ISREG(source.mode):
        raise DownloadRefused(f"the reported file {str(source.path)!r} is not a regular file")
    if browser_dir is not None and source.folder != browser_dir:
        raise DownloadRefused(
            f"the reported file {str(source.path)!r} is not in the browser's download "
            f"directory {str(browser_dir)!r}"
        )
    if not _named_as_announced(source.path.name, start.name):
        raise DownloadRefused(
            f"the reported file {str(source.path)!r} is not named as the download was "
            f"announced ({start.name!r})"
        )
    if source.mtime < start.began - CLOCK_SLACK:
        raise DownloadRefused(
            f"the reported file {str(source.path)!r} was last written before the download began"
        )
    return target


def _named_as_announced(name: str, announced: str) -> bool:
    """``announced``, or Chrome's variant when that name is taken: " (N)" before an extension
    ("report (1).csv", "a (2).tar.gz"; Chrome decides which dot starts the extension)."""
    if not announced:
        return False
    if name == announced:
        return True
    cuts = [i for i, c in enumerate(announced) if c == "."] + [len(announced)]
    return any(
        re.fullmatch(re.escape(announced[:i]) + r" \(\d+\)" + re.escape(announced[i:]), name)
        for i in cuts
    )


def source_facts(path: str) -> SourceFacts:
    """The facts ``download_target`` checks, read from the file system (OSError if the file
    or its folder is missing)."""
    reported = Path(path)
    if not reported.is_absolute():
        raise DownloadRefused(f"the reported file {path!r} is not an absolute path")
    found = os.lstat(reported)
    folder = reported.parent.resolve(strict=True)
    return SourceFacts(reported, folder, found.st_mode, found.st_mtime, found.st_dev, found.st_ino)


def copy_download(source: SourceFacts, target: Path) -> None:
    """Copy the checked file to ``target`` without following a link at either end.

    The source is opened with ``O_NOFOLLOW`` and must still be the very file that was checked
    (device and inode), so a file swapped for a link or another file after the check is
    refused. The copy is written to a fresh temporary file beside the target and renamed over
    it: a symlink planted at the target is replaced, never written through.
    """
    # Windows has none of the three (getattr leaves them out): no FIFO to block on there.
    flags = os.O_RDONLY | sum(
        getattr(os, name, 0) for name in ("O_NONBLOCK", "O_NOFOLLOW", "O_CLOEXEC")
    )
    try:
        fd = os.open(source.path, flags)
    except OSError as exc:
        reason = f"the reported file {str(source.path)!r} cannot be opened: {exc}"
        raise DownloadRefused(reason) from exc
    with open(fd, "rb") as src:
        opened = os.fstat(src.fileno())
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (
            source.device,
            source.inode,
        ):
            raise DownloadRefused(f"the reported file {str(source.path)!r} changed while checked")
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".bridge-download-")
        try:
            with open(handle, "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
