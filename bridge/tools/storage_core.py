"""The storage group's decisions, pure: which origin a page has, which cookies belong to it,
what a cookie the client sets may be, and Playwright's storageState JSON limited to one
origin (docs/mcp.md#storage).

The scope rule: a storage tool touches only what the current page could touch itself. Its
cookies are the ones Chrome would send to its URL; a cookie the client sets or deletes must
be for its host or a parent domain of it (Chrome itself refuses public suffixes); its web
storage is its origin's. A storage-state file naming anything else is refused whole, saying
what, before anything is changed: a page the agent visited may have written that file's
contents (or told the agent to), and the person's other sites are not the client's to touch.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from bridge.errors import StorageScopeRefused, StorageStateInvalid

__all__ = [
    "MAX_STATE_BYTES",
    "SAME_SITE",
    "PageOrigin",
    "StateEntries",
    "build_state",
    "cookie_line",
    "cookie_set_params",
    "domain_matches",
    "page_origin",
    "parse_state",
    "state_cookie",
]

#: A storage-state file bigger than this is not one (Chrome's cookie and web storage limits
#: make one origin's state a few MB at most).
MAX_STATE_BYTES = 16 * 1024 * 1024
SAME_SITE = ("Strict", "Lax", "None")


@dataclass(frozen=True)
class PageOrigin:
    """The current page's URL and what follows from it."""

    url: str  # without its fragment: what cookies are asked for
    origin: str  # scheme://host[:port]
    host: str  # lower case, no brackets around an IPv6 address


def page_origin(url: str) -> PageOrigin:
    """The origin of a page at ``url``; ``StorageScopeRefused`` for a page without one of its
    own (about:blank, data:, file:, chrome:): nothing there is a site's storage."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise StorageScopeRefused(
            f"the current page ({url[:200]!r}) has no web origin: the storage tools work on "
            "an http(s) page's own cookies and storage. Open the site first (browser_navigate)."
        )
    host = parts.hostname.lower()
    default = {"http": 80, "https": 443}[parts.scheme]
    port = parts.port
    shown = f"[{host}]" if ":" in host else host
    origin = f"{parts.scheme}://{shown}" + (f":{port}" if port and port != default else "")
    return PageOrigin(parts._replace(fragment="").geturl(), origin, host)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def domain_matches(domain: str, host: str) -> bool:
    """Whether a cookie of ``domain`` (``.example.com`` or ``example.com``) is the host's own:
    the host itself, or a parent domain of a host name (never of an IP address)."""
    wanted = domain.strip().lower().lstrip(".")
    if not wanted:
        return False
    if wanted == host:
        return True
    return not _is_ip(host) and "." in wanted and host.endswith("." + wanted)


def _out_of_scope_domain(domain: str, page: PageOrigin) -> str:
    return (
        f"the cookie domain {domain!r} is not the current page's ({page.host}): the storage "
        f"tools set and delete cookies only for {page.host} and its parent domains. Nothing "
        "was changed. Open a page of that site first if the person wants its cookies changed."
    )


def cookie_set_params(
    page: PageOrigin,
    *,
    name: str,
    value: str,
    domain: str | None = None,
    path: str | None = None,
    expires: float | None = None,
    http_only: bool | None = None,
    secure: bool | None = None,
    same_site: str | None = None,
) -> dict[str, Any]:
    """``Network.setCookie``'s parameters for browser_cookie_set (Playwright's parameters);
    ``StorageScopeRefused`` for another site's domain, ValueError for a bad value. Without a
    domain the cookie is the host's alone (host-only), as a page's own would be."""
    if not name or any(c in name for c in ";=\x00\r\n") or name != name.strip():
        raise ValueError(f"{name!r} is not a cookie name (no ; = or control characters)")
    if any(c in value for c in ";\x00\r\n"):
        raise ValueError("a cookie value may not hold ';' or control characters")
    if path is not None and not path.startswith("/"):
        raise ValueError(f"a cookie path starts with '/', not {path!r}")
    if same_site is not None and same_site not in SAME_SITE:
        raise ValueError(f"sameSite is one of {', '.join(SAME_SITE)}, not {same_site!r}")
    params: dict[str, Any] = {"name": name, "value": value, "path": path or "/"}
    if domain:
        if not domain_matches(domain, page.host):
            raise StorageScopeRefused(_out_of_scope_domain(domain, page))
        params["domain"] = domain.strip().lower()
    else:
        params["url"] = page.url
    if expires is not None and expires >= 0:
        params["expires"] = float(expires)
    if http_only is not None:
        params["httpOnly"] = http_only
    if secure is not None:
        params["secure"] = secure
    if same_site is not None:
        params["sameSite"] = same_site
    return params


def state_cookie(cookie: dict[str, Any]) -> dict[str, Any]:
    """A CDP cookie as Playwright's storageState writes it."""
    return {
        "name": cookie["name"],
        "value": cookie["value"],
        "domain": cookie["domain"],
        "path": cookie["path"],
        "expires": -1 if cookie.get("session") else cookie.get("expires", -1),
        "httpOnly": bool(cookie.get("httpOnly")),
        "secure": bool(cookie.get("secure")),
        "sameSite": cookie.get("sameSite") or "Lax",
    }


