// @ts-check
// Finds relays and keeps one connection to each live relay — only relays that prove the
// person's secret (docs/protocol.md#handshake), and only once this extension has one.
//
// Where the secret comes from decides everything else:
// - the native host (native.js) hands it over, then pushes the list of running relays: no
//   probing at all, and a relay is connected the moment it starts. In a browser bridge
//   launched (an island) the host's list is the only source: never probe.
// - the host reports it cannot work safely (`fatal`, e.g. a runtime directory another user
//   made): fail closed, serve nothing, and the popup says why.
// - no host: a secret paired by hand (the popup's pairing code, kept in storage.local); with
//   it, relays are found by asking GET /relay-info on 127.0.0.1:19222-19250, every 400 ms for
//   the first minute after the worker starts or a relay goes away, then one round every 5 s.
//   Without one, nothing is probed and the popup says how to set bridge up.

import { Debuggee } from './debuggee.js';
import { NativeHost } from './native.js';
import { CLOSE_REFUSED, CLOSE_UNTRUSTED, PORT_FIRST, PORT_LAST } from './protocol.js';
import { RelayConnection } from './relay-connection.js';
import { normalizeCode } from './trust.js';

const FAST_PERIOD_MS = 400;
const IDLE_PERIOD_MS = 5000;
const FAST_WINDOW_MS = 60000;
const PROBE_TIMEOUT_MS = 1000;
const KEEPALIVE_CALL_MS = 20000;
/** A host that does not answer by then is taken as absent. */
const NATIVE_ANSWER_MS = 1500;
/** How often a missing or crashed host is tried again (it may be installed meanwhile). */
const NATIVE_RETRY_MS = 60000;
/** A relay the host still announces, whose connection dropped, is tried again after this. */
const NATIVE_RECONNECT_MS = 250;
/** How long a typed pairing code is tried on the relays found. */
const PAIRING_WINDOW_MS = 120000;
const PAIRED_KEY = 'pairedSecret';

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
    /**
     * starting: asking the host; native: the host announces relays; probe: no host, a paired
     * secret; unpaired: no host, no secret (nothing is served); failed: the host said it
     * cannot work safely, or an island lost its host (nothing is served).
     * @type {'starting' | 'native' | 'probe' | 'unpaired' | 'failed'}
     */
    this.mode = 'starting';
    /** The secret relays must prove, and where it came from. */
    this.secret = '';
    /** @type {'' | 'host' | 'paired'} */
    this.secretSource = '';
    /** A browser bridge launched: only the host's relays, never a probe. */
    this.island = false;
    this.failReason = '';
    /** @type {{ code: string, until: number } | null} a pairing code being tried */
    this.pairing = null;
    /** @type {{ ok: boolean, message: string } | null} how the last pairing ended */
    this.pairingResult = null;
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
      onTrust: (secret, island) => this.onTrust(secret, island),
      onFatal: (message) => this.onFatal(message),
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
    // The host's first message is the secret; without it soon, go on without the host.
    this.nativeTimer = setTimeout(() => {
      this.nativeTimer = undefined;
      if (this.mode === 'starting') this.withoutHost('the native host did not answer');
    }, NATIVE_ANSWER_MS);
  }

  // -- native: the host hands the secret and says which relays exist -----------------------

  /** @param {string} secret @param {boolean} island */
  onTrust(secret, island) {
    if (!secret) {
      this.onFatal('the native host gave no secret');
      return;
    }
    this.secret = secret;
    this.secretSource = 'host';
    this.island = island;
    this.failReason = '';
  }

  /** @param {string} message */
  onFatal(message) {
    this.mode = 'failed';
    this.failReason = message;
    this.announced.clear();
    this.stopProbing();
    if (this.nativeTimer !== undefined) clearTimeout(this.nativeTimer);
    this.nativeTimer = undefined;
    if (this.secretSource === 'host') {
      this.secret = '';
      this.secretSource = '';
    }
    for (const conn of [...this.connections.values()]) conn.close();
    this.linksChanged();
  }

  /** @param {RelayNotice[]} relays */
  onRelays(relays) {
    if (this.secretSource !== 'host') {
      // A host of bridge before version 5 announces relays but hands no secret.
      this.onFatal('the native host is from an older bridge: run `bridge install-native-host` again');
      return;
    }
    if (this.mode !== 'native') {
      this.mode = 'native';
      if (!this.pairing) this.stopProbing();
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
    this.connections.set(relay.port, this.connection(relay.port, relay.instanceId, browserInstanceId, false, socket));
  }

  /** @param {string} reason */
  onNativeDown(reason) {
    this.nativeDownReason = reason;
    this.announced.clear();
    if (this.nativeTimer !== undefined) clearTimeout(this.nativeTimer);
    // Tried again later: it may be installed meanwhile, or it crashed, or the person fixed
    // what it reported.
    this.nativeTimer = setTimeout(() => {
      this.nativeTimer = undefined;
      this.native.connect();
    }, NATIVE_RETRY_MS);
    if (this.mode === 'failed') return; // keep the reason it gave; serve nothing
    if (this.island) {
      this.onFatal(`the native host of this launched browser stopped (${reason}): restart bridge`);
      return;
    }
    this.withoutHost(reason);
  }

  /**
   * No host (absent, or gone): probe with a secret this worker already holds or one paired
   * by hand; with none, serve nothing until the person pairs or installs the host.
   * @param {string} reason
   */
  async withoutHost(reason) {
    this.nativeDownReason = reason;
    if (!this.secret) {
      const stored = (await chrome.storage.local.get(PAIRED_KEY))[PAIRED_KEY];
      if (this.secret || this.mode === 'native' || this.mode === 'failed') return; // the host won meanwhile
      if (typeof stored === 'string' && stored) {
        this.secret = stored;
        this.secretSource = 'paired';
      }
    }
    if (this.secret) {
      // Already probing (the host is retried every minute): keep the pace it has.
      if (this.mode !== 'probe') this.startProbing();
    } else {
      this.mode = 'unpaired';
      if (!this.pairing) this.stopProbing();
    }
    this.linksChanged();
  }

  // -- pairing: a code from `bridge pair`, typed by the person ------------------------------

  /**
   * Try a pairing code on the relays found in the next two minutes.
   * @param {string} code
   * @returns {{ ok: boolean, message: string }}
   */
  pair(code) {
    const plain = normalizeCode(String(code || ''));
    if (!plain) {
      this.pairingResult = {
        ok: false,
        message: 'A pairing code is 16 letters and digits (XXXX-XXXX-XXXX-XXXX), as `bridge pair` shows it.',
      };
      return this.pairingResult;
    }
    this.pairing = { code: plain, until: Date.now() + PAIRING_WINDOW_MS };
    this.pairingResult = null;
    // Relays backed off before may be the one pairing now.
    this.backoff.clear();
    this.fastUntil = Date.now() + FAST_WINDOW_MS;
    if (this.timer === undefined) this.tick();
    return { ok: true, message: 'Looking for the relay of `bridge pair`…' };
  }

  /** @param {RelayConnection} conn @param {string} secret */
  async onPaired(conn, secret) {
    this.pairing = null;
    this.pairingResult = { ok: true, message: `Paired with the bridge on port ${conn.port}.` };
    await chrome.storage.local.set({ [PAIRED_KEY]: secret });
    if (this.secretSource !== 'host') {
      this.secret = secret;
      this.secretSource = 'paired';
      if (this.mode === 'unpaired' || this.mode === 'starting') this.startProbing();
    }
    this.linksChanged();
  }

  /** Forget a secret paired by hand (the popup's "Forget pairing"). */
  async forgetPairing() {
    await chrome.storage.local.remove(PAIRED_KEY);
    this.pairingResult = null;
    if (this.secretSource !== 'paired') return;
    this.secret = '';
    this.secretSource = '';
    for (const conn of [...this.connections.values()]) conn.close();
    this.mode = 'unpaired';
    this.stopProbing();
    this.linksChanged();
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

  /** Probing is wanted: without a host with a secret, or while a pairing code is tried. */
  probingWanted() {
    return (this.mode === 'probe' && !!this.secret) || (this.pairing !== null && !this.island && this.mode !== 'failed');
  }

  tick() {
    const now = Date.now();
    if (this.pairing && now > this.pairing.until) {
      this.pairing = null;
      this.pairingResult = {
        ok: false,
        message: 'No relay proved this code in two minutes: is `bridge pair` still running, and is the code exactly the one it shows?',
      };
    }
    if (!this.probingWanted()) {
      this.timer = undefined;
      return;
    }
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
      if (this.connections.has(port) || !this.probingWanted()) return;
      const browserInstanceId = await this.browserInstance();
      if (this.connections.has(port) || !this.probingWanted()) return;
      // While a code is tried, every relay found is asked to prove it; the one that does
      // is `bridge pair`'s. The others refuse, or fail to prove it, and are backed off.
      this.connections.set(port, this.connection(port, info.instanceId, browserInstanceId, !!this.pairing));
    } catch {
      // Nothing listens there (the common case), or it is not a relay.
    } finally {
      this.probing.delete(port);
    }
  }

  /**
   * @param {number} port @param {string} instanceId @param {string} browserInstanceId
   * @param {boolean} pairing @param {import('./native.js').NativeSocket} [socket]
   */
  connection(port, instanceId, browserInstanceId, pairing, socket) {
    return new RelayConnection(port, instanceId, this.debuggee, {
      browserInstanceId,
      socket,
      ...(pairing && this.pairing ? { code: this.pairing.code } : { secret: this.secret }),
      onWelcome: () => this.linksChanged(),
      onPaired: (c, secret) => this.onPaired(c, secret),
      onClose: (c, code, reason) => this.onClose(c, code, reason),
    });
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
    const refused = code === CLOSE_REFUSED || code === CLOSE_UNTRUSTED;
    if (refused) {
      // Do not hammer a relay that refused us, or that is not ours: retry with exponential
      // backoff and jitter.
      const prev = this.backoff.get(conn.port);
      const failures = prev && prev.instanceId === conn.instanceId ? prev.failures + 1 : 1;
      const delay = Math.min(30000, 5000 * 2 ** (failures - 1)) * (0.75 + Math.random() * 0.5);
      this.backoff.set(conn.port, {
        failures,
        notBefore: Date.now() + delay,
        instanceId: conn.instanceId,
        message: reason || (code === CLOSE_UNTRUSTED ? 'did not prove the secret' : 'refused'),
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
    if (this.mode === 'native') {
      const relay = this.announced.get(conn.instanceId);
      if (relay) setTimeout(() => this.connectAnnounced(relay), NATIVE_RECONNECT_MS);
    } else if (this.probingWanted()) {
      // A relay that served us went away: it (or another) may come back soon. A refusal or
      // a failed attempt is no such news, and must not keep probing fast forever.
      if (conn.everConnected && !refused) this.fastUntil = Date.now() + FAST_WINDOW_MS;
    }
  }

  /** The person chose this browser for the relay on `port` (the popup). @param {number} port */
  claim(port) {
    this.connections.get(port)?.claim();
  }

  status() {
    const relays = [];
    for (const [port, conn] of this.connections) {
      relays.push({ port, state: conn.state, serving: conn.state === 'connected' ? conn.serving : null, message: '' });
    }
    for (const [port, b] of this.backoff) {
      if (!this.connections.has(port) && b.notBefore > Date.now()) {
        relays.push({ port, state: 'refused', serving: null, message: b.message });
      }
    }
    relays.sort((a, b) => a.port - b.port);
    return {
      relays,
      tabs: this.debuggee.attachedTabs(),
      shared: this.debuggee.sharedTabs(),
      portRange: [PORT_FIRST, PORT_LAST],
      mode: this.mode,
      secretSource: this.secretSource,
      island: this.island,
      failReason: this.failReason,
      pairing: this.pairing ? 'looking' : '',
      pairingResult: this.pairingResult,
      nativeDownReason: this.nativeDownReason,
      probeRounds: this.probeRounds,
    };
  }
}
