"""Playing another user of the machine: the owner of a planted file or directory.

As root (containers, CI images) the path is really given away: ``chown`` to uid 65534
(``nobody``), so the kernel's own ``stat`` says another user owns it. Without root nobody
can give a file away, so bridge's view of who it runs as is changed instead, in the one
module whose check is under test (``owner_uid`` is looked up there at call time): that path,
and only the paths that module checks, then look another user's.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import pytest

NOBODY = 65534


def give_to_another_user(path: Path, checker: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``path`` another user's as ``checker`` (a bridge module importing ``owner_uid``)
    sees it."""
    if os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
        return
    assert hasattr(checker, "owner_uid"), checker
    monkeypatch.setattr(checker, "owner_uid", lambda: os.geteuid() + 1)
