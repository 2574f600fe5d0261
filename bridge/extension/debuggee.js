// @ts-check
// Tabs and chrome.debugger on behalf of relays. Each attached tab has one owner: the
// relay instance that attached it. Ownership is kept in chrome.storage.session so that
// after a service-worker restart the surviving attachments are recognised as ours and
// reused, never an "already attached" dead end.

import { CommandError, encodeError, encodeEvent, encodeResult } from './protocol.js';

/** @typedef {import('./relay-connection.js').Group} Group */
/** @typedef {{ instanceId: string, port: number, inFlight: number, send: (frame: string) => void, reply: (frame: string, group: Group) => void }} Owner */

const DEBUGGER_VERSION = '1.3';
const ORPHAN_GRACE_MS = 15000; // after a restart, how long a relay has to reclaim its tabs

export class Debuggee {
  constructor() {
    /** @type {Map<number, string>} tabId -> relay instanceId */
    this.owners = new Map();
    /** @type {Map<string, Owner>} relay instanceId -> live connection */
    this.relays = new Map();
    /**
     * Tabs whose debugger Chrome just took away, until the relay has been told why: a
     * command arriving meanwhile is answered after that notice, so the relay fails it with
     * the typed reason instead of a bare "not attached".
     * @type {Map<number, Promise<void>>}
     */
    this.detaching = new Map();
    /**
     * Tabs the person shared with bridge (the popup's "Share this tab"): the only tabs of
     * theirs a relay's clients may act on, besides the ones they open (bridge/tools decides).
     * @type {Set<number>}
     */
    this.shared = new Set();
    this.ready = this.restore();
  }

  async restore() {
    const { owners, shared } = await chrome.storage.session.get(['owners', 'shared']);
    if (owners && typeof owners === 'object') {
      for (const [tab, owner] of Object.entries(owners)) this.owners.set(Number(tab), String(owner));
    }
    if (Array.isArray(shared)) for (const tabId of shared) if (Number.isInteger(tabId)) this.shared.add(tabId);
    if (this.owners.size) {
      // Attachments whose relay never comes back are dropped, so no tab keeps the debugger bar.
      setTimeout(() => this.dropOrphans(), ORPHAN_GRACE_MS);
    }
  }

  persist() {
    chrome.storage.session.set({ owners: Object.fromEntries(this.owners) }).catch(() => {});
  }

  async dropOrphans() {
    for (const [tabId, owner] of [...this.owners]) {
      if (!this.relays.has(owner)) {
        this.owners.delete(tabId);
        await chrome.debugger.detach({ tabId }).catch(() => {});
      }
    }
    this.persist();
  }

  /** @param {Owner} relay */
  addRelay(relay) {
    this.relays.set(relay.instanceId, relay);
  }

  /** A relay went away while this worker lives: release its tabs. @param {string} instanceId */
  async removeRelay(instanceId) {
    this.relays.delete(instanceId);
    await this.releaseTabs(instanceId);
  }

  /**
   * Detach the tabs a relay attached (it went away, or it works through another browser
   * now), so their debugging bars go. @param {string} instanceId
   */
  async releaseTabs(instanceId) {
    for (const [tabId, owner] of [...this.owners]) {
      if (owner === instanceId) {
        this.owners.delete(tabId);
        await chrome.debugger.detach({ tabId }).catch(() => {});
      }
    }
    this.persist();
  }

  /** @param {number} tabId */
  ownerOf(tabId) {
    const id = this.owners.get(tabId);
    return id === undefined ? undefined : this.relays.get(id);
  }

  // -- commands ------------------------------------------------------------------

