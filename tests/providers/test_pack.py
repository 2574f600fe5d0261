"""Provider packs (bridge.providers.pack, docs/sites.md#provider-packs): the shipped packs,
their evidence, a person's override, and the errors a broken one gives. Pure: no browser."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from bridge.providers import pack as pack_module
from bridge.providers.ask_script import PAGE_VERSION, current_script
from bridge.providers.pack import (
    ALLOW_HOSTS_ENV,
    PROVIDER_DOMAINS,
    PackError,
    PackHostRefused,
    Pattern,
    Selectors,
    Texts,
    Value,
    builtin_pack,
    builtin_providers,
    css_problem,
    load_pack,
    merge_patch,
    override_path,
    regex_problem,
)
from bridge.providers.specs import PROVIDER_SPECS, provider_spec
from tests.another_user import give_to_another_user

ROOT = Path(__file__).resolve().parents[2]
SITES_MD = ROOT / "docs" / "sites.md"
PROVIDERS = ("chatgpt", "gemini")


def _anchors() -> set[str]:
    """GitHub-style anchors of the headings of docs/sites.md."""
    anchors = set()
    for line in SITES_MD.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*$", line)
        if match:
            slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
            anchors.add(slug)
    return anchors


def _override(state: Path, provider: str, body: Any) -> Path:
    path = override_path(provider, state)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body), encoding="utf-8")
    return path


def _error(state: Path, provider: str, body: Any) -> str:
    path = _override(state, provider, body)
    with pytest.raises(PackError) as caught:
        load_pack(provider, state)
    message = str(caught.value)
    assert str(path) in message, "the error names the person's file"
    assert caught.value.file == path
    return message


# -- the shipped packs --------------------------------------------------------------------------


def test_the_shipped_packs_load() -> None:
    assert builtin_providers() == PROVIDERS
    for provider in PROVIDERS:
        pack = builtin_pack(provider)
        assert pack.provider == provider and pack.version == 1
        assert pack.files == (pack_module.BUILTIN_DIR / f"{provider}.json",)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_evidence_anchor_exists_in_sites_md(provider: str) -> None:
    anchors = _anchors()
    assert "provider-packs" in anchors  # the section describing packs
    for entry in builtin_pack(provider).entries():
        if entry.evidenced:
            assert entry.evidence in anchors, f"{provider} {entry.path}: #{entry.evidence}"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_entries_without_evidence_are_few_and_say_how_bridge_copes(provider: str) -> None:
    unevidenced = [e for e in builtin_pack(provider).entries() if not e.evidenced]
    assert len(unevidenced) <= 3, [e.path for e in unevidenced]
    for entry in unevidenced:
        assert re.match(r"^none: \S.{20,}", entry.evidence), entry.path


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_selector_is_plausible_css(provider: str) -> None:
    """One selector per item; the browser test checks them with Chromium's own parser."""
    selectors = builtin_pack(provider).selectors
    assert {"input", "send_button", "stop_button", "answer"} <= set(selectors)
    for name, entry in selectors.items():
        assert isinstance(entry, Selectors) and entry.css, name
        for selector in entry.css:
            assert css_problem(selector) is None, f"{name}: {selector!r}"


def test_no_pack_uses_selectors_the_evidence_contradicts() -> None:
    """docs/sites.md#facts-without-evidence: removed, and they must not come back."""
    gone = [
        '[data-testid="login-wall"]', ".sign-in-button", ".rate-limit-notice", ".error-message",
        "skip-thinking-button", 'img[alt="thumb_up"]', 'img[alt="mic"]', "aria-live=\"polite\"",
    ]  # fmt: skip
    # C1.2: a textarea selector that could take the hidden fallback (only the older
    # composer's textarea#prompt-textarea is safe: the fallback has a name, not that id).
    bare_textarea = re.compile(r"(^|[\s>+~])textarea(?!#prompt-textarea)")
    for provider in PROVIDERS:
        for name, entry in builtin_pack(provider).selectors.items():
            for selector in entry.css:
                assert not any(g in selector for g in gone), f"{provider} {name}: {selector}"
                assert not bare_textarea.search(selector), f"{provider} {name}: {selector}"
    texts = " ".join(
        t for e in builtin_pack("chatgpt").texts.values() if isinstance(e, Texts) for t in e.all
    )
    assert "問題が発生" not in texts and "上限に達し" not in texts


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_regex_compiles(provider: str) -> None:
    pack = builtin_pack(provider)
    patterns = [e for e in pack.entries() if isinstance(e, Pattern)]
    assert patterns
    for entry in patterns:
        assert regex_problem(entry.regex, entry.flags) is None, entry.path
        entry.compile()


