"""Looking at a page for an agent: an accessibility outline, a screenshot, matching DOM.

Used by the MCP tools ``take_cdp_snapshot`` and ``get_page_dom``, and by failure reports.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from bridge.cdp.session import CdpSession

__all__ = ["accessibility_outline", "dom_matches", "screenshot"]

_IGNORED_ROLES = {"none", "generic", "InlineTextBox", "LineBreak", "StaticText"}


async def screenshot(tab: CdpSession, *, quality: int = 70) -> bytes:
    """A JPEG of the viewport (small enough for MCP clients' message limits)."""
    if await tab.evaluate("document.visibilityState") == "hidden":
        # A hidden tab produces no frames; emulated focus makes it render without stealing focus.
        await tab.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
    shot = await tab.send("Page.captureScreenshot", {"format": "jpeg", "quality": quality})
    return base64.b64decode(shot["data"])


async def accessibility_outline(tab: CdpSession, *, max_lines: int = 400) -> str:
    """The page's accessibility tree as an indented outline of roles and names."""
    tree = await tab.send("Accessibility.getFullAXTree")
    nodes: dict[str, dict[str, Any]] = {n["nodeId"]: n for n in tree.get("nodes", [])}
    children = {nid: n.get("childIds", []) for nid, n in nodes.items()}
    roots = [n for n in nodes.values() if not n.get("parentId")]
    lines: list[str] = []

    def visit(node_id: str, depth: int) -> None:
        if len(lines) >= max_lines:
            return
        node = nodes.get(node_id)
        if node is None:
            return
        role = str(node.get("role", {}).get("value", ""))
        name = str(node.get("name", {}).get("value", "")).strip()
        shown = not node.get("ignored") and (role not in _IGNORED_ROLES or name)
        if shown:
            label = f"{role} {json.dumps(name[:120], ensure_ascii=False)}" if name else role
            lines.append("  " * depth + label)
        for child in children.get(node_id, []):
            visit(child, depth + 1 if shown else depth)

    for root in roots:
        visit(root["nodeId"], 0)
    if len(lines) >= max_lines:
        lines.append(f"… (cut at {max_lines} lines)")
    return "\n".join(lines)


_DOM_JS = """
(selector, maxChars) => {
  const roots = [document];
  const visit = (node) => {
    for (const el of node.querySelectorAll('*')) {
      if (el.shadowRoot) { roots.push(el.shadowRoot); visit(el.shadowRoot); }
    }
  };
  visit(document);
  const seen = new Set(); const out = [];
  for (const root of roots) {
    for (const el of root.querySelectorAll(selector)) {
      if (!seen.has(el)) { seen.add(el); out.push(el); }
    }
  }
  let budget = maxChars; const items = [];
  for (const el of out) {
    if (budget <= 0) break;
    let html = el.outerHTML.replace(/\\s+/g, ' ');
    if (html.length > budget) html = html.slice(0, budget) + '…';
    budget -= html.length;
    items.push({ inShadowRoot: el.getRootNode() !== document, html });
  }
  return { total: out.length, shown: items.length, items };
}
"""


async def dom_matches(tab: CdpSession, selector: str, *, max_chars: int = 20_000) -> dict[str, Any]:
    """Elements matching ``selector`` anywhere, shadow roots included, trimmed to max_chars."""
    result = await tab.evaluate(f"({_DOM_JS})({json.dumps(selector)}, {int(max_chars)})")
    assert isinstance(result, dict)
    return result