  /**
   * @param {Owner} relay
   * @param {string} method
   * @param {any} params
   * @returns {Promise<unknown>}
   */
  async command(relay, method, params) {
    await this.ready;
    switch (method) {
      case 'ping':
        return {};
      case 'listTabs': {
        // DevTools target ids (a page's is its main frame id, which CDP clients rely on).
        const targets = new Map((await chrome.debugger.getTargets()).filter((t) => t.tabId !== undefined).map((t) => [t.tabId, t.id]));
        return { tabs: (await chrome.tabs.query({})).map((t) => ({ ...this.describe(t, relay), targetId: targets.get(t.id) || '' })) };
      }
      case 'createTab': {
        const url = typeof params.url === 'string' ? params.url : 'about:blank';
        if (params.ownWindow) {
          // A window of its own, not focused: the tab is the active one there, so it renders
          // (input, screenshots, timers at full speed) without taking the person's focus.
          const win = await chrome.windows.create({ url, focused: false });
          const tab = win && win.tabs && win.tabs[0];
          if (!tab || tab.id === undefined) throw new CommandError('error', 'no tab in the new window');
          return { tabId: tab.id, url: tab.pendingUrl || tab.url || url, windowId: win.id };
        }
        const tab = await chrome.tabs.create({ url, active: !!params.active });
        return { tabId: tab.id, url: tab.pendingUrl || tab.url || url };
      }
      case 'attachTab':
        return this.attach(relay, tabIdOf(params));
      case 'detachTab': {
        const tabId = tabIdOf(params);
        if (this.owners.get(tabId) !== relay.instanceId) {
          throw new CommandError('not_attached', `tab ${tabId} is not attached by this relay`);
        }
        this.owners.delete(tabId);
        this.persist();
        await chrome.debugger.detach({ tabId }).catch(() => {});
        return {};
      }
      case 'closeTab': {
        const tabId = tabIdOf(params);
        await chrome.tabs.remove(tabId).catch((e) => {
          throw new CommandError('no_tab', `no tab ${tabId}: ${e.message}`);
        });
        return {};
      }
      case 'activateTab': {
        const tab = await chrome.tabs.update(tabIdOf(params), { active: true }).catch((e) => {
          throw new CommandError('no_tab', e.message);
        });
        if (tab && tab.windowId !== undefined) {
          await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
        }
        return {};
      }
      case 'downloadInfo':
        return downloadInfo(String(params.url || ''), Number(params.timeoutMs) || 2000);
      case 'timeCdpCommand':
        return this.timeCdp(relay, params);
      case 'groupTab':
        return groupTab(
          tabIdOf(params),
          String(params.title || ''),
          String(params.color || ''),
          Array.isArray(params.groupIds) ? params.groupIds.map(Number) : [],
        );
      default:
        throw new CommandError('unknown_method', `unknown command ${method}`);
    }
  }

  /**
   * @param {chrome.tabs.Tab} t
   * @param {Owner} relay
   */
  describe(t, relay) {
    return {
      tabId: t.id,
      url: t.url || '',
      pendingUrl: t.pendingUrl || '',
      title: t.title || '',
      active: t.active,
      windowId: t.windowId,
      status: t.status || '',
      attachedHere: t.id !== undefined && this.owners.get(t.id) === relay.instanceId,
      shared: t.id !== undefined && this.shared.has(t.id),
    };
  }

  /**
   * @param {Owner} relay
   * @param {number} tabId
   */
  async attach(relay, tabId) {
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (!tab) throw new CommandError('no_tab', `no tab ${tabId}`);
    const owner = this.owners.get(tabId);
    if (owner !== undefined && owner !== relay.instanceId && this.relays.has(owner)) {
      const other = this.relays.get(owner);
      throw new CommandError('attached_elsewhere', `tab ${tabId} is used by another bridge relay (port ${other?.port})`);
    }
    const targets = await chrome.debugger.getTargets();
    const target = targets.find((t) => t.tabId === tabId);
    if (owner !== undefined && target && target.attached) {
      // Our own attachment survived (service-worker restart, or the relay re-attaching): reuse it.
      this.owners.set(tabId, relay.instanceId);
      this.persist();
      return { tabId, url: tab.url || '', reused: true };
    }
    try {
      await chrome.debugger.attach({ tabId }, DEBUGGER_VERSION);
    } catch (e) {
      const message = String(/** @type {Error} */ (e).message || e);
      if (!/already attached/i.test(message)) throw new CommandError('attach_failed', message);
      // Attached, but not on our books: if it is ours from a previous life, detach succeeds.
      try {
        await chrome.debugger.detach({ tabId });
        await chrome.debugger.attach({ tabId }, DEBUGGER_VERSION);
      } catch {
        throw new CommandError(
          'attached_by_other',
          `another debugger (DevTools or another extension) is attached to tab ${tabId}; close it and retry`,
        );
      }
    }
    this.owners.set(tabId, relay.instanceId);
    this.persist();
    return { tabId, url: tab.url || '', reused: false };
  }

