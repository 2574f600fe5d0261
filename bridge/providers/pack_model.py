"""The provider pack's format as pydantic models (docs/sites.md#provider-packs): one schema
that validates a pack, types it for the code, and is published as the JSON Schema an editor
checks an override with (``docs/schemas/pack.schema.json``, :func:`override_json_schema`).

Each rule is written once, as a type or a constraint pydantic checks and the JSON Schema
shows; ``says`` (bridge.validation) gives it the message a person editing the file can act
on instead of pydantic's wording, and bridge.providers.pack_problems places each message on
its JSON path (tests/providers/test_pack.py pins the wording).

A document is validated in one of two ways. *Complete* (a built-in pack, or the override
merged over it): every required entry present. *Partial* (an override before the merge): a
missing key is no problem, and ``null`` removes an optional key but may not remove a required
entry. Built-in packs must also say every entry's evidence (``strict_evidence``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationInfo,
    WrapValidator,
    field_validator,
)
from pydantic_core import PydanticCustomError

from bridge.providers.pack_checks import (
    compile_flags,
    css_problem,
    nearest,
    regex_problem,
    type_name,
)
from bridge.validation import RULE, check, says

__all__ = [
    "EXTRACTION_STEPS",
    "HTTP_METHODS",
    "INPUT_METHOD_NAMES",
    "SCHEMA_VERSION",
    "SCRIPT_INPUTS",
    "SECTIONS",
    "STREAM_FORMATS",
    "STREAM_TRANSPORTS",
    "AnswerStream",
    "Count",
    "Entry",
    "ExtractionSteps",
    "Flow",
    "HostList",
    "InputMethods",
    "Network",
    "PackDocument",
    "Pattern",
    "ReadStream",
    "ScriptInput",
    "Seconds",
    "SelectorSet",
    "Selectors",
    "Stream",
    "Switch",
    "TextSet",
    "Texts",
    "Url",
    "UrlList",
    "Urls",
    "Value",
    "override_json_schema",
]

SCHEMA_VERSION = 1

InputMethod = Literal["script", "insert_text", "key_events"]
ExtractionStep = Literal["markdown", "prose", "paragraphs", "article_text", "body_text"]
ScriptInputName = Literal["insert_text_command", "inner_text_events"]
AnswerFormat = Literal["chatgpt-sse", "gemini-frames"]
ReadFormat = Literal["chatgpt-conversation"]
HttpMethod = Literal["GET", "POST"]
Transport = Literal["fetch", "xhr"]

#: Names the ``flow`` switches accept (bridge.providers.composer, page.js).
INPUT_METHOD_NAMES: tuple[str, ...] = get_args(InputMethod)
EXTRACTION_STEPS: tuple[str, ...] = get_args(ExtractionStep)
SCRIPT_INPUTS: tuple[str, ...] = get_args(ScriptInputName)
STREAM_FORMATS: tuple[str, ...] = (*get_args(AnswerFormat), *get_args(ReadFormat))
STREAM_TRANSPORTS: tuple[str, ...] = get_args(Transport)
HTTP_METHODS: tuple[str, ...] = get_args(HttpMethod)

_FACT_ID = r"^[CG]\d+\.\d+$"
_ANCHOR = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_LANGUAGE = r"^[a-z]{2,3}(?:-[A-Za-z0-9]+)?$"
_HOST = r"^[a-z0-9-]+(?:\.[a-z0-9-]+)+$"
_URL = r"^https?://[^/\s]+/\S*$"


# -- rules with their messages ---------------------------------------------------------------


def _not_text(value: object) -> str:
    return f"must be a non-empty string, not {value!r}"


def _listsays(what: str) -> WrapValidator:
    def message(value: object) -> str:
        if value == []:
            return (
                f"is empty: give at least one {what[:-1]}, or remove the entry "
                "(null in an override) if it is optional"
            )
        return f"must be a list of {what}, not {type_name(value)}"

    return says(message)


def _choice(names: tuple[str, ...], elsewhere: tuple[str, ...] = ()) -> WrapValidator:
    """One of ``names``; a name valid only ``elsewhere`` (another entry) is told so."""

    def message(value: object) -> str:
        if value in elsewhere:
            return f"must be one of {', '.join(names)} here"
        if isinstance(value, str):
            return f"{value!r} is not one of the known names; {nearest(value, names)}"
        return f"{value!r} is not one of the known names; valid names: {', '.join(names)}"

    return says(message)


def _unique(names: tuple[str, ...]) -> str | None:
    return "names a method twice" if len(set(names)) != len(names) else None


def _exact_int(value: Any) -> Any:
    """JSON's ``true`` and ``1.0`` are not the integer 1 (pydantic would take them)."""
    if type(value) is not int:
        raise ValueError("not an integer")
    return value


