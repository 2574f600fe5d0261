"""The trust handshake between a relay and the extension, as pure functions (no I/O).

Every relay and the extension share one secret per person (``bridge.link.trust_root``): a random
token that only the person's own processes can read, handed to the extension by the native
host (Chrome starts it only for bridge's extension id) or by a one-time pairing code the
person types into the popup. Before anything else flows on a link, each side proves it knows
the secret (docs/protocol.md#handshake):

1. extension -> relay ``hello``: ``{"protocolVersion", "nonce": Ne, "mode": "key" | "pair"}``;
2. relay -> extension ``challenge``: ``{"nonce": Nr, "proof": P_r}`` (pairing: and ``sealed``);
3. the extension checks ``P_r``; only then ``prove``: ``{"proof": P_e, "instanceId", ...}``;
4. the relay checks ``P_e``; only then ``welcome``.

``P_r`` and ``P_e`` are HMAC-SHA256 of the same transcript under different labels, so neither
can be replayed as the other, and the transcript binds both fresh nonces and the relay's
TCP port: a rogue relay on another port that forwards a real relay's challenge (a man in the
middle) is caught by the extension, which knows which port it dialled.

Pairing: ``bridge pair`` shows a code of 80 random bits; the extension proves nothing before
the relay has proved it knows that code (``P_r`` keyed by the code), so a rogue relay that the
extension meets while pairing learns only a nonce. The relay hands the secret over sealed
(XOR with an HMAC pad of the code and both nonces), and the extension's ``P_e`` under the
unsealed secret shows the relay that it really unsealed it.

``extension/trust.js`` mirrors this module byte for byte (the tests run both on the same
vectors).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from typing import Final, Literal

__all__ = [
    "CODE_ALPHABET",
    "NONCE_RE",
    "HandshakeError",
    "Mode",
    "extension_proof",
    "format_code",
    "new_code",
    "new_nonce",
    "normalize_code",
    "pairing_key",
    "pairing_proof",
    "relay_proof",
    "seal",
    "unseal",
    "verify",
]

Mode = Literal["key", "pair"]

#: A nonce is 32 random bytes, base64url without padding (43 characters).
NONCE_RE: Final = re.compile(r"[A-Za-z0-9_-]{43}")
#: Crockford's base32: no I, L, O or U, so a code read aloud or retyped survives.
CODE_ALPHABET: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_LENGTH: Final = 16  # 80 bits: far beyond an offline guess of one challenge

_RELAY_LABEL: Final = "bridge-relay-proof-v1"
_EXTENSION_LABEL: Final = "bridge-extension-proof-v1"
_PAIR_RELAY_LABEL: Final = "bridge-pair-relay-proof-v1"
_SEAL_LABEL: Final = "bridge-pair-seal-v1"
_CODE_LABEL: Final = "bridge-pairing-code-v1"


class HandshakeError(ValueError):
    """A handshake message that does not follow the protocol, or a proof that fails."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def new_nonce() -> str:
    return _b64(secrets.token_bytes(32))


def check_nonce(nonce: object) -> str:
    if not isinstance(nonce, str) or not NONCE_RE.fullmatch(nonce):
        raise HandshakeError("a nonce must be 32 bytes in base64url (43 characters)")
    return nonce


def _transcript(label: str, ext_nonce: str, relay_nonce: str, port: int, extra: str = "") -> bytes:
    # The alphabet of every part excludes "|", so the joined text is unambiguous.
    parts = [label, check_nonce(ext_nonce), check_nonce(relay_nonce), str(int(port))]
    if extra:
        parts.append(extra)
    return "|".join(parts).encode("ascii")


def _mac(key: bytes, message: bytes) -> str:
    return _b64(hmac.new(key, message, hashlib.sha256).digest())


def secret_key(secret: str) -> bytes:
    """The HMAC key for a secret as stored and handed over (its UTF-8 text)."""
    return secret.encode("utf-8")


def relay_proof(secret: str, ext_nonce: str, relay_nonce: str, port: int) -> str:
    return _mac(secret_key(secret), _transcript(_RELAY_LABEL, ext_nonce, relay_nonce, port))


def extension_proof(secret: str, ext_nonce: str, relay_nonce: str, port: int) -> str:
    return _mac(secret_key(secret), _transcript(_EXTENSION_LABEL, ext_nonce, relay_nonce, port))


def verify(expected: str, given: object) -> bool:
    """Constant-time comparison of two proofs (a wrong one takes as long as a right one)."""
    return isinstance(given, str) and hmac.compare_digest(
        expected.encode("ascii"), given.encode("ascii", "replace")
    )


# -- pairing ---------------------------------------------------------------------------------


def new_code() -> str:
    """A one-time pairing code (80 random bits), as a person reads it: ``XXXX-XXXX-XXXX-XXXX``."""
    return format_code("".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH)))


def format_code(code: str) -> str:
    plain = normalize_code(code)
    return "-".join(plain[i : i + 4] for i in range(0, len(plain), 4))


_CODE_FIXES: Final = str.maketrans({"O": "0", "I": "1", "L": "1"})


def normalize_code(code: str) -> str:
    """What a person typed, as the code: case, spaces and dashes ignored; O, I, L read as the
    digits they look like. ``HandshakeError`` if it cannot be a code."""
    plain = re.sub(r"[\s-]+", "", code).upper().translate(_CODE_FIXES)
    if len(plain) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in plain):
        raise HandshakeError(
            f"a pairing code is {CODE_LENGTH} letters and digits (XXXX-XXXX-XXXX-XXXX), "
            "as `bridge pair` shows it"
        )
    return plain


def pairing_key(code: str) -> bytes:
    return hashlib.sha256(f"{_CODE_LABEL}|{normalize_code(code)}".encode("ascii")).digest()


def _pad(code_key: bytes, ext_nonce: str, relay_nonce: str, port: int, length: int) -> bytes:
    out = b""
    counter = 0
    while len(out) < length:
        label = f"{_SEAL_LABEL}|{counter}"
        out += hmac.new(
            code_key, _transcript(label, ext_nonce, relay_nonce, port), hashlib.sha256
        ).digest()
        counter += 1
    return out[:length]


def seal(code: str, secret: str, ext_nonce: str, relay_nonce: str, port: int) -> str:
    """The secret for the extension that shows this code, unreadable to anyone without it."""
    data = secret.encode("utf-8")
    pad = _pad(pairing_key(code), ext_nonce, relay_nonce, port, len(data))
    return _b64(bytes(a ^ b for a, b in zip(data, pad, strict=True)))


def unseal(code: str, sealed: str, ext_nonce: str, relay_nonce: str, port: int) -> str:
    data = _unb64(sealed)
    pad = _pad(pairing_key(code), ext_nonce, relay_nonce, port, len(data))
    return bytes(a ^ b for a, b in zip(data, pad, strict=True)).decode("utf-8")


def pairing_proof(code: str, ext_nonce: str, relay_nonce: str, port: int, sealed: str) -> str:
    """The relay's proof that it knows the code (it also covers the sealed secret)."""
    message = _transcript(_PAIR_RELAY_LABEL, ext_nonce, relay_nonce, port, sealed)
    return _mac(pairing_key(code), message)
