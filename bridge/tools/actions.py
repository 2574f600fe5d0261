"""Acting on elements the way a person would: wait until the element can take the action,
then send real input events (``Input.dispatchMouseEvent`` / ``dispatchKeyEvent``).

"Can take the action" is checked in the page (``bridge/js/actions.js``, ``actionable``):
attached, visible, enabled (or editable), stable for a task, and actually hit at its centre,
after scrolling it into view; bounded by the action timeout, after which the error names
what blocked it (e.g. "covered by div.modal").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bridge.cdp.file_input import set_input_files
from bridge.errors import BridgeError, CdpError
from bridge.tools.element import Element
from bridge.tools.keys import chord_modifiers, key_events
from bridge.tools.scripts import ACTIONS_SCRIPT
from bridge.tools.targets import TabState

__all__ = [
    "ActionBlocked",
    "click",
    "drag",
    "hover",
    "press_key",
    "select_option",
    "set_checked",
    "type_text",
    "upload_files",
]


class ActionBlocked(BridgeError):
    """The element never became ready for the action within the action timeout."""

    code = "action_blocked"


async def actionable_point(
    state: TabState,
    element: Element,
    what: str,
    timeout: float,
    *,
    enabled: bool = True,
    editable: bool = False,
    hit: bool = True,
) -> tuple[float, float]:
    """Where to send the pointer (main-frame viewport coordinates), once the element is ready."""
    checks = {"enabled": enabled, "editable": editable, "hit": hit}
    verdict = await element.run(
        ACTIONS_SCRIPT, "actionable", int(timeout * 1000), checks, await_promise=True
    )
    if not verdict or not verdict.get("ok"):
        reason = (verdict or {}).get("reason", "unknown")
        raise ActionBlocked(
            f"could not {what} {element.description}: {reason} (waited {timeout:.0f}s; "
            "--action-timeout sets the limit). Take a snapshot to see the page."
        )
    x, y = float(verdict["x"]), float(verdict["y"])
    # Same-process frames: DOM.getContentQuads answers in main-frame coordinates already.
    try:
        quads = await element.tab.send(
            "DOM.getContentQuads", {"objectId": element.object_id}, session_id=element.session_id
        )
        quad = quads.get("quads", [[]])[0]
        if len(quad) == 8:
            x = sum(quad[0::2]) / 4
            y = sum(quad[1::2]) / 4
    except CdpError:
        pass  # the page's own numbers are right for the main frame
    if element.session_id is not None:
        dx, dy = await _frame_offset(state, element.session_id)
        x, y = x + dx, y + dy
    return x, y


async def _frame_offset(state: TabState, session_id: str) -> tuple[float, float]:
    """An out-of-process frame's top-left in the main frame's viewport (summed up the chain)."""
    dx = dy = 0.0
    frame = next((f for f in state.frames.values() if f.session_id == session_id), None)
    while frame is not None and frame.parent_prefix is not None:
        parent = state.frames.get(frame.parent_prefix)
        if parent is None or frame.owner_backend_id is None:
            break
        box = await state.tab.send(
            "DOM.getBoxModel",
            {"backendNodeId": frame.owner_backend_id},
            session_id=parent.session_id,
        )
        content = box["model"]["content"]
        dx += float(content[0])
        dy += float(content[1])
        if parent.session_id is None:
            break
        frame = parent
    return dx, dy


async def _mouse(state: TabState, kind: str, x: float, y: float, **extra: Any) -> None:
    await state.tab.send(*_mouse_event(kind, x, y, **extra))


def _mouse_event(kind: str, x: float, y: float, **extra: Any) -> tuple[str, dict[str, Any]]:
    return "Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, **extra}


async def click(
    state: TabState,
    element: Element,
    timeout: float,
    *,
    button: str = "left",
    double: bool = False,
    modifiers: list[str] | None = None,
) -> None:
    """Move, press and release at the element's centre (twice for a double click)."""
    x, y = await actionable_point(state, element, "click", timeout)
    mods = chord_modifiers(modifiers or [])
    events: list[tuple[str, dict[str, Any]]] = [_mouse_event("mouseMoved", x, y, modifiers=mods)]
    for count in (1, 2) if double else (1,):
        common = {"button": button, "clickCount": count, "modifiers": mods}
        events.append(_mouse_event("mousePressed", x, y, **common))
        events.append(_mouse_event("mouseReleased", x, y, **common))
    state.clicked(x, y)  # before the press: a frame the click brings shows its marker
    # One round trip: the browser runs them in order, as it would a person's.
    await state.tab.send_all(events)


async def hover(state: TabState, element: Element, timeout: float) -> None:
    x, y = await actionable_point(state, element, "hover over", timeout, enabled=False)
    await _mouse(state, "mouseMoved", x, y)