def _string(value: object) -> str:
    return f"must be a string, not {type_name(value)}"


Text = Annotated[str, StringConstraints(pattern=r"\S"), says(_not_text)]
TextList = Annotated[tuple[Text, ...], Field(min_length=1), _listsays("texts")]
CssSelector = Annotated[
    str,
    StringConstraints(pattern=r"\S"),
    says(_not_text),
    check(lambda s: f"{s!r} {why}" if (why := css_problem(s)) else None),
    AfterValidator(str.strip),
]
Language = Annotated[
    str,
    StringConstraints(pattern=_LANGUAGE),
    says(lambda _: 'is no language code like "en" or "ja"'),
]
Regex = Annotated[
    str,
    StringConstraints(min_length=1),
    says(lambda v: f"{v!r} {regex_problem(v)}"),
    check(lambda p: f"{p!r} {why}" if (why := regex_problem(p)) else None),
]
Flags = Annotated[
    str,
    StringConstraints(pattern=r"^[ims]*$"),
    says(lambda v: f"flags {v!r} must be letters from 'ims'"),
]
UrlText = Annotated[
    str,
    StringConstraints(pattern=_URL),
    says(lambda v: f'{v!r} is no URL like "https://example.com/"'),
]
HostName = Annotated[
    str,
    StringConstraints(pattern=_HOST),
    says(
        lambda v: (
            _not_text(v)
            if not isinstance(v, str) or not v.strip()
            else f'{v!r} is no host name like "accounts.google.com" (no scheme, no path)'
        )
    ),
]
FactId = Annotated[
    str, StringConstraints(pattern=_FACT_ID), says(lambda v: f'{v!r} is no row id like "C1.5"')
]


# -- entries ---------------------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class Entry(_Model):
    """One fact of a pack: its value (the keys of its kind), its evidence, and where it comes
    from once loaded (``path``, ``source``)."""

    #: The entry's kind, as messages name it ("unknown key for a css entry").
    kind: ClassVar[str] = ""

    evidence: Annotated[str | None, says(_string)] = Field(None, validate_default=True)
    """An anchor of docs/sites.md, or "none: <how bridge copes without evidence>"."""
    facts: Annotated[
        tuple[FactId, ...], says(lambda _: 'must be a list of SITE-FACTS row ids like "C1.5"')
    ] = ()
    """SITE-FACTS row ids, such as "C1.5"."""
    note: Annotated[str, says(_string)] = ""
    """More about the entry, for people."""

    _path: str = PrivateAttr("")
    _source: Path = PrivateAttr(Path())

    @field_validator("evidence")
    @classmethod
    def _evidence(cls, evidence: str | None, info: ValidationInfo) -> str | None:
        strict = bool((info.context or {}).get("strict_evidence"))
        if evidence is None:
            if strict:
                raise PydanticCustomError(
                    RULE,
                    "missing: name an anchor of docs/sites.md, or "
                    'write "none: <how bridge copes without evidence>"',
                )
        elif evidence.startswith("none"):
            if not re.match(r"^none: \S.{8,}", evidence):
                raise PydanticCustomError(RULE, 'say why after "none: " (how bridge copes)')
        elif strict and not _ANCHOR.match(evidence):
            raise PydanticCustomError(
                RULE,
                f"{evidence!r} is no anchor (lowercase-with-dashes) "
                'and does not start with "none: "',
            )
        return evidence

    @property
    def path(self) -> str:
        """Where the entry is in the pack, e.g. ``selectors.send_button``."""
        return self._path

    @property
    def source(self) -> Path:
        """The file that set this entry last: the built-in pack or the override."""
        return self._source

    @property
    def evidenced(self) -> bool:
        return self.evidence is not None and not self.evidence.startswith("none")

    def placed(self, path: str, source: Path) -> None:
        """Say where the entry is and which file set it (after validation)."""
        self._path, self._source = path, source

    @classmethod
    def value_keys(cls) -> tuple[str, ...]:
        """The keys of this kind's value, in order (``css``; ``regex``, ``flags``; …)."""
        return tuple(k for k in cls.model_fields if k not in Entry.model_fields)


