// @ts-check
// The trust handshake's proofs and pairing, mirroring bridge/wire/trust.py byte for byte
// (tests/test_trust.py runs both on the same values). WebCrypto only: no dependency.
// docs/protocol.md#handshake says why each step is there.

const RELAY_LABEL = 'bridge-relay-proof-v1';
const EXTENSION_LABEL = 'bridge-extension-proof-v1';
const PAIR_RELAY_LABEL = 'bridge-pair-relay-proof-v1';
const SEAL_LABEL = 'bridge-pair-seal-v1';
const CODE_LABEL = 'bridge-pairing-code-v1';
const CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const CODE_LENGTH = 16;
const NONCE_RE = /^[A-Za-z0-9_-]{43}$/;

const encoder = new TextEncoder();

/** @param {Uint8Array} bytes */
export function b64url(bytes) {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** @param {string} text */
export function unb64url(text) {
  const plain = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
  return Uint8Array.from(plain, (c) => c.charCodeAt(0));
}

export function newNonce() {
  return b64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** @param {unknown} nonce */
export function isNonce(nonce) {
  return typeof nonce === 'string' && NONCE_RE.test(nonce);
}

/**
 * @param {string} label @param {string} extNonce @param {string} relayNonce @param {number} port
 * @param {string} [extra]
 */
function transcript(label, extNonce, relayNonce, port, extra = '') {
  if (!isNonce(extNonce) || !isNonce(relayNonce)) throw new Error('a nonce must be 32 bytes in base64url');
  const parts = [label, extNonce, relayNonce, String(Math.trunc(port))];
  if (extra) parts.push(extra);
  return encoder.encode(parts.join('|'));
}

/** @param {Uint8Array} key @param {Uint8Array} message */
async function hmac(key, message) {
  const k = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, message));
}

/** @param {string} secret @param {string} extNonce @param {string} relayNonce @param {number} port */
export async function relayProof(secret, extNonce, relayNonce, port) {
  return b64url(await hmac(encoder.encode(secret), transcript(RELAY_LABEL, extNonce, relayNonce, port)));
}

/** @param {string} secret @param {string} extNonce @param {string} relayNonce @param {number} port */
export async function extensionProof(secret, extNonce, relayNonce, port) {
  return b64url(await hmac(encoder.encode(secret), transcript(EXTENSION_LABEL, extNonce, relayNonce, port)));
}

/**
 * Compare two proofs in time independent of where they differ.
 * @param {string} expected @param {unknown} given
 */
export function sameProof(expected, given) {
  if (typeof given !== 'string' || given.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ given.charCodeAt(i);
  return diff === 0;
}

/**
 * What a person typed, as the code (case, spaces and dashes ignored; O, I, L read as 0, 1, 1);
 * '' when it cannot be a code.
 * @param {string} code
 */
export function normalizeCode(code) {
  const plain = code.replace(/[\s-]+/g, '').toUpperCase().replace(/O/g, '0').replace(/[IL]/g, '1');
  if (plain.length !== CODE_LENGTH || [...plain].some((c) => !CODE_ALPHABET.includes(c))) return '';
  return plain;
}

/** @param {string} code */
async function pairingKey(code) {
  const plain = normalizeCode(code);
  if (!plain) throw new Error('not a pairing code');
  return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(`${CODE_LABEL}|${plain}`)));
}

/**
 * @param {string} code @param {string} extNonce @param {string} relayNonce @param {number} port
 * @param {string} sealed
 */
export async function pairingProof(code, extNonce, relayNonce, port, sealed) {
  return b64url(await hmac(await pairingKey(code), transcript(PAIR_RELAY_LABEL, extNonce, relayNonce, port, sealed)));
}

/**
 * The secret a pairing relay sealed for whoever shows this code.
 * @param {string} code @param {string} sealed @param {string} extNonce @param {string} relayNonce
 * @param {number} port
 */
export async function unseal(code, sealed, extNonce, relayNonce, port) {
  const data = unb64url(sealed);
  const key = await pairingKey(code);
  /** @type {number[]} */
  const pad = [];
  for (let counter = 0; pad.length < data.length; counter++) {
    pad.push(...(await hmac(key, transcript(`${SEAL_LABEL}|${counter}`, extNonce, relayNonce, port))));
  }
  return new TextDecoder().decode(data.map((b, i) => b ^ pad[i]));
}