def cookie_line(cookie: dict[str, Any], *, details: bool = False) -> str:
    """One cookie as playwright-mcp shows it."""
    line = f"{cookie['name']}={cookie['value']} (domain: {cookie['domain']}, path: {cookie['path']}"
    if details:
        line += (
            f", httpOnly: {str(bool(cookie.get('httpOnly'))).lower()}, secure: "
            f"{str(bool(cookie.get('secure'))).lower()}, sameSite: "
            f"{cookie.get('sameSite') or 'Lax'}"
        )
    return line + ")"


def build_state(
    page: PageOrigin, cookies: list[dict[str, Any]], local: list[dict[str, str]]
) -> dict[str, Any]:
    """Playwright's storageState of one origin: its cookies (CDP's) and its localStorage."""
    return {
        "cookies": [state_cookie(c) for c in cookies],
        "origins": [{"origin": page.origin, "localStorage": local}] if local else [],
    }


@dataclass(frozen=True)
class StateEntries:
    """What a storage-state file would set: ``Network.setCookie`` parameters and the
    origin's localStorage items."""

    cookies: list[dict[str, Any]]
    local_storage: list[tuple[str, str]]


def _text(entry: dict[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str):
        raise StorageStateInvalid(f"{where}: {key!r} must be a string")
    return value


def parse_state(data: bytes, page: PageOrigin) -> StateEntries:
    """A storage-state file's entries for ``page``'s origin. Every entry of another origin or
    cookie domain is ``StorageScopeRefused``, all of them named in one message, and nothing
    is set; a file that is not storageState JSON is ``StorageStateInvalid``."""
    if len(data) > MAX_STATE_BYTES:
        raise StorageStateInvalid(
            f"the file holds {len(data)} bytes; a storage state is at most {MAX_STATE_BYTES}"
        )
    try:
        state = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise StorageStateInvalid(f"the file is not JSON: {exc}") from exc
    if not isinstance(state, dict):
        raise StorageStateInvalid("a storage state is an object {cookies: [...], origins: [...]}")
    raw_cookies = state.get("cookies", [])
    raw_origins = state.get("origins", [])
    if not isinstance(raw_cookies, list) or not isinstance(raw_origins, list):
        raise StorageStateInvalid("'cookies' and 'origins' must be lists")
    foreign: list[str] = []
    cookies: list[dict[str, Any]] = []
    for i, entry in enumerate(raw_cookies):
        where = f"cookies[{i}]"
        if not isinstance(entry, dict):
            raise StorageStateInvalid(f"{where} is not an object")
        name, domain = _text(entry, "name", where), _text(entry, "domain", where)
        if not domain_matches(domain, page.host):
            foreign.append(f"cookie {name!r} of domain {domain!r}")
            continue
        same_site = entry.get("sameSite")
        # Playwright writes a host-only cookie with the bare host as its domain; set with a
        # domain it would become a domain cookie, sent to every subdomain too: keep it the
        # host's alone.
        host_only = not domain.startswith(".") and domain.lower() == page.host
        try:
            cookies.append(
                cookie_set_params(
                    page,
                    name=name,
                    value=_text(entry, "value", where),
                    domain=None if host_only else domain,
                    path=entry.get("path") if isinstance(entry.get("path"), str) else None,
                    expires=_number(entry.get("expires")),
                    http_only=bool(entry.get("httpOnly", False)),
                    secure=bool(entry.get("secure", False)),
                    same_site=same_site if isinstance(same_site, str) else None,
                )
            )
        except ValueError as exc:
            if isinstance(exc, StorageScopeRefused):
                raise
            raise StorageStateInvalid(f"{where}: {exc}") from exc
    local: list[tuple[str, str]] = []
    for i, entry in enumerate(raw_origins):
        where = f"origins[{i}]"
        if not isinstance(entry, dict):
            raise StorageStateInvalid(f"{where} is not an object")
        origin = _text(entry, "origin", where)
        if origin.rstrip("/") != page.origin:
            foreign.append(f"origin {origin!r}")
            continue
        items = entry.get("localStorage", [])
        if not isinstance(items, list):
            raise StorageStateInvalid(f"{where}.localStorage must be a list")
        for j, item in enumerate(items):
            if not isinstance(item, dict):
                raise StorageStateInvalid(f"{where}.localStorage[{j}] is not an object")
            at = f"{where}.localStorage[{j}]"
            local.append((_text(item, "name", at), _text(item, "value", at)))
    if foreign:
        shown = "; ".join(foreign[:20]) + (
            f"; and {len(foreign) - 20} more" if len(foreign) > 20 else ""
        )
        raise StorageScopeRefused(
            f"the storage state names what is not the current page's ({page.origin}): "
            f"{shown}. Nothing was changed. The storage tools load only the current origin's "
            "cookies and localStorage: remove the other entries, or open that site first."
        )
    return StateEntries(cookies, local)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
