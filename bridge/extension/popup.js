// @ts-check
// Shows what the service worker knows: relays per port, and the tabs attached for them.

/** @param {string} id */
const el = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * @param {HTMLElement} list
 * @param {Array<[string, string]>} rows [className, text]
 */
function fill(list, rows) {
  list.replaceChildren(
    ...rows.map(([cls, text]) => {
      const li = document.createElement('li');
      li.className = cls;
      li.textContent = text;
      return li;
    }),
  );
}

async function render() {
  const s = await chrome.runtime.sendMessage({ type: 'status' });
  if (!s) return;
  fill(
    el('relays'),
    s.relays.length
      ? s.relays.map((/** @type {any} */ r) => [r.state, `127.0.0.1:${r.port} — ${r.state}${r.message ? ': ' + r.message : ''}`])
      : [['none', 'none found — start bridge (python -m bridge.mcp)']],
  );
  fill(
    el('tabs'),
    s.tabs.length
      ? s.tabs.map((/** @type {any} */ t) => ['', `tab ${t.tabId} → relay ${t.port ?? '(reconnecting)'}`])
      : [['muted', 'none']],
  );
  el('range').textContent =
    s.mode === 'native'
      ? 'Relays announced by the native host (no scanning)'
      : `Scanning ports ${s.portRange[0]}–${s.portRange[1]}` +
        (s.nativeDownReason ? ` (native host: ${s.nativeDownReason})` : '');
}

render();
// Re-render on a period while the popup is open; it has no event to subscribe to.
setInterval(render, 1000);
