"""Conversation URLs (pure): which URLs are a provider's conversations, and their ids."""

from __future__ import annotations

from urllib.parse import urlsplit

from bridge.providers.specs import ProviderSpec

__all__ = ["conversation_path", "conversation_url", "last_segment"]

#: What a conversation URL looks like, for error messages.
_EXAMPLES: dict[str, str] = {
    "chatgpt": "https://chatgpt.com/c/<id>",
    "gemini": "https://gemini.google.com/app/<id>",
}


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
