"""Putting files into a page's ``<input type=file>``: by their paths, through Chrome, only.

``DOM.setFileInputFiles`` lets Chrome itself read the files, with the extension's file
access ("Allow access to file URLs"; Chromium's ``MayReadLocalFiles``). When Chrome refuses
("Not allowed"), bridge does NOT read the bytes itself and hand them to the page through a
``DataTransfer``: that would give a page, through an agent it talked into an upload, files
Chrome itself would not let the extension read. The refusal becomes ``FileAccessOff``, which
tells the person which switch to turn on (docs/flows.md#file-policy).

The paths given here have passed the file policy (``bridge.policy.files``) already.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bridge.cdp.session import CdpSession
from bridge.errors import CdpError, FileAccessOff

__all__ = ["set_input_files"]

#: Chrome's answer when the debugging extension may not read local files (devtools
#: DOMHandler::SetFileInputFiles; seen in Chromium 156 with file access switched off).
REFUSED = "Not allowed"


async def set_input_files(
    tab: CdpSession,
    node: Mapping[str, Any],
    paths: Sequence[Path],
    *,
    session_id: str | None = None,
) -> None:
    """Give ``paths`` to the file input ``node`` (``{"objectId": …}`` or
    ``{"backendNodeId": …}``); ``FileAccessOff`` when Chrome refuses the extension."""
    try:
        await tab.send(
            "DOM.setFileInputFiles",
            {"files": [str(p) for p in paths], **node},
            session_id=session_id,
        )
    except CdpError as exc:
        if exc.detail.strip() == REFUSED:
            raise FileAccessOff(", ".join(p.name for p in paths)) from exc
        raise
