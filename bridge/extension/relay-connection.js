// @ts-check
// One WebSocket to one relay: the trust handshake, command dispatch, keepalive watchdog.
//
// The relay must prove the secret first (its challenge); only then does this side prove it
// and say who it is (docs/protocol.md#handshake). A relay that cannot prove it is closed with
// CLOSE_UNTRUSTED having learnt nothing but a nonce, and no command of it is ever run: every
// command before welcome is answered not_ready.

import { CLOSE_UNTRUSTED, CommandError, PROTOCOL_VERSION, encodeError, encodeEvent, encodeResult, isReply } from './protocol.js';
import { extensionProof, isNonce, newNonce, pairingProof, relayProof, sameProof, unseal } from './trust.js';

/** @typedef {import('./debuggee.js').Debuggee} Debuggee */

const SILENCE_LIMIT_MS = 45000; // the relay pings every 15 s; this much silence means it is gone
const MAX_BATCH = 64; // messages per frame at most
const HOLD_MS = 2; // how long a CDP reply waits for the rest of its frame's replies, at most

/** @typedef {{ left: number }} Group CDP commands that arrived in one frame, not answered yet */

export class RelayConnection {
  /**
   * @param {number} port
   * @param {string} instanceId relay instance, from /relay-info
   * @param {Debuggee} debuggee
   * @param {{ browserInstanceId: string, secret?: string, code?: string, socket?: import('./native.js').NativeSocket, onWelcome?: (conn: RelayConnection) => void, onPaired?: (conn: RelayConnection, secret: string) => void, onServing?: (conn: RelayConnection) => void, onClose: (conn: RelayConnection, code: number, reason: string) => void }} opts
   *   secret: the person's secret, which the relay must prove and this side proves;
   *   code: instead, a pairing code (the relay proves it and hands the secret over, sealed);
   *   socket: the link through the native host (a relay started with --link native)
   */
  constructor(port, instanceId, debuggee, opts) {
    this.port = port;
    this.instanceId = instanceId;
    this.debuggee = debuggee;
    this.opts = opts;
    /**
     * connecting: hello sent; verifying: checking the relay's proof (nothing is sent until it
     * holds); proving: ours sent, waiting for welcome; connected: commands run.
     * @type {'connecting' | 'verifying' | 'proving' | 'connected' | 'closed'}
     */
    this.state = 'connecting';
    this.nonce = newNonce();
    /** Whether the relay works through this link (false: on standby, another browser serves). */
    this.serving = true;
    /** The secret this link proved (learnt by pairing, or given). */
    this.secret = opts.secret || '';
    this.refusal = '';
    this.lastFrameAt = Date.now();
    /** CDP commands handed to chrome.debugger and not answered yet (see send()). */
    this.inFlight = 0;
    /** @type {string[]} */
    this.outbox = [];
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.flushTimer = undefined;
    this.flushDue = 0;
    this.everConnected = false;
    /** @type {WebSocket | import('./native.js').NativeSocket} */
    this.ws = opts.socket ?? new WebSocket(`ws://127.0.0.1:${port}/extension`);
    this.via = opts.socket ? 'native' : 'websocket';
    this.send = this.send.bind(this);
    this.flush = this.flush.bind(this);
    this.ws.onopen = () => {
      // Nothing about this browser until the relay has proved the secret.
      this.ws.send(
        JSON.stringify({
          method: 'hello',
          params: { protocolVersion: PROTOCOL_VERSION, nonce: this.nonce, mode: opts.code ? 'pair' : 'key' },
        }),
      );
    };
    this.ws.onmessage = (ev) => this.onFrame(ev.data);
    this.ws.onclose = (ev) => this.closed(ev.code, ev.reason);
    this.ws.onerror = () => {}; // onclose follows and carries what we need
  }

  /**
   * Send a message. Alone, it goes at once; while CDP commands are in flight it joins the
   * queue, flushed as one frame when the last command in flight is answered, when 64
   * messages wait, or one task turn later (docs/protocol.md#batching). One queue: order is kept.
   * @param {string} frame
   */
  send(frame) {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    if (this.inFlight === 0 && this.outbox.length === 0) {
      this.ws.send(frame);
      return;
    }
    this.outbox.push(frame);
    if (this.inFlight === 0 || this.outbox.length >= MAX_BATCH) this.flush();
    else this.flushIn(0); // a task turn, not a wait: replies ready now join
  }

  /**
   * A CDP command's reply. The commands of one incoming frame are answered in one frame: a
   * reply waits while others of its frame are still in flight (HOLD_MS at most, one of them
   * may be slow), and the last one's reply sends the queue.
   * @param {string} frame
   * @param {Group} group the commands that came in the same frame as this one
   */
  reply(frame, group) {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    group.left--;
    if (this.outbox.length === 0 && (this.inFlight === 0 || group.left === 0)) {
      this.ws.send(frame);
      return;
    }
    this.outbox.push(frame);
    if (this.inFlight === 0 || group.left === 0 || this.outbox.length >= MAX_BATCH) this.flush();
    else this.flushIn(HOLD_MS);
  }

  /** Flush in `ms` (0: the next task turn), unless a flush is due sooner. @param {number} ms */
  flushIn(ms) {
    const due = performance.now() + ms;
    if (this.flushTimer !== undefined) {
      if (this.flushDue <= due) return;
      clearTimeout(this.flushTimer);
    }
    this.flushDue = due;
    this.flushTimer = setTimeout(this.flush, ms);
  }

