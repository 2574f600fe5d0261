"""Outputs as MCP content blocks (bridge.mcp.outputs_content), pure: no server, no browser."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import pytest

from bridge.mcp import outputs_content
from bridge.mcp.outputs_content import output_contents, outputs_of


def _image(path: Path, size: int) -> dict[str, object]:
    return {
        "kind": "image",
        "name": path.name,
        "path": str(path),
        "bytes": size,
        "mime": "image/png",
    }


def test_an_image_is_inlined_and_a_file_linked(tmp_path: Path) -> None:
    png = tmp_path / "a.png"
    png.write_bytes(b"\x89PNG-ish")
    csv = tmp_path / "b.csv"
    blocks = output_contents(
        [
            _image(png, 8),
            {"kind": "file", "name": "b.csv", "path": str(csv), "bytes": 3, "mime": "text/csv"},
        ]
    )
    assert [b.type for b in blocks] == ["image", "text", "resource_link"]
    assert base64.b64decode(blocks[0].data) == b"\x89PNG-ish"  # type: ignore[union-attr]
    assert str(png) in blocks[1].text  # type: ignore[union-attr]
    link = blocks[2]
    assert (link.uri, link.name, link.size, link.mime_type) == (
        csv.as_uri(),
        "b.csv",
        3,
        "text/csv",
    )  # type: ignore[union-attr]


def test_an_image_too_large_changed_or_linked_gets_its_path_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    png = tmp_path / "a.png"
    png.write_bytes(b"12345678")
    monkeypatch.setattr(outputs_content, "MAX_INLINE_IMAGE_BYTES", 4)
    assert [b.type for b in output_contents([_image(png, 8)])] == ["text"]
    monkeypatch.undo()
    assert [b.type for b in output_contents([_image(png, 7)])] == ["text"]  # size changed
    if sys.platform != "win32":
        secret = tmp_path / "secret"
        secret.write_bytes(b"12345678")
        (tmp_path / "link.png").symlink_to(secret)
        assert [b.type for b in output_contents([_image(tmp_path / "link.png", 8)])] == ["text"]


def test_outputs_of_reads_used_outputs_or_nothing() -> None:
    assert outputs_of(None) == []
    assert outputs_of({"used": {"outputs": [{"kind": "file"}, "junk"]}}) == [{"kind": "file"}]
    assert outputs_of({"used": "x"}) == []
