"""What a client changed is put back when it leaves (``ToolClient.on_leave`` / ``leave``)."""

from __future__ import annotations

from typing import Any, cast

from bridge.errors import CommandFailed
from bridge.tools.browsing import ToolHub


def _hub() -> ToolHub:
    return ToolHub(cast(Any, object()))  # no browser: leaving needs none


async def test_undos_run_newest_first_once_and_a_failing_one_does_not_stop_the_rest() -> None:
    hub = _hub()
    client = hub.client("agent")
    done: list[str] = []

    def step(name: str, fail: bool = False) -> Any:
        async def undo() -> None:
            done.append(name)
            if fail:
                raise CommandFailed("Page.navigate", "no_tab", "tab closed")

        return undo

    client.on_leave("emulation", step("emulation v1"))
    client.on_leave("routes", step("routes", fail=True))
    client.on_leave("emulation", step("emulation v2"))  # replaces v1: put back once
    client.on_leave("trace", step("trace"))
    client.cancel_leave("trace")  # the client stopped it itself
    await hub.leave("agent")
    assert done == ["emulation v2", "routes"]
    await hub.leave("agent")  # gone: nothing runs twice
    assert done == ["emulation v2", "routes"]
    assert hub.client("agent") is not client  # a new client starts afresh


async def test_closing_the_hub_makes_every_client_leave() -> None:
    hub = _hub()
    done: list[str] = []
    for key in ("a", "b"):

        async def undo(key: str = key) -> None:
            done.append(key)

        hub.client(key).on_leave("x", undo)
    await hub.close()
    assert sorted(done) == ["a", "b"]
