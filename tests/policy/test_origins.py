"""--allowed-origins / --blocked-origins: parsing and matching (bridge.policy.origins)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.policy.origins import OriginPolicy, parse_origins


def test_entries_split_on_semicolons_and_commas() -> None:
    rules = parse_origins("https://a.com; b.com:8080 ,*.c.org")
    assert [(r.scheme, r.host, r.port, r.subdomains) for r in rules] == [
        ("https", "a.com", 443, False),
        (None, "b.com", 8080, False),
        (None, "c.org", None, True),
    ]


@pytest.mark.parametrize(
    "bad", ["https://a.com/path", "http://", "a.com:99999", "a.com:x", "a*b.com", "a b.com"]
)
def test_a_bad_entry_is_refused_with_what_to_write(bad: str) -> None:
    with pytest.raises(ValueError, match=r"origin|port|host"):
        parse_origins(bad)


def test_a_full_origin_is_its_scheme_host_and_port() -> None:
    policy = OriginPolicy.from_flags("https://a.com", None)
    assert policy.refusal("https://a.com/x?y") is None
    assert policy.refusal("https://A.COM:443/") is None
    assert policy.refusal("http://a.com/") is not None  # another scheme
    assert policy.refusal("https://a.com:8443/") is not None  # another port
    assert policy.refusal("https://b.a.com/") is not None  # a subdomain is another origin


def test_a_bare_host_is_any_scheme_and_port_unless_written() -> None:
    assert OriginPolicy.from_flags("a.com", None).refusal("http://a.com:81/") is None
    assert OriginPolicy.from_flags("a.com:81", None).refusal("http://a.com:82/") is not None


def test_a_wildcard_is_the_subdomains_only() -> None:
    policy = OriginPolicy.from_flags("*.a.com", None)
    assert policy.refusal("https://x.y.a.com/") is None
    assert policy.refusal("https://a.com/") is not None
    assert policy.refusal("https://evila.com/") is not None


def test_blocked_wins_over_allowed_and_names_its_flag() -> None:
    policy = OriginPolicy.from_flags("a.com", "https://a.com")
    assert "--blocked-origins" in (policy.refusal("https://a.com/") or "")
    assert policy.refusal("http://a.com/") is None
    assert "--allowed-origins" in (policy.refusal("https://b.com/") or "")


def test_blocked_alone_allows_everything_else() -> None:
    policy = OriginPolicy.from_flags(None, "b.com")
    assert policy.refusal("https://a.com/") is None
    assert policy.refusal("https://b.com/") is not None


def test_what_loads_nothing_passes_and_what_has_no_host_is_not_allowed() -> None:
    policy = OriginPolicy.from_flags("a.com", None)
    assert policy.refusal("about:blank") is None
    assert policy.refusal("data:text/html,hi") is None
    assert policy.refusal("blob:https://a.com/1234") is None
    assert policy.refusal("blob:https://b.com/1234") is not None
    assert policy.refusal("file:///etc/passwd") is not None
    assert policy.refusal("not a url") is not None


def test_no_flags_refuse_nothing() -> None:
    assert not OriginPolicy().active
    assert OriginPolicy().refusal("https://anything.example/") is None


# An attacker's URL tricks: userinfo, case, trailing dots in the path, a blocked host as a
# subdomain label of an allowed one: the host Chrome would connect to decides.
@pytest.mark.parametrize(
    "url",
    [
        "https://a.com@b.com/",
        "https://b.com/?https://a.com",
        "https://b.com/#a.com",
        "HTTPS://B.COM/",
    ],
)
def test_the_host_chrome_connects_to_decides(url: str) -> None:
    assert OriginPolicy.from_flags("a.com", None).refusal(url) is not None
    assert OriginPolicy.from_flags(None, "b.com").refusal(url) is not None


def test_an_allowed_name_inside_another_host_is_not_that_host() -> None:
    assert OriginPolicy.from_flags("a.com", None).refusal("https://a.com.evil.test/") is not None


labels = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)


@given(host=st.lists(labels, min_size=1, max_size=3).map(".".join), other=labels)
def test_blocking_a_host_blocks_it_on_every_scheme_port_and_path(host: str, other: str) -> None:
    policy = OriginPolicy.from_flags(None, host)
    for url in (f"http://{host}/", f"https://{host}:8443/{other}", f"ws://{host}/x?{other}"):
        assert policy.refusal(url) is not None
    if other != host:
        assert policy.refusal(f"https://{other}.invalid-{host}/") is None
