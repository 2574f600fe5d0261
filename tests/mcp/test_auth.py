"""bridge.mcp.auth and the transport options of ``bridge-mcp``: which addresses keep the
bearer token on this machine, and what serving beyond it requires. Pure: no server."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.fakes.certs import make_certificate
from bridge.mcp.__main__ import build_parser, parse_args, transport_refusal
from bridge.mcp.auth import needs_tls


@pytest.mark.parametrize(
    ("host", "needs"),
    [
        ("127.0.0.1", False),
        ("127.0.0.2", False),  # all of 127.0.0.0/8 is loopback
        ("127.255.255.254", False),
        ("localhost", False),
        ("LOCALHOST.", False),
        ("::1", False),
        ("[::1]", False),
        ("::ffff:127.0.0.1", False),  # IPv4-mapped loopback
        ("0.0.0.0", True),  # every interface
        ("::", True),
        ("", True),
        ("192.168.1.5", True),
        ("10.0.0.1", True),
        ("169.254.1.1", True),
        ("fe80::1", True),
        ("::ffff:192.168.1.5", True),
        ("my-laptop.local", True),  # a name may resolve anywhere
        ("localhost.evil.example", True),
        ("127.0.0.1.nip.io", True),
    ],
)
def test_needs_tls(host: str, needs: bool) -> None:
    assert needs_tls(host) is needs


def _refusal(*argv: str) -> str | None:
    return transport_refusal(build_parser().parse_args(list(argv)))


@pytest.fixture
def cert_files(tmp_path: Path) -> tuple[str, str]:
    cert = make_certificate(("localhost",))
    (tmp_path / "cert.pem").write_bytes(cert.cert_pem)
    (tmp_path / "key.pem").write_bytes(cert.key_pem)
    return str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")


def test_a_network_host_needs_tls_or_insecure_remote(cert_files: tuple[str, str]) -> None:
    cert, key = cert_files
    refusal = _refusal("--http", "--host", "0.0.0.0")
    assert refusal is not None
    assert "--tls-cert FILE --tls-key FILE" in refusal and "--insecure-remote" in refusal
    assert _refusal("--http", "--host", "0.0.0.0", "--insecure-remote") is None
    assert _refusal("--http", "--host", "0.0.0.0", "--tls-cert", cert, "--tls-key", key) is None
    assert _refusal("--http") is None  # loopback by default
    assert _refusal("--http", "--host", "127.0.0.2") is None
    assert _refusal() is None  # stdio


def test_tls_options_must_be_whole_usable_and_for_http(
    cert_files: tuple[str, str], tmp_path: Path
) -> None:
    cert, key = cert_files
    assert "go together" in (_refusal("--http", "--tls-cert", cert) or "")
    assert "are for --http" in (_refusal("--tls-cert", cert, "--tls-key", key) or "")
    assert "are for --http" in (_refusal("--insecure-remote") or "")
    unusable = _refusal("--http", "--tls-cert", key, "--tls-key", str(tmp_path / "missing.pem"))
    assert unusable is not None and "cannot be used" in unusable


def test_parse_args_exits_2_naming_both_ways(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        parse_args(["--http", "--host", "192.168.1.5"])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("bridge-mcp: error: --host 192.168.1.5 is reachable from your network")
    assert "--tls-cert FILE --tls-key FILE" in err and "--insecure-remote" in err
