"""The answer as the site copies it: the turn's own copy button, its clipboard write
captured in the page (docs/sites.md#answer-sources, SITE-FACTS C2.6, C2.7).

ChatGPT's turn copy button puts the answer's markdown on the clipboard; oracle reads
answers that way. bridge clicks only the *turn's* copy button (the pack's selector, inside
the newest assistant turn), never a code block's "Copy code", which copies one block.
The write is captured, not performed: ``navigator.clipboard.writeText``/``write`` are
replaced on the page's clipboard object for the moment of the click and put back after,
so the person's clipboard keeps what they copied. A site that copies through a ``copy``
event is read from the event's data.
"""

from __future__ import annotations

import json
import logging

from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError
from bridge.waiting import scaled

__all__ = ["copy_answer"]

log = logging.getLogger(__name__)

# (turnSelector, buttonSelector, assistantSelector, ms) => {text} | {why}
_CAPTURE = """
(async (turnSel, buttonSel, assistantSel, ms) => {
  const assistants = document.querySelectorAll(assistantSel);
  const message = assistants[assistants.length - 1];
  if (!message) return { why: 'no assistant message' };
  const turn = message.closest(turnSel) || message;
  const buttons = turn.querySelectorAll(buttonSel);
  const button = buttons[buttons.length - 1];
  if (!button) return { why: 'no copy button in the newest turn' };
  const clip = navigator.clipboard;
  const own = clip ? { writeText: Object.getOwnPropertyDescriptor(clip, 'writeText'),
                       write: Object.getOwnPropertyDescriptor(clip, 'write') } : null;
  let settle;
  const got = new Promise((resolve) => { settle = resolve; });
  const take = (text) => settle({ text: String(text) });
  if (clip) {
    clip.writeText = async (text) => take(text);
    clip.write = async (items) => {
      for (const item of items) {
        if (item.types.includes('text/plain')) {
          take(await (await item.getType('text/plain')).text());
          return;
        }
      }
      settle({ why: 'the copy held no text/plain' });
    };
  }
  const onCopy = (event) => {
    const text = event.clipboardData && event.clipboardData.getData('text/plain');
    if (text) take(text);
  };
  window.addEventListener('copy', onCopy);
  const deadline = setTimeout(() => settle({ why: 'the copy button wrote nothing' }), ms);
  try {
    button.click();
    return await got;
  } finally {
    clearTimeout(deadline);
    window.removeEventListener('copy', onCopy);
    if (clip) {
      for (const name of ['writeText', 'write']) {
        if (own[name]) Object.defineProperty(clip, name, own[name]);
        else delete clip[name];
      }
    }
  }
})
"""


async def copy_answer(
    tab: CdpSession, *, turn: str, button: str, assistant: str, wait: float = 3.0
) -> tuple[str, str]:
    """The markdown the newest turn's copy button copies, and "" with why when none."""
    limit = scaled(wait)
    args = ", ".join(json.dumps(a) for a in (turn, button, assistant, int(limit * 1000)))
    try:
        found = await tab.evaluate(
            f"{_CAPTURE}({args})", await_promise=True, timeout=limit + scaled(5.0)
        )
    except BridgeError as exc:
        log.debug("copy action on tab %s: %s", tab.tab_id, exc)
        return "", f"copy action failed: {exc}"
    if not isinstance(found, dict):
        return "", "copy action returned nothing"
    if "text" in found:
        return str(found["text"]), ""
    return "", str(found.get("why", "no text"))
