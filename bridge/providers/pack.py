"""Provider packs: what bridge knows about a site, as data (docs/sites.md#provider-packs).

A pack (``bridge/providers/packs/<provider>.json``) holds every selector, text, regular
expression, URL pattern and flow switch the page script (page.js) and the Python side use
for one provider. Each entry carries its evidence: an anchor of docs/sites.md, or
``"none: <why>"`` for the few facts bridge detects by behaviour or decides itself.

A person can change any entry without a release: ``<state dir>/packs/<provider>.json``
(state dir: ``--state-dir``, else :func:`bridge.store.state.default_state_dir`) is merged over the
built-in pack as a JSON merge patch (RFC 7386): objects merge key by key; lists,
strings, numbers and booleans replace; ``null`` removes an optional entry. The override is
validated like the built-in pack, and a broken one fails loudly with a :class:`PackError`
naming the file, the JSON path, what is wrong and what to do; bridge never falls back to
the built-in pack silently. :func:`load_pack` re-reads a file when its modification time
or size changed, so an edited override applies to the next ask without a restart.

An override says where bridge sends a person's questions and files (``urls.home``,
``urls.tab_prefixes``), so it may change selectors, texts and flow switches freely, but its
URLs and host names only within the provider's own domains (:data:`PROVIDER_DOMAINS`), over
https. Another host is refused (:class:`PackHostRefused`) unless the person allows it with
``$BRIDGE_PACK_ALLOW_HOSTS`` (comma-separated host names, each with its subdomains): an
option outside the file, so a planted file cannot allow itself. An override file (and its
directory) that another user owns or may write to is refused as well.

Schema (``version`` 1): top-level ``version``, ``provider``, optional ``about``, and the
sections below. Every entry is an object with ``evidence`` (required in built-in packs),
optional ``facts`` (SITE-FACTS row ids such as ``"C1.5"``) and ``note``, plus the value keys
of its kind:

- ``css``: ``{"css": ["selector", …]}``, one selector per item, tried in order;
- ``texts``: ``{"texts": {"en": ["…"], "ja": ["…"]}}``, by language;
- ``regex``: ``{"regex": "…", "flags": "i"}`` (flags from ``ims``), Python syntax that is
  also JavaScript syntax (checked approximately: it must compile in Python and use none of
  Python's own constructs);
- ``value``: ``{"value": …}``: a URL, a list of URLs or host names, a number, an integer,
  a boolean, or names from a fixed set;
- ``stream``: ``{"method": "POST", "url": "<regex>", "format": "chatgpt-sse", "transport":
  "fetch"}``: a network request bridge reads passively (the answer, a conversation read).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import os
import re
import stat
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Generic, TypeVar, cast

from bridge.errors import BridgeError
from bridge.store.state import default_state_dir, owner_uid, private_state_dir

__all__ = [
    "ALLOW_HOSTS_ENV",
    "BUILTIN_DIR",
    "EXTRACTION_STEPS",
    "INPUT_METHOD_NAMES",
    "PROVIDER_DOMAINS",
    "SCHEMA",
    "SCRIPT_INPUTS",
    "CopyAction",
    "Entry",
    "Flow",
    "Network",
    "Pack",
    "PackError",
    "PackHostRefused",
    "Pattern",
    "Selectors",
    "Stream",
    "Texts",
    "Urls",
    "Value",
    "builtin_pack",
    "builtin_providers",
    "css_problem",
    "load_pack",
    "merge_patch",
    "override_path",
    "regex_problem",
]

SCHEMA_VERSION = 1
BUILTIN_DIR = Path(__file__).with_name("packs")

#: Names the ``flow`` switches accept (bridge.providers.composer, page.js).
INPUT_METHOD_NAMES = ("script", "insert_text", "key_events")
EXTRACTION_STEPS = ("markdown", "prose", "paragraphs", "article_text", "body_text")
SCRIPT_INPUTS = ("insert_text_command", "inner_text_events")
_ANSWER_FORMATS = ("chatgpt-sse", "gemini-frames")
_READ_FORMATS = ("chatgpt-conversation",)
STREAM_FORMATS = (*_ANSWER_FORMATS, *_READ_FORMATS)
STREAM_TRANSPORTS = ("fetch", "xhr")
HTTP_METHODS = ("GET", "POST")


#: The domains a provider's pack may send the browser to, each with its subdomains: the
#: built-in packs' URLs and login hosts all lie within them (docs/sites.md#chatgpt-urls,
#: docs/sites.md#gemini-urls, docs/sites.md#login-wall).
PROVIDER_DOMAINS: dict[str, tuple[str, ...]] = {
    "chatgpt": ("chatgpt.com", "openai.com"),
    "gemini": ("google.com",),
}
#: Hosts a person allows an override to point at beyond :data:`PROVIDER_DOMAINS`.
ALLOW_HOSTS_ENV = "BRIDGE_PACK_ALLOW_HOSTS"
_FIX_ADVICE = (
    "Fix the file (or delete it to use the built-in pack), then ask again; "
    "docs/sites.md#provider-packs describes the format."
)


class PackError(BridgeError, ValueError):
    """A provider pack (built-in or a person's override) that cannot be used."""

    code = "pack_invalid"

    def __init__(self, file: Path, problems: list[str], advice: str = _FIX_ADVICE) -> None:
        self.file = file
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"provider pack {file} cannot be used:\n{lines}\n{advice}")


