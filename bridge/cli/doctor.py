"""``bridge doctor [--live] [--json] [--bundle [PATH]]``: is everything bridge needs in place?

``--bundle`` also writes the checks, versions and the log's last lines to a zip for a bug
report (``bridge.cli.bundle``).

Checks the browser, the relay port range, the runtime directory, the token files, the
native host registrations (bridge's own, and who answers the Claude extension's host name)
and the extension (it starts a relay and waits for the extension to connect: with
``--launch`` in a browser of its own, otherwise the person's Chrome); with
``--live``, for each provider its page (reachable, logged in or a login wall or a Cloudflare
check, composer found by the pack's selectors) and then a tiny ask (sent, answered, and
from which source the answer was read). The provider packs are checked too, with the
person's overrides. Each failed check says what to do; the exit status is 1 if any failed.

Checks are plain data (``Check``) so the table and the JSON come from one list.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import json
import os
import re
import socket
import stat
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from bridge.app.captures import capture_page, take_capture, write_capture
from bridge.app.launcher import find_browser
from bridge.app.runtime import Runtime, options_from_args
from bridge.errors import BridgeError
from bridge.link import native_install
from bridge.link.claude_host import HOSTS_ROOM
from bridge.link.local_ipc import endpoint_files, probe
from bridge.link.registry import runtime_dir
from bridge.link.tokens import token_file_problem
from bridge.link.trust_root import (
    SECRET_FILE,
    TrustUnavailable,
    existing_secret,
    private_dir,
    trust_dir,
)
from bridge.logs import log_file_from
from bridge.providers.ask_script import provider_page
from bridge.providers.capture.review import review
from bridge.providers.capture.sanitize import url_shape
from bridge.providers.pack import PackError, load_pack, override_path
from bridge.store.state import default_state_dir
from bridge.wire.claude import CLAUDE_ALLOWED_ORIGIN, CLAUDE_EXTENSION_ID
from bridge.wire.extension import PORT_RANGE

__all__ = ["Check", "render", "run_checks"]

PROVIDERS = ("chatgpt", "gemini")
DOCTOR_KEY = "bridge-doctor"  # the doctor's own conversations, apart from the person's
#: The remedy for each typed failure of the live ask (bridge.errors codes).
REMEDIES = {
    "login_required": "log in to {provider} in this browser once; bridge reuses the session",
    "rate_limited": "wait for the site's limit to reset (the message says when)",
    "extension_not_connected": "load the extension: chrome://extensions → Load unpacked → "
    "the folder `bridge extension-path` prints (or run with --launch)",
    "timeout": "the page did not answer in time: open it and look for a dialog, a challenge or a "
    "changed layout; run again with --json for the details",
    "challenge": "open the {provider} tab in that browser and complete the Cloudflare check",
    "error_turn": "the site answered with an error: ask again later or in a new chat",
    "stuck": "reload the {provider} tab; if it keeps hanging, start a new chat",
    "send_failed": "the composer took the text but the question was not sent: the site's layout "
    "may have changed; fix the pack's selectors with an override (docs/sites.md#provider-packs)",
    "not_sent": "the question showed on the page but the site was never asked (no answer "
    "request): reload the {provider} tab; if it keeps happening, fix the pack's "
    "network.answer_stream with an override (docs/sites.md#provider-packs)",
    "taken_back": "{provider} took the question back (its server refused it): wait a moment and "
    "ask again, in a new chat if it repeats",
    "no_response": "no answer appeared: the site's layout may have changed; fix the pack's "
    "selectors with an override (docs/sites.md#provider-packs)",
    "pack_invalid": "fix or delete the override file it names (docs/sites.md#provider-packs)",
}
#: What the page-ready probe found (page.js ``whenReady``), and what to do about it.
_PAGE_STATES = {
    "ready": (True, "composer found"),
    "login": (False, "shows its login page (login buttons, or the sign-in host)"),
    "challenge": (False, "shows a Cloudflare check"),
    "": (False, "no composer appeared (no pack selector for it matched)"),
}


@dataclass(frozen=True)
class Check:
    """One line of ``bridge doctor``: what was checked, whether it passed, and the fix."""

    name: str
    ok: bool | None  # None: not applicable or optional (shown, never a failure)
    detail: str
    fix: str = ""


def render(checks: Sequence[Check]) -> str:
    """A table for a terminal: status, check, what was found, what to do."""
    marks = {True: "ok", False: "FAIL", None: "--"}
    width = max(len(c.name) for c in checks)
    lines = []
    for c in checks:
        lines.append(f"{marks[c.ok]:<4}  {c.name:<{width}}  {c.detail}")
        if c.fix and c.ok is not True:
            lines.append(f"{'':<4}  {'':<{width}}  → {c.fix}")
    failed = sum(c.ok is False for c in checks)
    lines.append("")
    lines.append("all checks passed" if not failed else f"{failed} check(s) failed")
    return "\n".join(lines)


def check_browser(explicit: str | None, channel: str | None = None) -> Check:
    try:
        exe = find_browser(explicit, channel)
    except BridgeError as exc:
        fix = "install chromium, or pass --browser-path"
        if channel is not None:
            fix = f"install Chrome {channel.capitalize()}, or drop --channel"
        return Check("browser", False, str(exc), fix)
    try:
        version = subprocess.run(
            [str(exe), "--version"], capture_output=True, text=True, timeout=20, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        version = f"version unknown ({exc})"
    return Check("browser", True, f"{exe} — {version or 'version unknown'}")


def check_ports() -> Check:
    lo, hi = PORT_RANGE
    taken = []
    for port in range(lo, hi + 1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    taken.append(port)
    free = hi - lo + 1 - len(taken)
    detail = f"{free} of {hi - lo + 1} relay ports free in {lo}-{hi}"
    if taken:
        detail += f" (in use: {', '.join(map(str, taken[:8]))}{'…' if len(taken) > 8 else ''})"
    fix = "stop other bridges (or whatever holds these ports), or pass --relay-port"
    return Check("relay ports", free > 0, detail, fix if not free else "")


async def check_runtime_dir() -> Check:
    """The relays and native hosts registered in the runtime directory that still answer.

    Each endpoint is probed as the registry connects (``bridge.link.local_ipc.probe``): a
    Unix socket by connecting, a loopback TCP one (``.port``: Windows, or
    ``BRIDGE_LOCAL_IPC=tcp``) by proving the person's secret, which is read, never made.
    A stale endpoint (its owner died, or another process took its port) is removed, as the
    registry removes one it finds, and counted; one that could not be told is only counted."""
    try:
        path = runtime_dir()
    except OSError as exc:
        return Check("runtime directory", False, str(exc), "set BRIDGE_RUNTIME_DIR")
    rooms = ("relays", "hosts", HOSTS_ROOM)
    endpoints = [(room, p) for room in rooms for p in endpoint_files(path / room)]
    secret = existing_secret() if any(p.suffix == ".port" for _, p in endpoints) else None
    verdicts = await asyncio.gather(
        *(probe(p, secret=secret, timeout=_PROBE_S) for _, p in endpoints)
    )
    relays: list[str] = []
    hosts = claude_hosts = stale = 0
    unknown: list[str] = []
    for (room, p), (verdict, why) in zip(endpoints, verdicts, strict=True):
        if verdict == "live":
            if room == "relays":
                relays.append(p.stem)
            elif room == HOSTS_ROOM:
                claude_hosts += 1
            else:
                hosts += 1
        elif verdict == "stale":
            stale += 1
            with contextlib.suppress(FileNotFoundError):
                p.unlink()  # what the registry does with it (registry.connect_or_clean)
        else:
            unknown.append(f"{room}/{p.name} ({why})")
    mode = "" if os.name == "nt" else " (0700)"  # Windows: the profile's ACL guards it
    detail = (
        f"{path}{mode}: {len(relays)} relay(s) registered"
        + (f" on {', '.join(sorted(relays))}" if relays else "")
        + f", {hosts} native host(s) running"
        + (f", {claude_hosts} Claude extension host(s) running" if claude_hosts else "")
    )
    if stale:
        detail += f"; removed {stale} stale endpoint file(s) (their owners had ended)"
    if not unknown:
        return Check("runtime directory", True, detail)
    fix = (
        "run bridge doctor as the person whose bridge made them, with the same "
        "BRIDGE_TRUST_DIR (TCP endpoints are checked by proving that secret)"
        if secret is None
        else "run bridge doctor again; if they stay, stop the bridge that owns them"
    )
    return Check(
        "runtime directory",
        None,
        f"{detail}; not checked: {', '.join(unknown)}",
        fix,
    )


#: Seconds an endpoint has to answer a probe (a live one answers at once).
_PROBE_S = 2.0


def check_tokens(state_dir: Path) -> list[Check]:
    """Each token file as bridge would take it (bridge.link.tokens): mode and owner, never the
    value. A file bridge would not adopt is reported with what its next start does."""
    checks = []
    for name in ("mcp-token", "cdp-token"):
        path = state_dir / name
        if not path.exists() and not path.is_symlink():
            checks.append(
                Check(f"token {name}", None, f"{path}: not created yet (made on first use)")
            )
            continue
        problem = token_file_problem(path)
        if problem is None:
            mode = stat.S_IMODE(path.stat().st_mode)
            checks.append(Check(f"token {name}", True, f"{path}: mode {mode:04o}, yours"))
            continue
        checks.append(
            Check(
                f"token {name}",
                False,
                f"{path} {problem}",
                "bridge replaces it with a new token on its next start (never using this "
                "one); give your clients the new one then: bridge token "
                + name.removesuffix("-token"),
            )
        )
    return checks


def check_trust() -> Check:
    """The person's secret (bridge.link.trust_root): where, and that it is safe; never its value."""
    directory = trust_dir()
    path = directory / SECRET_FILE
    try:
        private_dir(directory, create=False)
    except TrustUnavailable as exc:
        if not directory.exists():
            return Check("secret", None, f"{path}: not made yet (made on first start)")
        return Check("secret", False, str(exc), "")
    if not path.exists() and not path.is_symlink():
        return Check("secret", None, f"{path}: not made yet (made on first start)")
    problem = token_file_problem(path)
    if problem is not None:
        return Check(
            "secret",
            False,
            f"{path} {problem}",
            "bridge replaces it on its next start: re-pair the extension then (bridge pair), "
            "or rely on the native host, which hands over the new one",
        )
    return Check("secret", True, f"{path}: mode 0600, yours, in a private directory")


