"""Which URLs the navigation tools may open, and the normalised form they open.

The agent drives a person's real, logged-in browser, so a navigation must not be a way to
run script (``javascript:``, ``data:``), reach the browser's own control surfaces
(``chrome://settings``, extension pages, devtools), or read local files unless the person
allowed it. Only ``http:``, ``https:``, ``about:blank`` and (opt-in) ``file:`` pass; anything
else is refused with a message that says why and what to do instead.

The check sees the URL the way Chrome will: tabs and newlines anywhere are removed and
surrounding spaces and control characters stripped (the URL standard does both), and schemes
compare case-insensitively, so "JaVaScRiPt:", " javascript:" and "java\\tscript:" are all
refused. A URL without a scheme gets one: ``http://`` for loopback hosts (local dev servers
rarely speak TLS), ``https://`` otherwise.
"""

from __future__ import annotations

import re

from bridge.errors import BridgeError

__all__ = ["UrlRefused", "check_navigable"]

_INSIDE_JUNK = str.maketrans("", "", "\t\n\r")
_SCHEME_RE = re.compile(r"([a-z][a-z0-9+.\-]*):")
_PORT_RE = re.compile(r"[0-9]+(?:[/?#\\]|$)")
_LOOPBACK_V4_RE = re.compile(r"127(?:\.[0-9]{1,3}){3}")


def _internal(what: str) -> str:
    return (
        f"{what} are browser-internal pages (settings, extensions, flags, devtools…), which "
        "the bridge never drives: automation there could change the person's browser itself. "
        "If the person needs such a page, ask them to open it"
    )


_REFUSED = {
    "javascript": (
        "javascript: URLs run script in the current page rather than open an address. To run "
        "script, use the evaluate tool; to open a page, pass its http(s) address"
    ),
    "data": (
        "data: URLs are refused: a data: document is content the caller wrote, and its script "
        "runs in a fresh origin, so it would let anyone craft pages in the person's browser "
        "(Chrome blocks top-level data: navigation from pages for the same reason). Serve the "
        "content over http(s), e.g. from a local server, and open that address"
    ),
    "view-source": (
        "view-source: is a browser-internal viewer. To read a page's HTML, open the page itself "
        "and use the snapshot or DOM tools"
    ),
    "chrome": _internal("chrome: URLs"),
    "chrome-untrusted": _internal("chrome-untrusted: URLs"),
    "devtools": _internal("devtools: URLs"),
    "edge": _internal("edge: URLs"),
    "brave": _internal("brave: URLs"),
    "opera": _internal("opera: URLs"),
    "vivaldi": _internal("vivaldi: URLs"),
}


class UrlRefused(BridgeError):
    """A navigation tool was asked for a URL the policy refuses; the message says why."""

    code = "url_refused"

    def __init__(self, url: str, reason: str) -> None:
        shown = url if len(url) <= 200 else url[:200] + "…"
        super().__init__(f"refused to open {shown!r}: {reason}.")
        self.url = url
        self.reason = reason


def check_navigable(
    url: str, *, allow_file: bool = False, own_extension_id: str | None = None
) -> str:
    """The URL to open for ``url``, or UrlRefused.

    ``allow_file`` is the person's opt-in (--allow-file-urls) to ``file:`` URLs.
    ``own_extension_id`` only sharpens the message when the URL is the bridge's own extension;
    every ``chrome-extension:`` URL is refused either way.
    """
    text = _clean(url)
    if not text:
        raise UrlRefused(url, "the URL is empty. Pass an address such as https://example.com")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise UrlRefused(url, "the URL contains control characters. Pass a plain address")

    lowered = text.lower()
    match = _SCHEME_RE.match(lowered)
    if match is not None:
        scheme = match.group(1)
        rest = text[match.end() :]
        reason = _REFUSED.get(scheme)
        if reason is not None:
            raise UrlRefused(url, reason)
        if scheme in ("http", "https"):
            if not rest.lstrip("/\\").strip():
                raise UrlRefused(
                    url, f"the URL has no host. Pass an address such as {scheme}://example.com"
                )
            return f"{scheme}:{rest}"
        if scheme == "about":
            if rest.lower() == "blank":
                return "about:blank"
            raise UrlRefused(url, _internal("about: URLs other than about:blank"))
        if scheme == "file":
            if allow_file:
                return f"file:{rest}"
            raise UrlRefused(
                url,
                "file: URLs are off by default: they let the agent read the person's local "
                "files. If that is wanted, start bridge with --allow-file-urls; otherwise serve "
                "the file over http (e.g. python -m http.server) and open that address",
            )
        if scheme == "chrome-extension":
            raise UrlRefused(url, _extension_reason(rest, own_extension_id))
        if not _PORT_RE.match(rest):
            raise UrlRefused(
                url,
                f"the {scheme}: scheme is not navigable here: only http:, https: and "
                "about:blank are (and file: with --allow-file-urls). If you meant a web address, "
                "write it with https:// in front",
            )
        # "localhost:8000", "example.com:8080/x": a host and port, not a scheme.

    if text.startswith("//"):
        text = text[2:]
    if not text or text[0] in "/?#.\\":
        raise UrlRefused(
            url,
            "a relative URL cannot be opened on its own. Pass a full address such as "
            "https://example.com/path",
        )
    prefix = "http://" if _is_loopback(_host(text)) else "https://"
    return prefix + text


def _clean(url: str) -> str:
    """Remove what browsers remove: tabs/newlines anywhere, spaces and controls at the ends."""
    text = url.translate(_INSIDE_JUNK)
    start, end = 0, len(text)
    while start < end and _edge_junk(text[start]):
        start += 1
    while end > start and _edge_junk(text[end - 1]):
        end -= 1
    return text[start:end]


def _edge_junk(char: str) -> bool:
    return char.isspace() or ord(char) <= 0x20


def _extension_reason(rest: str, own_extension_id: str | None) -> str:
    host = rest.lstrip("/").split("/", 1)[0].lower()
    if own_extension_id and host == own_extension_id.lower():
        return (
            "that is the bridge extension's own page, which holds the relay connection: a tab "
            "driven there could control the bridge itself. Open web pages only"
        )
    return (
        "extension pages (chrome-extension:) are refused: they run with the extension's "
        "privileges, and the bridge never drives an extension, its own included. Open web "
        "pages only"
    )


def _host(text: str) -> str:
    """The host of a scheme-less URL ("user@host:port/path" -> "host"), lowercased."""
    authority = re.split(r"[/?#\\]", text, maxsplit=1)[0]
    authority = authority.rpartition("@")[2]
    if authority.startswith("["):
        return authority.split("]", 1)[0].lower() + "]"
    return authority.split(":", 1)[0].lower()


def _is_loopback(host: str) -> bool:
    return (
        host == "localhost"
        or host.endswith(".localhost")
        or host == "[::1]"
        or _LOOPBACK_V4_RE.fullmatch(host) is not None
    )
