"""The acting family: input to the page (click, hover, type, fill a form, select, drag,
press a key, upload files), a dialog answered, the viewport resized; each runs in the
frame of every action (``ToolClient._act``), which reports what it changed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bridge.errors import BridgeError
from bridge.tools import actions, codegen
from bridge.tools.action_report import ActionReport
from bridge.tools.locating import CodeStep
from bridge.tools.operations.client import ToolClient
from bridge.tools.scripts import ACTIONS_SCRIPT
from bridge.tools.targets import resolve_target

__all__ = ["Acting"]


class Acting(ToolClient):
    """``browser_click``, ``browser_hover``, ``browser_type``, ``browser_fill_form``,
    ``browser_select_option``, ``browser_drag``, ``browser_press_key``,
    ``browser_file_upload``, ``browser_handle_dialog``, ``browser_resize``."""

    async def click(
        self,
        target: str,
        *,
        element: str | None = None,
        button: str = "left",
        double_click: bool = False,
        modifiers: list[str] | None = None,
        tab: int | None = None,
    ) -> ActionReport:
        state = await self._state(tab)
        el = await resolve_target(state, target, timeout=self.timeout)

        async def go() -> None:
            await actions.click(
                state, el, self.timeout, button=button, double=double_click, modifiers=modifiers
            )

        # A download link's download starts a moment after the click's input is handled.
        downloads = bool(await el.run(ACTIONS_SCRIPT, "inDownloadLink"))
        step = CodeStep(
            lambda loc: [
                codegen.click(loc[0], button=button, double=double_click, modifiers=modifiers or [])
            ],
            ((el, target),),
        )
        return await self._act(
            state, f"Clicked {element or target}", go, expect_download=downloads, code=step
        )

    async def hover(self, target: str, tab: int | None = None) -> ActionReport:
        state = await self._state(tab)
        el = await resolve_target(state, target, timeout=self.timeout)

        async def go() -> None:
            await actions.hover(state, el, self.timeout)

        step = CodeStep(lambda loc: [f"{loc[0]}.hover()"], ((el, target),))
        return await self._act(state, f"Hovered over {target}", go, code=step)

    async def type(
        self,
        target: str,
        text: str,
        *,
        submit: bool = False,
        slowly: bool = False,
        tab: int | None = None,
    ) -> ActionReport:
        state = await self._state(tab)
        el = await resolve_target(state, target, timeout=self.timeout)

        async def go() -> None:
            await actions.type_text(state, el, text, self.timeout, slowly=slowly, submit=submit)

        step = CodeStep(
            lambda loc: codegen.fill(loc[0], text, slowly=slowly, submit=submit), ((el, target),)
        )
        return await self._act(state, f"Typed into {target}", go, code=step)

    async def fill_form(self, fields: list[dict[str, Any]], tab: int | None = None) -> ActionReport:
        """Text boxes get the text; checkboxes and radios true/false; selects a value."""
        state = await self._state(tab)
        # Each field is found when its turn comes, as a person fills a form: a field that
        # shows only once another is filled is found too. Its code line (when recorded) is
        # made then, from the page as it is before that field changes.
        written: list[str] = []

        async def go() -> None:
            for spec in fields:
                target = str(spec["target"])
                el = await resolve_target(state, target, timeout=self.timeout)
                kind = await el.run(ACTIONS_SCRIPT, "kind")
                value = spec.get("value")
                if self.records_code:

                    def field_lines(loc: Sequence[str], k: str = kind, v: Any = value) -> list[str]:
                        return _field_lines(loc[0], k, v)

                    field = CodeStep(field_lines, ((el, target),))
                    written.extend(await self._code_lines(field))
                if kind in ("checkbox", "radio"):
                    await actions.set_checked(state, el, _truthy(value), self.timeout)
                elif kind == "select":
                    values = value if isinstance(value, list) else [str(value)]
                    await actions.select_option(state, el, [str(v) for v in values], self.timeout)
                else:
                    await actions.type_text(
                        state, el, "" if value is None else str(value), self.timeout
                    )

        # The lines are the ones gathered field by field (read once the action ran).
        step = CodeStep(lambda _: list(written), late=True)
        return await self._act(state, f"Filled {len(fields)} field(s)", go, code=step)

    async def select_option(
        self, target: str, values: list[str], tab: int | None = None
    ) -> ActionReport:
        state = await self._state(tab)
        el = await resolve_target(state, target, timeout=self.timeout)
        chosen: list[str] = []

        async def go() -> None:
            chosen.extend(await actions.select_option(state, el, values, self.timeout))

        step = CodeStep(lambda loc: [codegen.select_option(loc[0], values)], ((el, target),))
        report = await self._act(state, f"Selected in {target}", go, code=step)
        report.extra["selected"] = chosen
        return report

    async def drag(
        self, start_target: str, end_target: str, tab: int | None = None
    ) -> ActionReport:
        state = await self._state(tab)
        source = await resolve_target(state, start_target, timeout=self.timeout)
        target = await resolve_target(state, end_target, timeout=self.timeout)

        async def go() -> None:
            await actions.drag(state, source, target, self.timeout)

        step = CodeStep(
            lambda loc: [f"{loc[0]}.drag_to({loc[1]})"],
            ((source, start_target), (target, end_target)),
        )
        return await self._act(state, f"Dragged {start_target} to {end_target}", go, code=step)

    async def press_key(self, key: str, tab: int | None = None) -> ActionReport:
        state = await self._state(tab)

        async def go() -> None:
            await actions.press_key(state, key)

        step = CodeStep(lambda _: [codegen.press_key(key)])
        return await self._act(state, f"Pressed {key}", go, code=step)

    async def file_upload(
        self, target: str, paths: list[str], tab: int | None = None
    ) -> ActionReport:
        # Before the page is touched: a path a page talked the agent into is refused here.
        files = self.hub.files.check_all(paths)
        state = await self._state(tab)
        el = await resolve_target(state, target, timeout=self.timeout)
        how: list[str] = []

        async def go() -> None:
            how.append(await actions.upload_files(state, el, files, self.timeout))

        step = CodeStep(
            lambda loc: [f"{loc[0]}.set_input_files({codegen.py_list([str(f) for f in files])})"],
            ((el, target),),
        )
        report = await self._act(state, f"Uploaded {len(files)} file(s) to {target}", go, code=step)
        report.extra["method"] = how[0] if how else ""
        return report

    async def handle_dialog(
        self, accept: bool, prompt_text: str | None = None, tab: int | None = None
    ) -> ActionReport:
        state = await self._state(tab, dialog_ok=True)
        dialog = state.recorder.dialog
        if dialog is None:
            raise BridgeError(f"no dialog is open on tab {state.tab_id}")
        params: dict[str, Any] = {"accept": accept}
        if prompt_text is not None:
            params["promptText"] = prompt_text

        async def go() -> None:
            await state.tab.send("Page.handleJavaScriptDialog", params)
            state.recorder.dialog = None

        verb = "Accepted" if accept else "Dismissed"
        step = CodeStep(lambda _: [codegen.dialog_handler(accept, prompt_text)], before_last=True)
        return await self._act(
            state, f"{verb} the {dialog.kind} dialog", go, dialog_open=True, code=step
        )

    async def resize(self, width: int, height: int, tab: int | None = None) -> ActionReport:
        state = await self._state(tab)

        async def go() -> None:
            await state.tab.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 0, "mobile": False},
            )

        return await self._act(state, f"Resized the page to {width}×{height}", go)


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"true", "1", "yes", "on", "checked"}
    return bool(value)


def _field_lines(locator: str, kind: str, value: Any) -> list[str]:
    """One form field's Playwright line(s), by its kind."""
    if kind in ("checkbox", "radio"):
        return [codegen.set_checked(locator, _truthy(value))]
    if kind == "select":
        values = value if isinstance(value, list) else [str(value)]
        return [codegen.select_option(locator, [str(v) for v in values])]
    return codegen.fill(locator, "" if value is None else str(value))
