"""The scenario file format as pydantic models: what a scenario file says, validated and
typed at once, and the JSON Schema an editor checks a file with
(docs/schemas/scenario.schema.json, :func:`scenario_json_schema`).

The format is upstream chrome-ai-bridge's ``test-scenarios.json`` (docs/flows.md#scenario-format;
``loader.py`` reads it), so upstream's own file loads unchanged::

    {"version": "1.0.0", "scenarios": [{"id": "chatgpt-new-chat", "name": "...",
      "provider": "chatgpt", "tags": ["smoke", "chatgpt"],
      "question": {"template": "How do I read files asynchronously in Python? ID:{{timestamp}}"},
      "setup": {"instruction": "...", "requireExistingTab": true},
      "assertions": {"minAnswerLength": 20, "relevanceThreshold": 0.2}}]}

Everything beyond the base format is optional: ``description``, ``expect`` (what the outcome must
be: a typed error, the tab reused, ...), ``ask`` (skipThinking, timeoutMs, effort, deepThink),
``setup.primer`` and ``setup.extensionConnected``, ``fakeOnly``/``liveOnly`` (a reason), and
``fake``: how the fake sites behave, in their own Python names, plus fake-only
``expect``/``assertions``.
Live runs ignore ``fake`` entirely. Unknown fields are errors: a typo must never silently
weaken a check. Each rule says its own message (``says``, bridge.validation); rules across
fields name the field they are about.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PrivateAttr,
    Strict,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails, PydanticCustomError, core_schema

from bridge.errors import BridgeError
from bridge.providers.completion import CompletionTimings
from bridge.providers.results import PROVIDERS, Provider
from bridge.validation import again, check, fail_at, says

if TYPE_CHECKING:
    from bridge.fakes.behaviour import Behaviour

__all__ = [
    "ASSERTION_NAMES",
    "TEMPLATE_VARIABLES",
    "VARIABLE",
    "AskSettings",
    "Assertions",
    "Expect",
    "FakeSetup",
    "FakeSite",
    "Question",
    "Scenario",
    "ScenarioFile",
    "ScenarioProvider",
    "Setup",
    "error_codes",
    "render_question",
    "scenario_json_schema",
    "short",
    "template_variables",
    "value_kind",
]

ScenarioProvider = Literal["chatgpt", "gemini", "both"]
TabChoice = Literal["session", "open_tab", "new_tab"]

TEMPLATE_VARIABLES = ("timestamp", "date", "id")
VARIABLE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
_ID = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
# A tag becomes a pytest marker, so it must be a word `-m` can parse and must not be one of
# pytest's own markers (a tag "skip" would silently skip the scenario).
_TAG = r"^[A-Za-z_][A-Za-z0-9_-]*$"
_RESERVED_TAGS = frozenset(
    {"and", "or", "not", "True", "False", "None", "skip", "skipif", "xfail", "parametrize"}
    | {"usefixtures", "filterwarnings", "asyncio", "tryfirst", "trylast"}
)
# Questions that AI sites treat as bot traffic (docs/flows.md#forbidden-questions).
_FORBIDDEN_QUESTIONS = frozenset(
    {"hello", "ok", "what's 1+1", "whats 1+1", "what is 1+1", "1+1", "connection test"}
)


# -- values and their messages ---------------------------------------------------------------


def value_kind(value: object) -> str:
    """A JSON value's kind as a message names it."""
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def short(value: object) -> str:
    """A value as JSON, cut to a message's length."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _must_be(what: str) -> WrapValidator:
    return says(lambda v: f"must be {what}, not {value_kind(v)} {short(v)}")


def _template_problem(template: str) -> str | None:
    for match in VARIABLE.finditer(template):
        if match.group(1) not in TEMPLATE_VARIABLES:
            return f"unknown variable {{{{{match.group(1)}}}}}; known: " + ", ".join(
                f"{{{{{v}}}}}" for v in TEMPLATE_VARIABLES
            )
    text = render_question(template, {}).strip().lower()
    text = re.sub(r"\bid:\s*$", "", text).strip()
    text = re.sub(r"[\s?.!。？！]+$", "", text)
    if re.sub(r"\s+", " ", text) in _FORBIDDEN_QUESTIONS:
        return (
            "is a question docs/flows.md#forbidden-questions forbids (sites treat it as bot "
            "traffic); ask a natural technical question, e.g. 'How do I read files "
            "asynchronously in Python?'"
        )
    return None


def _not_a_marker(tag: object) -> str:
    return (
        f"'{tag}' cannot be a pytest marker: use a word of letters, digits, '_' or '-' "
        "that is not one of pytest's own markers"
    )


def _not_an_id(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        return f"must be a non-empty string, not {value_kind(value)} {short(value)}"
    return "must be letters, digits, '-', '_' or '.' (it is the test's name)"


def _one_or_more(value: Any) -> Any:
    """``"text"`` means ``["text"]``."""
    return [value] if isinstance(value, str) else value


def _code_or_codes(value: Any) -> Any:
    """An error code, or provider -> error code (checked against the scenario later)."""
    if isinstance(value, str) or (
        isinstance(value, dict) and all(isinstance(code, str) for code in value.values())
    ):
        return value
    raise PydanticCustomError(
        "rule", "must be an error code, or an object of provider -> error code"
    )


def _version_text(value: Any) -> Any:
    """Upstream writes ``"1.0.0"``; a number is taken as its text."""
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    return str(value) if is_number else value


Text = Annotated[str, StringConstraints(pattern=r"\S"), _must_be("a non-empty string")]
Template = Annotated[Text, check(_template_problem)]
Flag = Annotated[bool, Strict(), _must_be("true or false")]
Count = Annotated[int, Strict(), Field(ge=0), _must_be("a whole number >= 0")]
Tag = Annotated[
    str,
    _must_be("a string"),
    StringConstraints(pattern=_TAG),
    says(_not_a_marker),
    check(lambda tag: _not_a_marker(tag) if tag in _RESERVED_TAGS else None),
]


class _Settings:
    """A dataclass of settings that is not ours (the fakes' ``Behaviour``, ``CompletionTimings``)
    as a field: validated as strictly as JSON says (``"5"`` is no number), unknown keys
    refused, its own checks' messages placed on the key they name. ``load`` imports the class
    on first use: the fakes package brings a web server along, which a pytest run without
    scenarios should not pay for."""

    def __init__(self, load: Callable[[], type]) -> None:
        self.load = load

    @functools.cached_property
    def holder(self) -> type[BaseModel]:
        # A dataclass takes "extra" from the model that holds it.
        return create_model(
            "Settings", __config__=ConfigDict(extra="forbid"), value=(self.load(), ...)
        )

    def validate(self, value: Any) -> Any:
        if isinstance(value, self.load()):
            return value
        try:
            text = json.dumps({"value": value})
        except (TypeError, ValueError):
            raise PydanticCustomError("rule", "must be a JSON object of settings") from None
        try:
            return self.holder.model_validate_json(text, strict=True).value  # type: ignore[attr-defined]
        except ValidationError as exc:
            raise again(exc.title, (_setting(e, self.load()) for e in exc.errors())) from None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        return core_schema.no_info_plain_validator_function(self.validate)

    def __get_pydantic_json_schema__(self, schema: Any, handler: GetJsonSchemaHandler) -> Any:
        holder = self.holder.model_json_schema()
        return holder["$defs"][self.load().__name__]


def _setting(error: ErrorDetails, cls: type) -> dict[str, Any]:
    """An error of a setting at its own key, in the words of this format."""
    loc, value = tuple(error["loc"])[1:], error["input"]
    kind = error["type"]
    if kind == "value_error":  # the class's own check: "chunk_chars must be at least 1, …"
        message = str(error.get("ctx", {}).get("error", error["msg"]))
        named = next((k for k in (value or {}) if message.startswith(k)), None)
        return {
            "type": "rule",
            "loc": (*loc, named) if named else loc,
            "msg": message,
            "input": value,
        }
    if kind == "unexpected_keyword_argument" or kind == "extra_forbidden":
        known = ", ".join(f.name for f in dataclasses.fields(cls))
        message = f"unknown field '{loc[-1]}'; known: {known}"
        return {"type": "unknown_key", "loc": loc, "msg": message, "input": value}
    if kind == "literal_error":  # as the class words it: "state must be one of ok, …"
        choices = ", ".join(re.findall(r"'([^']*)'", str(error.get("ctx", {}).get("expected"))))
        message = f"{loc[-1]} must be one of {choices}, not {value!r}"
        return {"type": "rule", "loc": loc, "msg": message, "input": value}
    what = _TYPES.get(kind)
    if what is not None:
        message = f"must be {what}, not {value_kind(value)} {short(value)}"
        return {"type": "rule", "loc": loc, "msg": message, "input": value}
    if kind in ("dataclass_type", "model_type", "dict_type"):
        message = f"must be a JSON object, not {value_kind(value)}"
        return {"type": "rule", "loc": loc, "msg": message, "input": value}
    return {**error, "loc": loc}


_TYPES = {
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
}


def _behaviour() -> type:
    from bridge.fakes.behaviour import Behaviour

    return Behaviour


if TYPE_CHECKING:
    BehaviourSettings = Behaviour
    TimingSettings = CompletionTimings
else:
    BehaviourSettings = Annotated[Any, _Settings(_behaviour)]
    TimingSettings = Annotated[Any, _Settings(lambda: CompletionTimings)]


# -- the models ------------------------------------------------------------------------------


class _Model(BaseModel):
    """A JSON object of the format: unknown keys are errors that list the known ones."""

    # Files spell keys in camelCase (the upstream format), code in snake_case.
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        validate_by_name=True,
        use_attribute_docstrings=True,
    )
    #: How an unknown key is called in messages ("unknown assertion 'minLength'").
    noun: ClassVar[str] = "field"

    @model_validator(mode="wrap")
    @classmethod
    def _name_unknown_keys(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(data)
        except ValidationError as exc:
            known = ", ".join(f.alias or name for name, f in cls.model_fields.items())
            raise again(exc.title, (_unknown(e, cls.noun, known) for e in exc.errors())) from None


def _unknown(error: ErrorDetails, noun: str, known: str) -> ErrorDetails | dict[str, Any]:
    if error["type"] != "extra_forbidden" or len(error["loc"]) != 1:
        return error
    message = f"unknown {noun} '{error['loc'][0]}'; known: {known}"
    return {"type": "unknown_key", "loc": error["loc"], "msg": message, "input": error["input"]}


class Question(_Model):
    """A scenario's question."""

    template: Template
    """The question; {{timestamp}}, {{date}} and {{id}} are filled in at run time."""


class Setup(_Model):
    """What a scenario sets up before it asks (an existing chat, an instruction for a person)."""

    instruction: Text | None = None
    """Shown to a person running live (the upstream suite prints it before the scenario)."""
    require_existing_tab: Flag = False
    """Ask in an existing chat: a primer question opens it first, in both modes."""
    primer: Template | None = None
    """The primer question's template (a default following docs/flows.md#forbidden-questions
    when absent)."""
    extension_connected: Flag = True
    """False: ask through a relay no extension can reach (docs/flows.md#known-problem-6)."""


class Assertions(_Model):
    """docs/flows.md#scenario-assertions. ``None``/``False`` means "not checked", as in the
    upstream suite's runner."""

    noun = "assertion"

    both_must_succeed: Flag = False
    min_answer_length: Count | None = None
    relevance_threshold: (
        Annotated[float, Strict(), Field(ge=0, le=1), _must_be("a number >= 0 and <= 1")] | None
    ) = None
    max_total_ms: Annotated[float, Strict(), Field(ge=0), _must_be("a number >= 0")] | None = None
    no_fallback: Flag = False
    no_empty_markdown: Flag = False

    @property
    def given(self) -> frozenset[str]:
        """The attributes the file set explicitly (what an override replaces)."""
        return frozenset(self.model_fields_set)

    def overridden_by(self, other: Assertions | None) -> Assertions:
        """These assertions with every field ``other`` sets replaced (fake-mode overrides)."""
        if other is None:
            return self
        return self.model_copy(update={name: getattr(other, name) for name in other.given})


ASSERTION_NAMES = tuple(f.alias or name for name, f in Assertions.model_fields.items())


class Expect(_Model):
    """What the outcome must be, beyond the quality assertions; ``None`` = unchecked."""

    error: Annotated[str | dict[str, str], BeforeValidator(_code_or_codes)] | None = None
    """The typed error code every provider's ask must end with, or one per provider (the
    others must answer). In a loaded scenario, always one per provider."""
    error_message: Annotated[
        tuple[Text, ...],
        BeforeValidator(_one_or_more, json_schema_input_type=str | list[str]),
        says(lambda _: "must be a string or a list of non-empty strings"),
    ] = ()
    """Substrings every expected error's message must contain (case-insensitive)."""
    tab: Annotated[TabChoice, _must_be("one of session, open_tab, new_tab")] | None = None
    same_conversation: Flag = False
    thinking: Flag | None = None
    skipped_thinking: Flag | None = None
    retries: Count | None = None
    brought_to_front: Flag | None = None
    focus_emulated: Flag | None = None
    input_phase: Annotated[int, Strict(), Field(ge=1), _must_be("a whole number >= 1")] | None = (
        None
    )
    completion: Text | None = None
    code_block: Flag = False
    images: Count | None = None
    """How many generated images the answer must come back with, saved (``used.outputs``
    of kind image, docs/sites.md#outputs)."""
    files: Count | None = None
    """How many generated files the answer must come back with, saved."""
    research_sources: Count | None = None
    """Deep Research finished with at least this many sources (``used.research``)."""

    @property
    def given(self) -> frozenset[str]:
        return frozenset(self.model_fields_set)

    @property
    def errors(self) -> Mapping[Provider, str]:
        """Provider -> the typed error code its ask must end with (others must answer)."""
        return cast("Mapping[Provider, str]", self.error) if isinstance(self.error, dict) else {}

    def overridden_by(self, other: Expect) -> Expect:
        changes: dict[str, Any] = {name: getattr(other, name) for name in other.given}
        if "error" in other.given:
            changes["error"] = {**self.errors, **other.errors}
        return self.model_copy(update=changes)

    def for_providers(self, providers: tuple[Provider, ...]) -> Expect:
        """This expectation with its error named for each provider asked. An error for a
        provider not asked, or a code no typed error has, is a problem of ``error``."""
        if self.error is None:
            return self
        given = self.error
        by_provider = dict.fromkeys(providers, given) if isinstance(given, str) else given
        codes = error_codes()
        for provider, code in by_provider.items():
            place: tuple[str, ...] = ("error",) if isinstance(given, str) else ("error", provider)
            if provider not in providers:
                fail_at("Expect", [(place, f"'{provider}' is not asked in this scenario")])
            if code not in codes:
                known = ", ".join(sorted(codes))
                fail_at("Expect", [(place, f"unknown error code {code!r}; known: {known}")])
        return self.model_copy(update={"error": by_provider})


class AskSettings(_Model):
    """How a scenario asks: skip the thinking phase, its own timeout, where it asks
    (docs/sites.md#where): ``conversation`` (a URL or id; with both providers, the URL's
    site says whose), a ChatGPT ``project`` or ``gpt``, a Gemini ``gem``, ``temporary``;
    and ChatGPT's thinking effort and Gemini's Deep Think (docs/sites.md#effort)."""

    skip_thinking: Flag = False
    timeout_ms: Annotated[float, Strict(), Field(ge=1), _must_be("a number >= 1")] | None = None
    conversation: Text | None = None
    project: Text | None = None
    gpt: Text | None = None
    gem: Text | None = None
    temporary: Flag = False
    effort: Text | None = None
    """ChatGPT's thinking effort, a tier by name ("high", "extended", "pro")."""
    deep_think: Flag = False
    """Gemini's Deep Think on before asking."""
    research: Flag = False
    """Deep Research (docs/sites.md#research): the report with its sources is the answer."""
    research_answers: Text | None = None
    """The answers to the site's clarifying questions, sent only if it asks them."""
    capture: Flag = False
    """A capture rides along the ask (docs/captures.md): written next to the run's report
    and checked at once against the pack, the parser and the detector (one provider)."""


class FakeSite(_Model):
    """One fake site's behaviour, in the names of bridge.fakes.Behaviour: the settings set
    the page's defaults from its load on; ``queue`` lists a behaviour for each next
    question, in order (``{"locale": "ja", "queue": [{"state": "stuck"}]}``); ``places``
    are the projects, GPTs or Gems the fake account has (``["g-p-<32 hex>"]``): their pages
    are served, any other's are "not found" (docs/sites.md#where)."""

    model_config = ConfigDict(extra="allow", json_schema_extra=lambda s, _: _site_schema(s))

    queue: Annotated[
        tuple[BehaviourSettings, ...],
        says(lambda _: "must be a list of behaviours (one per question, in order)"),
    ] = ()
    places: tuple[Text, ...] = ()

    _default: Behaviour | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _settings(self) -> FakeSite:
        if self.model_extra:
            self._default = _BEHAVIOUR.validate(self.model_extra)
        return self

    @property
    def default(self) -> Behaviour | None:
        """The page's behaviour from its load on (None: the fake site's own defaults)."""
        return self._default


_BEHAVIOUR = _Settings(_behaviour)


def _site_schema(schema: dict[str, Any]) -> None:
    """A site's object: Behaviour's settings and ``queue``, nothing else."""
    settings = _BEHAVIOUR.__get_pydantic_json_schema__(None, None)  # type: ignore[arg-type]
    schema["properties"] = {**settings["properties"], **schema["properties"]}
    schema["additionalProperties"] = False


class FakeSetup(_Model):
    """How the fake sites behave in this scenario; live runs ignore it."""

    chatgpt: FakeSite | None = None
    gemini: FakeSite | None = None
    completion_timings: TimingSettings | None = None
    """Shorter detector timings (bridge.providers.completion.CompletionTimings)."""
    expect: Expect = Expect()
    """Checks added or replaced in fake mode only."""
    assertions: Assertions | None = None

    @property
    def sites(self) -> Mapping[Provider, FakeSite]:
        return {p: site for p in PROVIDERS if (site := getattr(self, p)) is not None}


class Scenario(_Model):
    """One scenario: a question for one provider or both, and what its answer must show.
    Rules across fields name the field they are about (``assertions.bothMustSucceed``
    needs ``"provider": "both"``)."""

    id: Annotated[str, StringConstraints(pattern=_ID), says(_not_an_id)]
    """The test's name: letters, digits, '-', '_' or '.'; unique across files."""
    name_: Text | None = Field(None, alias="name")
    """A title for people (the id when absent)."""
    description: Text | None = None
    tags: Annotated[
        tuple[Tag, ...],
        says(lambda _: "must be a list of strings"),
        AfterValidator(lambda tags: tuple(dict.fromkeys(tags))),
    ] = ()
    """Each becomes a pytest marker."""
    provider: Annotated[ScenarioProvider, _must_be("one of chatgpt, gemini, both")]
    question: Question
    setup: Setup = Setup()
    assertions: Assertions = Assertions()
    expect: Expect = Expect()
    ask: AskSettings = AskSettings()
    fake: FakeSetup = FakeSetup()
    fake_only: Text | None = None
    """Why the scenario runs against the fake sites only."""
    live_only: Text | None = None
    """Why the scenario runs live only."""

    _line: int = PrivateAttr(1)

    @field_validator("assertions")
    @classmethod
    def _both(cls, assertions: Assertions, info: ValidationInfo) -> Assertions:
        if assertions.both_must_succeed and info.data.get("provider", "both") != "both":
            fail_at("Scenario", [(("bothMustSucceed",), 'needs "provider": "both"')])
        return assertions

    @field_validator("expect")
    @classmethod
    def _expected(cls, expect: Expect, info: ValidationInfo) -> Expect:
        setup = info.data.get("setup")
        if expect.same_conversation and setup is not None and not setup.require_existing_tab:
            fail_at("Scenario", [(("sameConversation",), "needs setup.requireExistingTab")])
        return expect.for_providers(_asked(info)) if "provider" in info.data else expect

    @field_validator("ask")
    @classmethod
    def _ask(cls, ask: AskSettings, info: ValidationInfo) -> AskSettings:
        if ask.skip_thinking and info.data.get("provider", "chatgpt") != "chatgpt":
            message = "is ChatGPT's Thinking mode: needs provider chatgpt"
            fail_at("Scenario", [(("skipThinking",), message)])
        if ask.effort is not None and info.data.get("provider", "chatgpt") == "gemini":
            message = "is ChatGPT's thinking effort: needs provider chatgpt or both"
            fail_at("Scenario", [(("effort",), message)])
        if ask.deep_think and info.data.get("provider", "chatgpt") == "chatgpt":
            message = "is Gemini's Deep Think: needs provider gemini or both"
            fail_at("Scenario", [(("deepThink",), message)])
        if ask.capture and info.data.get("provider") == "both":
            message = "captures one site's ask: needs provider chatgpt or gemini"
            fail_at("Scenario", [(("capture",), message)])
        return ask

    @field_validator("fake")
    @classmethod
    def _fake(cls, fake: FakeSetup, info: ValidationInfo) -> FakeSetup:
        if "provider" not in info.data:
            return fake
        asked = _asked(info)
        for provider in fake.sites:
            if provider not in asked:
                fail_at("Scenario", [((provider,), f"'{provider}' is not asked in this scenario")])
        try:
            expect = fake.expect.for_providers(asked)
        except ValidationError as exc:  # placed under "expect"
            raise again(
                exc.title, ({**e, "loc": ("expect", *e["loc"])} for e in exc.errors())
            ) from None
        return fake.model_copy(update={"expect": expect})

    @field_validator("live_only")
    @classmethod
    def _one_mode(cls, live_only: str | None, info: ValidationInfo) -> str | None:
        if live_only and info.data.get("fake_only"):
            raise PydanticCustomError("rule", "a scenario cannot be both fakeOnly and liveOnly")
        return live_only

    @model_validator(mode="after")
    def _place(self, info: ValidationInfo) -> Scenario:
        """Where the scenario starts in its file's text (given in the context), for pytest's
        report locations."""
        text = (info.context or {}).get("text", "")
        match = re.search(r'"id"\s*:\s*' + re.escape(json.dumps(self.id)), text)
        self._line = 1 if match is None else text.count("\n", 0, match.start()) + 1
        return self

    @property
    def name(self) -> str:
        return self.name_ or self.id

    @property
    def template(self) -> str:
        return self.question.template

    @property
    def line(self) -> int:
        """Where the scenario starts in its file (1-based), for pytest's report locations."""
        return self._line

    @property
    def providers(self) -> tuple[Provider, ...]:
        return PROVIDERS if self.provider == "both" else (self.provider,)

    def assertions_for(self, *, live: bool) -> Assertions:
        return self.assertions if live else self.assertions.overridden_by(self.fake.assertions)

    def expect_for(self, *, live: bool) -> Expect:
        return self.expect if live else self.expect.overridden_by(self.fake.expect)


def _asked(info: ValidationInfo) -> tuple[Provider, ...]:
    provider = info.data["provider"]
    return PROVIDERS if provider == "both" else (provider,)


class ScenarioFile(_Model):
    """A scenario file (docs/flows.md#scenario-format): upstream chrome-ai-bridge's
    test-scenarios.json, with bridge's optional fields."""

    schema_: str | None = Field(None, alias="$schema")
    """The JSON Schema this file follows, for editors; bridge ignores it."""
    version: (
        Annotated[
            str,
            BeforeValidator(_version_text, json_schema_input_type=str | float),
            _must_be("a string"),
        ]
        | None
    ) = None
    description: str | None = None
    scenarios: Annotated[
        tuple[Scenario, ...],
        Field(min_length=1),
        says(lambda _: "must be a non-empty list of scenarios"),
    ]

    _source: str = PrivateAttr("")

    @field_validator("scenarios")
    @classmethod
    def _unique(cls, scenarios: tuple[Scenario, ...]) -> tuple[Scenario, ...]:
        seen: set[str] = set()
        for index, scenario in enumerate(scenarios):
            if scenario.id in seen:
                message = f"duplicate id '{scenario.id}': every scenario id must be unique"
                fail_at("ScenarioFile", [((index, "id"), message)])
            seen.add(scenario.id)
        return scenarios

    @model_validator(mode="after")
    def _named(self, info: ValidationInfo) -> ScenarioFile:
        self._source = (info.context or {}).get("source", "")
        return self

    @property
    def source(self) -> str:
        """The file, as pytest shows it."""
        return self._source


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file (docs/schemas/scenario.schema.json)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **ScenarioFile.model_json_schema(by_alias=True),
        "title": "bridge scenario file",
    }


def error_codes() -> frozenset[str]:
    """Every ``code`` a typed bridge error can carry (what ``expect.error`` may name)."""
    codes: set[str] = set()
    pending: list[type[BridgeError]] = [BridgeError]
    while pending:
        cls = pending.pop()
        codes.add(cls.code)
        pending.extend(cls.__subclasses__())
    return frozenset(codes)


# -- templates ------------------------------------------------------------------------------


def template_variables(now: datetime, scenario_id: str) -> dict[str, str]:
    """``{{timestamp}}`` as the upstream suite makes it (``Date.now().toString(36)``), and friends
    (docs/flows.md#scenario-format)."""
    millis = int(now.timestamp() * 1000)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while millis:
        millis, rest = divmod(millis, 36)
        out = digits[rest] + out
    return {"timestamp": out or "0", "date": now.date().isoformat(), "id": scenario_id}


def render_question(template: str, variables: Mapping[str, str]) -> str:
    """Fill ``{{name}}`` placeholders (every occurrence; unknown names were rejected at load)."""
    return VARIABLE.sub(lambda m: variables.get(m.group(1), ""), template)
