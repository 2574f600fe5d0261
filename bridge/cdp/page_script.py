"""In-page scripts, injected once per document and then called into.

Every script bridge runs inside a page is a file in ``bridge/js/`` (type-checked: ``// @ts-check``,
``tests/cdp/test_js_types.py``). A script file is an expression that defines ``window[<global>]``
with a ``version`` and functions; ``deep.js`` (shadow roots, deep queries, the element at a
point) is put before it, both inside one function so that neither leaks a name into the page.
No bundler, no build step: this module reads the files and joins them.

Every call is one small ``Runtime.evaluate`` of ``window[<global>].<function>(args)`` (the
arguments JSON, never code); the script itself travels only when the document does not have
this version yet: a first call on a fresh document (after a navigation, a reload, a new tab)
finds it missing, injects it, and calls again. No bookkeeping on our side can go stale: the
page itself says whether it has the script. Functions that take an element are called with
``Runtime.callFunctionOn`` on the element (``call_on``), through ``element_call.js``, which
finds the script in the element's own frame (injected there the same way when missing).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bridge.cdp.session import CdpSession, JavaScriptError
from bridge.waiting import scaled

__all__ = ["JS_DIR", "PageScript", "Script", "call_function_on", "script_file"]

#: The folder of every in-page script.
JS_DIR = Path(__file__).resolve().parents[1] / "js"
#: The shared module every script is built with.
SHARED = "deep.js"
#: What a call answers when the document lacks this version of the script (element_call.js).
MISSING = "__bridge_script_missing__"
VERSION_PLACEHOLDER = "__BRIDGE_PAGE_VERSION__"


def script_file(name: str) -> str:
    """The text of ``bridge/js/<name>``."""
    return (JS_DIR / name).read_text(encoding="utf-8")


_ELEMENT_CALL = script_file("element_call.js").strip().rstrip(";")


@dataclass(frozen=True)
class Script:
    """A script file that defines ``window[global_name]`` (its version from its content).

    ``source`` is the expression that installs it (``Runtime.evaluate``), ``declaration`` the
    same as a function (``Runtime.callFunctionOn``, to install it in an element's frame).
    """

    global_name: str
    source: str
    version: str
    declaration: str

    @classmethod
    def load(cls, name: str, global_name: str, *, data: Mapping[str, str] | None = None) -> Script:
        """``bridge/js/<name>`` with ``deep.js`` before it; each key of ``data`` in the file
        replaced by its value (JSON data, e.g. the provider packs), before the version is
        taken, so changed data makes a new version."""
        text = script_file(name)
        for placeholder, value in (data or {}).items():
            text = text.replace(placeholder, value)
        shared = script_file(SHARED)
        version = hashlib.sha256((shared + text).encode()).hexdigest()[:12]
        body = text.replace(VERSION_PLACEHOLDER, version).strip().rstrip(";")
        # "return (" then a newline: the script starts with comments, where a bare return ends.
        declaration = f"function () {{\n{shared.strip()}\nreturn (\n{body}\n);\n}}"
        # Named in DevTools and CPU profiles (bridge.bench.page_cost tells bridge's page
        # work from the site's by it).
        source = f"({declaration})()\n//# sourceURL=bridge/{name}"
        return cls(global_name, source, version, declaration)

    def call_expression(self, function: str, *args: Any) -> str:
        """``window.G.function(args…)`` if this version is there, else the sentinel. The
        arguments are JSON values, written as literals: the one call that travels as text."""
        arguments = ", ".join(json.dumps(a, ensure_ascii=False) for a in args)
        return (
            f"((p) => p && p.version === '{self.version}' ? p.{function}({arguments}) "
            f": '{MISSING}')(window.{self.global_name})"
        )


async def call_function_on(
    tab: CdpSession,
    object_id: str,
    declaration: str,
    *args: Any,
    session_id: str | None = None,
    await_promise: bool = False,
    timeout: float | None = None,
) -> Any:
    """``declaration`` (a JS function) called with ``this`` = the remote object and ``args``
    (JSON values); its return value by value. JavaScriptError if it threw."""
    params = {
        "functionDeclaration": declaration,
        "objectId": object_id,
        "arguments": [{"value": a} for a in args],
        "returnByValue": True,
        "awaitPromise": await_promise,
    }
    if timeout is None:
        result = await tab.send("Runtime.callFunctionOn", params, session_id=session_id)
    else:
        result = await tab.send(
            "Runtime.callFunctionOn", params, session_id=session_id, timeout=timeout
        )
    details = result.get("exceptionDetails")
    if details:
        exc = details.get("exception") or {}
        text = exc.get("description") or details.get("text") or "exception"
        raise JavaScriptError("Runtime.callFunctionOn", str(text))
    return result.get("result", {}).get("value")


class PageScript:
    """A script in one tab: ``await page.call("observe", "chatgpt")``.

    ``session_id``: in that child session of the tab (an out-of-process iframe's document)
    instead of the tab's own top document.
    """

    def __init__(self, tab: CdpSession, script: Script, *, session_id: str | None = None) -> None:
        self.tab = tab
        self.script = script
        self.session_id = session_id
        self.injections = 0  # how often the script itself was sent (once per document)

    def _limit(self, timeout: float | None) -> float:
        return scaled(30.0) if timeout is None else timeout + scaled(5.0)

    async def _evaluate(self, expression: str, *, await_promise: bool, timeout: float) -> Any:
        if self.session_id is None:
            return await self.tab.evaluate(expression, await_promise=await_promise, timeout=timeout)
        params = {"expression": expression, "returnByValue": True, "awaitPromise": await_promise}
        return (await self._evaluate_object(params, timeout)).get("value")

    async def _inject(self) -> None:
        await self._evaluate(self.script.source, await_promise=False, timeout=scaled(30.0))
        self.injections += 1

    async def call(self, function: str, *args: Any, timeout: float | None = None) -> Any:
        """Call a function of the script (awaiting a promise it returns); inject if needed.

        ``timeout`` bounds the page-side wait a function was given (it gets 5 s more for
        the round trip); without it, the session's default applies.
        """
        expression = self.script.call_expression(function, *args)
        limit = self._limit(timeout)
        value = await self._evaluate(expression, await_promise=True, timeout=limit)
        if value == MISSING:
            await self._inject()
            value = await self._evaluate(expression, await_promise=True, timeout=limit)
        return value

    async def call_object(
        self,
        function: str,
        *args: Any,
        timeout: float | None = None,
        object_group: str | None = None,
    ) -> str | None:
        """Like ``call``, for a function that answers an element (or a promise of one): the
        remote object id of what it answered, None for null or undefined."""
        params: dict[str, Any] = {
            "expression": self.script.call_expression(function, *args),
            "returnByValue": False,
            "awaitPromise": True,
        }
        if object_group is not None:
            params["objectGroup"] = object_group
        limit = self._limit(timeout)
        found = await self._evaluate_object(params, limit)
        if found.get("value") == MISSING:
            await self._inject()
            found = await self._evaluate_object(params, limit)
        object_id = found.get("objectId")
        return str(object_id) if object_id and found.get("subtype") != "null" else None

    async def _evaluate_object(self, params: dict[str, Any], limit: float) -> dict[str, Any]:
        result = await self.tab.send(
            "Runtime.evaluate", params, timeout=limit, session_id=self.session_id
        )
        details = result.get("exceptionDetails")
        if details:
            exc = details.get("exception") or {}
            text = exc.get("description") or details.get("text") or "exception"
            raise JavaScriptError("Runtime.evaluate", str(text))
        found: dict[str, Any] = result.get("result", {})
        return found

    async def call_on(
        self,
        object_id: str,
        function: str,
        *args: Any,
        await_promise: bool = False,
        timeout: float | None = None,
    ) -> Any:
        """``window[G].function(element, *args)`` with the remote object ``object_id`` as the
        element, in its own frame (which may be one no evaluate of this tab reaches: an
        iframe); the script is installed there through the element when that frame lacks it."""
        limit = None if timeout is None else self._limit(timeout)
        call = (self.script.global_name, self.script.version, function, *args)

        async def run(declaration: str, *arguments: Any, wait: bool = False) -> Any:
            return await call_function_on(
                self.tab,
                object_id,
                declaration,
                *arguments,
                session_id=self.session_id,
                await_promise=wait,
                timeout=limit,
            )

        value = await run(_ELEMENT_CALL, *call, wait=await_promise)
        if value == MISSING:
            await run(self.script.declaration)
            self.injections += 1
            value = await run(_ELEMENT_CALL, *call, wait=await_promise)
        return value