@pytest.mark.parametrize(
    "text",
    [
        "You've reached our limit of messages per hour. Please try again later.",
        "Too many requests in 1 hour. Try again later.",
        "You're making requests too quickly. We've temporarily limited access to your "
        "conversations. Please wait a few minutes before trying again.",
        "You've hit the Free plan limit for GPT-5.",
        "You've reached your GPT-4o limit.",
        "You've reached the current usage cap for GPT-4.",
        "Du hast dein Nutzungslimit erreicht.",
    ],
)
def test_chatgpt_rate_limit_regex_covers_every_evidenced_text(text: str) -> None:
    """SITE-FACTS C5.7, every text (docs/sites.md#rate-limit)."""
    pattern = builtin_pack("chatgpt").pattern("rate_limit")
    assert pattern is not None and pattern.compile().search(text)


def test_gemini_rate_limit_needs_limit_wording() -> None:
    """G5.5: "try again later" only together with "reached your limit"."""
    pattern = builtin_pack("gemini").pattern("rate_limit")
    assert pattern is not None
    assert pattern.compile().search("You've reached your limit. Try again later.")
    assert not pattern.compile().search("Something went wrong. Please try again later.")


@pytest.mark.parametrize(
    ("provider", "path", "conversation"),
    [
        ("chatgpt", "/c/6744d2a1-0000-4000-8000-1234567890ab", True),
        ("chatgpt", "/g/g-p-abc123-project/c/6744d2a1", True),  # C6.2
        ("chatgpt", "/", False),
        ("chatgpt", "/?temporary-chat=true", False),
        ("gemini", "/app/1f9dadf233e175e7", True),  # G6.1
        ("gemini", "/u/1/app/1f9dadf233e175e7", True),
        ("gemini", "/gem/coding-partner/1f9dadf233e175e7", True),
        ("gemini", "/app", False),
        ("gemini", "/gem/coding-partner", False),
    ],
)
def test_conversation_paths(provider: str, path: str, conversation: bool) -> None:
    regex = builtin_pack(provider).urls.conversation_path.compile()
    assert bool(regex.search(path)) is conversation


@pytest.mark.parametrize(
    ("provider", "method", "url", "matches"),
    [
        ("chatgpt", "POST", "https://chatgpt.com/backend-api/f/conversation", True),  # C7.1
        ("chatgpt", "post", "https://chatgpt.com/backend-api/conversation", True),
        ("chatgpt", "POST", "https://chatgpt.com/backend-api/f/conversation/prepare", False),
        ("chatgpt", "GET", "https://chatgpt.com/backend-api/f/conversation", False),
        (
            "gemini",
            "POST",
            "https://gemini.google.com/_/BardChatUi/data/assistant.lamda.BardFrontendService/"
            "StreamGenerate?bl=boq_x&f.sid=1&hl=en&_reqid=123&rt=c",
            True,
        ),  # G7.1
        (
            "gemini",
            "POST",
            "https://gemini.google.com/_/BardChatUi/data/batchexecute?rpcids=NkpXw",
            False,
        ),
    ],
)
def test_the_answer_stream_rule(provider: str, method: str, url: str, matches: bool) -> None:
    stream = provider_spec(provider, Path("/nonexistent-state")).pack.network.answer_stream
    assert stream.format == {"chatgpt": "chatgpt-sse", "gemini": "gemini-frames"}[provider]
    assert stream.matches(method, url) is matches


