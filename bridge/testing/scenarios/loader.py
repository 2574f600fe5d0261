"""Loading scenario files: JSON text in, a typed ``ScenarioFile`` or one precise error out.

Pure (no I/O). The format is the pydantic models of ``model.py``; this module reads the
text and turns the first problem into a ``ScenarioFileError`` naming the file, the scenario
and the field, so collection fails with one line a person can act on. An unknown key is
named first: a typo explains the problems it causes.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from bridge.testing.scenarios.model import ScenarioFile, value_kind

__all__ = ["ScenarioFileError", "parse_scenario_file"]

#: What a missing required key says, by key.
_REQUIRED = {
    "scenarios": "must be a non-empty list of scenarios",
    "id": "is required (a non-empty string)",
    "provider": "is required: chatgpt, gemini or both",
    "question": 'is required: {"template": "..."}',
    "template": "is required (a non-empty string)",
}


class ScenarioFileError(Exception):
    """A scenario file that cannot run, naming the file, the scenario and the field."""

    def __init__(
        self, source: str, message: str, *, scenario: str | None = None, field: str | None = None
    ) -> None:
        self.source = source
        self.scenario = scenario
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = [self.source]
        if self.scenario is not None:
            where.append(f"scenario {self.scenario}")
        if self.field is not None:
            where.append(f"field '{self.field}'")
        return ": ".join(where) + f": {self.message}"


def parse_scenario_file(text: str, source: str) -> ScenarioFile:
    """Parse and validate a whole file; the first problem raises ScenarioFileError."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioFileError(source, f"not valid JSON: {exc}") from None
    try:
        return ScenarioFile.model_validate(
            data, by_alias=True, by_name=False, context={"source": source, "text": text}
        )
    except ValidationError as exc:
        errors = exc.errors()
        first = next((e for e in errors if e["type"] == "unknown_key"), errors[0])
        raise _located(first, source, data) from None


def _located(error: ErrorDetails, source: str, data: Any) -> ScenarioFileError:
    loc = [part for part in error["loc"] if part != "[key]"]
    scenario = None
    if len(loc) >= 2 and loc[0] == "scenarios" and isinstance(loc[1], int):
        index, loc = loc[1], loc[2:]
        raw = data["scenarios"][index]
        scenario = f"scenarios[{index}]"
        if isinstance(raw, dict) and isinstance(raw.get("id"), str):
            scenario = f"'{raw['id']}' ({scenario})"
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    return ScenarioFileError(source, _message(error, loc), scenario=scenario, field=field or None)


def _message(error: ErrorDetails, loc: list[str | int]) -> str:
    kind, value = error["type"], error["input"]
    if kind == "missing":
        return _REQUIRED.get(str(loc[-1]), "is required")
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"must be a JSON object, not {value_kind(value)}"
    return error["msg"]  # a rule's own message
