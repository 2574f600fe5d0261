"""The trust handshake's pure core (bridge/wire/trust.py) and its JavaScript mirror
(extension/trust.js), which must agree byte for byte."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.wire import trust
from bridge.wire.extension import extension_dir

SECRET = "s3cr3t-of-the-person_0123456789abcdefghijklmnopq"
NE, NR = trust.new_nonce(), trust.new_nonce()


def test_the_two_proofs_differ_so_neither_can_be_replayed_as_the_other() -> None:
    relay = trust.relay_proof(SECRET, NE, NR, 19222)
    ext = trust.extension_proof(SECRET, NE, NR, 19222)
    assert relay != ext
    assert trust.verify(relay, trust.relay_proof(SECRET, NE, NR, 19222))
    assert not trust.verify(relay, ext)


@pytest.mark.parametrize(
    "change",
    [
        {"secret": "another secret"},
        {"ext_nonce": trust.new_nonce()},
        {"relay_nonce": trust.new_nonce()},
        {"port": 19223},  # a man in the middle on another port forwards the real challenge
    ],
)
def test_a_proof_binds_the_secret_both_nonces_and_the_port(change: dict[str, object]) -> None:
    args: dict[str, object] = {"secret": SECRET, "ext_nonce": NE, "relay_nonce": NR, "port": 19222}
    expected = trust.relay_proof(**args)  # type: ignore[arg-type]
    assert not trust.verify(expected, trust.relay_proof(**{**args, **change}))  # type: ignore[arg-type]


@pytest.mark.parametrize("given", [None, 7, "", "x" * 43, "é" * 43])
def test_verify_refuses_anything_that_is_not_the_proof(given: object) -> None:
    assert not trust.verify(trust.relay_proof(SECRET, NE, NR, 1), given)


@pytest.mark.parametrize("nonce", ["", "short", "a" * 44, "a" * 42 + "|", "a" * 42 + "+"])
def test_a_transcript_takes_only_well_formed_nonces(nonce: str) -> None:
    with pytest.raises(trust.HandshakeError):
        trust.relay_proof(SECRET, nonce, NR, 1)


def test_pairing_codes_are_80_random_bits_shown_in_groups_of_four() -> None:
    code = trust.new_code()
    assert len(code) == 19 and code.count("-") == 3
    assert trust.normalize_code(code) == code.replace("-", "")
    assert len({trust.new_code() for _ in range(50)}) == 50


@pytest.mark.parametrize(
    ("typed", "plain"),
    [
        ("abcd-efgh-jkmn-pqrs", "ABCDEFGHJKMNPQRS"),
        (" ABCD EFGH JKMN PQRS ", "ABCDEFGHJKMNPQRS"),
        ("O0Il-0000-0000-0000", "0011000000000000"),  # read as the digits they look like
    ],
)
def test_a_code_typed_loosely_is_still_the_code(typed: str, plain: str) -> None:
    assert trust.normalize_code(typed) == plain


@pytest.mark.parametrize(
    "typed", ["", "ABCD-EFGH-JKMN", "ABCD-EFGH-JKMN-PQRU", "ABCD-EFGH-JKMN-PQRS-T"]
)
def test_what_cannot_be_a_code_says_what_a_code_looks_like(typed: str) -> None:
    with pytest.raises(trust.HandshakeError, match="16 letters and digits"):
        trust.normalize_code(typed)


@settings(max_examples=30, deadline=None)
@given(secret=st.text(alphabet="ABCxyz0129-_", min_size=1, max_size=80), port=st.integers(1, 65535))
def test_sealing_round_trips_only_with_the_same_code_and_transcript(secret: str, port: int) -> None:
    code, other = trust.new_code(), trust.new_code()
    sealed = trust.seal(code, secret, NE, NR, port)
    assert trust.unseal(code, sealed, NE, NR, port) == secret
    assert sealed != secret
    # Another code's pad gives other bytes (often not even text): just as unreadable.
    with contextlib.suppress(UnicodeDecodeError):
        assert trust.unseal(other, sealed, NE, NR, port) != secret


# -- the JavaScript mirror ------------------------------------------------------------------

_NODE_SCRIPT = """
import * as t from %s;
const v = JSON.parse(process.argv[1]);
const out = {
  relay: await t.relayProof(v.secret, v.ne, v.nr, v.port),
  extension: await t.extensionProof(v.secret, v.ne, v.nr, v.port),
  pairing: await t.pairingProof(v.code, v.ne, v.nr, v.port, v.sealed),
  unsealed: await t.unseal(v.code, v.sealed, v.ne, v.nr, v.port),
  normalized: t.normalizeCode(v.loose),
  notACode: t.normalizeCode('ABCD'),
  same: t.sameProof(v.a, v.a),
  different: t.sameProof(v.a, v.a.slice(0, -1) + 'x'),
};
console.log(JSON.stringify(out));
"""


def test_the_extension_computes_every_value_exactly_as_bridge_does() -> None:
    node = shutil.which("node")
    assert node, "Node.js runs the extension's trust module here (.ci/bootstrap.sh --tests)"
    code = trust.new_code()
    sealed = trust.seal(code, SECRET, NE, NR, 19240)
    values = {
        "secret": SECRET,
        "ne": NE,
        "nr": NR,
        "port": 19240,
        "code": code,
        "sealed": sealed,
        "loose": code.lower().replace("-", " "),
        "a": trust.relay_proof(SECRET, NE, NR, 1),
    }
    module = json.dumps((extension_dir() / "trust.js").as_uri())
    run = subprocess.run(
        [node, "--input-type=module", "-e", _NODE_SCRIPT % module, json.dumps(values)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    out = json.loads(run.stdout)
    assert out == {
        "relay": trust.relay_proof(SECRET, NE, NR, 19240),
        "extension": trust.extension_proof(SECRET, NE, NR, 19240),
        "pairing": trust.pairing_proof(code, NE, NR, 19240, sealed),
        "unsealed": SECRET,
        "normalized": trust.normalize_code(code),
        "notACode": "",
        "same": True,
        "different": False,
    }