class PackHostRefused(PackError):
    """An override that points bridge at a host outside the provider's own domains: where
    asks and attached files would go. Refused unless the person allows the host with
    ``$BRIDGE_PACK_ALLOW_HOSTS``."""

    code = "pack_host_refused"

    def __init__(self, file: Path, problems: list[str], hosts: list[str]) -> None:
        self.hosts = hosts
        advice = (
            "An override may change selectors, texts and flow switches, but not send your "
            "questions and files to another site. "
        )
        if hosts:
            advice += (
                f"If you trust that host, allow it with {ALLOW_HOSTS_ENV}={','.join(hosts)} in "
                "the environment bridge starts in (never read from a pack); otherwise fix or "
                "delete the file."
            )
        else:
            advice += "Fix the file (or delete it to use the built-in pack)."
        super().__init__(file, problems, advice)


# -- schema ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One entry the schema knows: its kind, whether every pack must have it, choices."""

    #: css | texts | regex | url | urls | hosts | number | int | bool | names | name | stream
    kind: str
    required: bool = False
    choices: tuple[str, ...] = ()


def _f(kind: str, required: bool = False, choices: tuple[str, ...] = ()) -> Field:
    return Field(kind, required, choices)


SCHEMA: dict[str, dict[str, Field]] = {
    "urls": {
        "home": _f("url", True),
        "tab_prefixes": _f("urls", True),
        "conversation_path": _f("regex", True),
        "login_hosts": _f("hosts"),
        "login_path": _f("regex"),
    },
    "selectors": {
        "input": _f("css", True),
        "send_button": _f("css", True),
        "stop_button": _f("css", True),
        "speech_button": _f("css"),
        "mic_button": _f("css"),
        "composer_scope": _f("css"),
        "user_message": _f("css", True),
        "assistant_message": _f("css", True),
        "turn": _f("css"),
        "answer": _f("css", True),
        "answer_fallback": _f("css"),
        "chrome": _f("css"),
        "thinking_status": _f("css"),
        "action_bar": _f("css"),
        "copy_button": _f("css"),
        "regenerate": _f("css"),
        "login_cta": _f("css"),
        "logged_in": _f("css"),
        "rate_limit_surface": _f("css"),
        "response_complete": _f("css"),
        "challenge": _f("css"),
        # Files with the question (docs/sites.md#attachments, bridge.providers.attachments).
        "upload_button": _f("css"),
        "upload_menu_item": _f("css"),
        "file_input": _f("css"),
        "attachment_chip": _f("css"),
        "upload_busy": _f("css"),
        "blocking_dialog": _f("css"),
        # The mode picker (docs/sites.md#modes, bridge.providers.modes).
        "mode_button": _f("css"),
        "mode_item": _f("css"),
        "mode_label": _f("css"),
        "mode_selected": _f("css"),
        "conversation_list": _f("css"),
        "conversation_item": _f("css"),
        "history_scroller": _f("css"),
        "exchange": _f("css"),
        "user_text_line": _f("css"),
    },
    "texts": {
        "send_labels": _f("texts"),
        "stop_labels": _f("texts"),
        "control_exclude": _f("regex"),
        "skip_thinking_labels": _f("texts"),
        "thinking_labels": _f("texts"),
        "thinking_summary": _f("regex"),
        "thinking_failed": _f("texts"),
        "rate_limit": _f("regex"),
        "rate_limit_reset": _f("regex"),
        "error_replies": _f("texts"),
        "feedback_labels": _f("texts"),
        "turn_labels": _f("texts"),
        "challenge_title": _f("regex"),
        "challenge_body": _f("regex"),
        "upload_consent": _f("texts"),
        "mode_id_prefixes": _f("texts"),
    },
    "network": {
        "answer_stream": _f("stream", True),
        "stop_request": _f("stream"),
        "conversation_read": _f("stream"),
    },
    "flow": {
        "input_methods": _f("names", True, INPUT_METHOD_NAMES),
        "input_wait_s": _f("number", True),
        "send_confirm_s": _f("number", True),
        "stuck_retries": _f("int", True),
        "checks_stuck_before_asking": _f("bool", True),
        "extraction_steps": _f("names", True, EXTRACTION_STEPS),
        "script_input": _f("name", True, SCRIPT_INPUTS),
        "login_requires_no_composer": _f("bool", True),
        "rate_limit_in_reply": _f("bool", True),
        "reply_notice_max_chars": _f("int"),
    },
}

_TOP_KEYS = ("version", "provider", "about", *SCHEMA)
_COMMON_KEYS = ("evidence", "facts", "note")
_VALUE_KEYS: dict[str, tuple[str, ...]] = {
    "css": ("css",),
    "texts": ("texts",),
    "regex": ("regex", "flags"),
    "stream": ("method", "url", "format", "transport"),
}
_FACT_ID = re.compile(r"^[CG]\d+\.\d+$")
_ANCHOR = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_LANGUAGE = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]+)?$")
_HOST = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)+$")


