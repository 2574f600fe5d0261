// @ts-check
// One WebSocket to one relay: the hello handshake, command dispatch, keepalive watchdog.

import { CommandError, PROTOCOL_VERSION, encodeError, encodeResult, isReply } from './protocol.js';

/** @typedef {import('./debuggee.js').Debuggee} Debuggee */

const SILENCE_LIMIT_MS = 45000; // the relay pings every 15 s; this much silence means it is gone

export class RelayConnection {
  /**
   * @param {number} port
   * @param {string} instanceId relay instance, from /relay-info
   * @param {Debuggee} debuggee
   * @param {{ browserInstanceId: string, socket?: import('./native.js').NativeSocket, onWelcome?: (conn: RelayConnection) => void, onClose: (conn: RelayConnection, code: number, reason: string) => void }} opts
   *   socket: the link through the native host (a relay started with --link native)
   */
  constructor(port, instanceId, debuggee, opts) {
    this.port = port;
    this.instanceId = instanceId;
    this.debuggee = debuggee;
    this.opts = opts;
    /** @type {'connecting' | 'connected' | 'closed'} */
    this.state = 'connecting';
    this.refusal = '';
    this.lastFrameAt = Date.now();
    /** CDP commands handed to chrome.debugger and not answered yet (see send()). */
    this.inFlight = 0;
    /** @type {string[]} */
    this.outbox = [];
    this.flushScheduled = false;
    this.everConnected = false;
    /** @type {WebSocket | import('./native.js').NativeSocket} */
    this.ws = opts.socket ?? new WebSocket(`ws://127.0.0.1:${port}/extension`);
    this.via = opts.socket ? 'native' : 'websocket';
    this.send = this.send.bind(this);
    this.ws.onopen = () => {
      this.ws.send(
        JSON.stringify({
          method: 'hello',
          params: {
            protocolVersion: PROTOCOL_VERSION,
            extensionVersion: chrome.runtime.getManifest().version,
            instanceId: opts.browserInstanceId,
            userAgent: navigator.userAgent,
          },
        }),
      );
    };
    this.ws.onmessage = (ev) => this.onFrame(ev.data);
    this.ws.onclose = (ev) => this.closed(ev.code, ev.reason);
    this.ws.onerror = () => {}; // onclose follows and carries what we need
  }

  /**
   * Send a message. Alone, it goes at once; while other commands are still in flight it
   * waits for them (or one task turn) and they share a frame, so a burst costs fewer
   * WebSocket sends and wake-ups. Everything goes through one queue, so order is kept.
   * @param {string} frame
   */
  send(frame) {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    if (this.inFlight === 0 && this.outbox.length === 0) {
      this.ws.send(frame);
      return;
    }
    this.outbox.push(frame);
    if (this.inFlight === 0 || this.outbox.length >= 64) this.flush();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setTimeout(() => this.flush(), 0); // a task turn, not a wait: replies ready now join
    }
  }

  flush() {
    this.flushScheduled = false;
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

  close() {
    try {
      this.ws.close();
    } catch {}
    this.closed(1000, 'closed by extension');
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
    if (Array.isArray(parsed)) {
      for (const msg of parsed) this.onMessage(msg);
    } else {
      this.onMessage(parsed);
    }
  }

  /** @param {any} msg */
  onMessage(msg) {
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
      if (msg.method === 'welcome') {
        this.state = 'connected';
        this.everConnected = true;
        this.debuggee.addRelay(this);
        this.opts.onWelcome?.(this);
      } else if (msg.method === 'refused') {
        this.refusal = String(msg.params && msg.params.message);
      }
      return; // welcome, refused and other id-less notices need no reply
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
      this.debuggee.cdp(this, id, params); // hot path: replies by itself, no promise chain
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
