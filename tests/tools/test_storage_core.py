"""The storage group's scope rule and storageState format, pure (bridge/tools/storage_core.py)."""

from __future__ import annotations

import json

import pytest

from bridge.errors import StorageScopeRefused, StorageStateInvalid
from bridge.tools.storage_core import (
    MAX_STATE_BYTES,
    build_state,
    cookie_set_params,
    domain_matches,
    page_origin,
    parse_state,
)

PAGE = page_origin("https://app.example.com:8443/inbox?x=1#top")


def test_a_page_origin_comes_from_its_url_and_pages_without_one_are_refused() -> None:
    assert PAGE.origin == "https://app.example.com:8443"
    assert PAGE.host == "app.example.com"
    assert PAGE.url == "https://app.example.com:8443/inbox?x=1"  # no fragment
    assert page_origin("http://127.0.0.1:80/").origin == "http://127.0.0.1"
    assert page_origin("http://[::1]:9000/a").origin == "http://[::1]:9000"
    for url in ("about:blank", "data:text/html,x", "file:///etc/passwd", "chrome://settings"):
        with pytest.raises(StorageScopeRefused, match="no web origin"):
            page_origin(url)


@pytest.mark.parametrize(
    ("domain", "host", "ok"),
    [
        ("app.example.com", "app.example.com", True),
        (".example.com", "app.example.com", True),  # a parent domain: the page could set it
        ("EXAMPLE.com", "app.example.com", True),
        ("other.example.com", "app.example.com", False),  # a sibling
        ("evil.com", "app.example.com", False),
        ("ample.com", "app.example.com", False),  # a suffix, not a parent
        ("com", "app.example.com", False),  # no dot: a top-level domain
        ("", "app.example.com", False),
        ("0.0.1", "127.0.0.1", False),  # an IP address has no parent domains
        ("127.0.0.1", "127.0.0.1", True),
    ],
)
def test_a_cookie_domain_is_the_page_host_or_a_parent_of_it(
    domain: str, host: str, ok: bool
) -> None:
    assert domain_matches(domain, host) is ok


def test_a_cookie_without_domain_is_host_only_and_another_domain_is_refused() -> None:
    params = cookie_set_params(PAGE, name="sid", value="v")
    assert params == {"name": "sid", "value": "v", "path": "/", "url": PAGE.url}
    params = cookie_set_params(
        PAGE, name="a", value="b", domain=".example.com", path="/x", expires=2e9,
        http_only=True, secure=True, same_site="Strict",
    )  # fmt: skip
    assert params["domain"] == ".example.com" and "url" not in params
    assert params["httpOnly"] and params["secure"] and params["sameSite"] == "Strict"
    with pytest.raises(StorageScopeRefused, match=r"'evil\.com' is not the current page's"):
        cookie_set_params(PAGE, name="a", value="b", domain="evil.com")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "a;b"}, "not a cookie name"),
        ({"name": ""}, "not a cookie name"),
        ({"value": "x\r\nSet-Cookie: y=1"}, "control characters"),
        ({"path": "x"}, "starts with '/'"),
        ({"same_site": "lax"}, "sameSite is one of"),
    ],
)
def test_bad_cookie_values_are_refused(kwargs: dict[str, str], message: str) -> None:
    args = {"name": "a", "value": "b", **kwargs}
    with pytest.raises(ValueError, match=message):
        cookie_set_params(PAGE, **args)  # type: ignore[arg-type]


def _state(cookies: list[dict[str, object]], origins: list[dict[str, object]]) -> bytes:
    return json.dumps({"cookies": cookies, "origins": origins}).encode()


def test_a_state_of_the_current_origin_loads_and_round_trips() -> None:
    cdp = [
        {"name": "sid", "value": "s3cret", "domain": "app.example.com", "path": "/",
         "expires": -1, "session": True, "httpOnly": True, "secure": True, "sameSite": "Lax"},
        {"name": "pref", "value": "dark", "domain": ".example.com", "path": "/",
         "expires": 2e9, "session": False},
    ]  # fmt: skip
    state = build_state(PAGE, cdp, [{"name": "k", "value": "v"}])
    assert state["origins"] == [
        {"origin": "https://app.example.com:8443", "localStorage": [{"name": "k", "value": "v"}]}
    ]
    assert state["cookies"][0]["expires"] == -1 and state["cookies"][1]["sameSite"] == "Lax"
    entries = parse_state(json.dumps(state).encode(), PAGE)
    assert [c["name"] for c in entries.cookies] == ["sid", "pref"]
    # The host's own cookie stays host-only (set by URL); a parent domain's keeps its domain.
    assert entries.cookies[0]["url"] == PAGE.url and "domain" not in entries.cookies[0]
    assert entries.cookies[1]["domain"] == ".example.com" and "url" not in entries.cookies[1]
    assert "expires" not in entries.cookies[0]  # a session cookie stays one
    assert entries.cookies[1]["expires"] == 2e9
    assert entries.local_storage == [("k", "v")]


def test_a_state_naming_another_origin_or_domain_is_refused_whole_saying_which() -> None:
    data = _state(
        [
            {"name": "ok", "value": "1", "domain": "app.example.com", "path": "/"},
            {"name": "bank", "value": "2", "domain": ".bank.example", "path": "/"},
        ],
        [
            {"origin": "https://app.example.com:8443", "localStorage": []},
            {"origin": "https://mail.example.com", "localStorage": [{"name": "a", "value": "b"}]},
        ],
    )
    with pytest.raises(StorageScopeRefused) as caught:
        parse_state(data, PAGE)
    message = str(caught.value)
    assert "cookie 'bank' of domain '.bank.example'" in message
    assert "origin 'https://mail.example.com'" in message
    assert "Nothing was changed" in message
    assert "'ok'" not in message


@pytest.mark.parametrize(
    "data",
    [
        b"not json",
        b"[]",
        b'{"cookies": {}}',
        b'{"cookies": [{"name": 1, "value": "x", "domain": "app.example.com"}]}',
        b'{"origins": [{"origin": "https://app.example.com:8443", "localStorage": [1]}]}',
        b"\xff\xfe",
        b" " * (MAX_STATE_BYTES + 1),
    ],
)
def test_what_is_not_a_storage_state_is_refused(data: bytes) -> None:
    with pytest.raises(StorageStateInvalid):
        parse_state(data, PAGE)
