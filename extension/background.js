// @ts-check
// Service worker: wiring only. Listeners are registered synchronously at top level so a
// restarted worker receives the event that woke it. All intelligence lives in Python.

import { Debuggee } from './debuggee.js';
import { Discovery } from './discovery.js';

const WAKE_ALARM = 'bridge-wake';

const debuggee = new Debuggee();
const discovery = new Discovery(debuggee, { onModeChange: (mode) => setWakeAlarm(mode) });

chrome.debugger.onEvent.addListener((source, method, params) => debuggee.onEvent(source, method, params));
chrome.debugger.onDetach.addListener((source, reason) => debuggee.onDetach(source, reason));
chrome.tabs.onRemoved.addListener((tabId) => debuggee.onTabRemoved(tabId));
chrome.tabs.onCreated.addListener((tab) => debuggee.onTabCreated(tab));
chrome.tabs.onUpdated.addListener((tabId, change) => debuggee.onTabUpdated(tabId, change));

// Fallback wake-up: if Chrome stops the worker anyway (a crash, DevTools), the alarm starts
// it again and discovery resumes; an alarm for an awake worker is only an event. While the
// native host's port is open Chrome keeps the worker alive, so the alarm is a slow safety
// net; while probing, it matches the probe period. Unpacked extensions (how bridge is
// installed) may use short periods; Chrome clamps a packed one to 30 s.
/** @param {'native' | 'probe'} mode */
function setWakeAlarm(mode) {
  chrome.alarms.create(WAKE_ALARM, { periodInMinutes: mode === 'native' ? 10 / 60 : 5 / 60 });
}
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === WAKE_ALARM) discovery.start();
});
setWakeAlarm('probe');

// For diagnostics from DevTools (and the tests): what discovery knows, as the popup shows.
/** @type {any} */ (globalThis).bridgeStatus = () => discovery.status();

chrome.runtime.onMessage.addListener((msg, _sender, reply) => {
  if (msg && msg.type === 'status') reply(discovery.status());
  return false;
});

discovery.start();