def _value_keys(kind: str) -> tuple[str, ...]:
    return _VALUE_KEYS.get(kind, ("value",))


# -- checks that do not need the schema -------------------------------------------------------


def css_problem(selector: object) -> str | None:
    """Why ``selector`` is not one plausible CSS selector (None when it is).

    Not a CSS parser: it catches what a hand-edited pack gets wrong (empty strings, a rule
    instead of a selector, unbalanced brackets or quotes, dangling combinators, a list).
    The page script checks each selector with the browser's own parser as well.
    """
    if not isinstance(selector, str):
        return f"must be a string, not {_type_name(selector)}"
    s = selector.strip()
    if not s:
        return "is empty"
    if any(c in s for c in "{};"):
        return "contains '{', '}' or ';': write a selector, not a CSS rule"
    depth: list[str] = []
    quote = ""
    pairs = {"]": "[", ")": "("}
    top_level_comma = False
    i = 0
    while i < len(s):
        c = s[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c == "\\":
            i += 1
        elif c in "'\"":
            quote = c
        elif c in "[(":
            depth.append(c)
        elif c in "])":
            if not depth or depth[-1] != pairs[c]:
                return f"has an unmatched {c!r}"
            depth.pop()
        elif c == "," and not depth:
            top_level_comma = True
        i += 1
    if quote:
        return f"has an unclosed {quote} quote"
    if depth:
        return f"has an unclosed {depth[-1]!r}"
    if top_level_comma:
        return "is a selector list: put each selector in its own list item"
    if s[0] in ">+~" or s[-1] in ">+~":
        return "starts or ends with a combinator (>, + or ~)"
    return None


_PYTHON_ONLY = (
    (re.compile(r"\(\?P[<=]"), "named groups (?P<…>) are Python-only: use (?:…)"),
    (re.compile(r"\(\?#"), "comments (?#…) are Python-only"),
    (re.compile(r"\(\?>"), "atomic groups (?>…) are Python-only"),
    (re.compile(r"\(\?[aiLmsux]+\)"), 'inline flags like (?i) are Python-only: use "flags"'),
    (re.compile(r"(?<!\\)\\[AZ]"), "\\A and \\Z are Python-only: use ^ and $"),
)
_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


def regex_problem(pattern: object, flags: object = "") -> str | None:
    """Why ``pattern`` is no usable regular expression for both Python and the page's
    JavaScript (an approximation: it must compile in Python and avoid Python-only syntax)."""
    if not isinstance(pattern, str):
        return f"must be a string, not {_type_name(pattern)}"
    if not pattern:
        return "is empty (it would match everything)"
    if not isinstance(flags, str) or any(f not in _FLAGS for f in flags):
        return f"flags {flags!r} must be letters from 'ims'"
    for syntax, why in _PYTHON_ONLY:
        if syntax.search(pattern):
            return why
    try:
        re.compile(pattern, _compile_flags(flags))
    except re.error as exc:
        return f"does not compile: {exc}"
    return None


def _compile_flags(flags: str) -> int:
    value = 0
    for f in flags:
        value |= _FLAGS[f]
    return value


def _type_name(value: object) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _nearest(name: str, valid: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.5)
    if close:
        return f"did you mean {close[0]!r}?"
    return "valid names: " + ", ".join(valid)


# -- merge ------------------------------------------------------------------------------------


def merge_patch(base: Any, patch: Any) -> Any:
    """``patch`` applied to ``base`` (RFC 7386): objects merge key by key, ``null`` removes
    a key, anything else replaces. Neither argument is modified."""
    if not isinstance(patch, dict):
        return patch
    out = dict(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


# -- validation -------------------------------------------------------------------------------


class _Checker:
    """Collects every problem of one document, each with its JSON path."""

    def __init__(self, *, complete: bool, strict_evidence: bool) -> None:
        self.complete = complete  # required entries must be present (not for an override)
        self.strict_evidence = strict_evidence  # built-in packs: every entry says its evidence
        self.problems: list[str] = []

    def add(self, path: str, problem: str) -> None:
        self.problems.append(f"{path}: {problem}")

    def document(self, doc: object, provider: str) -> None:
        if not isinstance(doc, dict):
            self.add("$", f"must be a JSON object, not {_type_name(doc)}")
            return
        for key in doc:
            if key not in _TOP_KEYS:
                self.add(key, f"unknown key; {_nearest(key, _TOP_KEYS)}")
        version = doc.get("version")
        if version is None and self.complete:
            self.add("version", f'missing; write "version": {SCHEMA_VERSION}')
        elif version is not None and (type(version) is not int or version != SCHEMA_VERSION):
            self.add("version", f"must be {SCHEMA_VERSION}, not {version!r}")
        named = doc.get("provider")
        if named is None and self.complete:
            self.add("provider", f'missing; write "provider": {provider!r}')
        elif named is not None and named != provider:
            self.add("provider", f"says {named!r} but the file is the {provider!r} pack")
        if "about" in doc and not isinstance(doc["about"], str):
            self.add("about", f"must be a string, not {_type_name(doc['about'])}")
        for section, fields in SCHEMA.items():
            self.section(section, fields, doc.get(section))

    def section(self, name: str, fields: dict[str, Field], body: object) -> None:
        if body is None:
            if self.complete:
                self.add(name, "missing section")
            return
        if not isinstance(body, dict):
            self.add(name, f"must be an object, not {_type_name(body)}")
            return
        for key, value in body.items():
            if key not in fields:
                self.add(f"{name}.{key}", f"unknown key; {_nearest(key, tuple(fields))}")
                continue
            if value is None and not self.complete:  # an override removing the entry
                if fields[key].required:
                    self.add(
                        f"{name}.{key}",
                        "is required and cannot be removed (null); give it a new value instead",
                    )
                continue
            self.entry(f"{name}.{key}", fields[key], value)
        if self.complete:
            for key, field in fields.items():
                if field.required and key not in body:
                    self.add(f"{name}.{key}", f"missing; every pack needs this {field.kind} entry")

    def entry(self, path: str, field: Field, value: object) -> None:
        if not isinstance(value, dict):
            keys = " and ".join(repr(k) for k in _value_keys(field.kind)[:1])
            self.add(path, f"must be an object with {keys}, not {_type_name(value)}")
            return
        allowed = (*_value_keys(field.kind), *_COMMON_KEYS)
        for key in value:
            if key not in allowed:
                self.add(
                    f"{path}.{key}",
                    f"unknown key for a {field.kind} entry; {_nearest(key, allowed)}",
                )
        self.common(path, value)
        if self.complete:
            for key in _value_keys(field.kind):
                if key not in value and key not in ("flags", "transport"):
                    self.add(f"{path}.{key}", "missing")
        getattr(self, f"kind_{field.kind}")(path, value, field)

    def common(self, path: str, value: dict[str, Any]) -> None:
        evidence = value.get("evidence")
        if evidence is None:
            if self.strict_evidence:
                self.add(
                    f"{path}.evidence",
                    "missing: name an anchor of docs/sites.md, or "
                    'write "none: <how bridge copes without evidence>"',
                )
        elif not isinstance(evidence, str):
            self.add(f"{path}.evidence", f"must be a string, not {_type_name(evidence)}")
        elif evidence.startswith("none"):
            if not re.match(r"^none: \S.{8,}", evidence):
                self.add(f"{path}.evidence", 'say why after "none: " (how bridge copes)')
        elif not _ANCHOR.match(evidence) and self.strict_evidence:
            self.add(
                f"{path}.evidence",
                f"{evidence!r} is no anchor (lowercase-with-dashes) "
                'and does not start with "none: "',
            )
        facts = value.get("facts")
        if facts is not None:
            if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
                self.add(f"{path}.facts", 'must be a list of SITE-FACTS row ids like "C1.5"')
            else:
                for i, fact in enumerate(facts):
                    if not _FACT_ID.match(fact):
                        self.add(f"{path}.facts[{i}]", f'{fact!r} is no row id like "C1.5"')
        if "note" in value and not isinstance(value["note"], str):
            self.add(f"{path}.note", f"must be a string, not {_type_name(value['note'])}")

    def strings(self, path: str, items: object, what: str) -> list[str] | None:
        if not isinstance(items, list):
            self.add(path, f"must be a list of {what}, not {_type_name(items)}")
            return None
        if not items:
            self.add(
                path,
                f"is empty: give at least one {what[:-1]}, or remove the entry "
                "(null in an override) if it is optional",
            )
            return None
        out: list[str] = []
        for i, item in enumerate(items):
            if not isinstance(item, str) or not item.strip():
                self.add(f"{path}[{i}]", f"must be a non-empty string, not {item!r}")
            else:
                out.append(item)
        return out if len(out) == len(items) else None

    def kind_css(self, path: str, value: dict[str, Any], field: Field) -> None:
        if "css" not in value:
            return
        for i, selector in enumerate(self.strings(f"{path}.css", value["css"], "selectors") or []):
            problem = css_problem(selector)
            if problem:
                self.add(f"{path}.css[{i}]", f"{selector!r} {problem}")

    def kind_texts(self, path: str, value: dict[str, Any], field: Field) -> None:
        if "texts" not in value:
            return
        texts = value["texts"]
        if not isinstance(texts, dict):
            self.add(
                f"{path}.texts",
                "must be an object of language -> list of texts, e.g. "
                f'{{"en": ["…"]}}, not {_type_name(texts)}',
            )
            return
        if not texts:
            self.add(f"{path}.texts", "is empty: give at least one language")
        for lang, items in texts.items():
            if not _LANGUAGE.match(lang):
                self.add(f"{path}.texts.{lang}", 'is no language code like "en" or "ja"')
            self.strings(f"{path}.texts.{lang}", items, "texts")

    def kind_regex(self, path: str, value: dict[str, Any], field: Field) -> None:
        if "regex" not in value:
            return
        problem = regex_problem(value["regex"], value.get("flags", ""))
        if problem:
            self.add(f"{path}.regex", f"{value['regex']!r} {problem}")

    def kind_url(self, path: str, value: dict[str, Any], field: Field) -> None:
        if "value" in value:
            self.url(f"{path}.value", value["value"])

    def url(self, path: str, url: object) -> None:
        if not isinstance(url, str) or not re.match(r"^https?://[^/\s]+/\S*$", url):
            self.add(path, f'{url!r} is no URL like "https://example.com/"')

    def kind_urls(self, path: str, value: dict[str, Any], field: Field) -> None:
        if "value" in value:
            for i, url in enumerate(self.strings(f"{path}.value", value["value"], "URLs") or []):
                self.url(f"{path}.value[{i}]", url)

    def kind_hosts(self, path: str, value: dict[str, Any], field: Field) -> None:
        if "value" in value:
            hosts = self.strings(f"{path}.value", value["value"], "host names") or []
            for i, host in enumerate(hosts):
                if not _HOST.match(host):
                    self.add(
                        f"{path}.value[{i}]",
                        f'{host!r} is no host name like "accounts.google.com" (no scheme, no path)',
                    )

    def kind_number(self, path: str, value: dict[str, Any], field: Field) -> None:
        if "value" in value:
            v = value["value"]
            if type(v) not in (int, float) or not v > 0:
                self.add(f"{path}.value", f"must be a number of seconds > 0, not {v!r}")

    def kind_int(self, path: str, value: dict[str, Any], field: Field) -> None:
        if "value" in value:
            v = value["value"]
            if type(v) is not int or v < 0:
                self.add(f"{path}.value", f"must be an integer >= 0, not {v!r}")

    def kind_bool(self, path: str, value: dict[str, Any], field: Field) -> None:
        if "value" in value and type(value["value"]) is not bool:
            self.add(f"{path}.value", f"must be true or false, not {value['value']!r}")

    def kind_name(self, path: str, value: dict[str, Any], field: Field) -> None:
        if "value" in value:
            self.choice(f"{path}.value", value["value"], field.choices)

    def kind_names(self, path: str, value: dict[str, Any], field: Field) -> None:
        if "value" not in value:
            return
        names = self.strings(f"{path}.value", value["value"], "names") or []
        for i, name in enumerate(names):
            self.choice(f"{path}.value[{i}]", name, field.choices)
        if len(set(names)) != len(names):
            self.add(f"{path}.value", "names a method twice")

    def choice(self, path: str, name: object, choices: tuple[str, ...]) -> None:
        if not isinstance(name, str) or name not in choices:
            hint = (
                _nearest(name, choices)
                if isinstance(name, str)
                else ("valid names: " + ", ".join(choices))
            )
            self.add(path, f"{name!r} is not one of the known names; {hint}")

    def kind_stream(self, path: str, value: dict[str, Any], field: Field) -> None:
        if "method" in value:
            self.choice(f"{path}.method", value["method"], HTTP_METHODS)
        if "url" in value:
            problem = regex_problem(value["url"])
            if problem:
                self.add(f"{path}.url", f"{value['url']!r} {problem}")
        if "format" in value:
            self.choice(f"{path}.format", value["format"], STREAM_FORMATS)
            # An answer is read by an answer parser, a conversation by a conversation one.
            reads = _READ_FORMATS if path.endswith("conversation_read") else _ANSWER_FORMATS
            if value["format"] in STREAM_FORMATS and value["format"] not in reads:
                self.add(f"{path}.format", f"must be one of {', '.join(reads)} here")
        if "transport" in value:
            self.choice(f"{path}.transport", value["transport"], STREAM_TRANSPORTS)


# -- the typed pack ---------------------------------------------------------------------------

T = TypeVar("T")


@dataclass(frozen=True)
class Entry:
    """One fact of a pack and where it comes from."""

    path: str  # e.g. "selectors.send_button"
    evidence: str  # an anchor of docs/sites.md, or "none: <why>"
    facts: tuple[str, ...]  # SITE-FACTS rows, e.g. ("C1.5",)
    note: str
    source: Path  # the file that set this entry last: the built-in pack or the override

    @property
    def evidenced(self) -> bool:
        return not self.evidence.startswith("none")


@dataclass(frozen=True)
class Selectors(Entry):
    css: tuple[str, ...]


@dataclass(frozen=True)
class Texts(Entry):
    languages: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def all(self) -> tuple[str, ...]:
        """Every language's texts, in the file's order."""
        return tuple(t for _, texts in self.languages for t in texts)

    def language(self, lang: str) -> tuple[str, ...]:
        return dict(self.languages).get(lang, ())


@dataclass(frozen=True)
class Pattern(Entry):
    regex: str
    flags: str

    def compile(self) -> re.Pattern[str]:
        return re.compile(self.regex, _compile_flags(self.flags))


@dataclass(frozen=True)
class Value(Entry, Generic[T]):
    value: T


@dataclass(frozen=True)
class Stream(Entry):
    """The request that carries a provider's answer (for bridge.providers.streams)."""

    method: str
    url: str  # a regular expression over the full URL
    format: str  # "chatgpt-sse" | "gemini-frames"
    transport: str  # "fetch" | "xhr" | "" (not recorded)

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.url)

    def matches(self, method: str, url: str) -> bool:
        return method.upper() == self.method and self.pattern.search(url) is not None


@dataclass(frozen=True)
class CopyAction:
    """Selectors for reading an answer through its turn's copy button (one CSS list each)."""

    turn: str
    button: str
    assistant: str


@dataclass(frozen=True)
class Urls:
    home: Value[str]
    tab_prefixes: Value[tuple[str, ...]]
    conversation_path: Pattern
    login_hosts: Value[tuple[str, ...]] | None
    login_path: Pattern | None


@dataclass(frozen=True)
class Network:
    answer_stream: Stream
    stop_request: Stream | None
    #: The page's own read of a conversation when it loads (docs/sites.md#conversations).
    conversation_read: Stream | None = None


@dataclass(frozen=True)
class Flow:
    input_methods: Value[tuple[str, ...]]
    input_wait_s: Value[float]
    send_confirm_s: Value[float]
    stuck_retries: Value[int]
    checks_stuck_before_asking: Value[bool]
    extraction_steps: Value[tuple[str, ...]]
    script_input: Value[str]
    login_requires_no_composer: Value[bool]
    rate_limit_in_reply: Value[bool]
    reply_notice_max_chars: Value[int] | None


@dataclass(frozen=True, eq=False)
class Pack:
    """A provider's pack after merging the override (if any) over the built-in one."""

    provider: str
    version: int
    urls: Urls
    selectors: Mapping[str, Selectors]
    texts: Mapping[str, Texts | Pattern]
    network: Network
    flow: Flow
    files: tuple[Path, ...]  # the built-in pack, then the override when there is one
    fingerprint: str  # changes whenever any entry changes
    document: Mapping[str, Any]  # the merged JSON

    def entries(self) -> Iterator[Entry]:
        """Every entry, in schema order."""
        yield from (e for e in _section_entries(self.urls) if e is not None)
        yield from self.selectors.values()
        yield from self.texts.values()
        yield from (e for e in _section_entries(self.network) if e is not None)
        yield from (e for e in _section_entries(self.flow) if e is not None)

    @property
    def stream_rule(self) -> Stream:
        """The request that carries the answer (``network.answer_stream``)."""
        return self.network.answer_stream

    @property
    def copy_action(self) -> CopyAction | None:
        """How to copy the newest answer, when the pack names a copy button."""
        button = self.selectors.get("copy_button")
        if button is None:
            return None
        turn = self.selectors.get("turn") or self.selectors["assistant_message"]
        return CopyAction(
            turn=", ".join(turn.css),
            button=", ".join(button.css),
            assistant=", ".join(self.selectors["assistant_message"].css),
        )

    def text(self, name: str) -> Texts | None:
        entry = self.texts.get(name)
        return entry if isinstance(entry, Texts) else None

    def pattern(self, name: str) -> Pattern | None:
        entry = self.texts.get(name)
        return entry if isinstance(entry, Pattern) else None

    def page_data(self) -> dict[str, Any]:
        """What page.js needs, as plain JSON: selectors, texts (all languages), regular
        expressions as ``[source, flags]``, URL patterns, flow switches."""
        flow = self.flow
        return {
            "provider": self.provider,
            "fingerprint": self.fingerprint,
            "selectors": {k: list(e.css) for k, e in self.selectors.items()},
            "texts": {k: list(e.all) for k, e in self.texts.items() if isinstance(e, Texts)},
            "regex": {
                k: [e.regex, e.flags] for k, e in self.texts.items() if isinstance(e, Pattern)
            },
            "urls": {
                "conversation_path": [
                    self.urls.conversation_path.regex,
                    self.urls.conversation_path.flags,
                ],
                "login_path": (
                    [self.urls.login_path.regex, self.urls.login_path.flags]
                    if self.urls.login_path
                    else None
                ),
                "login_hosts": list(self.urls.login_hosts.value) if self.urls.login_hosts else [],
            },
            "flow": {
                "extraction_steps": list(flow.extraction_steps.value),
                "script_input": flow.script_input.value,
                "login_requires_no_composer": flow.login_requires_no_composer.value,
                "rate_limit_in_reply": flow.rate_limit_in_reply.value,
                "reply_notice_max_chars": (
                    flow.reply_notice_max_chars.value if flow.reply_notice_max_chars else 0
                ),
            },
        }


def _section_entries(section: Urls | Network | Flow) -> list[Entry | None]:
    return [getattr(section, name) for name in section.__dataclass_fields__]


def _build_entry(path: str, field: Field, raw: dict[str, Any], source: Path) -> Entry:
    common: dict[str, Any] = {
        "path": path,
        "evidence": str(raw.get("evidence", f"none: set by the override {source}")),
        "facts": tuple(raw.get("facts", ())),
        "note": str(raw.get("note", "")),
        "source": source,
    }
    kind = field.kind
    if kind == "css":
        return Selectors(**common, css=tuple(s.strip() for s in raw["css"]))
    if kind == "texts":
        langs = tuple((lang, tuple(items)) for lang, items in raw["texts"].items())
        return Texts(**common, languages=langs)
    if kind == "regex":
        return Pattern(**common, regex=raw["regex"], flags=raw.get("flags", ""))
    if kind == "stream":
        return Stream(
            **common,
            method=raw["method"],
            url=raw["url"],
            format=raw["format"],
            transport=raw.get("transport", ""),
        )
    value = raw["value"]
    if kind in ("urls", "hosts", "names"):
        value = tuple(value)
    elif kind == "number":
        value = float(value)
    return Value(**common, value=value)


def _build(
    provider: str, doc: dict[str, Any], sources: dict[str, Path], files: tuple[Path, ...]
) -> Pack:
    built: dict[str, dict[str, Entry]] = {}
    for section, fields in SCHEMA.items():
        body = doc.get(section, {})
        built[section] = {
            key: _build_entry(
                f"{section}.{key}",
                fields[key],
                body[key],
                sources.get(f"{section}.{key}", files[0]),
            )
            for key in fields
            if key in body
        }
    u, n, f = built["urls"], built["network"], built["flow"]
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False)
    return Pack(
        provider=provider,
        version=int(doc["version"]),
        urls=Urls(
            home=cast(Value[str], u["home"]),
            tab_prefixes=cast(Value[tuple[str, ...]], u["tab_prefixes"]),
            conversation_path=cast(Pattern, u["conversation_path"]),
            login_hosts=cast("Value[tuple[str, ...]] | None", u.get("login_hosts")),
            login_path=cast("Pattern | None", u.get("login_path")),
        ),
        selectors=MappingProxyType({k: cast(Selectors, e) for k, e in built["selectors"].items()}),
        texts=MappingProxyType({k: cast("Texts | Pattern", e) for k, e in built["texts"].items()}),
        network=Network(
            answer_stream=cast(Stream, n["answer_stream"]),
            stop_request=cast("Stream | None", n.get("stop_request")),
            conversation_read=cast("Stream | None", n.get("conversation_read")),
        ),
        flow=Flow(
            input_methods=cast(Value[tuple[str, ...]], f["input_methods"]),
            input_wait_s=cast(Value[float], f["input_wait_s"]),
            send_confirm_s=cast(Value[float], f["send_confirm_s"]),
            stuck_retries=cast(Value[int], f["stuck_retries"]),
            checks_stuck_before_asking=cast(Value[bool], f["checks_stuck_before_asking"]),
            extraction_steps=cast(Value[tuple[str, ...]], f["extraction_steps"]),
            script_input=cast(Value[str], f["script_input"]),
            login_requires_no_composer=cast(Value[bool], f["login_requires_no_composer"]),
            rate_limit_in_reply=cast(Value[bool], f["rate_limit_in_reply"]),
            reply_notice_max_chars=cast("Value[int] | None", f.get("reply_notice_max_chars")),
        ),
        files=files,
        fingerprint=hashlib.sha256(text.encode()).hexdigest()[:12],
        document=MappingProxyType(doc),
    )


