// @ts-check
// The relay <-> extension wire protocol. Mirrors bridge/wire/protocol.py: change
// PROTOCOL_VERSION on both sides whenever a command, event or field changes.
// Version 2: a frame may be a JSON array of messages (batches while many are in flight).
// Version 3: the downloadInfo command (where a download is saved); createTab's ownWindow.
// Version 4: the timeCdpCommand command (the floor under a CDP round trip, for benchmarks).
// Version 5: the trust handshake (hello with a nonce, challenge, prove, then welcome), the
// relay's serving notice, the claim and tabShared events, listTabs' shared field.
// Version 6: the groupTab command (a client's tabs in a Chrome tab group of its own).

export const PROTOCOL_VERSION = 6;

/** Relays listen on the first free port of this range (bridge/wire/extension.py PORT_RANGE). */
export const PORT_FIRST = 19222;
export const PORT_LAST = 19250;

/** Close codes the relay uses (bridge/wire/extension.py). */
export const CLOSE_REFUSED = 4001; // version mismatch, bad hello, no pairing on offer
export const CLOSE_UNTRUSTED = 4004; // a side did not prove the secret (sent by either side)

/**
 * A reply frame, serialized without building an intermediate object (hot path).
 * @param {number} id
 * @param {unknown} result
 */
export function encodeResult(id, result) {
  return '{"id":' + id + ',"result":' + JSON.stringify(result ?? {}) + '}';
}

/**
 * @param {number | null} id
 * @param {string} code
 * @param {string} message
 */
export function encodeError(id, code, message) {
  return JSON.stringify({ id, error: { code, message } });
}

/**
 * Is this message a reply (`result`) or an error (`error`, with or without an id)? Such a
 * message is never answered, whatever is wrong with it: the relay answers a frame it cannot
 * read with `{"id": null, "error": …}`, and answering that with another error would start a
 * ping-pong that never ends. Only malformed commands get a `malformed` answer.
 * @param {object} msg
 */
export function isReply(msg) {
  return Object.hasOwn(msg, 'result') || Object.hasOwn(msg, 'error');
}

/**
 * @param {string} method
 * @param {object} params
 */
export function encodeEvent(method, params) {
  return JSON.stringify({ method, params });
}

/** An error that carries a protocol error code back to the relay. */
export class CommandError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}