  /**
   * The hot path: one CDP command. Measured in Chromium 156: the callback form of
   * chrome.debugger.sendCommand round-trips in ~0.095 ms, the promise form in ~0.17 ms,
   * so this path uses callbacks and builds the reply frame directly.
   * @param {Owner} relay
   * @param {number} id
   * @param {any} params
   * @param {Group} group the commands that came in the same frame (their replies leave together)
   */
  cdp(relay, id, params, group) {
    const tabId = params.tabId;
    if (this.owners.get(tabId) !== relay.instanceId) {
      const refuse = () =>
        relay.send(encodeError(id, 'not_attached', `tab ${tabId} is not attached by this relay; attach it first`));
      const notice = this.detaching.get(tabId);
      if (notice) notice.then(refuse);
      else refuse();
      return;
    }
    /** @type {chrome.debugger.DebuggerSession} */
    const target = params.sessionId ? { tabId, sessionId: params.sessionId } : { tabId };
    relay.inFlight++;
    group.left++;
    chrome.debugger.sendCommand(target, params.method, params.params || {}, (result) => {
      relay.inFlight--; // before reply(): the last reply of a burst flushes the batch
      const failure = chrome.runtime.lastError;
      if (!failure) {
        relay.reply(encodeResult(id, result), group);
        return;
      }
      this.cdpFailure(relay, id, tabId, String(failure.message || failure), group);
    });
  }

  /**
   * Say why a command failed: the tab is gone, the debugger detached, or Chrome's CDP error.
   * @param {Owner} relay @param {number} id @param {number} tabId @param {string} message
   * @param {Group} group
   */
  async cdpFailure(relay, id, tabId, message, group) {
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (!tab) relay.reply(encodeError(id, 'tab_closed', `tab ${tabId} was closed`), group);
    else if (this.owners.get(tabId) !== relay.instanceId) {
      relay.reply(encodeError(id, 'debugger_detached', `the debugger detached from tab ${tabId}`), group);
    } else relay.reply(encodeError(id, 'cdp_error', message), group);
  }

  /**
   * The floor under a CDP round trip (docs/protocol.md#timing): one CDP command run `count`
   * times on a tab this relay attached, `inFlight` at a time, from here (no relay hop), in
   * `rounds` consecutive rounds; each round's time per call, in ms.
   * @param {Owner} relay
   * @param {any} params
   */
  async timeCdp(relay, params) {
    const tabId = tabIdOf(params);
    if (this.owners.get(tabId) !== relay.instanceId) {
      throw new CommandError('not_attached', `tab ${tabId} is not attached by this relay; attach it first`);
    }
    if (typeof params.method !== 'string' || !params.method) {
      throw new CommandError('bad_request', "'method' must be a CDP method name");
    }
    const count = boundedInt(params.count, 1, 10000, 100);
    const inFlight = boundedInt(params.inFlight, 1, 100, 1);
    const rounds = boundedInt(params.rounds, 1, count, 1);
    const cdpParams = params.params && typeof params.params === 'object' ? params.params : {};
    /** @type {number[]} */
    const perCallMs = [];
    for (let r = 0; r < rounds; r++) {
      const calls = Math.floor((count * (r + 1)) / rounds) - Math.floor((count * r) / rounds);
      const started = performance.now();
      await repeatCdp({ tabId }, params.method, cdpParams, calls, inFlight);
      perCallMs.push((performance.now() - started) / calls);
    }
    return { count, inFlight, perCallMs };
  }

  // -- chrome events ---------------------------------------------------------------