# -- loading ----------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PackError(path, [f"cannot be read: {exc.strerror or exc}"]) from exc
    except UnicodeDecodeError as exc:
        raise PackError(path, [f"is not UTF-8 text ({exc.reason} at byte {exc.start})"]) from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PackError(
            path,
            [
                f"line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg} "
                "(check for a missing comma or quote, or a trailing comma)"
            ],
        ) from exc


def _check(path: Path, doc: object, provider: str, *, complete: bool, strict: bool) -> None:
    checker = _Checker(complete=complete, strict_evidence=strict)
    checker.document(doc, provider)
    if checker.problems:
        raise PackError(path, checker.problems)


def builtin_providers() -> tuple[str, ...]:
    """The providers that ship a pack."""
    return tuple(sorted(p.stem for p in BUILTIN_DIR.glob("*.json")))


def override_path(provider: str, state_dir: Path | None = None) -> Path:
    """Where a person's override of ``provider``'s pack lives."""
    return (state_dir or default_state_dir()).expanduser() / "packs" / f"{provider}.json"


def _builtin_path(provider: str) -> Path:
    path = BUILTIN_DIR / f"{provider}.json"
    if not re.match(r"^[a-z0-9_-]+$", provider) or not path.is_file():
        raise PackError(
            path, [f"no built-in pack for {provider!r}; known: {', '.join(builtin_providers())}"]
        )
    return path