def check_native_host() -> Check:
    found = []
    broken = []
    for browser in native_install.BROWSERS:
        try:
            manifest = native_install.manifest_path(browser)
        except ValueError:
            continue
        if not manifest.exists():
            continue
        try:
            wrapper = Path(json.loads(manifest.read_text(encoding="utf-8"))["path"])
        except (OSError, ValueError, KeyError):
            broken.append(f"{browser}: unreadable manifest {manifest}")
            continue
        if not os.access(wrapper, os.X_OK):
            broken.append(f"{browser}: {wrapper} missing or not executable")
        else:
            found.append(browser)
    if broken:
        return Check(
            "native host",
            False,
            "; ".join(broken),
            "bridge install-native-host --browser <name> (again)",
        )
    if not found:
        return Check(
            "native host",
            None,
            "not registered: your own Chrome's extension has no secret unless paired by hand "
            "(bridge pair), and then finds relays by probing ports",
            "bridge install-native-host (hands the extension the secret; no probing)",
        )
    return Check("native host", True, f"registered for {', '.join(found)}")


def check_claude_host(
    *,
    platform: str | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    registry: native_install.RegistryWriter | None = None,
) -> Check:
    """Who answers the Claude extension's host name in each browser: bridge or another program.

    Claude's own desktop tools register that name too, so another program's host is a fact
    to show, never a failure; only bridge's own registration pointing at nothing is one.
    The keywords are for tests."""
    name = "Claude extension host"
    kind = native_install.CLAUDE_HOST
    found = []
    broken = []
    unreadable = []
    for browser in native_install.BROWSERS:
        try:
            manifest = native_install.registered_manifest(
                browser, kind, platform=platform, home=home, env=env, registry=registry
            )
            ours = str(
                native_install.wrapper_path(
                    browser, platform=platform, home=home, env=env, kind=kind
                )
            )
        except (ValueError, OSError):
            continue
        if manifest is None:
            continue
        try:
            loaded = json.loads(manifest.read_text(encoding="utf-8"))
            program = loaded["path"]
            origins = loaded.get("allowed_origins", [])
            if not isinstance(program, str) or not isinstance(origins, list):
                raise TypeError("path or allowed_origins of the wrong type")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            unreadable.append(f"{browser}: unreadable manifest {manifest}")
            continue
        whose = "bridge's host" if program == ours else "another program's host"
        found.append(f"{browser}: {whose} ({program}) for {_extensions(origins)}")
        if program == ours and not os.access(program, os.X_OK):
            broken.append(f"{browser}: bridge's wrapper {program} missing or not executable")
    if broken:
        return Check(
            name,
            False,
            "; ".join(broken + found + unreadable),
            "bridge install-native-host --claude-extension --browser <name> (again), or "
            "with --uninstall to put back the host it replaced",
        )
    if not found and not unreadable:
        return Check(name, True, "not registered (bridge's own extension is used)")
    if unreadable:
        return Check(
            name,
            None,
            "; ".join(found + unreadable),
            "the Claude extension cannot start a host from an unreadable manifest: "
            "reinstall the program that wrote it",
        )
    return Check(name, True, "; ".join(found))


