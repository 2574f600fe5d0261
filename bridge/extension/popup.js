// @ts-check
// Shows what the service worker knows (relays, their trust, attached and shared tabs), and
// takes the person's decisions: the pairing code, sharing this tab, which browser serves.

/** @param {string} id */
const el = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * @param {HTMLElement} list
 * @param {Array<[string, string, HTMLElement?]>} rows [className, text, optional button]
 */
function fill(list, rows) {
  list.replaceChildren(
    ...rows.map(([cls, text, button]) => {
      const li = document.createElement('li');
      li.className = cls;
      li.textContent = text;
      if (button) li.append(button);
      return li;
    }),
  );
}

/** @param {any} msg */
const ask = (msg) => chrome.runtime.sendMessage(msg);

/** @type {chrome.tabs.Tab | undefined} */
let activeTab;

/** @param {any} s */
function stateText(s) {
  if (s.mode === 'failed') return `Not serving: ${s.failReason}`;
  if (s.mode === 'unpaired') return 'Not set up: this browser has no bridge secret yet, so it serves no relay.';
  if (s.mode === 'native') return s.island ? 'Launched by bridge: serves only that bridge.' : 'Set up by the native host.';
  if (s.mode === 'probe') return 'Paired by hand: scanning for relays that prove the secret.';
  return 'Starting…';
}

/** @param {any} r */
function relayRow(r) {
  if (r.state === 'connected' && r.serving === false) {
    const use = document.createElement('button');
    use.textContent = 'Use this browser';
    use.title = 'bridge works through another of your browsers now; switch it to this one';
    use.onclick = () => ask({ type: 'claim', port: r.port }).then(render);
    return /** @type {[string, string, HTMLElement]} */ (['standby', `127.0.0.1:${r.port} — standby`, use]);
  }
  return /** @type {[string, string]} */ ([r.state, `127.0.0.1:${r.port} — ${r.state}${r.message ? ': ' + r.message : ''}`]);
}

async function render() {
  const s = await ask({ type: 'status' });
  if (!s) return;
  const state = el('state');
  state.textContent = stateText(s);
  state.className = s.mode === 'failed' ? 'failed' : 'muted';
  el('setup').hidden = !(s.mode === 'unpaired' || s.pairing || (s.mode === 'probe' && !s.relays.length));
  el('pairing').textContent = s.pairing ? 'Looking for the relay of `bridge pair`…' : s.pairingResult ? s.pairingResult.message : '';
  el('forget').hidden = s.secretSource !== 'paired';
  fill(el('relays'), s.relays.length ? s.relays.map(relayRow) : [['none', s.mode === 'unpaired' || s.mode === 'failed' ? 'none' : 'none found — start bridge (bridge-mcp)']]);
  fill(
    el('tabs'),
    s.tabs.length
      ? s.tabs.map((/** @type {any} */ t) => ['', `tab ${t.tabId} → relay ${t.port ?? '(reconnecting)'}`])
      : [['muted', 'none']],
  );
  const share = el('share');
  if (activeTab && activeTab.id !== undefined && /^https?:/.test(activeTab.url || '')) {
    const shared = s.shared.includes(activeTab.id);
    share.hidden = false;
    share.textContent = shared ? 'Stop sharing this tab' : 'Share this tab with bridge';
    share.dataset.shared = shared ? '1' : '';
  } else {
    share.hidden = true;
  }
  el('range').textContent =
    s.mode === 'native'
      ? 'Relays announced by the native host (no scanning)'
      : s.mode === 'probe'
        ? `Scanning ports ${s.portRange[0]}–${s.portRange[1]}` + (s.nativeDownReason ? ` (native host: ${s.nativeDownReason})` : '')
        : s.nativeDownReason
          ? `Native host: ${s.nativeDownReason}`
          : '';
}

el('pair-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const result = await ask({ type: 'pair', code: /** @type {HTMLInputElement} */ (el('code')).value });
  el('pairing').textContent = result.message;
  render();
});
el('share').addEventListener('click', async () => {
  if (!activeTab || activeTab.id === undefined) return;
  const result = await ask({ type: 'share', tabId: activeTab.id, shared: !el('share').dataset.shared });
  if (!result.ok) el('share-note').textContent = result.message;
  render();
});
el('forget').addEventListener('click', () => ask({ type: 'forget' }).then(render));

chrome.tabs.query({ active: true, currentWindow: true }).then(([tab]) => {
  activeTab = tab;
  render();
});
// Re-render on a period while the popup is open; it has no event to subscribe to.
setInterval(render, 1000);
