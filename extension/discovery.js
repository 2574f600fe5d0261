// @ts-check
// Finds relays on 127.0.0.1:19222-19250 by asking GET /relay-info, and keeps one
// connection to each live relay. There is no event for "a relay started", so this polls;
// a refused connection on loopback costs microseconds, so a short period is cheap and
// gives "connected within a second of the relay starting".

import { Debuggee } from './debuggee.js';
import { CLOSE_NOT_MINE, CLOSE_REFUSED, PORT_FIRST, PORT_LAST } from './protocol.js';
import { RelayConnection } from './relay-connection.js';

const SCAN_PERIOD_MS = 400;
const PROBE_TIMEOUT_MS = 1000;
const KEEPALIVE_CALL_MS = 20000;

/** @typedef {{ failures: number, notBefore: number, instanceId: string, message: string }} Backoff */

export class Discovery {
  /** @param {Debuggee} debuggee */
  constructor(debuggee) {
    this.debuggee = debuggee;
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
  }

  async browserInstance() {
    if (this.browserInstanceId) return this.browserInstanceId;
    // Per browser session (survives service-worker restarts, not browser restarts).
    const { instanceId } = await chrome.storage.session.get('instanceId');
    this.browserInstanceId = typeof instanceId === 'string' && instanceId ? instanceId : crypto.randomUUID();
    if (this.browserInstanceId !== instanceId) await chrome.storage.session.set({ instanceId: this.browserInstanceId });
    return this.browserInstanceId;
  }

  start() {
    if (this.timer === undefined) this.tick();
  }

  tick() {
    this.timer = setTimeout(() => this.tick(), SCAN_PERIOD_MS);
    const now = Date.now();
    if (now - this.lastKeepalive > KEEPALIVE_CALL_MS) {
      // An extension API call resets the service worker's idle timer (Chrome 110+), so
      // discovery keeps running while no relay is connected yet.
      this.lastKeepalive = now;
      chrome.runtime.getPlatformInfo().catch(() => {});
    }
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
      if (this.connections.has(port)) return;
      const conn = new RelayConnection(port, info.instanceId, this.debuggee, {
        browserInstanceId: await this.browserInstance(),
        onClose: (c, code, reason) => this.onClose(c, code, reason),
      });
      this.connections.set(port, conn);
    } catch {
      // Nothing listens there (the common case), or it is not a relay.
    } finally {
      this.probing.delete(port);
    }
  }

  /**
   * @param {RelayConnection} conn
   * @param {number} code
   * @param {string} reason
   */
  onClose(conn, code, reason) {
    if (this.connections.get(conn.port) === conn) this.connections.delete(conn.port);
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
    } else {
      this.backoff.delete(conn.port);
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
    return { relays, tabs: this.debuggee.attachedTabs(), portRange: [PORT_FIRST, PORT_LAST] };
  }
}
