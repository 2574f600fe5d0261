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

// Fallback wake-up: if Chrome stops the worker anyway, the alarm starts it again and
// discovery resumes. Unpacked extensions (how bridge is installed) may fire every second;
// Chrome clamps a packed one to 30 s. Measured: a stopped worker is back in ~1 s.
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === WAKE_ALARM) discovery.start();
});
chrome.alarms.create(WAKE_ALARM, { periodInMinutes: 1 / 60 });

chrome.runtime.onMessage.addListener((msg, _sender, reply) => {
  if (msg && msg.type === 'status') reply(discovery.status());
  return false;
});

discovery.start();