def test_specs_come_from_the_packs() -> None:
    chatgpt, gemini = PROVIDER_SPECS["chatgpt"], PROVIDER_SPECS["gemini"]
    assert chatgpt.home_url == "https://chatgpt.com/"
    assert chatgpt.url_prefixes == ("https://chatgpt.com/", "https://chat.openai.com/")
    assert (chatgpt.input_wait_s, chatgpt.send_confirm_s) == (30.0, 15.0)
    assert chatgpt.input_methods == ("script", "insert_text", "key_events")
    assert chatgpt.primary_extractions == frozenset({"markdown"})
    assert (chatgpt.checks_stuck_before_asking, chatgpt.stuck_retries) == (False, 0)
    assert gemini.home_url == "https://gemini.google.com/app"
    assert (gemini.input_wait_s, gemini.send_confirm_s) == (15.0, 8.0)
    assert gemini.input_methods == ("script", "insert_text")
    assert (gemini.checks_stuck_before_asking, gemini.stuck_retries) == (True, 2)
    assert gemini.primary_extractions == frozenset({"markdown"})
    assert set(PROVIDER_SPECS) == set(PROVIDERS)


def test_page_data_carries_every_selector_text_and_regex() -> None:
    pack = builtin_pack("chatgpt")
    data = pack.page_data()
    assert set(data["selectors"]) == set(pack.selectors)
    assert set(data["texts"]) | set(data["regex"]) == set(pack.texts)
    assert data["texts"]["stop_labels"][:1] == ["Stop generating"]
    assert "ストリーミングの停止" in data["texts"]["stop_labels"]  # every language, flattened
    assert data["regex"]["control_exclude"][1] == "i"
    json.dumps(data)  # plain JSON for the page


# -- a person's override ------------------------------------------------------------------------


def test_no_override_is_the_shipped_pack(tmp_path: Path) -> None:
    for provider in PROVIDERS:
        assert load_pack(provider, tmp_path).fingerprint == builtin_pack(provider).fingerprint
    assert current_script(tmp_path).version == PAGE_VERSION


def test_an_override_renaming_one_selector_wins(tmp_path: Path) -> None:
    path = _override(tmp_path, "chatgpt", {"selectors": {"send_button": {"css": ["button.mine"]}}})
    pack, shipped = load_pack("chatgpt", tmp_path), builtin_pack("chatgpt")
    send = pack.selectors["send_button"]
    assert send.css == ("button.mine",)
    assert send.source == path and send.evidence == shipped.selectors["send_button"].evidence
    assert pack.selectors["stop_button"] == shipped.selectors["stop_button"]  # untouched
    assert pack.files == (shipped.files[0], path)
    assert pack.fingerprint != shipped.fingerprint
    # A new pack is a new page script: documents get it on their next call.
    assert current_script(tmp_path).version != PAGE_VERSION
    assert "button.mine" in current_script(tmp_path).source


def test_deep_merge_semantics(tmp_path: Path) -> None:
    """Objects merge key by key; lists, strings, numbers replace; null removes."""
    _override(
        tmp_path,
        "chatgpt",
        {
            "texts": {"stop_labels": {"texts": {"fr": ["Arrêter la génération"]}}},
            "selectors": {"input": {"css": ["#composer"]}, "speech_button": None},
            "flow": {"input_wait_s": {"value": 45}},
            "urls": {"home": {"value": "https://chatgpt.com/?model=auto"}},
        },
    )
    pack, shipped = load_pack("chatgpt", tmp_path), builtin_pack("chatgpt")
    stop = pack.text("stop_labels")
    assert isinstance(stop, Texts)
    assert stop.language("fr") == ("Arrêter la génération",)
    assert stop.language("en") == shipped.text("stop_labels").language("en")  # type: ignore[union-attr]
    assert pack.selectors["input"].css == ("#composer",)  # the list replaced, not appended
    assert "speech_button" not in pack.selectors
    assert pack.flow.input_wait_s.value == 45.0
    assert provider_spec("chatgpt", tmp_path).input_wait_s == 45.0
    assert provider_spec("chatgpt", tmp_path).home_url == "https://chatgpt.com/?model=auto"


