"""Rules that say their own message, for the pydantic models of bridge's file formats
(provider packs, scenario files, job records).

A format's rule is written once, as a type or a constraint: pydantic checks it and the JSON
Schema shows it. :func:`says` replaces pydantic's generic wording ("Input should be a valid
integer") with one a person editing the file can act on; :func:`check` adds a rule no type
can say; :func:`fail_at` raises problems at chosen places of the value (a rule across
fields). Their errors have the type ``"rule"`` and carry the message as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, get_args

from pydantic import AfterValidator, ValidationError, ValidatorFunctionWrapHandler, WrapValidator
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError
from pydantic_core.core_schema import ErrorType

__all__ = ["RULE", "again", "check", "fail_at", "says"]

#: The error type of every message these rules write.
RULE = "rule"
_PYDANTIC_TYPES = frozenset(get_args(ErrorType))


def says(message: Callable[[Any], str]) -> WrapValidator:
    """Pydantic's own check of the annotated type and its constraints, failing with
    ``message(value)`` instead of pydantic's wording. Problems inside the value (an item of a
    list, a key of an object) keep their own message and place."""

    def wrap(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError as exc:
            # A rule inside has said it already; so have the items of a list (a tuple with
            # bad items is also "too short": that is left out).
            said = [e for e in exc.errors() if e["loc"] or e["type"] not in _PYDANTIC_TYPES]
            if not said:
                raise PydanticCustomError(RULE, message(value)) from None
            raise again(exc.title, said) from None

    return WrapValidator(wrap)


def check(problem: Callable[[Any], str | None]) -> AfterValidator:
    """A rule no type says (a selector's brackets, a regex that compiles): ``problem`` names
    what is wrong with a value, or None."""

    def run(value: Any) -> Any:
        why = problem(value)
        if why is not None:
            raise PydanticCustomError(RULE, why)
        return value

    return AfterValidator(run)


def fail_at(title: str, problems: Iterable[tuple[tuple[str | int, ...], str]]) -> None:
    """Raise each ``(place, message)`` at its place within the value being validated (a rule
    across fields names the field it is about); nothing when there are none."""
    errors = [
        InitErrorDetails(type=PydanticCustomError(RULE, message), loc=place, input=None)
        for place, message in problems
    ]
    if errors:
        raise ValidationError.from_exception_data(title, errors)


def again(title: str, errors: Iterable[ErrorDetails | Mapping[str, Any]]) -> ValidationError:
    """``errors`` as a ValidationError to raise again (from a wrapping validator that
    changed or dropped some of them). An error of a type pydantic does not know is one of
    ours: its message goes as it is."""
    out: list[InitErrorDetails] = []
    for error in errors:
        kind = error["type"]
        ours = kind not in _PYDANTIC_TYPES
        details = InitErrorDetails(
            type=PydanticCustomError(kind, error["msg"]) if ours else kind,
            loc=error["loc"],
            input=error["input"],
        )
        if "ctx" in error and not ours:
            details["ctx"] = error["ctx"]
        out.append(details)
    return ValidationError.from_exception_data(title, out)