class Selectors(Entry):
    """A pack entry of CSS selectors."""

    kind = "css"
    css: Annotated[tuple[CssSelector, ...], Field(min_length=1), _listsays("selectors")]
    """CSS selectors, one per item, tried in order."""


class Texts(Entry):
    """A pack entry of visible texts per language (labels the page shows)."""

    kind = "texts"
    texts: Annotated[
        dict[Language, TextList],
        Field(min_length=1, json_schema_extra={"propertyNames": {"pattern": _LANGUAGE}}),
        says(
            lambda v: (
                "is empty: give at least one language"
                if v == {}
                else 'must be an object of language -> list of texts, e.g. {"en": ["…"]}, '
                f"not {type_name(v)}"
            )
        ),
    ]
    """Texts by language code ("en", "ja", …)."""

    @property
    def languages(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return tuple(self.texts.items())

    @property
    def all(self) -> tuple[str, ...]:
        """Every language's texts, in the file's order."""
        return tuple(t for texts in self.texts.values() for t in texts)

    def language(self, lang: str) -> tuple[str, ...]:
        return self.texts.get(lang, ())


class Pattern(Entry):
    """A pack entry holding a regular expression both Python and JavaScript read alike."""

    kind = "regex"
    regex: Regex
    """A regular expression both Python and JavaScript read alike."""
    flags: Flags = ""
    """Letters from "ims"."""

    def compile(self) -> re.Pattern[str]:
        return re.compile(self.regex, compile_flags(self.flags))


class Value(Entry):
    """An entry whose value is under ``value``: a URL, host names, a number, a switch, names."""


class Url(Value):
    """A pack entry holding one URL."""

    kind = "url"
    value: UrlText


class UrlList(Value):
    """A pack entry holding a list of URLs (or URL prefixes)."""

    kind = "urls"
    value: Annotated[tuple[UrlText, ...], Field(min_length=1), _listsays("URLs")]


class HostList(Value):
    """A pack entry holding a list of host names."""

    kind = "hosts"
    value: Annotated[tuple[HostName, ...], Field(min_length=1), _listsays("host names")]


class Seconds(Value):
    """A pack entry holding a duration in seconds (> 0)."""

    kind = "number"
    value: Annotated[
        float,
        Field(gt=0, strict=True),
        says(lambda v: f"must be a number of seconds > 0, not {v!r}"),
    ]


class Count(Value):
    """A pack entry holding a count (an integer >= 0)."""

    kind = "int"
    value: Annotated[
        int, Field(ge=0, strict=True), says(lambda v: f"must be an integer >= 0, not {v!r}")
    ]


class Switch(Value):
    """A pack entry holding a flow switch (true or false)."""

    kind = "bool"
    value: Annotated[bool, Field(strict=True), says(lambda v: f"must be true or false, not {v!r}")]


class InputMethods(Value):
    """A pack entry naming the composer's input methods, in the order they are tried."""

    kind = "names"
    value: Annotated[
        tuple[Annotated[InputMethod, _choice(INPUT_METHOD_NAMES)], ...],
        Field(min_length=1, json_schema_extra={"uniqueItems": True}),
        _listsays("names"),
        check(_unique),
    ]


class ExtractionSteps(Value):
    """A pack entry naming the answer's extraction steps, in the order they are tried."""

    kind = "names"
    value: Annotated[
        tuple[Annotated[ExtractionStep, _choice(EXTRACTION_STEPS)], ...],
        Field(min_length=1, json_schema_extra={"uniqueItems": True}),
        _listsays("names"),
        check(_unique),
    ]


class ScriptInput(Value):
    """A pack entry naming how the page script puts text in the composer."""

    kind = "name"
    value: Annotated[ScriptInputName, _choice(SCRIPT_INPUTS)]


class Stream(Entry):
    """A network request bridge reads passively (bridge.providers.streams)."""

    kind = "stream"
    method: Annotated[HttpMethod, _choice(HTTP_METHODS)]
    url: Regex
    """A regular expression over the request's full URL."""
    format: str
    transport: Annotated[Transport, _choice(STREAM_TRANSPORTS)] | None = None
    """How the page sends it, where recorded (None: not recorded)."""

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.url)  # re caches compiled patterns

    def matches(self, method: str, url: str) -> bool:
        return method.upper() == self.method and self.pattern.search(url) is not None