def test_an_override_may_add_an_entry_with_its_value(tmp_path: Path) -> None:
    _override(tmp_path, "gemini", {"selectors": {"mic_button": {"css": ["button.mic"]}}})
    mic = load_pack("gemini", tmp_path).selectors["mic_button"]
    assert mic.css == ("button.mic",) and not mic.evidenced


@pytest.mark.parametrize(
    ("base", "patch", "merged"),
    [
        ({"a": {"b": 1, "c": 2}}, {"a": {"b": 3}}, {"a": {"b": 3, "c": 2}}),
        ({"a": [1, 2]}, {"a": [3]}, {"a": [3]}),
        ({"a": {"b": 1}}, {"a": None}, {}),
        ({"a": 1}, {"b": {"c": None, "d": 2}}, {"a": 1, "b": {"d": 2}}),
        ({"a": {"b": 1}}, {"a": "x"}, {"a": "x"}),
    ],
)
def test_merge_patch(base: Any, patch: Any, merged: Any) -> None:
    before = json.dumps(base)
    assert merge_patch(base, patch) == merged
    assert json.dumps(base) == before  # nothing modified in place


# -- precise errors, each naming the person's file ---------------------------------------------


def test_unknown_key_suggests_the_right_one(tmp_path: Path) -> None:
    message = _error(tmp_path, "chatgpt", {"selectors": {"send_buton": {"css": ["button"]}}})
    assert "selectors.send_buton: unknown key; did you mean 'send_button'?" in message
    message = _error(tmp_path, "chatgpt", {"selector": {}})
    assert "selector: unknown key; did you mean 'selectors'?" in message
    message = _error(tmp_path, "chatgpt", {"selectors": {"input": {"csss": ["#x"]}}})
    assert "selectors.input.csss: unknown key for a css entry; did you mean 'css'?" in message
    message = _error(tmp_path, "chatgpt", {"flow": {"input_methods": {"value": ["scrpt"]}}})
    assert "flow.input_methods.value[0]: 'scrpt' is not one of the known names" in message
    assert "did you mean 'script'?" in message


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"flow": {"input_wait_s": {"value": "30"}}}, "flow.input_wait_s.value: must be a number"),
        (
            {"flow": {"stuck_retries": {"value": 1.5}}},
            "flow.stuck_retries.value: must be an integer",
        ),
        ({"flow": {"checks_stuck_before_asking": {"value": 1}}}, "must be true or false"),
        (
            {"selectors": {"input": {"css": "#prompt-textarea"}}},
            "selectors.input.css: must be a list",
        ),
        ({"selectors": {"input": ["#prompt-textarea"]}}, "selectors.input: must be an object"),
        ({"texts": {"stop_labels": {"texts": ["Stop"]}}}, "stop_labels.texts: must be an object"),
        ({"urls": {"home": {"value": "chatgpt.com"}}}, "urls.home.value: 'chatgpt.com' is no URL"),
        ({"urls": {"login_hosts": {"value": ["https://x.com/"]}}}, "is no host name"),
        ({"version": 2}, "version: must be 1"),
        ({"provider": "gemini"}, "provider: says 'gemini' but the file is the 'chatgpt' pack"),
        ({"selectors": {"input": {"css": ["#x"], "facts": ["1.5"]}}}, "is no row id"),
    ],
)
def test_wrong_types_are_named_with_their_path(tmp_path: Path, body: Any, says: str) -> None:
    assert says in _error(tmp_path, "chatgpt", body)


def test_empty_selector_list(tmp_path: Path) -> None:
    message = _error(tmp_path, "chatgpt", {"selectors": {"stop_button": {"css": []}}})
    assert "selectors.stop_button.css: is empty" in message