  flush() {
    if (this.flushTimer !== undefined) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    if (!this.outbox.length) return;
    const frame = this.outbox.length === 1 ? this.outbox[0] : '[' + this.outbox.join(',') + ']';
    this.outbox = [];
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(frame);
  }

  /** @param {number} code @param {string} reason */
  closed(code, reason) {
    if (this.state === 'closed') return;
    const wasConnected = this.state === 'connected';
    this.state = 'closed';
    if (wasConnected) this.debuggee.removeRelay(this.instanceId);
    this.opts.onClose(this, code, this.refusal || reason);
  }

  /** @param {number} [code] @param {string} [reason] */
  close(code = 1000, reason = 'closed by extension') {
    try {
      this.ws.close(code, reason);
    } catch {}
    this.closed(code, reason);
  }

  /**
   * The relay's challenge: check its proof; only if it holds, prove the secret and say who
   * this browser is. A wrong proof closes the link: the relay is not the person's bridge.
   * @param {any} params
   */
  async challenged(params) {
    if (this.state !== 'connecting') return;
    this.state = 'verifying';
    const relayNonce = params && params.nonce;
    const port = this.port;
    let ok = false;
    try {
      if (!isNonce(relayNonce)) throw new Error('bad nonce');
      if (this.opts.code) {
        const sealed = String(params.sealed || '');
        ok = sameProof(await pairingProof(this.opts.code, this.nonce, relayNonce, port, sealed), params.proof);
        if (ok) this.secret = await unseal(this.opts.code, sealed, this.nonce, relayNonce, port);
      } else {
        ok = sameProof(await relayProof(this.secret, this.nonce, relayNonce, port), params.proof);
      }
    } catch {
      ok = false;
    }
    if (!ok || !this.secret) {
      this.refusal = this.opts.code
        ? 'did not prove the pairing code (not the relay of `bridge pair`)'
        : 'did not prove your bridge secret: not your bridge, or one paired elsewhere';
      this.close(CLOSE_UNTRUSTED, 'relay did not prove the secret');
      return;
    }
    if (this.state !== 'verifying') return; // closed meanwhile
    this.state = 'proving'; // only now may a welcome count
    this.ws.send(
      JSON.stringify({
        method: 'prove',
        params: {
          proof: await extensionProof(this.secret, this.nonce, relayNonce, port),
          extensionVersion: chrome.runtime.getManifest().version,
          instanceId: this.opts.browserInstanceId,
          userAgent: navigator.userAgent,
        },
      }),
    );
  }

  /** Ask the relay to work through this browser (the person chose it in the popup). */
  claim() {
    if (this.state === 'connected') this.send(encodeEvent('claim', {}));
  }

  silentTooLong() {
    return this.state === 'connected' && Date.now() - this.lastFrameAt > SILENCE_LIMIT_MS;
  }

  /** @param {string} data */
  onFrame(data) {
    this.lastFrameAt = Date.now();
    /** @type {any} */
    let parsed;
    try {
      parsed = JSON.parse(data);
    } catch {
      this.send(encodeError(null, 'malformed', 'frame is not JSON'));
      return;
    }
    /** @type {Group} */
    const group = { left: 0 };
    if (Array.isArray(parsed)) {
      for (const msg of parsed) this.onMessage(msg, group);
    } else {
      this.onMessage(parsed, group);
    }
  }

  /** @param {any} msg @param {Group} group */
  onMessage(msg, group) {
    if (msg === null || typeof msg !== 'object') {
      this.send(encodeError(null, 'malformed', 'frame must be a JSON object'));
      return;
    }
    if (isReply(msg)) {
      // The relay sends no commands that we reply to, so this is its answer to a frame it
      // could not read. Never answered (an error for an error ping-pongs forever): logged.
      if (msg.error !== undefined) console.warn('bridge: the relay reports an error', msg.error);
      return;
    }
    const id = msg.id;
    if (id === undefined) {
      if (msg.method === 'challenge') {
        this.challenged(msg.params);
      } else if (msg.method === 'welcome' && this.state === 'proving') {
        this.state = 'connected';
        this.everConnected = true;
        this.debuggee.addRelay(this);
        if (this.opts.code) this.opts.onPaired?.(this, this.secret);
        this.opts.onWelcome?.(this);
      } else if (msg.method === 'serving' && this.state === 'connected') {
        this.serving = !!(msg.params && msg.params.serving);
        // On standby the relay works through another browser: give this one's tabs back.
        if (!this.serving) this.debuggee.releaseTabs(this.instanceId);
        this.opts.onServing?.(this);
      } else if (msg.method === 'refused') {
        this.refusal = String(msg.params && msg.params.message);
      }
      return; // id-less notices need no reply
    }
    if (!Number.isInteger(id)) {
      this.send(encodeError(null, 'malformed', "'id' must be an integer"));
      return;
    }
    if (this.state !== 'connected') {
      this.send(encodeError(id, 'not_ready', 'handshake not finished'));
      return;
    }
    const params = msg.params && typeof msg.params === 'object' ? msg.params : {};
    if (msg.method === 'cdpCommand') {
      this.debuggee.cdp(this, id, params, group); // hot path: replies by itself, no promise chain
      return;
    }
    this.debuggee.command(this, msg.method, params).then(
      (result) => this.send(encodeResult(id, result)),
      (e) => {
        const code = e instanceof CommandError ? e.code : 'error';
        this.send(encodeError(id, code, String(e && e.message ? e.message : e)));
      },
    );
  }
}
