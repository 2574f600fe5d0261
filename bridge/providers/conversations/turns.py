"""What a conversation reading returns (docs/sites.md#conversations): its turns, the
conversation with how it was read, the list of recent ones, and a turn as the page renders
it. Pure data: no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from bridge.providers.results import Provider

__all__ = [
    "Conversation",
    "ConversationLink",
    "ConversationList",
    "ConversationSource",
    "PageTurn",
    "Role",
    "Turn",
    "mark_writing",
]

Role = Literal["user", "assistant"]
ConversationSource = Literal["auto", "network", "dom"]

#: The names a transcript gives each side.
_NAMES: dict[str, str] = {"chatgpt": "ChatGPT", "gemini": "Gemini"}


@dataclass(frozen=True)
class Turn:
    """One turn: who spoke, and what, as markdown (a question as the person typed it).

    ``complete`` is False for an answer the site had not finished writing when it was read
    (still streaming, or, from ChatGPT's own data, left unfinished): its markdown is only
    what existed then, so a caller must not take it for the whole answer."""

    role: Role
    markdown: str
    complete: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "markdown": self.markdown, "complete": self.complete}


@dataclass
class Conversation:
    """A conversation's turns in order, and how they were read."""

    provider: Provider
    url: str
    turns: list[Turn]
    #: "network" (the page's own read response, checked against the page), "dom" (the
    #: rendered page), or "none" (the tab shows no conversation).
    source: str
    #: Sources tried before the one used, each with why it lost.
    rejected: list[tuple[str, str]] = field(default_factory=list)
    #: The worst turn's agreement between the network reading and the page (1.0 when the
    #: DOM was used or nothing could be compared).
    agreement: float = 1.0
    #: "session" (the project's tab, as an ask would use it) or "temporary" (a tab opened
    #: for a URL and closed again).
    tab: str = "session"
    #: Steps taken up a virtualized history (Gemini), 0 elsewhere.
    scroll_steps: int = 0
    notes: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "url": self.url,
            "turns": [t.to_dict() for t in self.turns],
            "source": self.source,
            "rejected": [{"source": s, "why": why} for s, why in self.rejected],
            "agreement": round(self.agreement, 3),
            "tab": self.tab,
            "scroll_steps": self.scroll_steps,
            "notes": list(self.notes),
            "elapsed_ms": round(self.elapsed_ms, 1),
        }

    def transcript(self) -> str:
        """The turns as one markdown text, each under a heading naming its side."""
        if not self.turns:
            return "(no turns)" + "".join(f"\n{note}" for note in self.notes)
        name = _NAMES.get(self.provider, self.provider)
        parts = [
            f"## {'User' if t.role == 'user' else name} "
            f"({i}{'' if t.complete else ', incomplete: still being written'})\n\n{t.markdown}"
            for i, t in enumerate(self.turns, 1)
        ]
        return "\n\n".join(parts)


@dataclass(frozen=True)
class ConversationLink:
    """One conversation in a site's list: its title as shown, and its URL."""

    title: str
    url: str

    def to_dict(self) -> dict[str, str]:
        return {"title": self.title, "url": self.url}


@dataclass
class ConversationList:
    """Recent conversations as the site's page lists them."""

    provider: Provider
    conversations: list[ConversationLink]
    #: "sidebar" (the pack's sidebar selectors, ChatGPT C5.2) or "links" (any link on the
    #: page to a conversation URL: by behaviour, where no sidebar markup is evidenced).
    method: str
    page_url: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "conversations": [c.to_dict() for c in self.conversations],
            "method": self.method,
            "page_url": self.page_url,
            "notes": list(self.notes),
        }

    def text(self) -> str:
        if not self.conversations:
            return "(no conversations found)" + "".join(f"\n{n}" for n in self.notes)
        return "\n".join(f"- [{c.title or '(untitled)'}]({c.url})" for c in self.conversations)


@dataclass(frozen=True)
class PageTurn:
    """A turn as the page renders it, with the key that finds it again after a re-render
    (the message id [C2.3] or its exchange's id [G2.2]; else its role and text)."""

    key: str
    role: Role
    markdown: str

    @classmethod
    def from_page(cls, raw: dict[str, Any]) -> PageTurn:
        role: Role = "user" if raw.get("role") == "user" else "assistant"
        text = str(raw.get("text", ""))
        return cls(str(raw.get("key") or f"{role}\n{text}"), role, text)


def mark_writing(turns: list[Turn]) -> None:
    """The newest answer is still being written: not ``complete`` (a question last means
    its answer has not begun, and the question itself is whole)."""
    if turns and turns[-1].role == "assistant":
        turns[-1] = replace(turns[-1], complete=False)