@pytest.mark.parametrize(
    ("selector", "says"),
    [
        ("div[contenteditable", "has an unclosed '['"),
        ('button[aria-label="Send]', 'has an unclosed " quote'),
        ("form > ", "combinator"),
        ("a, b", "put each selector in its own list item"),
        ("button { color: red }", "not a CSS rule"),
        ("  ", "must be a non-empty string"),
    ],
)
def test_implausible_css(tmp_path: Path, selector: str, says: str) -> None:
    message = _error(tmp_path, "chatgpt", {"selectors": {"send_button": {"css": [selector]}}})
    assert "selectors.send_button.css[0]" in message and says in message


@pytest.mark.parametrize(
    ("regex", "says"),
    [
        ("too many (requests", "does not compile: missing ), unterminated subpattern"),
        ("(?P<n>limit)", "Python-only"),
        ("(?i)limit", "Python-only"),
        ("limit\\Z", "Python-only"),
        ("", "is empty"),
    ],
)
def test_bad_regex(tmp_path: Path, regex: str, says: str) -> None:
    message = _error(tmp_path, "chatgpt", {"texts": {"rate_limit": {"regex": regex}}})
    assert "texts.rate_limit.regex" in message and says in message


def test_bad_regex_flags_and_stream_url(tmp_path: Path) -> None:
    message = _error(tmp_path, "gemini", {"texts": {"rate_limit": {"regex": "x", "flags": "g"}}})
    assert "must be letters from 'ims'" in message
    message = _error(tmp_path, "gemini", {"network": {"answer_stream": {"url": "StreamGenerate("}}})
    assert "network.answer_stream.url" in message and "does not compile" in message
    message = _error(tmp_path, "gemini", {"network": {"answer_stream": {"format": "sse"}}})
    assert "network.answer_stream.format: 'sse' is not one of the known names" in message


def test_malformed_json_gives_line_and_column(tmp_path: Path) -> None:
    message = _error(tmp_path, "gemini", '{\n  "selectors": {\n    "input": {"css": ["x"],}\n')
    assert re.search(r"line 3 column \d+: invalid JSON", message)


def test_removing_a_required_entry_is_refused(tmp_path: Path) -> None:
    message = _error(tmp_path, "chatgpt", {"selectors": {"input": None}})
    assert "selectors.input: is required and cannot be removed" in message
    message = _error(tmp_path, "chatgpt", {"network": None})
    assert "network: missing section (after merging over chatgpt.json)" in message


def test_a_new_entry_needs_its_value(tmp_path: Path) -> None:
    message = _error(tmp_path, "gemini", {"selectors": {"mic_button": {"note": "the mic"}}})
    assert "selectors.mic_button.css: missing (after merging over gemini.json)" in message


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    body = {
        "selectors": {"input": {"css": []}, "stop_buton": {}},
        "flow": {"stuck_retries": {"value": -1}},
    }
    message = _error(tmp_path, "chatgpt", body)
    assert message.count("\n  - ") == 3


def test_a_broken_override_fails_loudly_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never a silent fall back to the shipped pack: the spec, the page script, the mapping."""
    _override(tmp_path, "gemini", "{not json")
    monkeypatch.setenv("BRIDGE_STATE_DIR", str(tmp_path))
    for load in (
        lambda: load_pack("gemini"),
        lambda: provider_spec("gemini"),
        lambda: PROVIDER_SPECS["gemini"],
        lambda: current_script(),
    ):
        with pytest.raises(PackError, match="cannot be used"):
            load()
    with pytest.raises(PackError) as caught:
        load_pack("gemini")
    assert caught.value.code == "pack_invalid"
    assert "delete it to use the built-in pack" in str(caught.value)


def test_a_broken_builtin_pack_is_loud(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shipped pack must say the evidence of each entry."""
    doc = json.loads((pack_module.BUILTIN_DIR / "gemini.json").read_text(encoding="utf-8"))
    del doc["selectors"]["input"]["evidence"]
    doc["selectors"]["stop_button"]["evidence"] = "Gemini stop button"
    (tmp_path / "gemini.json").write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setattr(pack_module, "BUILTIN_DIR", tmp_path)
    with pytest.raises(PackError) as caught:
        builtin_pack("gemini")
    message = str(caught.value)
    assert "selectors.input.evidence: missing: name an anchor of docs/sites.md" in message
    assert "selectors.stop_button.evidence: 'Gemini stop button' is no anchor" in message
    with pytest.raises(PackError, match="no built-in pack for 'claude'"):
        builtin_pack("claude")


