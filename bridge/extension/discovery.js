// @ts-check
// Finds relays and keeps one connection to each live relay.
//
// With the native host installed (native.js), the host pushes the list of running relays:
// no probing at all, and a relay is connected the moment it starts. Without it, relays are
// found by asking GET /relay-info on 127.0.0.1:19222-19250: every 400 ms for the first
// minute after the worker starts or a relay goes away (when one is likely to appear),
// then one round every 5 s, so an idle browser costs next to nothing.

import { Debuggee } from './debuggee.js';
import { NativeHost } from './native.js';
import { CLOSE_NOT_MINE, CLOSE_REFUSED, PORT_FIRST, PORT_LAST } from './protocol.js';
import { RelayConnection } from './relay-connection.js';

const FAST_PERIOD_MS = 400;
const IDLE_PERIOD_MS = 5000;
const FAST_WINDOW_MS = 60000;
const PROBE_TIMEOUT_MS = 1000;
const KEEPALIVE_CALL_MS = 20000;
/** A host that does not answer by then is taken as absent (probing starts). */
const NATIVE_ANSWER_MS = 1500;
/** How often a missing or crashed host is tried again (it may be installed meanwhile). */
const NATIVE_RETRY_MS = 60000;
/** A relay the host still announces, whose connection dropped, is tried again after this. */
const NATIVE_RECONNECT_MS = 250;

/** @typedef {{ failures: number, notBefore: number, instanceId: string, message: string }} Backoff */
/** @typedef {import('./native.js').RelayNotice} RelayNotice */

export class Discovery {
  /**
   * @param {Debuggee} debuggee
   * @param {{ onInUse?: (inUse: boolean) => void }} [hooks] onInUse: a relay is connected now
   *   (true) or none is (false); called on each change
   */
  constructor(debuggee, hooks = {}) {
    this.debuggee = debuggee;
    this.hooks = hooks;
    /** @type {Map<number, RelayConnection>} port -> connection */
    this.connections = new Map();
    /** @type {Map<number, Backoff>} */
    this.backoff = new Map();
    /** @type {Set<number>} ports being probed right now */
    this.probing = new Set();
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.timer = undefined;
    this.lastKeepalive = 0;
    this.browserInstanceId = '';
    /** @type {'starting' | 'native' | 'probe'} */
    this.mode = 'starting';
    this.fastUntil = 0;
    this.probeRounds = 0;
    /** @type {Map<string, RelayNotice>} instance id -> what the host announced */
    this.announced = new Map();
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.nativeTimer = undefined;
    this.nativeDownReason = '';
    /** @type {boolean | null} null until discovery first knows (a restarted worker) */
    this.inUse = null;
    this.native = new NativeHost({
      onRelays: (relays) => this.onRelays(relays),
      onDown: (reason) => this.onNativeDown(reason),
    });
  }

  async browserInstance() {
    if (this.browserInstanceId) return this.browserInstanceId;
    // Per browser session (survives service-worker restarts, not browser restarts).
    const { instanceId } = await chrome.storage.session.get('instanceId');
    this.browserInstanceId = typeof instanceId === 'string' && instanceId ? instanceId : crypto.randomUUID();
    if (this.browserInstanceId !== instanceId) await chrome.storage.session.set({ instanceId: this.browserInstanceId });
    return this.browserInstanceId;
  }

  /** Called at worker start and by the wake alarm: idempotent. */
  start() {
    if (this.mode !== 'starting' || this.nativeTimer !== undefined) return;
    this.native.connect();
    // The host's first message is the relay list; without it soon, probe meanwhile.
    this.nativeTimer = setTimeout(() => {
      this.nativeTimer = undefined;
      if (this.mode === 'starting') this.startProbing();
    }, NATIVE_ANSWER_MS);
  }

  // -- native: the host says which relays exist ------------------------------------------

  /** @param {RelayNotice[]} relays */
  onRelays(relays) {
    if (this.mode !== 'native') {
      this.mode = 'native';
      this.stopProbing();
      if (this.nativeTimer !== undefined) clearTimeout(this.nativeTimer);
      this.nativeTimer = undefined;
    }
    this.announced = new Map(relays.map((r) => [r.instanceId, r]));
    for (const relay of relays) this.connectAnnounced(relay);
    this.linksChanged();
  }

  /** @param {RelayNotice} relay */
  async connectAnnounced(relay) {
    if (this.mode !== 'native' || this.announced.get(relay.instanceId) !== relay) return;
    const current = this.connections.get(relay.port);
    const wanted = relay.link === 'native' ? 'native' : 'websocket';
    if (current && current.instanceId === relay.instanceId && current.via === wanted) return;
    // The port now belongs to another relay, or this relay asks to be reached through the
    // host and was found by a probe before the host answered.
    if (current) current.close();
    const b = this.backoff.get(relay.port);
    if (b && b.instanceId === relay.instanceId && b.notBefore > Date.now()) {
      setTimeout(() => this.connectAnnounced(relay), b.notBefore - Date.now());
      return;
    }
    const browserInstanceId = await this.browserInstance();
    if (this.connections.has(relay.port) || this.announced.get(relay.instanceId) !== relay) return;
    const socket = relay.link === 'native' ? this.native.open(relay.instanceId) : undefined;
    const conn = new RelayConnection(relay.port, relay.instanceId, this.debuggee, {
      browserInstanceId,
      socket,
      onWelcome: () => this.linksChanged(),
      onClose: (c, code, reason) => this.onClose(c, code, reason),
    });
    this.connections.set(relay.port, conn);
  }