  /**
   * @param {chrome.debugger.DebuggerSession} source
   * @param {string} method
   * @param {object | undefined} params
   */
  onEvent(source, method, params) {
    if (source.tabId === undefined) return;
    const relay = this.ownerOf(source.tabId);
    if (!relay) return;
    /** @type {any} */
    const body = { tabId: source.tabId, method, params: params || {} };
    if (source.sessionId) body.sessionId = source.sessionId;
    relay.send(encodeEvent('cdpEvent', body));
  }

  /**
   * @param {chrome.debugger.Debuggee} source
   * @param {string} reason
   */
  onDetach(source, reason) {
    const tabId = source.tabId;
    if (tabId === undefined) return;
    const relay = this.ownerOf(tabId);
    this.owners.delete(tabId);
    this.persist();
    if (!relay) return;
    // Chrome says "target_closed" also when the tab navigated to a page extensions may not
    // debug (chrome://…): tell the relay whether the tab is really gone.
    const tell = (/** @type {boolean} */ tabExists) =>
      relay.send(encodeEvent('tabDetached', { tabId, reason: String(reason), tabExists }));
    const notice = chrome.tabs.get(tabId).then(
      () => tell(true),
      () => tell(false),
    );
    this.detaching.set(tabId, notice);
    notice.then(() => {
      if (this.detaching.get(tabId) === notice) this.detaching.delete(tabId);
    });
  }

  /**
   * A new tab: every connected relay hears of it (relays may list every tab anyway), with
   * its opener and its DevTools target id, so CDP clients see popups and new pages.
   * @param {chrome.tabs.Tab} tab
   */
  async onTabCreated(tab) {
    if (tab.id === undefined || this.relays.size === 0) return;
    const target = (await chrome.debugger.getTargets()).find((t) => t.tabId === tab.id);
    /** @type {any} */
    const body = { tabId: tab.id, url: tab.pendingUrl || tab.url || '', targetId: target ? target.id : '' };
    if (tab.openerTabId !== undefined) body.openerTabId = tab.openerTabId;
    const frame = encodeEvent('tabCreated', body);
    for (const relay of this.relays.values()) relay.send(frame);
  }

  /**
   * The person shares a tab with bridge, or stops: every connected relay hears of it.
   * @param {number} tabId @param {boolean} shared
   */
  async share(tabId, shared) {
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (!tab) throw new Error(`no tab ${tabId}`);
    if (shared) this.shared.add(tabId);
    else this.shared.delete(tabId);
    await chrome.storage.session.set({ shared: [...this.shared] });
    const frame = encodeEvent('tabShared', { tabId, shared, url: tab.url || '', title: tab.title || '' });
    for (const relay of this.relays.values()) relay.send(frame);
  }

  sharedTabs() {
    return [...this.shared];
  }

  /** @param {number} tabId */
  onTabRemoved(tabId) {
    const relay = this.ownerOf(tabId);
    if (this.shared.delete(tabId)) chrome.storage.session.set({ shared: [...this.shared] }).catch(() => {});
    if (this.owners.delete(tabId)) this.persist();
    if (relay) relay.send(encodeEvent('tabRemoved', { tabId }));
  }

  /**
   * @param {number} tabId
   * @param {chrome.tabs.TabChangeInfo} change
   */
  onTabUpdated(tabId, change) {
    const relay = this.ownerOf(tabId);
    if (!relay || !(change.url || change.title || change.status)) return;
    /** @type {any} */
    const body = { tabId };
    if (change.url) body.url = change.url;
    if (change.title) body.title = change.title;
    if (change.status) body.status = change.status;
    relay.send(encodeEvent('tabUpdated', body));
  }

  attachedTabs() {
    return [...this.owners].map(([tabId, owner]) => ({ tabId, port: this.relays.get(owner)?.port ?? null }));
  }
}

/** @param {any} params */
function tabIdOf(params) {
  const tabId = params && params.tabId;
  if (!Number.isInteger(tabId)) throw new CommandError('bad_request', "'tabId' must be an integer");
  return tabId;
}

/**
 * @param {unknown} value @param {number} min @param {number} max @param {number} fallback
 */
