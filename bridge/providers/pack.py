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

The format (``version`` 1) is :mod:`bridge.providers.pack_model`: pydantic models that
validate a pack, type it for the code, and give the JSON Schema of an override
(docs/schemas/pack.schema.json). Every entry has ``evidence`` (required in built-in packs),
optional ``facts`` (SITE-FACTS row ids such as ``"C1.5"``) and ``note``, plus the value keys
of its kind: ``css`` (selectors), ``texts`` (by language), ``regex`` and ``flags``,
``value`` (URLs, host names, numbers, switches, names), or a ``stream`` request.
"""

from __future__ import annotations

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
from typing import Any

from bridge.errors import BridgeError
from bridge.providers.pack_checks import css_problem, regex_problem
from bridge.providers.pack_model import (
    EXTRACTION_STEPS,
    INPUT_METHOD_NAMES,
    SCRIPT_INPUTS,
    SECTIONS,
    Entry,
    Flow,
    HostList,
    Network,
    PackDocument,
    Pattern,
    Selectors,
    Stream,
    Texts,
    Url,
    UrlList,
    Urls,
    Value,
)
from bridge.providers.pack_problems import model_in, validate
from bridge.store.state import default_state_dir, owner_uid, private_state_dir

__all__ = [
    "ALLOW_HOSTS_ENV",
    "BUILTIN_DIR",
    "EXTRACTION_STEPS",
    "INPUT_METHOD_NAMES",
    "PROVIDER_DOMAINS",
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

BUILTIN_DIR = Path(__file__).with_name("packs")

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


# -- the typed pack ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CopyAction:
    """Selectors for reading an answer through its turn's copy button (one CSS list each)."""

    turn: str
    button: str
    assistant: str


@dataclass(frozen=True, eq=False)
class Pack:
    """A provider's pack after merging the override (if any) over the built-in one: the
    validated document's sections, its selectors and texts as mappings of the entries set."""

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

    @classmethod
    def of(
        cls,
        model: PackDocument,
        doc: dict[str, Any],
        sources: dict[str, Path],
        files: tuple[Path, ...],
    ) -> Pack:
        """The pack of a validated document; each entry learns its path and the file that set
        it last (``sources``, by path; the built-in pack otherwise)."""
        for section, entries in model.sections().items():
            for key, entry in entries.entries().items():
                path = f"{section}.{key}"
                entry.placed(path, sources.get(path, files[0]))
        text = json.dumps(doc, sort_keys=True, ensure_ascii=False)
        return cls(
            provider=model.provider,
            version=model.version,
            urls=model.urls,
            selectors=MappingProxyType(dict(model.selectors.entries())),
            texts=MappingProxyType(dict(model.texts.entries())),
            network=model.network,
            flow=model.flow,
            files=files,
            fingerprint=hashlib.sha256(text.encode()).hexdigest()[:12],
            document=MappingProxyType(doc),
        )

    def entries(self) -> Iterator[Entry]:
        """Every entry, in schema order."""
        yield from self.urls.entries().values()
        yield from self.selectors.values()
        yield from self.texts.values()
        yield from self.network.entries().values()
        yield from self.flow.entries().values()

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


def _check(
    path: Path, doc: object, provider: str, *, complete: bool, strict: bool
) -> PackDocument | None:
    """The validated document (None for an override before the merge); every problem at
    once in a :class:`PackError` naming ``path``."""
    model, problems = validate(doc, provider, complete=complete, strict_evidence=strict)
    if problems:
        raise PackError(path, problems)
    return model


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
    model = _check(builtin, doc, provider, complete=True, strict=True)
    sources: dict[str, Path] = {}
    files: tuple[Path, ...] = (builtin,)
    if override is not None and signature[1] is not None:
        _check_override_owner(override)
        patch = _read_json(override)
        _check(override, patch, provider, complete=False, strict=False)
        _check_override_hosts(override, patch, provider)
        for section in SECTIONS:
            for entry in patch.get(section) or {}:
                sources[f"{section}.{entry}"] = override
        doc = merge_patch(doc, patch)
        # What only the merge can get wrong (a required entry removed with null, an entry
        # new in the override without its value): reported against the override.
        try:
            model = _check(override, doc, provider, complete=True, strict=False)
        except PackError as exc:
            raise PackError(
                override, [f"{p} (after merging over {builtin.name})" for p in exc.problems]
            ) from None
        files = (builtin, override)
    assert model is not None  # a complete document validates to one, or raises
    pack = Pack.of(model, doc, sources, files)
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
    for section, fields in PackDocument.model_fields.items():
        body = patch.get(section)
        section_model = model_in(fields.annotation)
        if not isinstance(body, dict) or section_model is None:
            continue
        for key, field in section_model.model_fields.items():
            entry, kind = body.get(key), model_in(field.annotation)
            if kind not in (Url, UrlList, HostList) or not isinstance(entry, dict):
                continue
            raw = entry.get("value")
            values = [raw] if kind is Url else list(raw or [])
            for i, value in enumerate(values):
                where = f"{section}.{key}.value" + ("" if kind is Url else f"[{i}]")
                if kind is HostList:
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