  /** @param {string} reason */
  onNativeDown(reason) {
    this.nativeDownReason = reason;
    this.announced.clear();
    if (this.nativeTimer !== undefined) clearTimeout(this.nativeTimer);
    // Tried again later: it may be installed meanwhile, or it crashed.
    this.nativeTimer = setTimeout(() => {
      this.nativeTimer = undefined;
      this.native.connect();
    }, NATIVE_RETRY_MS);
    if (this.mode !== 'probe') this.startProbing();
  }

  // -- probing: the fallback without a host ---------------------------------------------

  startProbing() {
    this.mode = 'probe';
    this.fastUntil = Date.now() + FAST_WINDOW_MS;
    if (this.timer === undefined) this.tick();
  }

  stopProbing() {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  tick() {
    const now = Date.now();
    this.timer = setTimeout(() => this.tick(), now < this.fastUntil ? FAST_PERIOD_MS : IDLE_PERIOD_MS);
    if (now - this.lastKeepalive > KEEPALIVE_CALL_MS) {
      // An extension API call resets the service worker's idle timer (Chrome 110+), so
      // discovery keeps running while no relay is connected yet.
      this.lastKeepalive = now;
      chrome.runtime.getPlatformInfo().catch(() => {});
    }
    this.probeRounds++;
    this.linksChanged();
    for (let port = PORT_FIRST; port <= PORT_LAST; port++) {
      const conn = this.connections.get(port);
      if (conn && conn.silentTooLong()) conn.close();
      if (this.connections.has(port) || this.probing.has(port)) continue;
      const b = this.backoff.get(port);
      if (b && b.notBefore > now && b.instanceId) {
        // Backing off from this relay instance; a new instance on the port gets a fresh try.
        this.probe(port, b.instanceId);
        continue;
      }
      this.probe(port, '');
    }
  }

  /**
   * @param {number} port
   * @param {string} skipInstance connect only if the relay is not this (backed-off) instance
   */
  async probe(port, skipInstance) {
    this.probing.add(port);
    try {
      const resp = await fetch(`http://127.0.0.1:${port}/relay-info`, {
        cache: 'no-store',
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      if (!resp.ok) return;
      const info = await resp.json();
      if (!info || info.service !== 'bridge-relay' || typeof info.instanceId !== 'string') return;
      if (skipInstance && info.instanceId === skipInstance) return;
      if (this.connections.has(port) || this.mode !== 'probe') return;
      const conn = new RelayConnection(port, info.instanceId, this.debuggee, {
        browserInstanceId: await this.browserInstance(),
        onWelcome: () => this.linksChanged(),
        onClose: (c, code, reason) => this.onClose(c, code, reason),
      });
      this.connections.set(port, conn);
    } catch {
      // Nothing listens there (the common case), or it is not a relay.
    } finally {
      this.probing.delete(port);
    }
  }

  /** Tell the worker whether bridge is in use (a relay connected), on each change only. */
  linksChanged() {
    const inUse = [...this.connections.values()].some((c) => c.state === 'connected');
    if (inUse === this.inUse) return;
    this.inUse = inUse;
    this.hooks.onInUse?.(inUse);
  }

  /**
   * @param {RelayConnection} conn
   * @param {number} code
   * @param {string} reason
   */
  onClose(conn, code, reason) {
    if (this.connections.get(conn.port) === conn) this.connections.delete(conn.port);
    this.linksChanged();
    if (code === CLOSE_REFUSED || code === CLOSE_NOT_MINE) {
      // Do not hammer a relay that refused us; retry with exponential backoff and jitter.
      const prev = this.backoff.get(conn.port);
      const failures = prev && prev.instanceId === conn.instanceId ? prev.failures + 1 : 1;
      const base = code === CLOSE_REFUSED ? 5000 : 1000;
      const delay = Math.min(30000, base * 2 ** (failures - 1)) * (0.75 + Math.random() * 0.5);
      this.backoff.set(conn.port, {
        failures,
        notBefore: Date.now() + delay,
        instanceId: conn.instanceId,
        message: code === CLOSE_REFUSED ? reason : 'serves another browser',
      });
    } else if (this.mode === 'native' && !conn.everConnected) {
      // Announced but unreachable (a socket blocked, a relay still starting): retry, slower
      // each time, rather than every 250 ms forever.
      const prev = this.backoff.get(conn.port);
      const failures = prev && prev.instanceId === conn.instanceId ? prev.failures + 1 : 1;
      this.backoff.set(conn.port, {
        failures,
        notBefore: Date.now() + Math.min(30000, NATIVE_RECONNECT_MS * 2 ** (failures - 1)),
        instanceId: conn.instanceId,
        message: reason || 'unreachable',
      });
    } else {
      this.backoff.delete(conn.port);
    }
    if (this.mode === 'probe') {
      // A relay that served us went away: it (or another) may come back soon. A refusal or
      // a failed attempt is no such news, and must not keep probing fast forever.
      const refused = code === CLOSE_REFUSED || code === CLOSE_NOT_MINE;
      if (conn.everConnected && !refused) this.fastUntil = Date.now() + FAST_WINDOW_MS;
    } else if (this.mode === 'native') {
      const relay = this.announced.get(conn.instanceId);
      if (relay) setTimeout(() => this.connectAnnounced(relay), NATIVE_RECONNECT_MS);
    }
  }

  status() {
    const relays = [];
    for (const [port, conn] of this.connections) {
      relays.push({ port, state: conn.state, message: '' });
    }
    for (const [port, b] of this.backoff) {
      if (!this.connections.has(port) && b.notBefore > Date.now()) {
        relays.push({ port, state: 'refused', message: b.message });
      }
    }
    relays.sort((a, b) => a.port - b.port);
    return {
      relays,
      tabs: this.debuggee.attachedTabs(),
      portRange: [PORT_FIRST, PORT_LAST],
      mode: this.mode,
      nativeDownReason: this.nativeDownReason,
      probeRounds: this.probeRounds,
    };
  }
}
