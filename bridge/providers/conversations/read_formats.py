"""The sites' own conversation read responses, parsed (SITE-FACTS C7.8): ChatGPT's
``mapping`` walked to the branch the page shows. Pure: a body in, turns out (or None), never
an exception; ``READ_FORMATS`` names each parser as a pack's ``network.conversation_read``
does."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from bridge.providers.conversations.turns import Role, Turn, mark_writing

__all__ = ["READ_FORMATS", "chatgpt_conversation"]

# -- ChatGPT's read response (pure) ----------------------------------------------------------------

# content_type values whose string parts are what the page shows as a turn (C7.5); thoughts,
# reasoning recaps, code and tool output are not turns (C4.5).
_TURN_CONTENT = ("text", "multimodal_text")
# A mapping is a tree; a walk longer than this is a cycle or garbage.
_MAX_NODES = 100_000


def _message_role(message: Any) -> Role | None:
    """The role of a message the page shows as a turn, else None: a user or assistant text
    message, not hidden, on the final channel (or none), addressed to all (C7.5, C4.5)."""
    if not isinstance(message, dict):
        return None
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    if role not in ("user", "assistant"):
        return None  # system, tool, …
    metadata = message.get("metadata")
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return None
    content = message.get("content")
    if not isinstance(content, dict) or content.get("content_type") not in _TURN_CONTENT:
        return None
    if message.get("channel") not in (None, "final"):
        return None
    if message.get("recipient") not in (None, "all"):
        return None
    return "user" if role == "user" else "assistant"


def _unfinished(message: Any) -> bool:
    """A message the site has not finished: its ``status`` (C7.5) is there and is not
    ``finished_successfully``, the status a stream ends a complete message with (C7.3):
    ``in_progress`` while it is written, another value for one cut short. A message without
    a status says nothing, and counts as finished."""
    status = message.get("status") if isinstance(message, dict) else None
    return isinstance(status, str) and status != "finished_successfully"


def _message_turn(message: Any) -> Turn | None:
    role = _message_role(message)
    if role is None:
        return None
    parts = message["content"].get("parts")
    # multimodal_text mixes strings with objects (images, files): the strings are the text.
    text = "".join(p for p in parts if isinstance(p, str)) if isinstance(parts, list) else ""
    return Turn(role, text.strip(), complete=not _unfinished(message))


def _walk(mapping: dict[str, Any], current: str) -> list[Any] | None:
    """The messages from the root down to ``current``: the branch the page shows (edits and
    regenerations are siblings off it). None when ``current`` is not in the mapping."""
    if current not in mapping:
        return None
    chain: list[Any] = []
    seen: set[str] = set()
    node_id: Any = current
    while isinstance(node_id, str) and node_id not in seen and len(seen) < _MAX_NODES:
        seen.add(node_id)
        node = mapping.get(node_id)
        if not isinstance(node, dict):
            break
        chain.append(node.get("message"))
        node_id = node.get("parent")
    chain.reverse()
    return chain


def chatgpt_conversation(body: str) -> list[Turn] | None:
    """The turns of a ChatGPT conversation read response, in order; None if ``body`` is none.

    Both shapes of SITE-FACTS C7.8: ``{mapping, current_node}`` (CEX), walked from
    ``current_node`` to the root through each node's ``parent`` and reversed, and
    ``{messages[]}`` (AIH), taken in the order given (each entry a message, or a node
    holding one as ``message``). Only what the page shows is kept: user and assistant text
    messages that are not hidden, not on another channel and addressed to all; thoughts,
    recaps, system and tool messages are not turns. Consecutive assistant messages stay
    separate here (:func:`merge_runs` joins them, as the page shows them in one turn).
    A turn whose message is unfinished (:func:`_unfinished`) is not ``complete``; so is the
    last answer while the newest message (the current node: thoughts, a tool call, the
    answer itself) is unfinished, since the reply is still being written after it.
    Never raises: a body the site changed gives None and the DOM answers instead.
    """
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    mapping, current = data.get("mapping"), data.get("current_node")
    messages: list[Any] | None
    if isinstance(mapping, dict) and isinstance(current, str):
        messages = _walk(mapping, current)
    elif isinstance(data.get("messages"), list):
        messages = [
            m.get("message") if isinstance(m, dict) and "message" in m else m
            for m in data["messages"]
        ]
    else:
        return None
    if messages is None:
        return None
    turns = [turn for turn in map(_message_turn, messages) if turn is not None]
    if turns and messages and _unfinished(messages[-1]):
        mark_writing(turns)
    return turns


#: Parsers of a pack's ``network.conversation_read`` formats.
READ_FORMATS: dict[str, Callable[[str], list[Turn] | None]] = {
    "chatgpt-conversation": chatgpt_conversation,
}