def _extensions(origins: list[object]) -> str:
    """The extensions a manifest lets start its host, the Claude extension by name."""
    names = [
        f"the Claude extension ({CLAUDE_EXTENSION_ID})"
        if origin == CLAUDE_ALLOWED_ORIGIN
        else str(origin)
        for origin in origins
    ]
    return ", ".join(names) if names else "no extension"


def check_packs(state_dir: Path) -> list[Check]:
    """Each provider's pack loads, with the person's override merged in when there is one."""
    checks = []
    for provider in PROVIDERS:
        override = override_path(provider, state_dir)
        try:
            load_pack(provider, state_dir)
        except PackError as exc:
            checks.append(Check(f"{provider} pack", False, str(exc), REMEDIES["pack_invalid"]))
            continue
        except BridgeError as exc:  # the state directory itself (StateDirUnsafe)
            checks.append(Check(f"{provider} pack", False, f"[{exc.code}] {exc}", ""))
            continue
        where = f"built-in + override {override}" if override.exists() else "built-in"
        checks.append(Check(f"{provider} pack", True, where))
    return checks


async def check_extension_and_sites(
    args: argparse.Namespace, live: bool, connect_timeout: float
) -> list[Check]:
    runtime = Runtime(options_from_args(args))
    checks: list[Check] = []
    try:
        await runtime.start()
    except (BridgeError, OSError) as exc:
        return [Check("extension", False, f"no relay could start: {exc}", "see relay ports")]
    try:
        try:
            link = await runtime.connected(connect_timeout)
        except BridgeError as exc:
            where = "the launched browser" if runtime.launched else "your Chrome"
            return [
                Check(
                    "extension",
                    False,
                    f"not connected from {where}: {exc}",
                    REMEDIES["extension_not_connected"],
                )
            ]
        checks.append(
            Check(
                "extension",
                True,
                f"version {link.hello.extension_version}, protocol {link.hello.protocol_version}, "
                f"linked by {link.via} to {runtime.relay.url}",
            )
        )
        if not live:
            checks.append(
                Check("sites", None, "not checked", "run with --live for a tiny ask to each site")
            )
            return checks
        capture_dir = getattr(args, "capture", None)
        for provider in PROVIDERS:
            page = await _page_check(runtime, provider)
            checks.append(page)
            if not page.ok:
                if capture_dir is not None:  # the page bridge could not ask: worth seeing
                    versions = {"extension": link.hello.extension_version}
                    checks.append(
                        await _page_capture(runtime, provider, Path(capture_dir), page, versions)
                    )
                continue
            if capture_dir is None:
                checks.append(await _ask_check(runtime, provider))
            else:
                versions = {"extension": link.hello.extension_version}
                checks.append(await _capture_check(runtime, provider, Path(capture_dir), versions))
        return checks
    finally:
        await runtime.stop()


