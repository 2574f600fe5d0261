"""The capture file's format (bridge.providers.capture.model): the published JSON Schema is
the model's, the kept captures pass both, and a broken or hostile file is refused with
what is wrong before anything walks it."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bridge.providers.capture.model import CaptureFileError, capture_json_schema, load_capture

ROOT = Path(__file__).resolve().parents[3]
PUBLISHED = ROOT / "docs" / "schemas" / "capture.schema.json"
KEPT = sorted((ROOT / "tests" / "captures").glob("*.json"))


def test_the_published_schema_is_the_models() -> None:
    """docs/schemas/capture.schema.json never drifts from the model (BRIDGE_WRITE_SCHEMAS=1
    rewrites it)."""
    schema = json.dumps(capture_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("BRIDGE_WRITE_SCHEMAS"):
        PUBLISHED.write_text(schema, encoding="utf-8")
    assert PUBLISHED.read_text(encoding="utf-8") == schema, (
        "the capture model changed: run BRIDGE_WRITE_SCHEMAS=1 pytest "
        "tests/providers/capture/test_model.py"
    )


def test_the_project_keeps_a_capture_of_each_fake() -> None:
    assert {p.name for p in KEPT} >= {"chatgpt-fake.json", "gemini-fake.json"}


@pytest.mark.parametrize("path", KEPT, ids=[p.name for p in KEPT])
def test_kept_captures_pass_the_model_and_the_published_schema(path: Path) -> None:
    capture = load_capture(path)
    checker = jsonschema.Draft202012Validator(json.loads(PUBLISHED.read_text(encoding="utf-8")))
    assert list(checker.iter_errors(capture)) == []


def _kept() -> dict[str, Any]:
    return json.loads((ROOT / "tests" / "captures" / "chatgpt-fake.json").read_text())


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "capture.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_node_whose_parent_comes_after_it_is_refused(tmp_path: Path) -> None:
    """A hostile file's parent links could make a walk loop: refused up front."""
    data = _kept()
    data["phases"]["ready"]["nodes"][0]["p"] = 3
    with pytest.raises(
        CaptureFileError, match=r"phases\.ready: .*nodes\[0\] has parent 3, not an earlier"
    ):
        load_capture(_write(tmp_path, data))


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d.update(bridge_capture=2), "bridge_capture"),
        (lambda d: d.update(provider="claude"), "provider"),
        (lambda d: d.pop("ask"), "ask"),
    ],
)
def test_a_wrong_file_says_where_and_how_to_take_one(
    tmp_path: Path, change: Any, said: str
) -> None:
    data = copy.deepcopy(_kept())
    change(data)
    with pytest.raises(CaptureFileError, match=said) as info:
        load_capture(_write(tmp_path, data))
    assert "bridge doctor --live --capture DIR" in str(info.value)


def test_not_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(CaptureFileError, match="not JSON"):
        load_capture(path)