_Signature = tuple[int, int, int, int, int] | None


def _signature(path: Path) -> _Signature:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise PackError(path, [f"cannot be read: {exc.strerror or exc}"]) from exc
    # An editor's atomic save changes the inode; a chown or chmod is checked again.
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_uid, st.st_mode)


_cache: dict[tuple[Path, Path | None], tuple[tuple[_Signature, _Signature], Pack]] = {}
_cache_lock = threading.Lock()


def _load(provider: str, override: Path | None) -> Pack:
    builtin = _builtin_path(provider)
    signature = (_signature(builtin), _signature(override) if override else None)
    key = (builtin, override)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == signature:
            return hit[1]
    doc = _read_json(builtin)
    _check(builtin, doc, provider, complete=True, strict=True)
    sources: dict[str, Path] = {}
    files: tuple[Path, ...] = (builtin,)
    if override is not None and signature[1] is not None:
        _check_override_owner(override)
        patch = _read_json(override)
        _check(override, patch, provider, complete=False, strict=False)
        _check_override_hosts(override, patch, provider)
        for section in SCHEMA:
            for entry in patch.get(section) or {}:
                sources[f"{section}.{entry}"] = override
        doc = merge_patch(doc, patch)
        # What only the merge can get wrong (a required entry removed with null, an entry
        # new in the override without its value): reported against the override.
        try:
            _check(override, doc, provider, complete=True, strict=False)
        except PackError as exc:
            raise PackError(
                override, [f"{p} (after merging over {builtin.name})" for p in exc.problems]
            ) from None
        files = (builtin, override)
    pack = _build(provider, doc, sources, files)
    with _cache_lock:
        _cache[key] = (signature, pack)
    return pack