async def _page_check(runtime: Runtime, provider: str) -> Check:
    """The provider's tab: reachable, and ready, or showing why it cannot be asked."""
    name = f"{provider} page"
    try:
        tab = await runtime.bridge.provider_tab(
            provider,  # type: ignore[arg-type]
            session_key=DOCTOR_KEY,
            new_chat=True,
        )
        page = provider_page(tab, runtime.bridge.store.root)
        state = str(await page.call("whenReady", provider, 15_000, timeout=15.0))
        url = str(await tab.evaluate("location.href"))
    except BridgeError as exc:
        fix = REMEDIES.get(exc.code, "run with --json and look at the debug dump it names")
        return Check(name, False, f"[{exc.code}] {exc}", fix.format(provider=provider))
    ok, found = _PAGE_STATES.get(state, (False, state))
    if ok:
        return Check(name, True, f"{found} at {url}")
    code = {"login": "login_required", "challenge": "challenge"}.get(state, "no_response")
    return Check(name, False, f"{url} {found}", REMEDIES[code].format(provider=provider))


async def _ask_check(runtime: Runtime, provider: str) -> Check:
    try:
        result = await runtime.bridge.ask(
            provider,  # type: ignore[arg-type]
            "Reply with the single word OK.",
            timeout=120.0,
            session_key=DOCTOR_KEY,
        )
    except BridgeError as exc:
        fix = REMEDIES.get(exc.code, "run with --json and look at the debug dump it names")
        return Check(provider, False, f"[{exc.code}] {exc}", fix.format(provider=provider))
    answer = result.answer.strip().replace("\n", " ")
    used = result.used
    source = used.extraction + (f" ({', '.join(used.fallbacks)})" if used.fallbacks else "")
    return Check(
        provider, True, f"answered {answer[:40]!r} in {result.url}; answer read from {source}"
    )