function boundedInt(value, min, max, fallback) {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || /** @type {number} */ (value) < min || /** @type {number} */ (value) > max) {
    throw new CommandError('bad_request', `expected an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return /** @type {number} */ (value);
}

/**
 * `sendCommand` `calls` times, `inFlight` at a time, the callback form as on the hot path.
 * @param {chrome.debugger.Debuggee} target @param {string} method @param {object} params
 * @param {number} calls @param {number} inFlight
 * @returns {Promise<void>}
 */
function repeatCdp(target, method, params, calls, inFlight) {
  return new Promise((resolve, reject) => {
    let started = 0;
    let done = 0;
    let failed = false;
    const next = () => {
      started++;
      chrome.debugger.sendCommand(target, method, params, () => {
        const failure = chrome.runtime.lastError;
        if (failed) return;
        if (failure) {
          failed = true;
          reject(new CommandError('cdp_error', String(failure.message || failure)));
        } else if (++done === calls) resolve();
        else if (started < calls) next();
      });
    };
    for (let i = 0; i < Math.min(inFlight, calls); i++) next();
  });
}

/**
 * Where the newest download of `url` is saved. CDP's download events name the file but not
 * the folder, and extensions may not set the download behaviour (a browser-level command):
 * chrome.downloads knows the path. Waits (on download events, bounded) until the path is
 * chosen; answers an empty path when it is not known by then.
 * @param {string} url
 * @param {number} timeoutMs
 */
async function downloadInfo(url, timeoutMs) {
  const deadline = Date.now() + Math.min(Math.max(timeoutMs, 0), 10000);
  for (;;) {
    const [item] = await chrome.downloads.search({ url, orderBy: ['-startTime'], limit: 1 });
    if (item && item.filename) {
      return { path: item.filename, state: item.state, bytes: item.bytesReceived, total: item.totalBytes };
    }
    const left = deadline - Date.now();
    if (left <= 0) return { path: '', state: item ? item.state : 'unknown' };
    await new Promise((resolve) => {
      const done = () => {
        chrome.downloads.onChanged.removeListener(done);
        chrome.downloads.onCreated.removeListener(done);
        clearTimeout(timer);
        resolve(undefined);
      };
      const timer = setTimeout(done, left);
      chrome.downloads.onChanged.addListener(done);
      chrome.downloads.onCreated.addListener(done);
    });
  }
}

const GROUP_COLORS = ['grey', 'blue', 'red', 'yellow', 'green', 'pink', 'purple', 'cyan', 'orange'];

/**
 * Put a tab in its client's tab group (bridge/tools/tab_groups.py decides name and colour).
 * A tab already in a group stays there: the person's own group (or another client's) is
 * left as it is, and `joined` says so. Groups cannot span windows and a tab is never moved
 * to another window, so the client's group in the tab's own window is joined (`groupIds`:
 * the groups bridge made for this client), else one is made there. Nothing here focuses a
 * window or activates a tab.
 * @param {number} tabId
 * @param {string} title
 * @param {string} color
 * @param {number[]} groupIds
 */
async function groupTab(tabId, title, color, groupIds) {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab || tab.id === undefined) throw new CommandError('no_tab', `no tab ${tabId}`);
  const none = chrome.tabGroups.TAB_GROUP_ID_NONE;
  if (tab.groupId !== undefined && tab.groupId !== none) {
    return { groupId: tab.groupId, joined: groupIds.includes(tab.groupId), created: false };
  }
  for (const id of groupIds) {
    const group = await chrome.tabGroups.get(id).catch(() => null);
    if (group && group.windowId === tab.windowId) {
      await chrome.tabs.group({ groupId: id, tabIds: [tabId] });
      return { groupId: id, joined: true, created: false };
    }
  }
  const groupId = await chrome.tabs.group({ tabIds: [tabId], createProperties: { windowId: tab.windowId } });
  const wanted = /** @type {any} */ (GROUP_COLORS.includes(color) ? color : 'grey');
  await chrome.tabGroups.update(groupId, { title: title.slice(0, 64), color: wanted, collapsed: false });
  return { groupId, joined: true, created: true };
}
