// @ts-check
// Service worker: wiring only. Listeners are registered synchronously at top level so a
// restarted worker receives the event that woke it. All intelligence lives in Python.

import { Debuggee } from './debuggee.js';
import { Discovery } from './discovery.js';

const WAKE_ALARM = 'bridge-wake';

const debuggee = new Debuggee();
const discovery = new Discovery(debuggee, { onInUse: setWakeAlarm });

chrome.debugger.onEvent.addListener((source, method, params) => debuggee.onEvent(source, method, params));
chrome.debugger.onDetach.addListener((source, reason) => debuggee.onDetach(source, reason));
chrome.tabs.onRemoved.addListener((tabId) => debuggee.onTabRemoved(tabId));
chrome.tabs.onCreated.addListener((tab) => debuggee.onTabCreated(tab));
chrome.tabs.onUpdated.addListener((tabId, change) => debuggee.onTabUpdated(tabId, change));

// Fallback wake-up: if Chrome stops the worker anyway (a crash, an update, DevTools), the
// alarm starts it again and discovery resumes. While a relay is connected (bridge in use)
// it comes every 1.5 s, so the next command works within 2 s (docs/RELIABILITY.md, case 8);
// otherwise every 30 s (Chrome's floor for packed extensions), so an idle browser is woken
// twice a minute at most. For an awake worker an alarm is only an event that finds nothing
// to do: no probe, no network. A restarted worker keeps the alarm the last one set.
const WAKE_IN_USE_MIN = 1.5 / 60;
const WAKE_IDLE_MIN = 0.5;
/** @param {boolean} inUse */
function setWakeAlarm(inUse) {
  chrome.alarms.create(WAKE_ALARM, { periodInMinutes: inUse ? WAKE_IN_USE_MIN : WAKE_IDLE_MIN });
}
chrome.alarms.get(WAKE_ALARM).then((alarm) => {
  if (!alarm) setWakeAlarm(false);
});
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === WAKE_ALARM) discovery.start();
});

// For diagnostics from DevTools (and the tests): what discovery knows, as the popup shows.
/** @type {any} */ (globalThis).bridgeStatus = () => discovery.status();

// Pairing by hand, for diagnostics and the tests (as the popup does it).
/** @type {any} */ (globalThis).bridgePair = (/** @type {string} */ code) => discovery.pair(code);

// The popup's requests. Only this extension's own pages can send them: there are no content
// scripts, and no "externally_connectable", so web pages and other extensions cannot.
chrome.runtime.onMessage.addListener((msg, sender, reply) => {
  if (!msg || sender.id !== chrome.runtime.id) return false;
  if (msg.type === 'status') reply(discovery.status());
  else if (msg.type === 'pair') reply(discovery.pair(String(msg.code || '')));
  else if (msg.type === 'claim') {
    discovery.claim(Number(msg.port));
    reply({ ok: true });
  } else if (msg.type === 'forget') {
    discovery.forgetPairing().then(() => reply({ ok: true }));
    return true; // answered asynchronously
  } else if (msg.type === 'share') {
    debuggee.share(Number(msg.tabId), !!msg.shared).then(
      () => reply({ ok: true }),
      (e) => reply({ ok: false, message: String(e && e.message ? e.message : e) }),
    );
    return true;
  }
  return false;
});

discovery.start();