async def _capture_check(
    runtime: Runtime, provider: str, folder: Path, versions: Mapping[str, str]
) -> Check:
    """The tiny ask with a capture riding along (docs/captures.md): written to ``folder``
    whether the ask answered or not (a failed ask is when a capture matters most), and
    reviewed on the terminal so the person sees what it kept."""
    capture, result, error = await take_capture(
        runtime.bridge,
        provider,  # type: ignore[arg-type]
        session_key=DOCTOR_KEY,
        new_chat=False,
        versions=versions,
    )
    try:
        path = write_capture(folder, capture)
    except OSError as exc:
        return Check(
            f"{provider} capture",
            False,
            f"cannot write {folder}: {exc}",
            "pass a folder you can write to --capture",
        )
    _REVIEWS.append(review(capture, path))
    if error is not None:
        fix = REMEDIES.get(error.code, "run with --json and look at the debug dump it names")
        return Check(
            provider,
            False,
            f"[{error.code}] {error}; the page as it was is captured in {path}",
            fix.format(provider=provider) + f"; to report a changed site, share {path} "
            "(docs/captures.md#contributing-a-capture)",
        )
    assert result is not None
    answer = result.answer.strip().replace("\n", " ")
    return Check(provider, True, f"answered {answer[:40]!r}; captured in {path}")


