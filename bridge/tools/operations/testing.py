"""The testing family (the ``testing`` tool group): assertions on the page as a test would
make them (``browser_verify_*``), the Playwright locator of an element, and the client's
session so far written as a pytest-playwright test (``browser_generate_test``).

Each verification is recorded as its ``expect(...)`` line, as every action is recorded as
its line (``ToolClient._act``): a test generated from the session checks what the agent
checked. A verification that does not hold raises ``VerificationFailed`` with what the page
shows instead, and records nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from bridge.errors import NothingRecorded, VerificationFailed
from bridge.store.outputs import OutputFolder, safe_name
from bridge.tools import codegen
from bridge.tools.codegen import LocatorSpec
from bridge.tools.locating import facts, find, locate
from bridge.tools.operations.client import ToolClient, current_url
from bridge.tools.targets import TabState, resolve_target

__all__ = ["DEFAULT_TEST_FILE", "Testing", "ValueKind"]

ValueKind = Literal["textbox", "checkbox", "radio", "combobox", "slider"]
DEFAULT_TEST_FILE = "test_bridge_session.py"


class Testing(ToolClient):
    """``browser_verify_element_visible``, ``browser_verify_text_visible``,
    ``browser_verify_list_visible``, ``browser_verify_value``, ``browser_generate_locator``,
    ``browser_generate_test``."""

    def _verified(self, state: TabState, line: str) -> dict[str, Any]:
        if self.records_code:
            self.code_log.add(state.tab_id, [line])
        return {"passed": True, "code": line}

    async def verify_element_visible(
        self, role: str, accessible_name: str, tab: int | None = None
    ) -> dict[str, Any]:
        state = await self._state(tab)
        role = codegen.aria_role(role)
        if not role:
            raise ValueError("role must name an ARIA role, e.g. button, link, heading")
        specs = [
            LocatorSpec("role", role, accessible_name),
            LocatorSpec("role", role, accessible_name, True),
        ]
        found = await find(state, specs)
        locator = codegen.choose_visible(specs, found)
        if locator is None:
            seen = found[0]["seen"]
            shown = ", ".join(repr(n) for n in seen) if seen else "none"
            hidden = " (one matches but is hidden)" if found[0]["count"] else ""
            raise VerificationFailed(
                f"no visible {role} named {accessible_name!r} on tab {state.tab_id}{hidden}; "
                f"the visible {role} elements are named: {shown}"
            )
        return self._verified(state, codegen.expect(locator.code(), "to_be_visible()"))

    async def verify_text_visible(self, text: str, tab: int | None = None) -> dict[str, Any]:
        state = await self._state(tab)
        if not text.strip():
            raise ValueError("text must not be empty")
        specs = [LocatorSpec("text", text), LocatorSpec("text", text, exact=True)]
        found = await find(state, specs)
        locator = codegen.choose_visible(specs, found)
        if locator is None:
            count = found[0]["count"]
            why = (
                f"it is on the page {count} time(s) but hidden"
                if count
                else "it is not on the page"
            )
            raise VerificationFailed(
                f"the text {text!r} is not visible on tab {state.tab_id}: {why}"
            )
        return self._verified(state, codegen.expect(locator.code(), "to_be_visible()"))

    async def verify_value(
        self,
        type: ValueKind,
        target: str,
        value: str,
        element: str | None = None,
        tab: int | None = None,
    ) -> dict[str, Any]:
        state = await self._state(tab)
        el = await resolve_target(state, target, timeout=self.timeout)
        seen = await facts(el)
        what = element or target
        if type in ("checkbox", "radio"):
            wanted = value.strip().lower() == "true"
            if seen["checked"] is None:
                raise VerificationFailed(
                    f"{what} is not a checkbox or radio (it is a {seen['tag']})"
                )
            if bool(seen["checked"]) != wanted:
                word = {True: "checked", False: "not checked"}
                raise VerificationFailed(
                    f"expected {what} to be {word[wanted]}, but it is {word[bool(seen['checked'])]}"
                )
            assertion = "to_be_checked()" if wanted else "not_to_be_checked()"
        else:
            if seen["value"] is None:
                raise VerificationFailed(
                    f"{what} has no value (it is a {seen['tag']}, not a form field)"
                )
            if seen["value"] != value:
                raise VerificationFailed(
                    f"expected {what} to have the value {value!r}, but it has {seen['value']!r}"
                )
            assertion = f"to_have_value({codegen.py_str(value)})"
        locator = await locate(el, target)
        return self._verified(state, codegen.expect(locator.code(), assertion))

    async def verify_list_visible(
        self, target: str, items: list[str], element: str | None = None, tab: int | None = None
    ) -> dict[str, Any]:
        """Every item's text shows inside the list element."""
        state = await self._state(tab)
        el = await resolve_target(state, target, timeout=self.timeout)
        text = " ".join(str((await facts(el))["text"]).split())
        missing = [item for item in items if " ".join(item.split()) not in text]
        if missing:
            raise VerificationFailed(
                f"{element or target} does not show {', '.join(repr(m) for m in missing)}; "
                f"its text is: {text[:500]!r}"
            )
        locator = (await locate(el, target)).code()
        lines = [
            codegen.expect(locator, f"to_contain_text({codegen.py_str(item)})") for item in items
        ]
        if self.records_code:
            self.code_log.add(state.tab_id, lines)
        return {"passed": True, "code": "\n".join(lines)}

    async def generate_locator(self, target: str, tab: int | None = None) -> dict[str, Any]:
        state = await self._state(tab)
        el = await resolve_target(state, target, timeout=self.timeout)
        locator = await locate(el, target)
        return {"locator": locator.code(), "unique": locator.unique}

    async def generate_test(
        self, filename: str | None = None, tab: int | None = None
    ) -> dict[str, Any]:
        """Write this client's recorded lines for the tab as a pytest-playwright test file,
        under a folder the file policy allows (never over an existing file)."""
        state = await self._state(tab)
        lines = self.code_log.lines(state.tab_id)
        if not lines:
            raise NothingRecorded(
                f"nothing was recorded on tab {state.tab_id} for this client: act on the page "
                "first (browser_navigate, browser_click, browser_verify_text_visible…); only "
                "actions taken while the testing group or --codegen python is on are recorded"
            )
        wanted = Path(filename or DEFAULT_TEST_FILE)
        if wanted.suffix != ".py":
            raise ValueError(f"{filename!r}: a test file name ends with .py")
        # The folder must be one the person allowed (working directory, --allow-path); the
        # name is made plain (no separators, no leading dot) and a test module's.
        folder = self.hub.files.check(wanted.parent if str(wanted.parent) else ".")
        name = safe_name(wanted.name, DEFAULT_TEST_FILE)
        if not name.startswith("test_"):
            name = f"test_{name}"
        content = codegen.render_test(
            codegen.function_name(Path(name).stem.removeprefix("test_")),
            lines,
            source=await current_url(state),
        )
        saved = OutputFolder(folder).save("test", name, content.encode(), "text/x-python")
        return {"path": str(saved.path), "content": content, "lines": len(lines)}
