"""The provider pack's format (bridge.providers.pack_model): each rule's message, table by
table; any valid pack round-trips through JSON; the published JSON Schema of an override
(docs/schemas/pack.schema.json) is the model's, and checks what the model checks."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.providers.pack import BUILTIN_DIR, merge_patch
from bridge.providers.pack_model import (
    EXTRACTION_STEPS,
    INPUT_METHOD_NAMES,
    SCRIPT_INPUTS,
    PackDocument,
    override_json_schema,
)
from bridge.providers.pack_problems import validate

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "docs" / "schemas" / "pack.schema.json"
SHIPPED = json.loads((BUILTIN_DIR / "chatgpt.json").read_text(encoding="utf-8"))


def _problems(patch: Any, *, complete: bool = False, strict: bool = False) -> list[str]:
    """The problems of ``patch`` as an override (partial), or merged over the shipped pack."""
    doc = merge_patch(SHIPPED, patch) if complete else patch
    return validate(doc, "chatgpt", complete=complete, strict_evidence=strict)[1]


# (override, the one problem it has); each a rule of the model with its message.
RULES: list[tuple[Any, str]] = [
    ({"version": True}, "version: must be 1, not True"),
    ({"version": 1.0}, "version: must be 1, not 1.0"),
    ({"about": 5}, "about: must be a string, not an integer"),
    ({"selectors": 5}, "selectors: must be an object, not an integer"),
    (
        {"selectors": {"input": {"css": ["a", 4]}}},
        "selectors.input.css[1]: must be a non-empty string, not 4",
    ),
    (
        {"selectors": {"input": {"css": ["a[b"]}}},
        "selectors.input.css[0]: 'a[b' has an unclosed '['",
    ),
    (
        {"selectors": {"input": {"css": ["a", "> b"]}}},
        "selectors.input.css[1]: '> b' starts or ends with a combinator (>, + or ~)",
    ),
    (
        {"selectors": {"input": {"css": ["#x"], "evidence": 5}}},
        "selectors.input.evidence: must be a string, not an integer",
    ),
    (
        {"selectors": {"input": {"css": ["#x"], "evidence": "none"}}},
        'selectors.input.evidence: say why after "none: " (how bridge copes)',
    ),
    (
        {"selectors": {"input": {"css": ["#x"], "facts": "C1.1"}}},
        'selectors.input.facts: must be a list of SITE-FACTS row ids like "C1.5"',
    ),
    (
        {"selectors": {"input": {"css": ["#x"], "note": 1}}},
        "selectors.input.note: must be a string, not an integer",
    ),
    (
        {"texts": {"stop_labels": {"texts": {}}}},
        "texts.stop_labels.texts: is empty: give at least one language",
    ),
    (
        {"texts": {"stop_labels": {"texts": {"EN": ["Stop"]}}}},
        'texts.stop_labels.texts.EN: is no language code like "en" or "ja"',
    ),
    (
        {"texts": {"stop_labels": {"texts": {"en": []}}}},
        "texts.stop_labels.texts.en: is empty: give at least one text",
    ),
    (
        {"texts": {"rate_limit": {"regex": "x", "flags": "g"}}},
        "texts.rate_limit.flags: flags 'g' must be letters from 'ims'",
    ),
    (
        {"texts": {"rate_limit": {"regex": "(?#c)x"}}},
        "texts.rate_limit.regex: '(?#c)x' comments (?#…) are Python-only",
    ),
    (
        {"urls": {"tab_prefixes": {"value": []}}},
        "urls.tab_prefixes.value: is empty: give at least one URL",
    ),
    (
        {"urls": {"login_hosts": {"value": ["a b"]}}},
        "urls.login_hosts.value[0]: 'a b' is no host name",
    ),
    (
        {"flow": {"input_methods": {"value": ["script", "script"]}}},
        "flow.input_methods.value: names a method twice",
    ),
    (
        {"flow": {"extraction_steps": {"value": ["prose", "markdwn"]}}},
        "flow.extraction_steps.value[1]: 'markdwn' is not one of the known names; did you mean 'markdown'?",
    ),
    (
        {"flow": {"script_input": {"value": 3}}},
        "flow.script_input.value: 3 is not one of the known names; valid names: insert_text_command, inner_text_events",
    ),
    (
        {"flow": {"reply_notice_max_chars": {"value": -1}}},
        "flow.reply_notice_max_chars.value: must be an integer >= 0, not -1",
    ),
    (
        {"flow": {"input_wait_s": {"value": 0}}},
        "flow.input_wait_s.value: must be a number of seconds > 0, not 0",
    ),
    (
        {"network": {"answer_stream": {"method": "PUT"}}},
        "network.answer_stream.method: 'PUT' is not one of the known names; did you mean 'POST'?",
    ),
    (
        {"network": {"answer_stream": {"format": "chatgpt-conversation"}}},
        "network.answer_stream.format: must be one of chatgpt-sse, gemini-frames here",
    ),
    (
        {"network": {"conversation_read": {"format": "chatgpt-sse"}}},
        "network.conversation_read.format: must be one of chatgpt-conversation here",
    ),
    (
        {"network": {"answer_stream": {"transport": "ws"}}},
        "network.answer_stream.transport: 'ws' is not one of the known names; valid names: fetch, xhr",
    ),
    (
        {"network": {"answer_stream": {"methd": "GET"}}},
        "network.answer_stream.methd: unknown key for a stream entry; did you mean 'method'?",
    ),
    (
        {"urls": {"home": {"vaule": "https://chatgpt.com/"}}},
        "urls.home.vaule: unknown key for a url entry; did you mean 'value'?",
    ),
    (
        {"flow": {"stuck_retries": None}},
        "flow.stuck_retries: is required and cannot be removed (null); give it a new value instead",
    ),
]


@pytest.mark.parametrize(("patch", "problem"), RULES)
def test_each_rule_says_what_is_wrong_and_where(patch: Any, problem: str) -> None:
    found = _problems(patch)
    assert len(found) == 1 and found[0].startswith(problem), found


@pytest.mark.parametrize(
    "patch",
    [
        {"selectors": {"speech_button": None}},  # null removes an optional entry
        {"texts": {"rate_limit": {"flags": None}}},  # and an optional key
        {"$schema": "../docs/schemas/pack.schema.json"},  # for editors
        {"network": None},  # a required section: only the merge can tell (below)
        {},
    ],
)
def test_what_an_override_may_leave_out_or_remove(patch: Any) -> None:
    assert _problems(patch) == []


# (override, the problem only the merged pack has)
MERGED: list[tuple[Any, str]] = [
    ({"network": None}, "network: missing section"),
    ({"version": None}, 'version: missing; write "version": 1'),
    ({"provider": None}, "provider: missing; write \"provider\": 'chatgpt'"),
    ({"selectors": {"mic_button": {"note": "x"}}}, "selectors.mic_button.css: missing"),
]


@pytest.mark.parametrize(("patch", "problem"), MERGED)
def test_what_only_the_merge_tells(patch: Any, problem: str) -> None:
    assert _problems(patch) == []
    assert _problems(patch, complete=True) == [problem]


def test_a_built_in_pack_says_the_evidence_of_every_entry() -> None:
    bare = {"selectors": {"input": {"css": ["#x"], "evidence": None}}}
    assert _problems(bare, complete=True) == []
    assert _problems(bare, complete=True, strict=True) == [
        "selectors.input.evidence: missing: name an anchor of docs/sites.md, or "
        'write "none: <how bridge copes without evidence>"'
    ]


def test_a_document_that_is_no_object() -> None:
    assert _problems([1]) == ["$: must be a JSON object, not a list"]


# -- any valid pack round-trips through JSON ---------------------------------------------------

_word = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True)
_selector = st.one_of(
    _word,
    st.builds('{}[data-{}="{}"]'.format, _word, _word, _word),
    st.builds("#{} > .{}".format, _word, _word),
)
_text = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=12
).filter(lambda t: t.strip() != "")
_regex = st.builds("{}(?:{}|{})+".format, _word, _word, _word)
_common = st.fixed_dictionaries(
    {},
    optional={
        "evidence": _word,
        "facts": st.lists(st.from_regex(r"[CG][0-9]{1,2}\.[0-9]{1,2}", fullmatch=True), max_size=3),
        "note": _text,
    },
)


def _entry(values: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.tuples(st.fixed_dictionaries(values), _common).map(lambda p: {**p[0], **p[1]})


def _names(choices: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(choices), min_size=1, unique=True)


def _mutated(doc: dict[str, Any], draw: Any) -> dict[str, Any]:
    """The shipped pack with its values replaced by generated valid ones."""
    out = json.loads(json.dumps(doc))
    for key in out["selectors"]:
        out["selectors"][key] = draw(_entry({"css": st.lists(_selector, min_size=1, max_size=3)}))
    for key, entry in out["texts"].items():
        if "regex" in entry:
            out["texts"][key] = draw(
                _entry({"regex": _regex, "flags": st.sampled_from(["", "i", "ims"])})
            )
        else:
            langs = st.dictionaries(
                st.sampled_from(["en", "ja", "de", "pt-BR"]),
                st.lists(_text, min_size=1, max_size=3),
                min_size=1,
            )
            out["texts"][key] = draw(_entry({"texts": langs}))
    flow = out["flow"]
    flow["input_methods"] = draw(_entry({"value": _names(INPUT_METHOD_NAMES)}))
    flow["extraction_steps"] = draw(_entry({"value": _names(EXTRACTION_STEPS)}))
    flow["script_input"] = draw(_entry({"value": st.sampled_from(SCRIPT_INPUTS)}))
    flow["input_wait_s"] = draw(_entry({"value": st.floats(0.001, 1e6)}))
    flow["stuck_retries"] = draw(_entry({"value": st.integers(0, 10**6)}))
    flow["rate_limit_in_reply"] = draw(_entry({"value": st.booleans()}))
    return out


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_any_valid_pack_round_trips_through_json(data: st.DataObject) -> None:
    doc = _mutated(SHIPPED, data.draw)
    model = PackDocument.model_validate(doc, context={"provider": "chatgpt"})
    again = PackDocument.model_validate_json(
        model.model_dump_json(by_alias=True), context={"provider": "chatgpt"}
    )
    assert again == model
    # Nothing of the document is lost on the way in, nothing added on the way out.
    assert json.loads(model.model_dump_json(by_alias=True, exclude_unset=True)) == doc


# -- the published JSON Schema -----------------------------------------------------------------


def test_the_published_schema_is_the_models() -> None:
    """docs/schemas/pack.schema.json never drifts from the model (BRIDGE_WRITE_SCHEMAS=1
    rewrites it)."""
    schema = json.dumps(override_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("BRIDGE_WRITE_SCHEMAS"):
        PUBLISHED.write_text(schema, encoding="utf-8")
    assert PUBLISHED.read_text(encoding="utf-8") == schema, (
        "the pack model changed: run BRIDGE_WRITE_SCHEMAS=1 pytest tests/providers/test_pack_model.py"
    )


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
def test_the_schema_takes_the_shipped_packs_and_overrides(provider: str) -> None:
    checker = jsonschema.Draft202012Validator(json.loads(PUBLISHED.read_text(encoding="utf-8")))
    shipped = json.loads((BUILTIN_DIR / f"{provider}.json").read_text(encoding="utf-8"))
    assert list(checker.iter_errors(shipped)) == []
    override = {"$schema": "pack.schema.json", "selectors": {"stop_button": {"css": ["b"]}}}
    assert list(checker.iter_errors(override)) == []


@pytest.mark.parametrize(
    "override",
    [
        {"selectors": {"send_buton": {"css": ["b"]}}},
        {"selectors": {"input": {"css": []}}},
        {"selectors": {"input": None}},
        {"flow": {"input_wait_s": {"value": "30"}}},
        {"flow": {"input_methods": {"value": ["scrpt"]}}},
        {"network": {"conversation_read": {"format": "chatgpt-sse"}}},
        {"texts": {"stop_labels": {"texts": {"EN": ["Stop"]}}}},
    ],
)
def test_the_schema_refuses_what_the_model_refuses(override: Any) -> None:
    checker = jsonschema.Draft202012Validator(json.loads(PUBLISHED.read_text(encoding="utf-8")))
    assert list(checker.iter_errors(override)) != []
    assert _problems(override) != []
