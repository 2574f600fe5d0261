"""Which origins the agent may reach: ``--allowed-origins`` / ``--blocked-origins``.

playwright-mcp's syntax and semantics, so a configuration written for it works here: a list
of origins separated by semicolons (commas too), the blocked list is looked at first and
wins, and when an allowed list is given everything not in it is blocked. An entry is

- a full origin, ``https://example.com`` or ``http://localhost:8080``: that scheme, host and
  port (the scheme's default port when none is written);
- a bare host, ``example.com`` or ``localhost:8080``: that host over any scheme, on any
  port unless one is written (playwright-mcp's "host-only" form);
- either with a ``*.`` before the host: the host's subdomains (and not the host itself).

Hosts compare case-insensitively, as the URL parser lowercases them. A URL that reaches no
network (``about:blank``, ``about:srcdoc``, ``data:``) passes: it loads nothing from
anywhere. A ``blob:`` URL is judged by the origin inside it; ``file:`` and every other
scheme have no host to allow, so an allowed list refuses them.

Pure: the enforcement is ``bridge.cdp.interception`` (requests) and ``bridge.policy.guard``
(CDP commands that open a URL).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

__all__ = ["OriginPolicy", "OriginRule", "parse_origins"]

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_HOST_RE = re.compile(r"(\*\.)?[a-z0-9\-._\[\]:]+")
#: URLs that load nothing from a network: never refused by origin.
_NO_NETWORK = ("about:", "data:")


@dataclass(frozen=True)
class OriginRule:
    """One entry of an origin list (see the module's docstring for the forms)."""

    text: str  # as the person wrote it, for messages
    host: str
    subdomains: bool = False
    scheme: str | None = None  # None: any
    port: int | None = None  # None: any (bare host without a port)

    def matches(self, scheme: str, host: str, port: int | None) -> bool:
        if self.scheme is not None and scheme != self.scheme:
            return False
        if self.port is not None and port != self.port:
            return False
        if self.subdomains:
            return host.endswith("." + self.host)
        return host == self.host


def _rule(entry: str) -> OriginRule:
    text = entry.strip()
    if "://" in text:
        parts = urlsplit(text)
        if parts.path not in ("", "/") or parts.query or parts.fragment or not parts.hostname:
            raise ValueError(
                f"{entry!r} is not an origin: write scheme://host[:port] (no path), or a bare "
                "host such as example.com"
            )
        scheme = parts.scheme.lower()
        host = parts.hostname.lower()
        port = _port(parts)
        port = port if port is not None else _DEFAULT_PORTS.get(scheme)
        return _host_rule(text, host, scheme=scheme, port=port)
    lowered = text.lower()
    host, port = lowered, None
    if ":" in lowered and not lowered.endswith("]"):
        host, _, written = lowered.rpartition(":")
        if not written.isdigit() or not 0 < int(written) < 65536:
            raise ValueError(f"{entry!r}: the port must be a number from 1 to 65535")
        port = int(written)
    return _host_rule(text, host, scheme=None, port=port)


def _host_rule(text: str, host: str, *, scheme: str | None, port: int | None) -> OriginRule:
    if not host or not _HOST_RE.fullmatch(host) or "*" in host.removeprefix("*."):
        raise ValueError(
            f"{text!r} is not an origin or host: e.g. https://example.com, example.com, "
            "localhost:8080 or *.example.com"
        )
    wildcard = host.startswith("*.")
    return OriginRule(text, host.removeprefix("*."), wildcard, scheme, port)


def _port(parts: SplitResult) -> int | None:
    try:
        return parts.port
    except ValueError as exc:
        raise ValueError(f"{parts.geturl()!r}: {exc}") from exc


def parse_origins(spec: str | None) -> tuple[OriginRule, ...]:
    """``"https://a.com;b.com"`` -> its rules; ValueError naming a bad entry."""
    if not spec:
        return ()
    entries = [e for e in re.split(r"[;,]", spec) if e.strip()]
    return tuple(_rule(e) for e in entries)


def _origin_of(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of a URL; None when it has no host (file:, mailto:, junk)."""
    text = url.strip()
    if text.lower().startswith("blob:"):
        text = text[5:]
    try:
        parts = urlsplit(text)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if not host:
        return None
    scheme = parts.scheme.lower()
    return scheme, host.lower(), port if port is not None else _DEFAULT_PORTS.get(scheme)


@dataclass(frozen=True)
class OriginPolicy:
    """The person's origin lists. ``allowed`` None: every origin not blocked is allowed."""

    allowed: tuple[OriginRule, ...] | None = None
    blocked: tuple[OriginRule, ...] = ()

    @classmethod
    def from_flags(cls, allowed: str | None, blocked: str | None) -> OriginPolicy:
        rules = parse_origins(allowed)
        return cls(allowed=rules or None, blocked=parse_origins(blocked))

    @property
    def active(self) -> bool:
        """Whether any origin is refused at all (else nothing needs intercepting)."""
        return self.allowed is not None or bool(self.blocked)

    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be loaded (naming the flag), or None."""
        if not self.active or url.strip().lower().startswith(_NO_NETWORK):
            return None
        origin = _origin_of(url)
        if origin is not None:
            for rule in self.blocked:
                if rule.matches(*origin):
                    return f"its origin is in --blocked-origins ({rule.text})"
        if self.allowed is None:
            return None
        if origin is not None and any(rule.matches(*origin) for rule in self.allowed):
            return None
        return "its origin is not in --allowed-origins"
