// @ts-check
// The native-messaging host (python -m bridge.link.native_host, registered by
// `python -m bridge install-native-host`): it hands over the person's secret (Chrome starts
// it only for this extension's id, so no one else can pose as it), pushes the list of
// running relays, so discovery needs no probing, and it can carry a relay link when loopback
// sockets are blocked (a relay started with --link native). While this port is open Chrome
// keeps the service worker alive. The message shapes are documented in bridge/link/native_host.py.

export const HOST_NAME = 'com.bridge.host';
/** Characters of one outgoing message's data; Chrome takes up to 64 MiB per message. */
const PART_CHARS = 16 * 1024 * 1024;

/** @typedef {{ port: number, instanceId: string, link?: string, protocolVersion?: number }} RelayNotice */

export class NativeHost {
  /**
   * @param {{ onTrust: (secret: string, island: boolean) => void, onFatal: (message: string) => void, onRelays: (relays: RelayNotice[]) => void, onDown: (reason: string) => void }} opts
   */
  constructor(opts) {
    this.opts = opts;
    /** @type {chrome.runtime.Port | undefined} */
    this.port = undefined;
    this.up = false;
    this.nextChannel = 1;
    /** @type {Map<number, NativeSocket>} */
    this.sockets = new Map();
  }

  connect() {
    if (this.port) return;
    try {
      this.port = chrome.runtime.connectNative(HOST_NAME);
    } catch (e) {
      this.down(String(e));
      return;
    }
    this.port.onMessage.addListener((msg) => this.onMessage(msg));
    this.port.onDisconnect.addListener(() => {
      const err = chrome.runtime.lastError; // read, so Chrome does not log it as unchecked
      this.down(err && err.message ? err.message : 'the native host closed');
    });
  }

  /** @param {string} reason */
  down(reason) {
    this.port = undefined;
    this.up = false;
    for (const socket of this.sockets.values()) socket.ended(1006, 'native host gone');
    this.sockets.clear();
    this.opts.onDown(reason);
  }

  /** @param {any} msg */
  onMessage(msg) {
    if (!msg || typeof msg !== 'object') return;
    if (msg.type === 'trust') {
      this.up = true;
      this.opts.onTrust(typeof msg.secret === 'string' ? msg.secret : '', msg.island === true);
      return;
    }
    if (msg.type === 'fatal') {
      this.opts.onFatal(String(msg.message || 'the native host cannot work safely'));
      return;
    }
    if (msg.type === 'relays') {
      this.up = true;
      this.opts.onRelays(Array.isArray(msg.relays) ? msg.relays : []);
      return;
    }
    const socket = this.sockets.get(msg.channel);
    if (msg.type === 'error') console.warn('bridge: the native host reports', msg.message);
    if (!socket) return;
    if (msg.type === 'opened') socket.opened();
    else if (msg.type === 'part') socket.parts.push(String(msg.data));
    else if (msg.type === 'frame') socket.received(String(msg.data));
    else if (msg.type === 'close') {
      this.sockets.delete(msg.channel);
      socket.ended(Number(msg.code) || 1006, String(msg.reason || ''));
    }
  }

  /** @param {any} msg */
  post(msg) {
    if (this.port) this.port.postMessage(msg);
  }

  /**
   * A link to one relay through the host, shaped like the WebSocket RelayConnection uses.
   * @param {string} relayInstanceId
   */
  open(relayInstanceId) {
    const socket = new NativeSocket(this, this.nextChannel++);
    this.sockets.set(socket.channel, socket);
    this.post({ type: 'open', channel: socket.channel, relay: relayInstanceId });
    return socket;
  }
}

/** The part of the WebSocket interface RelayConnection relies on, over the native port. */
export class NativeSocket {
  /** @param {NativeHost} host @param {number} channel */
  constructor(host, channel) {
    this.host = host;
    this.channel = channel;
    this.readyState = WebSocket.CONNECTING;
    /** @type {string[]} */
    this.parts = [];
    /** @type {() => void} */
    this.onopen = () => {};
    /** @type {(ev: { data: string }) => void} */
    this.onmessage = () => {};
    /** @type {(ev: { code: number, reason: string }) => void} */
    this.onclose = () => {};
    /** @type {() => void} */
    this.onerror = () => {};
  }

  opened() {
    this.readyState = WebSocket.OPEN;
    this.onopen();
  }

  /** @param {string} data */
  received(data) {
    if (this.parts.length) {
      this.parts.push(data);
      data = this.parts.join('');
      this.parts = [];
    }
    this.onmessage({ data });
  }

  /** @param {string} data */
  send(data) {
    if (this.readyState !== WebSocket.OPEN) return;
    for (let at = 0; at + PART_CHARS < data.length; at += PART_CHARS) {
      this.host.post({ type: 'part', channel: this.channel, data: data.slice(at, at + PART_CHARS) });
    }
    const last = Math.floor(Math.max(data.length - 1, 0) / PART_CHARS) * PART_CHARS;
    this.host.post({ type: 'frame', channel: this.channel, data: data.slice(last) });
  }

  /** @param {number} [code] @param {string} [reason] */
  close(code = 1000, reason = 'closed by extension') {
    if (this.readyState === WebSocket.CLOSED) return;
    this.host.post({ type: 'close', channel: this.channel });
    this.host.sockets.delete(this.channel);
    this.ended(code, reason);
  }

  /** @param {number} code @param {string} reason */
  ended(code, reason) {
    if (this.readyState === WebSocket.CLOSED) return;
    this.readyState = WebSocket.CLOSED;
    this.onclose({ code, reason });
  }
}
