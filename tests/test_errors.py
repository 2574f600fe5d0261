"""Error codes are what programs match on (``[code] message`` in tool errors, the CLI's
``error [code]``): each names one kind of failure, wherever in bridge it is raised."""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict

import bridge
from bridge.errors import BridgeError


def _every_error_class() -> set[type[BridgeError]]:
    for module in pkgutil.walk_packages(bridge.__path__, "bridge."):
        if not module.name.endswith("__main__"):  # entry points run when imported
            importlib.import_module(module.name)
    found: set[type[BridgeError]] = set()
    todo: list[type[BridgeError]] = [BridgeError]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.add(sub)
            todo.append(sub)
    return found


def test_no_two_kinds_of_failure_share_a_code() -> None:
    owners: dict[str, set[type[BridgeError]]] = defaultdict(set)
    for cls in _every_error_class():
        if "code" in vars(cls):
            owners[cls.code].add(cls)
    shared = {
        code: sorted(c.__qualname__ for c in classes)
        for code, classes in owners.items()
        # A subclass may keep its parent's code (StepTimeout is a timeout).
        if len(classes) > 1
        and not all(issubclass(c, min(classes, key=lambda k: len(k.__mro__))) for c in classes)
    }
    assert shared == {}
    assert len(owners) > 50  # the walk found bridge's errors, not just this module's
