"""The navigation URL policy: what opens (normalised), what is refused and why."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.errors import BridgeError
from bridge.policy.urls import UrlRefused, check_navigable

ALLOWED = [
    ("https://example.com/path?q=1#x", "https://example.com/path?q=1#x"),
    ("http://example.com", "http://example.com"),
    ("HTTPS://Example.com/A", "https://Example.com/A"),
    ("  https://example.com  ", "https://example.com"),
    ("https://exa\tmple.com/\npath", "https://example.com/path"),
    ("\x00\x1f https://example.com", "https://example.com"),
    ("about:blank", "about:blank"),
    ("ABOUT:BLANK", "about:blank"),
    ("about:\tblank", "about:blank"),
    # no scheme: https, or http for loopback
    ("example.com", "https://example.com"),
    ("example.com/path", "https://example.com/path"),
    ("example.com:8443/x", "https://example.com:8443/x"),
    ("www.example.com?q=a:b", "https://www.example.com?q=a:b"),
    ("//cdn.example.com/lib.js", "https://cdn.example.com/lib.js"),
    ("localhost", "http://localhost"),
    ("localhost:8000", "http://localhost:8000"),
    ("LOCALHOST:8000/x", "http://LOCALHOST:8000/x"),
    ("localhost:8000?x=1", "http://localhost:8000?x=1"),
    ("app.localhost:3000", "http://app.localhost:3000"),
    ("127.0.0.1", "http://127.0.0.1"),
    ("127.0.0.1:5000/api", "http://127.0.0.1:5000/api"),
    ("127.1.2.3:80", "http://127.1.2.3:80"),
    ("[::1]:8080/", "http://[::1]:8080/"),
    ("[::1]", "http://[::1]"),
    ("user@localhost:8000", "http://user@localhost:8000"),
    ("10.0.0.5:8080", "https://10.0.0.5:8080"),
    ("localhost.example.com", "https://localhost.example.com"),
]


@pytest.mark.parametrize(("url", "expected"), ALLOWED, ids=[repr(u) for u, _ in ALLOWED])
def test_allowed(url: str, expected: str) -> None:
    assert check_navigable(url) == expected


REFUSED = [
    ("", "empty"),
    ("   ", "empty"),
    ("\t\n", "empty"),
    ("javascript:alert(1)", "javascript: URLs run script"),
    ("JaVaScRiPt:alert(1)", "javascript: URLs run script"),
    (" javascript:alert(1)", "javascript: URLs run script"),
    ("java\tscript:alert(1)", "javascript: URLs run script"),
    ("java\nscript:alert(1)", "javascript: URLs run script"),
    ("\x01javascript:alert(1)", "javascript: URLs run script"),
    ("javascript:1", "javascript: URLs run script"),
    ("javascript:", "javascript: URLs run script"),
    ("data:text/html,<script>alert(1)</script>", "data: URLs are refused.*fresh origin"),
    ("data:image/png;base64,iVBOR", "data: URLs are refused"),
    ("DATA:,x", "data: URLs are refused"),
    ("chrome://settings", "chrome: URLs are browser-internal"),
    ("chrome://extensions/?id=abc", "browser-internal"),
    ("chrome-untrusted://terminal", "browser-internal"),
    ("devtools://devtools/bundled/inspector.html", "browser-internal"),
    ("edge://settings", "browser-internal"),
    ("brave://rewards", "browser-internal"),
    ("about:config", "about: URLs other than about:blank"),
    ("about:srcdoc", "about: URLs other than about:blank"),
    ("about:blank2", "about: URLs other than about:blank"),
    ("view-source:https://example.com", "view-source: is a browser-internal viewer"),
    ("file:///etc/passwd", "--allow-file-urls"),
    ("FILE:///C:/Users", "--allow-file-urls"),
    ("chrome-extension://abcdefghijklmnop/popup.html", "extension pages"),
    ("mailto:someone@example.com", "the mailto: scheme is not navigable"),
    ("ftp://example.com", "the ftp: scheme is not navigable"),
    ("blob:https://example.com/uuid", "the blob: scheme is not navigable"),
    ("intent://scan/#Intent;end", "the intent: scheme is not navigable"),
    ("user:pass@example.com", "the user: scheme is not navigable"),
    ("localhost:", "the localhost: scheme is not navigable"),
    ("https://", "no host"),
    ("http:///", "no host"),
    ("/relative/path", "relative URL"),
    ("?q=1", "relative URL"),
    ("#top", "relative URL"),
    ("./page.html", "relative URL"),
    ("exa\x00mple.com", "control characters"),
    ("https://example.com/\x7f", "control characters"),
]


@pytest.mark.parametrize(("url", "message"), REFUSED, ids=[repr(u) for u, _ in REFUSED])
@pytest.mark.reliability(7)
def test_refused(url: str, message: str) -> None:
    with pytest.raises(UrlRefused, match=message) as caught:
        check_navigable(url)
    assert caught.value.url == url
    assert caught.value.code == "url_refused"
    assert isinstance(caught.value, BridgeError)


@pytest.mark.reliability(7)
def test_file_urls_with_the_opt_in() -> None:
    assert check_navigable("file:///tmp/page.html", allow_file=True) == "file:///tmp/page.html"
    assert check_navigable("FILE:///tmp/x", allow_file=True) == "file:///tmp/x"


def test_the_opt_in_allows_nothing_else() -> None:
    with pytest.raises(UrlRefused, match="javascript"):
        check_navigable("javascript:alert(1)", allow_file=True)


@pytest.mark.parametrize("ext_id", ["ourextensionid", "OUREXTENSIONID"])
def test_our_own_extension_gets_its_own_message(ext_id: str) -> None:
    with pytest.raises(UrlRefused, match="bridge extension's own page"):
        check_navigable("chrome-extension://ourextensionid/offscreen.html", own_extension_id=ext_id)
    with pytest.raises(UrlRefused, match="extension pages"):
        check_navigable("chrome-extension://otherextension/x.html", own_extension_id=ext_id)


def test_long_urls_are_cut_in_the_message() -> None:
    url = "data:," + "x" * 1000
    with pytest.raises(UrlRefused) as caught:
        check_navigable(url)
    assert len(str(caught.value)) < 800
    assert caught.value.url == url


# --- property: no spelling of javascript: gets through

_WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]


@st.composite
def javascript_spellings(draw: st.DrawFn) -> str:
    """Leading whitespace, "javascript:" in any case with tabs/newlines inside, anything after."""
    lead = draw(st.lists(st.sampled_from(_WHITESPACE), max_size=5))
    body = []
    for char in "javascript:":
        body.append(draw(st.sampled_from([char.lower(), char.upper()])))
        body.extend(draw(st.lists(st.sampled_from(["\t", "\n", "\r"]), max_size=2)))
    return "".join(lead) + "".join(body) + draw(st.text(max_size=30))


def _looks_like_javascript(url: str) -> bool:
    return url.translate(str.maketrans("", "", "\t\n\r")).lower().lstrip().startswith("javascript:")


@given(st.one_of(javascript_spellings(), st.text(max_size=40)))
@pytest.mark.reliability(7)
def test_every_javascript_spelling_is_refused(url: str) -> None:
    if _looks_like_javascript(url):
        with pytest.raises(UrlRefused):
            check_navigable(url, allow_file=True)
    else:
        try:
            out = check_navigable(url, allow_file=True)
        except UrlRefused:
            return
        assert out.split(":", 1)[0] in ("http", "https", "about", "file")


@given(javascript_spellings())
def test_the_generator_makes_javascript_urls(url: str) -> None:
    assert _looks_like_javascript(url)