class AnswerStream(Stream):
    """The request that carries an answer."""

    format: Annotated[AnswerFormat, _choice(get_args(AnswerFormat), STREAM_FORMATS)]


class ReadStream(Stream):
    """The page's own read of a conversation (docs/sites.md#conversations)."""

    format: Annotated[ReadFormat, _choice(get_args(ReadFormat), STREAM_FORMATS)]


# -- sections and the document ---------------------------------------------------------------


class _Section(_Model):
    def _present(self) -> dict[str, Any]:
        return {k: e for k in type(self).model_fields if (e := getattr(self, k)) is not None}

    def entries(self) -> Mapping[str, Entry]:
        """The entries the pack sets, in schema order."""
        return self._present()


class Urls(_Section):
    """A pack's ``urls`` section: the site's home, its tabs, its conversations, its login
    pages."""

    home: Url
    tab_prefixes: UrlList
    conversation_path: Pattern
    login_hosts: HostList | None = None
    login_path: Pattern | None = None


class SelectorSet(_Section):
    """A pack's ``selectors`` section: where the composer, its buttons and the answers are."""

    input: Selectors
    send_button: Selectors
    stop_button: Selectors
    speech_button: Selectors | None = None
    mic_button: Selectors | None = None
    composer_scope: Selectors | None = None
    user_message: Selectors
    assistant_message: Selectors
    turn: Selectors | None = None
    answer: Selectors
    answer_fallback: Selectors | None = None
    chrome: Selectors | None = None
    thinking_status: Selectors | None = None
    action_bar: Selectors | None = None
    copy_button: Selectors | None = None
    regenerate: Selectors | None = None
    login_cta: Selectors | None = None
    logged_in: Selectors | None = None
    rate_limit_surface: Selectors | None = None
    response_complete: Selectors | None = None
    challenge: Selectors | None = None
    # Files with the question (docs/sites.md#attachments, bridge.providers.attachments).
    upload_button: Selectors | None = None
    upload_menu_item: Selectors | None = None
    file_input: Selectors | None = None
    attachment_chip: Selectors | None = None
    upload_busy: Selectors | None = None
    blocking_dialog: Selectors | None = None
    # The mode picker (docs/sites.md#modes, bridge.providers.modes).
    mode_button: Selectors | None = None
    mode_item: Selectors | None = None
    mode_label: Selectors | None = None
    mode_selected: Selectors | None = None
    # Gemini's temporary-chat button and its "on" state (docs/sites.md#where).
    temp_chat_button: Selectors | None = None
    temp_chat_on: Selectors | None = None
    # The side navigation's menu button: the temporary-chat button exists only while the
    # side navigation is expanded (G13.1).
    side_nav_button: Selectors | None = None
    # Thinking effort and Deep Think (docs/sites.md#effort, bridge.providers.effort).
    effort_button: Selectors | None = None
    effort_menu: Selectors | None = None
    effort_menu_item: Selectors | None = None
    effort_item: Selectors | None = None
    effort_selected: Selectors | None = None
    deep_think_button: Selectors | None = None
    deep_think_item: Selectors | None = None
    deep_think_chip: Selectors | None = None
    # Deep Research (docs/sites.md#research, bridge.providers.research).
    research_button: Selectors | None = None
    research_item: Selectors | None = None
    research_pill: Selectors | None = None
    research_frame: Selectors | None = None
    research_start: Selectors | None = None
    research_running: Selectors | None = None
    research_done: Selectors | None = None
    research_report: Selectors | None = None
    research_sources: Selectors | None = None
    #: A finished research's messages on its reopened conversation (no panel there).
    research_reopened: Selectors | None = None
    # Reading conversations (docs/sites.md#conversations).
    conversation_list: Selectors | None = None
    conversation_item: Selectors | None = None
    history_scroller: Selectors | None = None
    exchange: Selectors | None = None
    user_text_line: Selectors | None = None
    # What an answer generated (docs/sites.md#outputs, bridge.providers.outputs).
    image_loading: Selectors | None = None
    generated_image: Selectors | None = None
    image_exclude: Selectors | None = None
    generated_file: Selectors | None = None

    def entries(self) -> Mapping[str, Selectors]:
        return self._present()


