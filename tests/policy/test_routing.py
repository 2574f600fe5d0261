"""Route globs and the answer to one paused request (bridge.policy.routing)."""

from __future__ import annotations

import base64
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.policy.origins import OriginPolicy
from bridge.policy.routing import Route, decide, glob_matches, parse_headers


@pytest.mark.parametrize(
    ("glob", "url", "expected"),
    [
        ("**/api/*", "http://h:1/api/data?x=1", True),
        ("**/api/*", "http://h:1/api/v2/data", False),  # * stops at a slash
        ("**/api/**", "http://h:1/api/v2/data", True),
        ("**/*.{png,jpg}", "https://h/a/b.jpg", True),
        ("**/*.{png,jpg}", "https://h/a/b.gif", False),
        ("http://h/a?b", "http://h/a?b", True),  # ? is itself
        ("http://h/a?b", "http://h/ab", False),
        ("**", "anything://at/all", True),
        ("http://h/x.y", "http://h/xzy", False),  # . is itself
    ],
)
def test_playwright_globs(glob: str, url: str, expected: bool) -> None:
    assert glob_matches(glob, url) is expected


def test_a_bad_route_fails_when_made() -> None:
    with pytest.raises(ValueError, match="never closed"):
        Route("**/{a,b")
    with pytest.raises(ValueError, match="status"):
        Route("**", status=99)


def test_headers_are_name_value_lines_and_no_line_breaks_get_in() -> None:
    assert parse_headers(["X-A: 1", "X-B:two: parts"]) == {"X-A": "1", "X-B": "two: parts"}
    for bad in (["no colon"], [": no name"], ["X-A: 1\r\nX-Evil: 1"]):
        with pytest.raises(ValueError, match="Name: Value"):
            parse_headers(bad)


NO_GUARD = OriginPolicy()


def test_no_route_matching_goes_on_at_once() -> None:
    d = decide("r1", "http://h/x", {}, NO_GUARD, [Route("**/api/*", status=500)])
    assert (d.method, d.params) == ("Fetch.continueRequest", {"requestId": "r1"})


def test_the_newest_matching_route_answers() -> None:
    routes = [Route("**/api/*", body="old"), Route("**/api/*", body="new", content_type="x/y")]
    d = decide("r1", "http://h/api/a", {}, NO_GUARD, routes)
    assert d.kind == "fulfill" and d.params["responseCode"] == 200
    assert base64.b64decode(d.params["body"]) == b"new"
    assert {"name": "Content-Type", "value": "x/y"} in d.params["responseHeaders"]


def test_abort_fails_the_request() -> None:
    d = decide("r1", "http://h/api/a", {}, NO_GUARD, [Route("**/api/*", abort=True)])
    assert (d.method, d.params["errorReason"]) == ("Fetch.failRequest", "Failed")


def test_headers_only_goes_on_with_them_changed() -> None:
    route = Route("**", headers={"X-Add": "1", "accept": "a/b"}, remove_headers=("Cookie",))
    d = decide("r1", "http://h/", {"Accept": "*/*", "cookie": "s=1", "X-K": "k"}, NO_GUARD, [route])
    assert d.method == "Fetch.continueRequest"
    assert {h["name"]: h["value"] for h in d.params["headers"]} == {
        "X-K": "k",
        "X-Add": "1",
        "accept": "a/b",
    }


def test_the_guard_comes_before_any_route() -> None:
    guard = OriginPolicy.from_flags(None, "evil.test")
    route = Route("**", body="mocked")
    d = decide("r1", "https://evil.test/x", {}, guard, [route])
    assert (d.kind, d.params["errorReason"]) == ("block", "BlockedByClient")
    assert "--blocked-origins" in d.reason
    assert decide("r2", "https://fine.test/x", {}, guard, [route]).kind == "fulfill"


def _reference(glob: str) -> re.Pattern[str]:
    """The same glob as a (backtracking) regular expression: the oracle on small inputs."""
    out = ""
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif glob.startswith("**", i):
            out, i = out + ".*", i + 2
        elif glob[i] == "*":
            out, i = out + "[^/]*", i + 1
        else:
            out, i = out + re.escape(glob[i]), i + 1
    return re.compile(out, re.DOTALL)


@given(
    glob=st.text(alphabet="ab/*", max_size=8),
    url=st.text(alphabet="ab/", max_size=12),
)
def test_the_automaton_agrees_with_the_regular_expression(glob: str, url: str) -> None:
    assert glob_matches(glob, url) == bool(_reference(glob).fullmatch(url))


def test_a_hostile_pattern_and_url_take_linear_time() -> None:
    """A page's URL as long as it likes, a pattern made to backtrack: the answer still comes
    (a backtracking regular expression would take until long after the request timed out)."""
    url = "http://h/" + "a" * 20_000
    assert not glob_matches("**a**a**a**a**a**a**a**a**b", url)
    assert not glob_matches("*a*a*a*a*a*a*a*a*a*a*a*b", url)


def test_alternatives_are_capped() -> None:
    with pytest.raises(ValueError, match="choices"):
        Route("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}")  # 128
