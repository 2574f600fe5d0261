"""Conversation URLs (pure): which URLs are a provider's conversations, and their ids."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from bridge.providers.specs import ProviderSpec

__all__ = [
    "conversation_id",
    "conversation_path",
    "conversation_url",
    "last_segment",
    "url_of_conversation_id",
]

#: What a conversation URL looks like, for error messages.
_EXAMPLES: dict[str, str] = {
    "chatgpt": "https://chatgpt.com/c/<id>",
    "gemini": "https://gemini.google.com/app/<id>",
}
#: Where a conversation id alone opens, under the provider's origin.
_ID_PATHS: dict[str, str] = {"chatgpt": "/c/{id}", "gemini": "/app/{id}"}
_ID = re.compile(r"[A-Za-z0-9_-]+")


def conversation_path(spec: ProviderSpec, url: str) -> str | None:
    """The conversation part of ``url``'s path (``/c/<id>``, ``/app/<id>``), else None."""
    if not url.startswith(spec.url_prefixes):
        return None
    match = spec.pack.urls.conversation_path.compile().match(urlsplit(url).path)
    return match.group(0) if match else None


def last_segment(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def conversation_url(spec: ProviderSpec, url: str) -> str:
    """``url`` checked to be one of ``spec``'s conversations (ValueError saying what to give
    otherwise), without its fragment."""
    url = url.strip().split("#", 1)[0]
    if conversation_path(spec, url) is None:
        raise ValueError(
            f"{url!r} is not a {spec.name} conversation URL: give one like "
            f"{_EXAMPLES.get(spec.name, spec.home_url)} (list_conversations shows the "
            "recent ones), or no url for the project's own conversation"
        )
    return url


def conversation_id(spec: ProviderSpec, url: str) -> str | None:
    """The site's id of the conversation at ``url`` (its path's last segment: the
    ``<id>`` of ``/c/<id>``, ``/app/<id>``), else None."""
    path = conversation_path(spec, url.strip().split("#", 1)[0])
    return last_segment(path) if path is not None else None


def url_of_conversation_id(spec: ProviderSpec, ident: str) -> str:
    """The URL a conversation id opens at (``https://chatgpt.com/c/<id>``,
    ``https://gemini.google.com/app/<id>``); ValueError for what is no id."""
    if not _ID.fullmatch(ident) or spec.name not in _ID_PATHS:
        raise ValueError(
            f"{ident!r} is not a {spec.name} conversation id: give the last part of a "
            f"conversation URL like {_EXAMPLES.get(spec.name, spec.home_url)} "
            "(list_conversations shows the recent ones)"
        )
    home = urlsplit(spec.home_url)
    return conversation_url(
        spec, f"{home.scheme}://{home.netloc}{_ID_PATHS[spec.name].format(id=ident)}"
    )