class TextSet(_Section):
    """A pack's ``texts`` section: the labels and phrases the page shows, per language."""

    send_labels: Texts | None = None
    stop_labels: Texts | None = None
    control_exclude: Pattern | None = None
    skip_thinking_labels: Texts | None = None
    thinking_labels: Texts | None = None
    thinking_summary: Pattern | None = None
    thinking_failed: Texts | None = None
    rate_limit: Pattern | None = None
    rate_limit_reset: Pattern | None = None
    error_replies: Texts | None = None
    feedback_labels: Texts | None = None
    turn_labels: Texts | None = None
    challenge_title: Pattern | None = None
    challenge_body: Pattern | None = None
    upload_consent: Texts | None = None
    mode_id_prefixes: Texts | None = None
    effort_advanced_labels: Texts | None = None
    effort_opener_labels: Texts | None = None
    deep_think_labels: Texts | None = None
    deep_think_pending: Texts | None = None
    research_labels: Texts | None = None
    research_pill_labels: Texts | None = None
    research_start_labels: Texts | None = None
    research_plan: Texts | None = None
    research_running: Texts | None = None

    def entries(self) -> Mapping[str, Texts | Pattern]:
        return self._present()


class Network(_Section):
    """A pack's ``network`` section: the requests bridge reads passively (the answer stream,
    the stop request, the conversation read)."""

    answer_stream: AnswerStream
    stop_request: AnswerStream | None = None
    conversation_read: ReadStream | None = None
    """The page's own read of a conversation when it loads (docs/sites.md#conversations)."""


class Flow(_Section):
    """A pack's ``flow`` section: the switches, waits and orders of the ask steps."""

    input_methods: InputMethods
    input_wait_s: Seconds
    send_confirm_s: Seconds
    stuck_retries: Count
    checks_stuck_before_asking: Switch
    extraction_steps: ExtractionSteps
    script_input: ScriptInput
    login_requires_no_composer: Switch
    rate_limit_in_reply: Switch
    reply_notice_max_chars: Count | None = None


class PackDocument(_Model):
    """A provider pack (docs/sites.md#provider-packs): what bridge knows about one site. An
    override (``<state dir>/packs/<provider>.json``) is any part of it, merged over the
    built-in pack as a JSON merge patch (RFC 7386); ``null`` removes an optional entry."""

    schema_: str | None = Field(None, alias="$schema")
    """The JSON Schema this file follows, for editors; bridge ignores it."""
    version: Annotated[
        Literal[1], BeforeValidator(_exact_int), says(lambda v: f"must be 1, not {v!r}")
    ]
    provider: Annotated[str, says(_string)]
    """The provider the pack is for: its file name without ".json"."""
    about: Annotated[str, says(_string)] | None = None
    urls: Urls
    selectors: SelectorSet
    texts: TextSet
    network: Network
    flow: Flow

    @field_validator("provider")
    @classmethod
    def _provider(cls, named: str, info: ValidationInfo) -> str:
        provider = (info.context or {}).get("provider", named)
        if named != provider:
            raise PydanticCustomError(RULE, f"says {named!r} but the file is the {provider!r} pack")
        return named

    def sections(self) -> dict[str, _Section]:
        return {name: getattr(self, name) for name in SECTIONS}


SECTIONS = ("urls", "selectors", "texts", "network", "flow")


def override_json_schema() -> dict[str, Any]:
    """The JSON Schema of an override (docs/schemas/pack.schema.json): the pack's, with every
    key optional (an override is merged over the built-in pack); required entries stay
    non-null, since ``null`` would remove them."""
    schema = PackDocument.model_json_schema(by_alias=True)
    _drop_required(schema)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
        "title": "bridge provider pack override",
    }


def _drop_required(node: Any) -> None:
    if isinstance(node, dict):
        node.pop("required", None)
        for value in node.values():
            _drop_required(value)
    elif isinstance(node, list):
        for value in node:
            _drop_required(value)
