"""A throwaway self-signed certificate for the hosts the fakes answer as, made at start-up.

The test browser runs with ``--ignore-certificate-errors``, so nothing has to trust it; a plain
HTTPS client can still verify it by taking the PEM as its only trust anchor, which proves the
names are right. An EC key keeps start-up instant (an RSA key takes noticeably longer).
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["FAKE_HOSTS", "Certificate", "make_certificate"]

#: The fake sites' hosts; the third serves Gemini's generated images (SITE-FACTS G12.4).
FAKE_HOSTS = ("chatgpt.com", "gemini.google.com", "lh3.googleusercontent.com")


@dataclass(frozen=True)
class Certificate:
    """A self-signed certificate and its key, PEM-encoded, for the fake sites' TLS."""

    cert_pem: bytes
    key_pem: bytes


def make_certificate(hosts: Sequence[str] = FAKE_HOSTS, days: int = 7) -> Certificate:
    """A self-signed certificate naming ``hosts`` (and 127.0.0.1), valid from a day ago."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])])
    now = datetime.datetime.now(datetime.UTC)
    alt_names: list[x509.GeneralName] = [x509.DNSName(host) for host in hosts]
    alt_names.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    public_key = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(public_key), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    return Certificate(
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )
