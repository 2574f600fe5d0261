// @ts-check
// Service worker: wiring only. Listeners are registered synchronously at top level so a
// restarted worker receives the event that woke it. All intelligence lives in Python.

import { Debuggee } from './debuggee.js';
import { Discovery } from './discovery.js';

const WAKE_ALARM = 'bridge-wake';

const debuggee = new Debuggee();
const discovery = new Discovery(debuggee);

chrome.debugger.onEvent.addListener((source, method, params) => debuggee.onEvent(source, method, params));
chrome.debugger.onDetach.addListener((source, reason) => debuggee.onDetach(source, reason));
chrome.tabs.onRemoved.addListener((tabId) => debuggee.onTabRemoved(tabId));
chrome.tabs.onCreated.addListener((tab) => debuggee.onTabCreated(tab));
chrome.tabs.onUpdated.addListener((tabId, change) => debuggee.onTabUpdated(tabId, change));

// Fallback wake-up: if Chrome stops the worker anyway (a crash, an update, DevTools), the
// alarm starts it again and discovery resumes, so the next command works within 2 s
// (docs/RELIABILITY.md, case 8). For an awake worker (always, while the native port is open
// or a relay is connected) an alarm is only an event that finds nothing to do: no probe, no
// network. Unpacked extensions (how bridge is installed) may use short periods; Chrome
// clamps a packed one to 30 s.
chrome.alarms.create(WAKE_ALARM, { periodInMinutes: 1.5 / 60 });
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === WAKE_ALARM) discovery.start();
});

// For diagnostics from DevTools (and the tests): what discovery knows, as the popup shows.
/** @type {any} */ (globalThis).bridgeStatus = () => discovery.status();

chrome.runtime.onMessage.addListener((msg, _sender, reply) => {
  if (msg && msg.type === 'status') reply(discovery.status());
  return false;
});

discovery.start();
