"""Lean snapshots and search: ``browser_snapshot`` with ``target``, ``depth``, ``diff`` and
``filename``, and ``browser_find``; the text work is in the pure ``bridge.tools.snapshot_lean``.

A diff is against THIS client's last snapshot of the same view (tab, target, depth): two
clients on one tab each see what changed since they last looked. Refs are the tab's
(``RefTable``): a diff never renames one, and a ref it does not repeat still resolves.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bridge.tools.operations.client import ToolClient, current_url
from bridge.tools.saving import save_file
from bridge.tools.snapshot import take_snapshot, take_subtree
from bridge.tools.snapshot_lean import (
    compile_find,
    diff_snapshot,
    find_lines,
    find_report,
    limit_depth,
)
from bridge.tools.snapshot_render import NodeNotInTree, parse_ref
from bridge.tools.targets import TabState, TargetNotFound, resolve_target

__all__ = ["FIND_LIMIT", "SNAPSHOT_CHARS", "LeanSnapshot", "LeanSnapshots"]

#: Most characters of one snapshot (as browser_snapshot always had).
SNAPSHOT_CHARS = 200_000
#: Matches browser_find shows unless told otherwise.
FIND_LIMIT = 20
#: Views whose last snapshot a client keeps for diffs: a few tabs, a few targets each.
MEMORY_VIEWS = 32

_View = tuple[int, str, int | None]  # tab, target, depth


@dataclass
class LeanSnapshot:
    """A snapshot tool's text and the same facts as data."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)


class LeanSnapshots(ToolClient):
    """``browser_snapshot`` (target, depth, diff, filename) and ``browser_find``."""

    _lean_memory: dict[_View, list[str]]

    def _memory(self) -> dict[_View, list[str]]:
        memory = getattr(self, "_lean_memory", None)
        if memory is None:
            memory = self._lean_memory = {}
        return memory

    async def lean_snapshot(
        self,
        tab: int | None = None,
        *,
        target: str | None = None,
        depth: int | None = None,
        diff: bool = False,
        filename: str | None = None,
        max_chars: int | None = SNAPSHOT_CHARS,
    ) -> LeanSnapshot:
        """The snapshot, only ``target``'s subtree, ``depth`` levels deep, as a diff against
        this client's last snapshot of the same view, or saved to ``filename``."""
        if depth is not None:
            limit_depth([], depth, root_printed=bool(target))  # a bad depth fails before work
        state = await self._state(tab)
        root = await self._root(state, target) if target else None
        tree = (
            take_snapshot(state, max_chars=max_chars)
            if root is None
            else take_subtree(state, root, max_chars=max_chars)
        )
        try:
            # The URL asked along with the tree: one round trip less.
            body, address = await asyncio.gather(tree, current_url(state))
        except NodeNotInTree:
            raise TargetNotFound(
                f"{target} is not in the page's accessibility tree (removed, or hidden from "
                "it): take a new snapshot (browser_snapshot) and use a ref from it"
            ) from None
        lines = body.split("\n") if body else []
        if depth is not None:
            lines = limit_depth(lines, depth, root_printed=bool(target))
        header = f"tab {state.tab_id}: {address}"
        data: dict[str, Any] = {"tab": state.tab_id, "lines": len(lines)}
        if target:
            data["target"] = target
        if depth is not None:
            data["depth"] = depth
        previous = self._remember((state.tab_id, target or "", depth), lines)
        text = _with_diff(header, lines, previous, data) if diff else _joined(header, lines)
        if filename:
            saved = self._save(filename, text)
            size = len(text.encode("utf-8"))
            data.update(file=str(saved), bytes=size)
            text = (
                f"{header}\nSnapshot saved to {saved} ({len(lines)} lines, {size} bytes); "
                "read it from there, or search it with browser_find"
            )
        return LeanSnapshot(text, data)

    async def find(
        self,
        text: str | None = None,
        regex: str | None = None,
        *,
        max_results: int = FIND_LIMIT,
        tab: int | None = None,
    ) -> LeanSnapshot:
        """The snapshot's lines that contain ``text`` (any case) or match ``regex``, each
        under its ancestors' lines, at most ``max_results`` of them."""
        query, matches = compile_find(text, regex)
        if max_results < 1:
            raise ValueError(f"max_results must be 1 or more, got {max_results}")
        state = await self._state(tab)
        body, url = await asyncio.gather(take_snapshot(state, max_chars=None), current_url(state))
        found = find_lines(body.split("\n") if body else [], matches, limit=max_results)
        header = f"tab {state.tab_id}: {url}"
        data: dict[str, Any] = {"tab": state.tab_id, "total": found.total, "shown": found.shown}
        return LeanSnapshot("\n".join([header, *find_report(query, found)]), data)

    async def _root(self, state: TabState, target: str) -> tuple[str, int]:
        """The (frame prefix, backend node id) ``target`` names: a ref of the tab's table, or
        the first element a CSS selector matches (main frame, open shadow roots)."""
        if parse_ref(target) is not None:
            located = state.refs.lookup(target)
            if located is None:
                raise TargetNotFound(
                    f"ref {target} is not in the latest snapshot of tab {state.tab_id}: take a "
                    "new snapshot (browser_snapshot) and use a ref from it, or pass a CSS selector"
                )
            return located
        element = await resolve_target(state, target, timeout=self.timeout)
        described = await state.tab.send("DOM.describeNode", {"objectId": element.object_id})
        return "", int(described["node"]["backendNodeId"])

    def _remember(self, view: _View, lines: list[str]) -> list[str] | None:
        """Keep ``lines`` as the view's last snapshot; the one before, if any."""
        memory = self._memory()
        previous = memory.pop(view, None)
        memory[view] = lines
        while len(memory) > MEMORY_VIEWS:
            del memory[next(iter(memory))]
        return previous

    def _save(self, filename: str, text: str) -> Path:
        """Write ``text`` to ``filename`` under a folder the file policy allows (relative names
        from bridge's working directory), never over an existing file (``name (1).md``):
        ``bridge.tools.saving``, the one way the browser tools write files."""
        return save_file(self.hub.files, filename, text.encode("utf-8"), "text/markdown")


def _joined(header: str, lines: list[str]) -> str:
    return "\n".join([header, *lines])


def _with_diff(
    header: str, lines: list[str], previous: list[str] | None, data: dict[str, Any]
) -> str:
    if previous is None:
        data["diff"] = "first"
        note = "(no earlier snapshot of this view by this client: the whole snapshot)"
        return "\n".join([header, note, *lines])
    change = diff_snapshot(previous, lines)
    data["changed_lines"] = change.changed
    if change.same:
        data["diff"] = "unchanged"
        return f"{header}\n(nothing changed since your last snapshot; its refs are all valid)"
    if change.whole:
        data["diff"] = "whole"
        note = (
            f"(most of the page changed since your last snapshot ({change.changed} lines): "
            "the whole snapshot)"
        )
        return "\n".join([header, note, *lines])
    data["diff"] = "diff"
    note = (
        f"(changes since your last snapshot, a unified diff: {change.changed} lines; refs "
        "not shown here are unchanged and still valid)"
    )
    return f"{header}\n{note}\n{change.text}"