async def type_text(
    state: TabState,
    element: Element,
    text: str,
    timeout: float,
    *,
    slowly: bool = False,
    submit: bool = False,
) -> None:
    """Replace the field's text with ``text``: all at once (``Input.insertText``, as an IME
    would), or key by key when ``slowly`` (for pages that react to each key)."""
    await actionable_point(state, element, "type into", timeout, editable=True, hit=False)
    await element.run(ACTIONS_SCRIPT, "selectAll")
    delete = {"key": "Delete", "code": "Delete", "windowsVirtualKeyCode": 46}
    # Delete, then the text (and Enter): one round trip, run in order by the browser.
    commands: list[tuple[str, dict[str, Any]]] = [
        ("Input.dispatchKeyEvent", {"type": "rawKeyDown", **delete}),
        ("Input.dispatchKeyEvent", {"type": "keyUp", **delete}),
    ]
    if slowly:  # key by key, each answered before the next: the page reacts to each
        await state.tab.send_all(commands)
        commands = []
        for ch in text:
            for event in key_events("Enter" if ch == "\n" else ch):
                await state.tab.send("Input.dispatchKeyEvent", event)
    elif text:
        commands.append(("Input.insertText", {"text": text}))
    if submit:
        commands += [("Input.dispatchKeyEvent", event) for event in key_events("Enter")]
    if commands:
        await state.tab.send_all(commands)


async def press_key(state: TabState, key: str) -> None:
    """A key or chord (``Enter``, ``Control+A``, ``Shift+Tab``) to the focused element."""
    await state.tab.send_all([("Input.dispatchKeyEvent", event) for event in key_events(key)])


async def select_option(
    state: TabState, element: Element, values: list[str], timeout: float
) -> list[str]:
    """Select options by value or label; returns the selected values."""
    await actionable_point(state, element, "select in", timeout, hit=False)
    result = await element.run(ACTIONS_SCRIPT, "selectOptions", values)
    if "error" in result:
        raise ActionBlocked(f"could not select in {element.description}: {result['error']}")
    return list(result["selected"])


async def set_checked(state: TabState, element: Element, checked: bool, timeout: float) -> None:
    """Click a checkbox or radio only if its state differs, then confirm the new state."""
    current = await element.run(ACTIONS_SCRIPT, "checked")
    if current is None:
        raise ActionBlocked(f"{element.description} is not a checkbox or radio button")
    if bool(current) != checked:
        await click(state, element, timeout)
        if bool(await element.run(ACTIONS_SCRIPT, "checked")) != checked:
            raise ActionBlocked(f"clicking {element.description} did not change its state")


async def drag(state: TabState, source: Element, target: Element, timeout: float) -> None:
    """Press on ``source``, move to ``target`` in steps, release.

    The same real mouse events drive both kinds of drag: pages that follow the mouse
    (mousedown/mousemove/mouseup) and HTML5 drag and drop, which the browser itself starts
    from them (dragstart … drop … dragend were all seen through chrome.debugger, with no
    drag interception needed).
    """
    sx, sy = await actionable_point(state, source, "drag", timeout)
    tx, ty = await actionable_point(state, target, "drop onto", timeout, hit=False)
    await _mouse(state, "mouseMoved", sx, sy)
    await _mouse(state, "mousePressed", sx, sy, button="left", clickCount=1, buttons=1)
    steps = 5
    for i in range(1, steps + 1):
        x = sx + (tx - sx) * i / steps
        y = sy + (ty - sy) * i / steps
        await _mouse(state, "mouseMoved", x, y, button="left", buttons=1)
    await _mouse(state, "mouseReleased", tx, ty, button="left", clickCount=1, buttons=0)


async def upload_files(state: TabState, element: Element, paths: list[Path], timeout: float) -> str:
    """Put files into an ``<input type=file>``; returns the method that worked.

    ``paths`` passed the file policy (``BrowserTools.file_upload``). Chrome reads them
    itself (``DOM.setFileInputFiles``); when it refuses the extension, ``FileAccessOff``
    says what to switch on: bridge never reads the bytes to hand them to the page
    (bridge.cdp.file_input).
    """
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise ActionBlocked(f"no such file: {', '.join(missing)}")
    await actionable_point(state, element, "upload to", timeout, hit=False)
    problem = await element.run(ACTIONS_SCRIPT, "fileInputProblem", len(paths))
    if problem:
        raise ActionBlocked(f"could not upload to {element.description}: {problem}")
    await set_input_files(
        state.tab, {"objectId": element.object_id}, paths, session_id=element.session_id
    )
    return "set_file_input_files"
