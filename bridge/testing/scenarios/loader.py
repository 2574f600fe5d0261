"""Loading scenario files: JSON text in, a typed ``ScenarioFile`` or one precise error out.

Pure (no I/O). Every problem raises ``ScenarioFileError`` naming the file, the scenario and
the field, so collection fails with one line a person can act on. Unknown fields are errors:
a typo must never silently weaken a check.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, TypeVar, cast

from bridge.providers.completion import CompletionTimings
from bridge.providers.results import PROVIDERS, Provider
from bridge.testing.scenarios.model import (
    ASSERTION_NAMES,
    TEMPLATE_VARIABLES,
    VARIABLE,
    AskSettings,
    Assertions,
    Expect,
    FakeSetup,
    FakeSite,
    Scenario,
    ScenarioFile,
    ScenarioProvider,
    Setup,
    error_codes,
    render_question,
)

__all__ = ["ScenarioFileError", "parse_scenario_file"]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# A tag becomes a pytest marker, so it must be a word `-m` can parse and must not be one of
# pytest's own markers (a tag "skip" would silently skip the scenario).
_TAG = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_RESERVED_TAGS = frozenset(
    {"and", "or", "not", "True", "False", "None", "skip", "skipif", "xfail", "parametrize"}
    | {"usefixtures", "filterwarnings", "asyncio", "tryfirst", "trylast"}
)
# Questions that AI sites treat as bot traffic (docs/flows.md#forbidden-questions).
_FORBIDDEN_QUESTIONS = frozenset(
    {"hello", "ok", "what's 1+1", "whats 1+1", "what is 1+1", "1+1", "connection test"}
)
_TABS = ("session", "open_tab", "new_tab")


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


def _is_forbidden(template: str) -> bool:
    text = render_question(template, {}).strip().lower()
    text = re.sub(r"\bid:\s*$", "", text).strip()
    text = re.sub(r"[\s?.!。？！]+$", "", text)
    return re.sub(r"\s+", " ", text) in _FORBIDDEN_QUESTIONS


@dataclass(frozen=True)
class _Where:
    source: str
    scenario: str | None = None

    def error(self, message: str, field: str | None = None) -> ScenarioFileError:
        return ScenarioFileError(self.source, message, scenario=self.scenario, field=field)


T = TypeVar("T")


class _Object:
    """A JSON object being read: typed getters that fail naming the field; unknown keys fail."""

    def __init__(
        self,
        raw: object,
        where: _Where,
        path: str,
        known: tuple[str, ...],
        *,
        noun: str = "field",
    ) -> None:
        if not isinstance(raw, dict):
            raise where.error(f"must be a JSON object, not {_kind(raw)}", path or None)
        self.raw: dict[str, Any] = raw
        self.where = where
        self.path = path
        for key in raw:
            if key not in known:
                raise where.error(
                    f"unknown {noun} '{key}'; known: {', '.join(known)}", self.at(key)
                )

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, message: str) -> ScenarioFileError:
        return self.where.error(message, self.at(key))

    def get(self, key: str, check: Callable[[Any], bool], what: str) -> Any:
        value = self.raw.get(key)
        if value is not None and not check(value):
            raise self.fail(key, f"must be {what}, not {_kind(value)} {_short(value)}")
        return value

    def text(self, key: str, *, required: bool = False) -> str | None:
        value = self.get(
            key, lambda v: isinstance(v, str) and v.strip() != "", "a non-empty string"
        )
        if value is None and required:
            raise self.fail(key, "is required (a non-empty string)")
        return cast("str | None", value)

    def flag(self, key: str) -> bool | None:
        return cast("bool | None", self.get(key, lambda v: isinstance(v, bool), "true or false"))

    def number(self, key: str, *, low: float = 0, high: float | None = None) -> float | None:
        span = f">= {low}" + ("" if high is None else f" and <= {high}")

        def ok(v: Any) -> bool:
            is_number = isinstance(v, int | float) and not isinstance(v, bool)
            return is_number and v >= low and (high is None or v <= high)

        value = self.get(key, ok, f"a number {span}")
        return None if value is None else float(value)

    def integer(self, key: str, *, low: int = 0) -> int | None:
        def ok(v: Any) -> bool:
            return isinstance(v, int) and not isinstance(v, bool) and v >= low

        return cast("int | None", self.get(key, ok, f"a whole number >= {low}"))

    def choice(self, key: str, choices: tuple[str, ...]) -> str | None:
        return cast(
            "str | None",
            self.get(key, lambda v: v in choices, f"one of {', '.join(choices)}"),
        )

    def child(self, key: str, known: tuple[str, ...], *, noun: str = "field") -> _Object | None:
        value = self.raw.get(key)
        return None if value is None else _Object(value, self.where, self.at(key), known, noun=noun)


def parse_scenario_file(text: str, source: str) -> ScenarioFile:
    """Parse and validate a whole file; the first problem raises ScenarioFileError."""
    where = _Where(source)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise where.error(f"not valid JSON: {exc}") from None
    top = _Object(data, where, "", ("version", "scenarios", "description", "$schema"))
    version = top.get("version", lambda v: isinstance(v, str | int | float), "a string")
    raw_scenarios = top.raw.get("scenarios")
    if not isinstance(raw_scenarios, list) or not raw_scenarios:
        raise where.error("must be a non-empty list of scenarios", "scenarios")
    scenarios: list[Scenario] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_scenarios):
        scenario = _parse_scenario(raw, index, source, text)
        if scenario.id in seen:
            raise ScenarioFileError(
                source,
                f"duplicate id '{scenario.id}': every scenario id must be unique",
                scenario=f"'{scenario.id}' (scenarios[{index}])",
                field="id",
            )
        seen.add(scenario.id)
        scenarios.append(scenario)
    return ScenarioFile(source, None if version is None else str(version), tuple(scenarios))


_SCENARIO_KEYS = (
    "id",
    "name",
    "description",
    "tags",
    "provider",
    "question",
    "setup",
    "assertions",
    "expect",
    "ask",
    "fake",
    "fakeOnly",
    "liveOnly",
)


def _parse_scenario(raw: object, index: int, source: str, text: str) -> Scenario:
    label = f"scenarios[{index}]"
    if isinstance(raw, dict) and isinstance(raw.get("id"), str):
        label = f"'{raw['id']}' ({label})"
    obj = _Object(raw, _Where(source, label), "", _SCENARIO_KEYS)
    scenario_id = obj.text("id", required=True)
    assert scenario_id is not None
    if not _ID.match(scenario_id):
        raise obj.fail("id", "must be letters, digits, '-', '_' or '.' (it is the test's name)")
    provider = obj.choice("provider", ("chatgpt", "gemini", "both"))
    if provider is None:
        raise obj.fail("provider", "is required: chatgpt, gemini or both")
    providers = PROVIDERS if provider == "both" else (cast(Provider, provider),)
    question = obj.child("question", ("template",))
    if question is None:
        raise obj.fail("question", 'is required: {"template": "..."}')
    template = question.text("template", required=True)
    assert template is not None
    _check_template(question, "template", template)
    setup = _parse_setup(obj)
    assertions = _parse_assertions(obj.child("assertions", ASSERTION_NAMES, noun="assertion"))
    if assertions.both_must_succeed and provider != "both":
        raise obj.fail("assertions.bothMustSucceed", 'needs "provider": "both"')
    expect = _parse_expect(obj.child("expect", _EXPECT_KEYS), providers)
    if expect.same_conversation and not setup.require_existing_tab:
        raise obj.fail("expect.sameConversation", "needs setup.requireExistingTab")
    ask = _parse_ask(obj.child("ask", ("skipThinking", "timeoutMs")))
    if ask.skip_thinking and provider != "chatgpt":
        raise obj.fail("ask.skipThinking", "is ChatGPT's Thinking mode: needs provider chatgpt")
    fake_only, live_only = obj.text("fakeOnly"), obj.text("liveOnly")
    if fake_only and live_only:
        raise obj.fail("liveOnly", "a scenario cannot be both fakeOnly and liveOnly")
    return Scenario(
        id=scenario_id,
        name=obj.text("name") or scenario_id,
        provider=cast(ScenarioProvider, provider),
        template=template,
        tags=_parse_tags(obj),
        description=obj.text("description"),
        setup=setup,
        assertions=assertions,
        expect=expect,
        ask=ask,
        fake=_parse_fake(obj.child("fake", _FAKE_KEYS), providers),
        fake_only=fake_only,
        live_only=live_only,
        line=_line_of(text, scenario_id),
    )


def _check_template(obj: _Object, key: str, template: str) -> None:
    for match in VARIABLE.finditer(template):
        if match.group(1) not in TEMPLATE_VARIABLES:
            raise obj.fail(
                key,
                f"unknown variable {{{{{match.group(1)}}}}}; known: "
                + ", ".join(f"{{{{{v}}}}}" for v in TEMPLATE_VARIABLES),
            )
    if _is_forbidden(template):
        raise obj.fail(
            key,
            "is a question docs/flows.md#forbidden-questions forbids (sites treat it as bot "
            "traffic); ask a natural technical question, e.g. 'How do I read files "
            "asynchronously in Python?'",
        )


def _parse_tags(obj: _Object) -> tuple[str, ...]:
    raw = obj.raw.get("tags", [])
    if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
        raise obj.fail("tags", "must be a list of strings")
    for position, tag in enumerate(raw):
        if not _TAG.match(tag) or tag in _RESERVED_TAGS:
            raise obj.fail(
                f"tags[{position}]",
                f"'{tag}' cannot be a pytest marker: use a word of letters, digits, '_' or '-' "
                "that is not one of pytest's own markers",
            )
    return tuple(dict.fromkeys(raw))


def _parse_setup(obj: _Object) -> Setup:
    setup = obj.child(
        "setup", ("instruction", "requireExistingTab", "primer", "extensionConnected")
    )
    if setup is None:
        return Setup()
    primer = setup.text("primer")
    if primer is not None:
        _check_template(setup, "primer", primer)
    connected = setup.flag("extensionConnected")
    return Setup(
        instruction=setup.text("instruction"),
        require_existing_tab=bool(setup.flag("requireExistingTab")),
        primer=primer,
        extension_connected=True if connected is None else connected,
    )


def _parse_assertions(obj: _Object | None) -> Assertions:
    if obj is None:
        return Assertions()
    return Assertions(
        given=_given(obj),
        both_must_succeed=bool(obj.flag("bothMustSucceed")),
        min_answer_length=obj.integer("minAnswerLength"),
        relevance_threshold=obj.number("relevanceThreshold", high=1),
        max_total_ms=obj.number("maxTotalMs"),
        no_fallback=bool(obj.flag("noFallback")),
        no_empty_markdown=bool(obj.flag("noEmptyMarkdown")),
    )


def _given(obj: _Object, renamed: Mapping[str, str] | None = None) -> frozenset[str]:
    """The attribute names of the JSON keys present: ``minAnswerLength`` -> min_answer_length."""
    renamed = renamed or {}
    return frozenset(
        renamed.get(key) or re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower() for key in obj.raw
    )


_EXPECT_KEYS = (
    "error",
    "errorMessage",
    "tab",
    "sameConversation",
    "thinking",
    "skippedThinking",
    "retries",
    "broughtToFront",
    "focusEmulated",
    "inputPhase",
    "completion",
    "codeBlock",
)


def _parse_expect(obj: _Object | None, providers: tuple[Provider, ...]) -> Expect:
    if obj is None:
        return Expect()
    return Expect(
        given=_given(obj, {"error": "errors"}),
        errors=_parse_expected_errors(obj, providers),
        error_message=_parse_strings(obj, "errorMessage"),
        tab=obj.choice("tab", _TABS),
        same_conversation=bool(obj.flag("sameConversation")),
        thinking=obj.flag("thinking"),
        skipped_thinking=obj.flag("skippedThinking"),
        retries=obj.integer("retries"),
        brought_to_front=obj.flag("broughtToFront"),
        focus_emulated=obj.flag("focusEmulated"),
        input_phase=obj.integer("inputPhase", low=1),
        completion=obj.text("completion"),
        code_block=bool(obj.flag("codeBlock")),
    )


def _parse_expected_errors(obj: _Object, providers: tuple[Provider, ...]) -> dict[Provider, str]:
    raw = obj.raw.get("error")
    if raw is None:
        return {}
    codes = error_codes()
    by_provider = dict.fromkeys(providers, raw) if isinstance(raw, str) else raw
    if not isinstance(by_provider, dict):
        raise obj.fail("error", "must be an error code, or an object of provider -> error code")
    out: dict[Provider, str] = {}
    for provider, code in by_provider.items():
        key = "error" if isinstance(raw, str) else f"error.{provider}"
        if provider not in providers:
            raise obj.fail(key, f"'{provider}' is not asked in this scenario")
        if code not in codes:
            raise obj.fail(key, f"unknown error code {code!r}; known: {', '.join(sorted(codes))}")
        out[cast(Provider, provider)] = code
    return out


def _parse_strings(obj: _Object, key: str) -> tuple[str, ...]:
    raw = obj.raw.get(key)
    if raw is None:
        return ()
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list) or not all(isinstance(s, str) and s for s in items):
        raise obj.fail(key, "must be a string or a list of non-empty strings")
    return tuple(items)


def _parse_ask(obj: _Object | None) -> AskSettings:
    if obj is None:
        return AskSettings()
    return AskSettings(
        skip_thinking=bool(obj.flag("skipThinking")), timeout_ms=obj.number("timeoutMs", low=1)
    )


_FAKE_KEYS = ("chatgpt", "gemini", "completionTimings", "expect", "assertions")
_TIMING_KEYS = tuple(f.name for f in fields(CompletionTimings))


def _parse_fake(obj: _Object | None, providers: tuple[Provider, ...]) -> FakeSetup:
    if obj is None:
        return FakeSetup()
    sites: dict[Provider, FakeSite] = {}
    for provider in PROVIDERS:
        site = obj.child(provider, (*_behaviour_keys(), "queue"))
        if site is None:
            continue
        if provider not in providers:
            raise obj.fail(provider, f"'{provider}' is not asked in this scenario")
        sites[provider] = _parse_site(site)
    timings = obj.child("completionTimings", _TIMING_KEYS)
    return FakeSetup(
        sites=sites,
        completion_timings=None if timings is None else _build(timings, CompletionTimings),
        expect=_parse_expect(obj.child("expect", _EXPECT_KEYS), providers),
        assertions=(
            None
            if obj.raw.get("assertions") is None
            else _parse_assertions(obj.child("assertions", ASSERTION_NAMES, noun="assertion"))
        ),
    )


def _behaviour_keys() -> tuple[str, ...]:
    # Imported when a file has fake settings: the fakes package brings a web server along,
    # which a pytest run without scenarios should not pay for.
    from bridge.fakes.behaviour import Behaviour

    return tuple(f.name for f in fields(Behaviour))


def _parse_site(site: _Object) -> FakeSite:
    from bridge.fakes.behaviour import Behaviour

    settings = {k: v for k, v in site.raw.items() if k != "queue"}
    default = _build(site, Behaviour, settings) if settings else None
    raw_queue = site.raw.get("queue", [])
    if not isinstance(raw_queue, list):
        raise site.fail("queue", "must be a list of behaviours (one per question, in order)")
    queue = tuple(
        _build(_Object(item, site.where, site.at(f"queue[{i}]"), _behaviour_keys()), Behaviour)
        for i, item in enumerate(raw_queue)
    )
    return FakeSite(default, queue)


def _build(obj: _Object, cls: Callable[..., T], values: dict[str, Any] | None = None) -> T:
    """Construct ``cls`` from the object's fields; its own validation names the bad field."""
    values = obj.raw if values is None else values
    for f in fields(cast(Any, cls)):
        if f.name in values:
            _check_type(obj, f.name, values[f.name], f.default)
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        bad = next((k for k in values if str(exc).startswith(k)), None)
        raise obj.where.error(str(exc), obj.at(bad) if bad else obj.path) from None


def _check_type(obj: _Object, key: str, value: Any, default: Any) -> None:
    """The fakes' settings are ints, floats and strings; say so before their own checks run."""
    if isinstance(default, bool):
        ok, what = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        ok, what = isinstance(value, int) and not isinstance(value, bool), "a whole number"
    elif isinstance(default, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        what = "a number"
    else:  # strings, literals and optional strings
        ok, what = isinstance(value, str), "a string"
    if not ok:
        raise obj.fail(key, f"must be {what}, not {_kind(value)} {_short(value)}")


def _line_of(text: str, scenario_id: str) -> int:
    match = re.search(r'"id"\s*:\s*' + re.escape(json.dumps(scenario_id)), text)
    return 1 if match is None else text.count("\n", 0, match.start()) + 1


def _kind(value: object) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."