# -- where an override may send bridge ---------------------------------------------------------


def test_the_shipped_packs_point_only_within_their_providers_domains() -> None:
    """PROVIDER_DOMAINS covers every URL and login host the shipped packs use (so no
    override is refused for repeating them), and no more than their registrable domains."""
    for provider in PROVIDERS:
        urls = builtin_pack(provider).urls
        hosts = [re.match(r"https://([^/:]+)", u).group(1) for u in urls.tab_prefixes.value]  # type: ignore[union-attr]
        hosts.append(re.match(r"https://([^/:]+)", urls.home.value).group(1))  # type: ignore[union-attr]
        hosts += list(urls.login_hosts.value if urls.login_hosts else ())
        for host in hosts:
            assert any(host == d or host.endswith("." + d) for d in PROVIDER_DOMAINS[provider]), (
                provider,
                host,
            )
    assert PROVIDER_DOMAINS == {"chatgpt": ("chatgpt.com", "openai.com"), "gemini": ("google.com",)}


FOREIGN = [
    ("chatgpt", {"urls": {"home": {"value": "https://evil.example/"}}}, "urls.home.value"),
    (
        "chatgpt",
        {"urls": {"tab_prefixes": {"value": ["https://chatgpt.com/", "https://evil.example/"]}}},
        "urls.tab_prefixes.value[1]",
    ),
    ("gemini", {"urls": {"login_hosts": {"value": ["evil.example"]}}}, "urls.login_hosts.value[0]"),
    ("gemini", {"urls": {"home": {"value": "https://chatgpt.com/"}}}, "urls.home.value"),
    # Look-alikes: the provider's name inside another host.
    ("chatgpt", {"urls": {"home": {"value": "https://chatgpt.com.evil.example/"}}}, "urls.home"),
    ("chatgpt", {"urls": {"home": {"value": "https://evilchatgpt.com/"}}}, "urls.home.value"),
    ("gemini", {"urls": {"home": {"value": "https://google.com.evil.example/app"}}}, "urls.home"),
]


@pytest.mark.reliability(35)
@pytest.mark.parametrize(("provider", "body", "key"), FOREIGN)
def test_an_override_pointing_outside_the_providers_domains_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: str, body: Any, key: str
) -> None:
    monkeypatch.delenv(ALLOW_HOSTS_ENV, raising=False)
    path = _override(tmp_path, provider, body)
    with pytest.raises(PackHostRefused) as refused:
        load_pack(provider, tmp_path)
    message = str(refused.value)
    assert refused.value.code == "pack_host_refused" and refused.value.file == path
    assert str(path) in message and key in message
    host = refused.value.hosts[0]
    assert host in message and f"{ALLOW_HOSTS_ENV}={host}" in message
    # The person's own choice, made outside the file, lets it load.
    monkeypatch.setenv(ALLOW_HOSTS_ENV, f"other.example, {host}")
    load_pack(provider, tmp_path)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("https://chatgpt.com@evil.example/", "no plain https URL"),  # user info
        ("https://evil.example\\@chatgpt.com/", "no plain https URL"),  # browsers: evil.example
        ("http://chatgpt.com/", "plain http: write https://"),
    ],
)
def test_an_override_url_a_browser_could_read_otherwise_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, says: str
) -> None:
    monkeypatch.delenv(ALLOW_HOSTS_ENV, raising=False)
    _override(tmp_path, "chatgpt", {"urls": {"home": {"value": url}}})
    with pytest.raises(PackHostRefused, match=re.escape(says)):
        load_pack("chatgpt", tmp_path)


