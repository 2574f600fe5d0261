"""A provider pack's validation errors as people read them: ``json.path: message`` lines,
every problem of a file at once (docs/sites.md#provider-packs).

The messages of the rules themselves live with the models (bridge.providers.pack_model);
what is left here is what only the place of an error tells: an unknown key (and the nearest
known one), a missing key, an object where a value was expected, and what an override (a
*partial* document, before it is merged over the built-in pack) may leave out or remove.
"""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from bridge.providers.pack_checks import nearest, type_name
from bridge.providers.pack_model import SCHEMA_VERSION, Entry, PackDocument

__all__ = ["model_in", "problem", "validate"]


def validate(
    data: object, provider: str, *, complete: bool, strict_evidence: bool
) -> tuple[PackDocument | None, list[str]]:
    """``data`` as a pack for ``provider``, or every problem (``json.path: message``). A
    partial document (``complete=False``, an override before the merge) gives no document."""
    context = {"provider": provider, "strict_evidence": strict_evidence}
    try:
        document = PackDocument.model_validate(data, context=context)
    except ValidationError as exc:
        found = [problem(error, provider, complete=complete) for error in exc.errors()]
        return None, [p for p in found if p is not None]
    return document, []


def problem(error: ErrorDetails, provider: str, *, complete: bool) -> str | None:
    """One validation error as ``json.path: message``; None for what a partial document may
    leave out (a key it does not set, an optional key it removes with null)."""
    loc = tuple(part for part in error["loc"] if part != "[key]")  # a key's own error
    kind, value = error["type"], error["input"]
    model, field = _at(loc)
    if not complete:
        if kind == "missing":
            return None
        if value is None and len(loc) == 2 and field is not None and field.is_required():
            return (
                f"{_path(loc)}: is required and cannot be removed (null); "
                "give it a new value instead"
            )
        if value is None and (len(loc) <= 2 or field is None or not field.is_required()):
            return None
    return f"{_path(loc)}: {_message(error, loc, model, provider)}"


def _message(
    error: ErrorDetails, loc: tuple[str | int, ...], model: type[BaseModel] | None, provider: str
) -> str:
    kind, value = error["type"], error["input"]
    if kind == "extra_forbidden":
        parent = _at(loc[:-1])[0] if loc[:-1] else PackDocument
        names = _keys(parent) if parent is not None else ()
        if parent is not None and issubclass(parent, Entry):
            names = (*parent.value_keys(), *Entry.model_fields)
            return f"unknown key for a {parent.kind} entry; {nearest(str(loc[-1]), names)}"
        return f"unknown key; {nearest(str(loc[-1]), names)}"
    if kind == "missing":
        if loc == ("version",):
            return f'missing; write "version": {SCHEMA_VERSION}'
        if loc == ("provider",):
            return f'missing; write "provider": {provider!r}'
        if len(loc) == 1:
            return "missing section"
        if model is not None and issubclass(model, Entry):
            return f"missing; every pack needs this {model.kind} entry"
        return "missing"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        if not loc:
            return f"must be a JSON object, not {type_name(value)}"
        if model is not None and issubclass(model, Entry):
            return f"must be an object with {model.value_keys()[0]!r}, not {type_name(value)}"
        return "missing section" if value is None else f"must be an object, not {type_name(value)}"
    return error["msg"]  # our own message (a rule), or pydantic's for what we do not name


def _path(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "$"


def _keys(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(f.alias or name for name, f in model.model_fields.items())


def _at(loc: tuple[str | int, ...]) -> tuple[type[BaseModel] | None, FieldInfo | None]:
    """The model and the field at ``loc`` (None where the path leaves the models)."""
    model: type[BaseModel] | None = PackDocument
    field: FieldInfo | None = None
    for part in loc:
        if isinstance(part, int):
            continue
        if model is None:
            return None, None
        field = next(
            (f for name, f in model.model_fields.items() if (f.alias or name) == part), None
        )
        if field is None:
            return None, None
        model = model_in(field.annotation)
    return model, field


def model_in(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds (``Selectors`` for ``Selectors | None``), if any."""
    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None
