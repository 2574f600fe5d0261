"""Where an ask is asked (docs/sites.md#where): a conversation, a ChatGPT project or GPT, a
Gemini Gem, or a temporary chat.

Two halves, as modes have (bridge.providers.modes):

- :func:`resolve_place` is pure and runs before the browser is touched: it checks the forms
  a caller gave (a project ``g-p-<32 hex>`` or its URL, a GPT ``g-<id>`` or its URL, a Gem id
  or ``/gem/<id>`` URL, a conversation URL on the provider's own host or a bare id) and
  refuses anything else with a ``ValueError`` naming the accepted forms. A URL on another host
  is never opened. It says which URL the tab opens.
- :func:`check_place` runs once the tab shows that URL, before anything is typed, and **fails
  closed**: the page must have landed where it was sent (an error status, or a redirect away,
  is ``PlaceNotFound``); a conversation must show its turns; a temporary chat must be confirmed
  by the page (``TemporaryChatUnavailable``).

The URL forms are evidenced (SITE-FACTS C6.1–C6.3, C12.1, G6.1, G9.1); how the sites answer a
project, GPT or Gem that does not exist is not, so the check is by behaviour: the URL the page
lands on and the HTTP status of its document (docs/sites.md#facts-without-evidence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qs, urlsplit

from bridge.errors import PlaceNotFound, TemporaryChatUnavailable
from bridge.providers.composer import trusted_click
from bridge.providers.context import AskContext
from bridge.providers.dumps import dump
from bridge.providers.specs import AskOptions, ProviderSpec
from bridge.waiting import scaled

__all__ = ["Place", "PlaceKind", "check_place", "is_temporary_url", "resolve_place"]

PlaceKind = Literal["conversation", "project", "gpt", "gem", "temporary"]

TURNS_S = 15.0  # a continued conversation shows its turns (as reading a conversation waits)
TURNS_QUIET_MS = 300  # as bridge.providers.conversations.reading waits for turns
TEMP_S = 8.0  # a click on Gemini's temporary-chat button to the page showing it on

# SITE-FACTS C12.1: a project id is g-p-<32 hex>, its URLs /g/g-p-<32 hex>-<slug>/project and
# /g/g-p-<32 hex>-<slug>/c/<uuid>; C6.2: the slug is optional (/g/g-p-<hex>[-slug]/project).
_PROJECT = re.compile(r"(g-p-[0-9a-f]{32})(-[a-z0-9][a-z0-9-]*)?", re.IGNORECASE)
# C12.1: a custom GPT is /g/g-<alnum id>-<slug>, its chats /g/g-<id>-<slug>/c/<uuid>.
_GPT = re.compile(r"(g-[A-Za-z0-9]+)(-[A-Za-z0-9][A-Za-z0-9-]*)?")
# G9.1: /gem/<gem id>[/<16 hex chat id>], ids of 12 hex, slugs (coding-partner) or 33 chars;
# G6.1: a multi-account prefix /u/<n>/.
_GEM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_GEM_PATH = re.compile(r"^/(?:u/\d+/)?gem/([^/?#]+)(?:/[^/?#]+)?/?$")
# C6.1: a ChatGPT conversation id is a UUID; G6.1: Gemini's is 16 hex (c_<16 hex> inside).
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_GEMINI_ID = re.compile(r"(?:c_)?([0-9a-f]{16})", re.IGNORECASE)

_HOMES = {"chatgpt": "https://chatgpt.com", "gemini": "https://gemini.google.com"}
# C6.3: a temporary chat is /?temporary-chat=true; its id never reaches the URL.
TEMPORARY_QUERY = "temporary-chat"


@dataclass(frozen=True)
class Place:
    """Where an ask goes: its kind, the id the caller named it by, the URL the tab opens."""

    kind: PlaceKind
    id: str
    url: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "id": self.id, "url": self.url}


def resolve_place(spec: ProviderSpec, options: AskOptions) -> Place | None:
    """The place ``options`` name for ``spec``'s site, checked (ValueError otherwise); None
    when they name none (the session's conversation, or a new chat)."""
    name = spec.name
    given = {
        k: v
        for k, v in (
            ("conversation", options.conversation),
            ("project", options.project),
            ("gpt", options.gpt),
            ("gem", options.gem),
        )
        if v is not None
    }
    for key, value in given.items():
        if not value.strip():
            raise ValueError(f"{key} is empty: give one or leave it out")
    if len(given) > 1:
        raise ValueError(
            f"{' and '.join(given)} name two places: ask in one (a conversation's URL "
            "already says which project, GPT or Gem it is in)"
        )
    if options.temporary and given:
        raise ValueError(
            f"temporary with {next(iter(given))} is a contradiction: a temporary chat is a new "
            "chat of its own, outside any conversation, project, GPT or Gem"
        )
    if "conversation" in given and options.new_chat:
        raise ValueError(
            "conversation with new_chat is a contradiction: continue the conversation, or "
            "start a new chat"
        )
    for key, site in (("project", "chatgpt"), ("gpt", "chatgpt"), ("gem", "gemini")):
        if key in given and name != site:
            raise ValueError(f"{key} is a {site} place; {name} has none (ask {site} for it)")
    if options.temporary:
        # C6.3 (ChatGPT); Gemini's temporary chat is a button on its new-chat page (G13.1).
        url = f"{_HOMES['chatgpt']}/?{TEMPORARY_QUERY}=true" if name == "chatgpt" else spec.home_url
        return Place("temporary", "", url)
    if not given:
        return None
    kind, value = next(iter(given.items()))
    value = value.strip()
    if kind == "project":
        ref, gizmo = _gizmo_ref(spec, value, _PROJECT, "project", "g-p-<32 hex> or a project URL")
        return Place("project", gizmo.lower(), _chatgpt(f"/g/{ref}/project"))
    if kind == "gpt":
        ref, gizmo = _gizmo_ref(spec, value, _GPT, "gpt", "g-<id> or a GPT URL")
        if _PROJECT.fullmatch(ref):
            raise ValueError(f"gpt {value!r} is a project (g-p-…): give it as project")
        return Place("gpt", gizmo, _chatgpt(f"/g/{ref}"))
    if kind == "gem":
        gem = _gem_id(spec, value)
        return Place("gem", gem, f"{_HOMES['gemini']}/gem/{gem}")
    return Place("conversation", value, _conversation(spec, value))


def _chatgpt(path: str) -> str:
    return _HOMES["chatgpt"] + path


def _on_site(spec: ProviderSpec, kind: str, value: str) -> str:
    """``value``'s path when it is a URL on ``spec``'s site; ValueError for another host."""
    if not value.startswith(spec.url_prefixes):
        raise ValueError(
            f"{kind} {value!r} is not on {spec.name}'s site ({', '.join(spec.url_prefixes)}): "
            "bridge opens no other host"
        )
    return urlsplit(value).path


def _is_url(value: str) -> bool:
    return "://" in value or value.startswith("//")


def _gizmo_ref(
    spec: ProviderSpec, value: str, pattern: re.Pattern[str], kind: str, forms: str
) -> tuple[str, str]:
    """The ``g-…[-slug]`` part of a project or GPT given as an id or a URL, and its id (C12.1)."""
    ref = value
    if _is_url(value):
        parts = _on_site(spec, kind, value).strip("/").split("/")
        ref = parts[1] if len(parts) >= 2 and parts[0] == "g" else ""
        rest = parts[2:]
        ok_rest = rest in ([], ["project"]) or (len(rest) == 2 and rest[0] == "c")
        if not ok_rest:
            ref = ""
    match = pattern.fullmatch(ref)
    if not match:
        raise ValueError(f"{kind} {value!r} is not a ChatGPT {kind}: give {forms} ({_FORMS[kind]})")
    return ref, match.group(1)


_FORMS = {
    "project": "e.g. g-p-0123456789abcdef0123456789abcdef or "
    "https://chatgpt.com/g/g-p-0123456789abcdef0123456789abcdef-notes/project",
    "gpt": "e.g. g-abc123XYZ or https://chatgpt.com/g/g-abc123XYZ-helper",
}


def _gem_id(spec: ProviderSpec, value: str) -> str:
    forms = (
        "give a Gem id (e.g. 4221cfdd4fe7, coding-partner) or a Gem URL "
        "(https://gemini.google.com/gem/<id>)"
    )
    if _is_url(value):
        match = _GEM_PATH.match(_on_site(spec, "gem", value))
        if not match:
            raise ValueError(f"gem {value!r} is not a Gem URL: {forms}")
        value = match.group(1)
    if not _GEM_ID.fullmatch(value):
        raise ValueError(f"gem {value!r} is not a Gem id: {forms}")
    return value


def _conversation(spec: ProviderSpec, value: str) -> str:
    forms = (
        "https://chatgpt.com/c/<uuid> (or a project's or GPT's /g/…/c/<uuid>) or the bare uuid"
        if spec.name == "chatgpt"
        else "https://gemini.google.com/app/<16 hex> (or a Gem's /gem/<id>/<16 hex>) or the bare id"
    )
    if _is_url(value):
        url = value.split("#", 1)[0]
        _on_site(spec, "conversation", url)
        if conversation_path(spec, url) is None:
            raise ValueError(
                f"conversation {value!r} is not a {spec.name} conversation: give {forms}"
            )
        return url
    if spec.name == "chatgpt" and _UUID.fullmatch(value):
        return _chatgpt(f"/c/{value.lower()}")  # C6.1
    match = _GEMINI_ID.fullmatch(value)
    if spec.name == "gemini" and match:
        return f"{_HOMES['gemini']}/app/{match.group(1).lower()}"  # G6.1
    raise ValueError(f"conversation {value!r} is not a {spec.name} conversation: give {forms}")


def conversation_path(spec: ProviderSpec, url: str) -> str | None:
    """The conversation part of ``url``'s path, as the pack's ``urls.conversation_path`` says
    (the same as bridge.providers.conversations.urls, which imports the flow)."""
    if not url.startswith(spec.url_prefixes):
        return None
    match = spec.pack.urls.conversation_path.compile().match(urlsplit(url).path)
    return match.group(0) if match else None


def is_temporary_url(url: str) -> bool:
    """Whether ``url`` shows a ChatGPT temporary chat (C6.3: ``?temporary-chat=true``)."""
    return parse_qs(urlsplit(url).query).get(TEMPORARY_QUERY) == ["true"]


async def landed(ctx: AskContext, place: Place) -> None:
    """Right after the tab opened ``place.url``: its document must not be an error page and
    its URL must still be the place (by behaviour: no source says how the sites answer a
    project, GPT or Gem that is not there, docs/sites.md#facts-without-evidence)."""
    status = int(await ctx.page.call("navigationStatus") or 0)
    url = str(await ctx.tab.evaluate("location.href"))
    problem = ""
    if status >= 400:
        problem = f"its page answered HTTP {status}"
    else:
        problem = _elsewhere(ctx.spec, place, url)
    if problem:
        await dump(ctx, f"{place.kind} not found")
        if place.kind == "temporary":
            raise TemporaryChatUnavailable(ctx.provider, problem)
        raise PlaceNotFound(ctx.provider, place.kind, place.id or place.url, problem)


def _elsewhere(spec: ProviderSpec, place: Place, url: str) -> str:
    """Why ``url`` is not ``place`` ("" when it is)."""
    path = urlsplit(url).path
    moved = f"the page went to {url}"
    if place.kind in ("project", "gpt"):
        # The page may add or change the slug: the id must stay (C12.1).
        head = f"/g/{place.id}"
        if not (
            path.lower().startswith(head.lower())
            and path[len(head) : len(head) + 1] in ("", "-", "/")
        ):
            return moved
        if place.kind == "gpt" and _PROJECT.match(path[3:]):
            return moved
    elif place.kind == "gem":
        match = _GEM_PATH.match(path)
        if not match or match.group(1) != place.id:
            return moved
    elif place.kind == "conversation":
        if conversation_path(spec, url) != conversation_path(spec, place.url):
            return moved
    elif place.kind == "temporary" and spec.name == "chatgpt" and not is_temporary_url(url):
        return f"the page dropped ?{TEMPORARY_QUERY}=true (it went to {url})"
    return ""


async def check_place(ctx: AskContext, place: Place) -> dict[str, str | bool]:
    """Once the composer is ready, before anything is typed: the page is still at ``place``
    and shows it (a conversation its turns; Gemini a temporary chat turned on, G13.1).
    Returns what ``used.place`` records."""
    url = str(await ctx.tab.evaluate("location.href"))
    problem = _elsewhere(ctx.spec, place, url)
    if problem:
        await dump(ctx, f"{place.kind} left")
        if place.kind == "temporary":
            raise TemporaryChatUnavailable(ctx.provider, problem)
        raise PlaceNotFound(ctx.provider, place.kind, place.id or place.url, problem)
    if place.kind == "conversation":
        wait_s = scaled(TURNS_S)
        turns = await ctx.page.call(
            "whenTurns", ctx.provider, 1, TURNS_QUIET_MS, int(wait_s * 1000), timeout=wait_s + 5
        )
        if not turns:
            await dump(ctx, "conversation shows no turns")
            raise PlaceNotFound(
                ctx.provider,
                "conversation",
                place.id,
                f"the page showed no turns within {wait_s:.0f}s",
            )
    if place.kind == "temporary" and ctx.provider == "gemini":
        await _gemini_temporary(ctx)
    return {"kind": place.kind, "id": place.id, "url": place.url}


async def _gemini_temporary(ctx: AskContext) -> None:
    """Turn on Gemini's temporary chat with its header button and wait for the page to show
    it on (G13.1: ``[data-test-id="temp-chat-button"]``, the class ``temp-chat-on``)."""
    p = ctx.provider
    needed = [n for n in ("temp_chat_button", "temp_chat_on") if n not in ctx.spec.pack.selectors]
    if needed:
        raise TemporaryChatUnavailable(
            p, f"the {p} pack names no temporary-chat button (selectors.{needed[0]})"
        )
    if await ctx.page.call("whenVisible", p, "temp_chat_on", 0) == "visible":
        return
    wait_s = scaled(TEMP_S)
    ms = int(wait_s * 1000)
    # The button, or the side nav's menu button while the nav is collapsed (G13.1: the
    # temporary-chat button is then removed from the DOM); the button wins when both show.
    seen = await ctx.page.call(
        "whichVisible", p, ["temp_chat_button", "side_nav_button"], ms, timeout=wait_s + 5
    )
    if seen == "side_nav_button":
        opener = await ctx.page.call("controlTarget", p, "side_nav_button")
        if opener:
            # Expanded and left expanded: collapsing it again could take the temporary
            # chat's button, and with it the page's own state, away before the send.
            await trusted_click(ctx, opener)
            seen = await ctx.page.call(
                "whichVisible", p, ["temp_chat_button"], ms, timeout=wait_s + 5
            )
    target = await ctx.page.call("controlTarget", p, "temp_chat_button") if seen else None
    if not target:
        await dump(ctx, "no temporary chat button")
        raise TemporaryChatUnavailable(
            p,
            "the page shows no temporary-chat button, even with the side navigation expanded "
            "(it is absent when logged out, or for an account without temporary chats)",
        )
    await trusted_click(ctx, target)
    on = await ctx.page.call(
        "whenVisible", p, "temp_chat_on", int(wait_s * 1000), timeout=wait_s + 5
    )
    if on != "visible":
        await dump(ctx, "temporary chat not confirmed")
        raise TemporaryChatUnavailable(
            p, f"after a click on its button the page did not show it on within {wait_s:.0f}s"
        )