@pytest.mark.parametrize(
    ("provider", "urls"),
    [
        ("chatgpt", {"home": {"value": "https://chatgpt.com/?model=auto"}}),
        (
            "chatgpt",
            {"tab_prefixes": {"value": ["https://chat.openai.com/", "https://x.chatgpt.com/"]}},
        ),
        ("chatgpt", {"login_hosts": {"value": ["auth.openai.com", "openai.com"]}}),
        ("gemini", {"home": {"value": "https://gemini.google.com/u/1/app"}}),
        ("gemini", {"login_hosts": {"value": ["accounts.google.com"]}}),
    ],
)
def test_an_override_within_the_providers_domains_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: str, urls: Any
) -> None:
    monkeypatch.delenv(ALLOW_HOSTS_ENV, raising=False)
    _override(tmp_path, provider, {"urls": urls})
    load_pack(provider, tmp_path)


def test_an_override_another_user_could_have_written_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another user is played by chown to uid 65534 (as root), else by the pack module's
    view of who it runs as (tests/another_user.py)."""
    selectors = {"selectors": {"input": {"css": ["#prompt"]}}}
    path = _override(tmp_path, "chatgpt", selectors)
    path.chmod(0o664)
    with pytest.raises(PackError, match=rf"{re.escape(str(path))} is writable by other users"):
        load_pack("chatgpt", tmp_path)
    path.chmod(0o644)
    assert load_pack("chatgpt", tmp_path).selectors["input"].css == ("#prompt",)
    give_to_another_user(path, pack_module, monkeypatch)
    with pytest.raises(PackError, match=rf"{re.escape(str(path))} belongs to another user"):
        load_pack("chatgpt", tmp_path)


# -- picking up an edited override -----------------------------------------------------------


def test_an_edited_override_is_picked_up_without_a_restart(tmp_path: Path) -> None:
    path = _override(tmp_path, "gemini", {"flow": {"input_wait_s": {"value": 20}}})
    first = load_pack("gemini", tmp_path)
    assert first.flow.input_wait_s.value == 20.0
    assert load_pack("gemini", tmp_path) is first  # unchanged file: no re-read
    spec = provider_spec("gemini", tmp_path)
    assert provider_spec("gemini", tmp_path) is spec

    path.write_text(json.dumps({"flow": {"input_wait_s": {"value": 25}}}), encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    second = load_pack("gemini", tmp_path)
    assert second is not first and second.flow.input_wait_s.value == 25.0
    assert provider_spec("gemini", tmp_path).input_wait_s == 25.0

    path.write_text('{"flow": {"input_wait_s": {"value": 0}}}', encoding="utf-8")  # broken edit
    with pytest.raises(PackError, match=r"flow\.input_wait_s\.value: must be a number"):
        load_pack("gemini", tmp_path)

    path.unlink()  # deleted: back to the shipped pack
    assert load_pack("gemini", tmp_path).fingerprint == builtin_pack("gemini").fingerprint


def test_typed_values() -> None:
    pack = builtin_pack("gemini")
    assert isinstance(pack.flow.stuck_retries, Value) and pack.flow.stuck_retries.value == 2
    assert pack.urls.login_hosts is not None
    assert pack.urls.login_hosts.value == ("accounts.google.com",)
    errors = pack.text("error_replies")
    assert errors is not None and "Something went wrong. Please try again." in errors.all
    assert pack.copy_action is None
    copy = builtin_pack("chatgpt").copy_action
    assert copy is not None and copy.button == 'button[data-testid="copy-turn-action-button"]'
    assert copy.turn == '[data-testid^="conversation-turn-"]'
    assert builtin_pack("chatgpt").stream_rule.format == "chatgpt-sse"


def test_the_flow_names_are_the_ones_the_code_knows() -> None:
    from bridge.providers.composer import INPUT_METHODS

    assert set(pack_module.INPUT_METHOD_NAMES) == set(INPUT_METHODS)
    page_js = (ROOT / "bridge" / "js" / "page.js").read_text(encoding="utf-8")
    for step in pack_module.EXTRACTION_STEPS:  # page.js's STEPS
        assert re.search(rf"^\s+(?:/\*\*.*\*/\s+)?{step}(?::|\()", page_js, re.M), step
    for script_input in pack_module.SCRIPT_INPUTS:
        assert f"'{script_input}'" in page_js or script_input == "insert_text_command"