async def _page_capture(
    runtime: Runtime, provider: str, folder: Path, page: Check, versions: Mapping[str, str]
) -> Check:
    """A page that failed its check, captured as it is (no ask was made)."""
    # The check's words, with any URL reduced to its shape (a conversation's id is no one's
    # business in a file meant to be shared).
    why = re.sub(r"https?://\S+", lambda m: url_shape(m.group(0)), page.detail)
    capture = await capture_page(
        runtime.bridge,
        provider,  # type: ignore[arg-type]
        f"not asked: {why}",
        session_key=DOCTOR_KEY,
        versions=versions,
    )
    try:
        path = write_capture(folder, capture)
    except OSError as exc:
        return Check(f"{provider} capture", False, f"cannot write {folder}: {exc}")
    _REVIEWS.append(review(capture, path))
    return Check(f"{provider} capture", None, f"the page as it is, not asked: {path}")


#: The reviews of the captures this run wrote, printed after the checks.
_REVIEWS: list[str] = []


async def run_checks(args: argparse.Namespace) -> list[Check]:
    checks = [
        check_browser(args.browser_path, getattr(args, "channel", None)),
        check_ports(),
        await check_runtime_dir(),
    ]
    state_dir = args.state_dir or default_state_dir()
    checks += check_tokens(state_dir)
    checks += check_packs(state_dir)
    checks.append(check_trust())
    checks.append(check_native_host())
    checks.append(check_claude_host())
    checks += await check_extension_and_sites(args, args.live, args.connect_timeout)
    return checks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--live", action="store_true", help="also ask each site a tiny question")
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.add_argument(
        "--capture",
        metavar="DIR",
        default=None,
        help="with --live: also capture what bridge relies on in each site (structure, the "
        "answer request's framing, completion signals; no conversation text) to "
        "DIR/<provider>.json, and print what was kept (docs/captures.md)",
    )
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=15.0,
        help="seconds to wait for the extension to connect (default 15)",
    )
    parser.add_argument(
        "--bundle",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help="also write a zip for a bug report (versions, these checks, the log's last lines; "
        "no tokens, secret, questions, answers or page text) to PATH (default: "
        "bridge-doctor-<time>.zip here)",
    )


def run(args: argparse.Namespace) -> int:
    if getattr(args, "capture", None) is not None and not args.live:
        print("error: --capture needs --live: a capture rides along the tiny ask", file=sys.stderr)
        return 2
    with contextlib.suppress(KeyboardInterrupt):
        _REVIEWS.clear()
        checks = asyncio.run(run_checks(args))
        if args.json:
            print(json.dumps([asdict(c) for c in checks], indent=2, ensure_ascii=False))
        else:
            print(render(checks))
        for text in _REVIEWS:  # stderr under --json, so standard output stays JSON
            print("\n" + text, file=sys.stderr if args.json else sys.stdout)
        status = 1 if any(c.ok is False for c in checks) else 0
        if getattr(args, "bundle", None) is not None:
            status = max(status, _bundle(args, checks))
        return status
    return 130


def _bundle(args: argparse.Namespace, checks: Sequence[Check]) -> int:
    """Write the bug-report zip (bridge.cli.bundle); said on stderr, so --json stays JSON."""
    from bridge.cli.bundle import default_bundle_path, write_bundle  # it imports this module

    path = Path(args.bundle) if args.bundle else default_bundle_path()
    log_file = log_file_from(getattr(args, "log_file", None))
    try:
        members = write_bundle(path, checks, log_file)
    except FileExistsError:
        print(f"error: {path} exists; pass another path to --bundle", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: cannot write {path}: {exc}; pass a writable path", file=sys.stderr)
        return 1
    note = "" if log_file else " (no log file known: run with --log-file PATH to include one)"
    print(f"bundle: {path} ({', '.join(members)}){note}", file=sys.stderr)
    return 0
