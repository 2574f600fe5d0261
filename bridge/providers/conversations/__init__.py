"""Reading whole conversations and the list of recent ones (docs/sites.md#conversations).

A conversation is read the way an answer is (docs/sites.md#answer-sources): the site's own
data first, the rendered page as the check and the fallback.

- **network**: when a conversation page loads, the page itself fetches the conversation
  (ChatGPT ``GET /backend-api/conversation/<id>`` → ``{mapping, current_node}`` or
  ``/backend-api/conversations/<id>`` → ``{messages[]}``, SITE-FACTS C7.8). bridge watches
  that request passively through CDP ``Network`` while it (re)loads the page, as it watches
  the answer request during an ask: nothing is sent by bridge, nothing intercepted. A chat
  revisited in the same page is served from memory (C6.5), so reading the network means
  loading the page. Gemini's read (``hNvQHb``, G7.4) has no documented payload, so Gemini
  has no network reading.
- **dom**: the rendered turns in document order, answers through page.js's markdown
  converter (the one ``extract`` uses), questions as their text. Gemini's history scroller
  is virtualized (G2.1: ~10 messages rendered, older ones on scroll-up, off-screen ones
  removed), so the reading scrolls it up step by step, collecting turns as they render,
  until a step at the top renders nothing new.

A network reading is believed only when the page agrees with it turn by turn (roles, and
:func:`bridge.providers.answer_sources.agreement` over each turn's words) and it is for the
conversation the page shows; otherwise the DOM's reading is returned and the rejection
said.

A conversation may be read while its newest answer is still being written, and a reader
must not take that partial text for the answer: each turn says whether it is ``complete``.
The network reading knows it per message (ChatGPT's ``status``, C7.5/C7.3); the page only
for the newest answer, by the same observation an ask's completion reads (a stop button or
a thinking status; where the pack names a finished mark, G2.7, its absence).

The modules: the pure parts first, the tab work last.

- ``turns``: what a reading returns (``Turn``, ``Conversation``, ``ConversationList``,
  ``PageTurn``);
- ``read_formats``: the sites' read responses parsed (ChatGPT's ``mapping`` walker);
- ``merge``: assistant runs joined, the cross-check, a virtualized history's windows folded;
- ``urls``: which URLs are conversations;
- ``reading``: the tab I/O (the watched read request, the page's turns, the list of recent ones).
"""

from __future__ import annotations

from bridge.providers.conversations.merge import cross_check, merge_runs, merge_window
from bridge.providers.conversations.read_formats import READ_FORMATS, chatgpt_conversation
from bridge.providers.conversations.reading import get_conversation, list_conversations
from bridge.providers.conversations.turns import (
    Conversation,
    ConversationLink,
    ConversationList,
    ConversationSource,
    PageTurn,
    Turn,
)
from bridge.providers.conversations.urls import (
    conversation_id,
    conversation_url,
    url_of_conversation_id,
)

__all__ = [
    "READ_FORMATS",
    "Conversation",
    "ConversationLink",
    "ConversationList",
    "ConversationSource",
    "PageTurn",
    "Turn",
    "chatgpt_conversation",
    "conversation_id",
    "conversation_url",
    "cross_check",
    "get_conversation",
    "list_conversations",
    "merge_runs",
    "merge_window",
    "url_of_conversation_id",
]