def _check_override_owner(override: Path) -> None:
    """An override another user owns or may write to (the file, ``packs/``, the state
    directory) could send asks anywhere its selectors reach: refused before it is read."""
    private_state_dir(override.parent.parent, create=False)
    problems: list[str] = []
    for path in (override.parent, override):
        try:
            st = path.stat()
        except OSError as exc:
            raise PackError(override, [f"{path} cannot be read: {exc.strerror or exc}"]) from exc
        mode = stat.S_IMODE(st.st_mode)
        if st.st_uid != owner_uid():
            problems.append(
                f"{path} belongs to another user (uid {st.st_uid}): bridge reads only your own "
                "overrides; remove it, or write your own"
            )
        elif mode & 0o022:
            problems.append(
                f"{path} is writable by other users (mode {mode:04o}): chmod go-w {path}"
            )
    if problems:
        raise PackError(override, problems, "Then ask again.")


def _allowed_hosts() -> tuple[str, ...]:
    raw = os.environ.get(ALLOW_HOSTS_ENV, "")
    return tuple(h.strip().lower().rstrip(".") for h in re.split(r"[,\s]+", raw) if h.strip())


def _within(host: str, domains: tuple[str, ...]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


#: What an override's URL must look like for its host to be the one a browser goes to: https,
#: a plain host name (no user name, no backslash: browsers and parsers disagree on those).
_PLAIN_URL = re.compile(
    r"^(?P<scheme>https?)://(?P<host>[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::\d{1,5})?/[^\s\\]*$",
    re.IGNORECASE,
)


def _check_override_hosts(override: Path, patch: dict[str, Any], provider: str) -> None:
    """Every URL and host name the override sets lies within ``provider``'s domains, or is
    allowed by ``$BRIDGE_PACK_ALLOW_HOSTS``; raises :class:`PackHostRefused` otherwise."""
    own = PROVIDER_DOMAINS.get(provider, ())
    allowed = _allowed_hosts()
    shown = ", ".join(f"{d}, *.{d}" for d in own) or "none"
    problems: list[str] = []
    refused: list[str] = []
    for section, fields in SCHEMA.items():
        body = patch.get(section)
        if not isinstance(body, dict):
            continue
        for key, field in fields.items():
            entry = body.get(key)
            if field.kind not in ("url", "urls", "hosts") or not isinstance(entry, dict):
                continue
            raw = entry.get("value")
            values = [raw] if field.kind == "url" else list(raw or [])
            for i, value in enumerate(values):
                where = f"{section}.{key}.value" + ("" if field.kind == "url" else f"[{i}]")
                if field.kind == "hosts":
                    host, scheme = str(value).lower().rstrip("."), "https"
                else:
                    match = _PLAIN_URL.match(str(value))
                    if match is None:
                        problems.append(
                            f"{where}: {value!r} is no plain https URL (a host name, no user "
                            "name, no backslash)"
                        )
                        continue
                    host, scheme = match["host"].lower().rstrip("."), match["scheme"].lower()
                if _within(host, allowed):
                    continue  # the person's own choice, outside the file
                if not _within(host, own):
                    problems.append(
                        f"{where}: {value!r} points at {host}, outside {provider}'s own "
                        f"domains ({shown})"
                    )
                    refused.append(host)
                elif scheme != "https":
                    problems.append(f"{where}: {value!r} is plain http: write https://")
    if problems:
        raise PackHostRefused(override, problems, sorted(set(refused)))


def load_pack(provider: str, state_dir: Path | None = None) -> Pack:
    """``provider``'s pack: the built-in one with ``<state dir>/packs/<provider>.json``
    merged over it when that file exists. Re-read only when a file's modification time or
    size changed, so calling this for every ask is cheap and picks up edits at once.

    Raises :class:`PackError` for a broken pack or override (never falls back silently).
    """
    return _load(provider, override_path(provider, state_dir))


def builtin_pack(provider: str) -> Pack:
    """``provider``'s pack as shipped, without any override."""
    return _load(provider, None)
