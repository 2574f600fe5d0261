"""What an answer generated, as MCP content (docs/mcp.md#outputs): each saved image as
``ImageContent`` (its bytes, base64, with its type) plus a line with its path; each saved
file as a ``ResourceLink`` (``file://`` URI, name, size, type). The paths are in the
structured result too (``used.outputs``)."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mcp_types import ImageContent, ResourceLink, TextContent

__all__ = ["MAX_INLINE_IMAGE_BYTES", "output_contents", "outputs_of"]

#: Images larger than this are given by path only: a client's default message limit can
#: be 1 MiB over the legacy transport (NOTES), and base64 adds a third.
MAX_INLINE_IMAGE_BYTES = 4 * 1024 * 1024

Content = TextContent | ImageContent | ResourceLink


def outputs_of(result: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """``used.outputs`` of an ask's result dict ([] when there are none)."""
    used = (result or {}).get("used")
    found = used.get("outputs") if isinstance(used, dict) else None
    return [o for o in found if isinstance(o, dict)] if isinstance(found, list) else []


def _read_image(path: Path, size: int) -> bytes | None:
    """The saved image's bytes, read without following a link; None if it is gone, changed
    size or is too large to inline."""
    if size > MAX_INLINE_IMAGE_BYTES:
        return None
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with open(fd, "rb") as handle:
        data = handle.read(MAX_INLINE_IMAGE_BYTES + 1)
    return data if len(data) == size else None


def output_contents(outputs: Iterable[Mapping[str, Any]]) -> list[Content]:
    """The content blocks for ``used.outputs``: images inline, files as resource links."""
    blocks: list[Content] = []
    for output in outputs:
        path = Path(str(output.get("path", "")))
        name = str(output.get("name", path.name))
        mime = str(output.get("mime", "")) or "application/octet-stream"
        size = int(output.get("bytes", 0))
        if output.get("kind") == "image":
            data = _read_image(path, size)
            if data is not None and mime.startswith("image/"):
                blocks.append(
                    ImageContent(
                        type="image", data=base64.b64encode(data).decode("ascii"), mime_type=mime
                    )
                )
            blocks.append(
                TextContent(type="text", text=f"Saved image: {path} ({size} bytes, {mime})")
            )
        else:
            blocks.append(
                ResourceLink(
                    type="resource_link",
                    uri=path.as_uri(),
                    name=name,
                    mime_type=mime,
                    size=size,
                    description=f"A file the answer generated, saved at {path}",
                )
            )
    return blocks
