"""``bridge`` (or ``python -m bridge``): terminal commands over the same core the MCP server uses.

- ``python -m bridge ask "question" [--provider chatgpt|gemini|both] [--file PATH …] [--mode M]
  [--conversation URL|ID] [--project ID] [--gpt ID] [--gem ID] [--temporary]
  [--launch]``: ask once and print the answer (``--json`` for the whole result); each
  ``--file`` goes with the question (docs/sites.md#attachments).
  [--effort TIER] [--deep-think] [--launch]``: ask once and print the answer (``--json`` for
  the whole result); each ``--file`` goes with the question (docs/sites.md#attachments);
  ``--effort`` / ``--deep-think`` choose the thinking effort (docs/sites.md#effort);
  ``--research`` [``--research-answers TEXT``] runs Deep Research (docs/sites.md#research),
  on both sites at once with ``--provider both``.
- ``python -m bridge relay [--launch] [--headless]``: run a relay, optionally with a
  launched Chromium, and report when the extension connects (until Ctrl-C).
- ``python -m bridge cdp``: a DevTools endpoint for Playwright/Puppeteer.
- ``python -m bridge token mcp|cdp [--url]``: print a token (for a person who asks).
- ``python -m bridge install-native-host [--browser …] [--uninstall]``: register the native
  host (it hands the extension the person's secret, and the extension learns of relays by
  push instead of probing ports); with ``--claude-extension``, bridge as the official Claude
  extension's host instead (what it replaces is kept; ``--uninstall`` puts it back).
- ``python -m bridge pair``: without the native host, pair the extension by hand: a one-time
  code the person types into bridge's popup.
- ``python -m bridge doctor [--live] [--json] [--launch …]``: check everything bridge needs.
- ``python -m bridge snapshot chatgpt|gemini|TAB_ID``: a tab's accessibility outline and a
  PNG screenshot (the MCP tool ``take_cdp_snapshot``'s view).

Every command takes ``--log-file PATH`` and honours ``BRIDGE_LOG`` (``bridge.logs``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import stat
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, cast

from bridge.app.runtime import (
    Runtime,
    RuntimeOptions,
    add_allow_path_argument,
    add_runtime_arguments,
    file_policy,
    options_from_args,
    start_error,
)
from bridge.cli import capture as capture_command
from bridge.cli import doctor
from bridge.cli import snapshot as snapshot_command
from bridge.cli import token as token_command
from bridge.cli.about import version_line
from bridge.cli.demo import DEMO_NOTE, demo_setup, demo_summary, refuse_demo_options
from bridge.cli.progress import TerminalProgress
from bridge.cli.token import show_command
from bridge.errors import AttachmentRefused, BridgeError, PathNotAllowed
from bridge.link import native_install
from bridge.link.relay import PAIRING_S, Relay
from bridge.logs import LogSetupError, add_log_arguments, setup_logging
from bridge.providers.attachments import Attachments, prepare_files
from bridge.providers.places import resolve_place
from bridge.providers.results import PROVIDERS, AskResult, Provider
from bridge.providers.specs import AskOptions, Where, provider_spec
from bridge.signals import StopSignals
from bridge.store.state import StateStore, default_state_dir
from bridge.tools.browsing import ToolSettings
from bridge.waiting import scaled
from bridge.wire.extension import PORT_RANGE, extension_dir


def _start_error(exc: OSError, args: argparse.Namespace) -> str:
    return start_error(exc, getattr(args, "relay_port", None))


async def _relay_main(args: argparse.Namespace) -> int:
    runtime = Runtime(options_from_args(args))
    if args.launch and runtime.headless and not args.headless:
        print("no display found: launching the browser headless", flush=True)
    started = time.monotonic()
    stop = asyncio.Event()
    signals = StopSignals(stop.set).install()
    try:
        await runtime.start()
        print(f"relay listening on {runtime.relay.url}", flush=True)
        lo, hi = PORT_RANGE
        if not lo <= runtime.relay.port <= hi:
            print(
                f"note: the extension looks for relays on ports {lo}-{hi} only; a browser "
                f"will not find this one on {runtime.relay.port}",
                flush=True,
            )
        if runtime.launched:
            print(
                f"launched {runtime.launched.executable} (pid {runtime.launched.pid}, profile "
                f"{runtime.launched.profile})",
                flush=True,
            )
        else:
            print("waiting for Chrome with the bridge extension to connect…", flush=True)
            if not native_install.registered_anywhere():
                print(f"note: {native_install.SETUP_HINT}", flush=True)
        link = await runtime.connected(scaled(60.0) if runtime.launched else 3600.0)
        tabs = await runtime.browser.list_tabs()
        print(
            f"extension connected after {time.monotonic() - started:.2f}s: "
            f"extension {link.hello.extension_version}, {len(tabs)} tab(s) open",
            flush=True,
        )
        print("ready; Ctrl-C to stop", flush=True)
        waiter: asyncio.Future[object] = asyncio.ensure_future(stop.wait())
        lost: asyncio.Future[object] = link.closed  # type: ignore[assignment]
        await asyncio.wait({waiter, lost}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if link.closed.done():
            print(f"extension disconnected: {link.closed.result()}", flush=True)
        return 0
    except BridgeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if runtime.launched:
            print(runtime.launched.stderr_tail(), file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {_start_error(exc, args)}", file=sys.stderr)
        if runtime.launched:
            print(runtime.launched.stderr_tail(), file=sys.stderr)
        return 1
    finally:
        try:
            await runtime.stop()
        finally:  # after the clean-up: a signal while stopping must not cut it short
            signals.undo()


async def _pair_main(args: argparse.Namespace) -> int:
    """Offer a one-time pairing code and wait until the person's extension has paired."""
    relay = Relay(port=args.relay_port, register=False)
    try:
        await relay.start()
    except OSError as exc:
        print(f"error: {_start_error(exc, args)}", file=sys.stderr)
        return 1
    try:
        offer = relay.start_pairing(args.timeout)
        print(
            "Pair your browser with bridge (once per browser profile): click bridge's icon in "
            "the toolbar, and enter this code in its popup:\n\n"
            f"    {offer.code}\n\n"
            f"The code works once, for {args.timeout / 60:.0f} minutes, and only for the "
            "extension of this machine's bridge (it never leaves this machine). "
            "`bridge install-native-host` does the same without a code.",
            flush=True,
        )
        try:
            hello = await asyncio.wait_for(offer.done, args.timeout)
        except TimeoutError:
            print(
                "error: no extension paired in time; run `bridge pair` again for a new code",
                file=sys.stderr,
            )
            return 1
        except BridgeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(
            f"paired: the extension of browser {hello.instance_id[:8]} now proves bridge's "
            "secret, and finds your relays by itself",
            flush=True,
        )
        return 0
    finally:
        await relay.stop()


async def _cdp_main(args: argparse.Namespace) -> int:
    """Serve the DevTools endpoint: a line with its URL and one naming the token's file on
    stdout (never the token: ``bridge token cdp`` prints it), then until told to stop
    (SIGTERM, SIGINT, or stdin closing)."""
    options = options_from_args(args)
    options.cdp = True
    # The endpoint opens file: URLs only with the person's opt-in, as the browser tools do.
    options.tool_settings = ToolSettings(allow_file_urls=args.allow_file_urls)
    runtime = Runtime(options)
    stop = asyncio.Event()
    signals = StopSignals(stop.set).install()
    # Read without a thread: a thread blocked in read() would keep the process alive after
    # SIGTERM while stdin stays an open pipe.
    stdin_closed = await _stdin_eof()
    try:
        await runtime.start()
        port, state_dir = runtime.relay.port, options.state_dir or default_state_dir()
        print(f"CDP endpoint: ws://127.0.0.1:{port}/cdp", flush=True)
        print(
            f"CDP token: in {state_dir / 'cdp-token'}; send it as 'Authorization: Bearer "
            f"<token>' (`{show_command('cdp', options.state_dir)}` prints it; "
            f"`{show_command('cdp', options.state_dir, port)}` the URL with it, for a client "
            "that cannot send headers)",
            flush=True,
        )
        waits: set[asyncio.Future[object]] = {asyncio.ensure_future(stop.wait())}
        if stdin_closed is not None:
            waits.add(stdin_closed)
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for w in waits:
            w.cancel()
        return 0
    except BridgeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {_start_error(exc, args)}", file=sys.stderr)
        return 1
    finally:
        try:
            await runtime.stop()
        finally:  # after the clean-up: a signal while stopping must not cut it short
            signals.undo()


async def _stdin_eof() -> asyncio.Future[object] | None:
    """A future done when stdin closes (read without a thread, so nothing blocks exit);
    None when stdin is a terminal or a file, which never 'closes'."""
    if sys.stdin is None:
        return None
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):
        return None
    # Only a pipe or a socket can close under us. A terminal, a file or /dev/null (a character
    # device epoll refuses with EPERM, reported later from a loop callback) never "closes".
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return None
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    except (ValueError, OSError):
        return None

    async def until_eof() -> object:
        while await reader.read(65536):
            pass
        return None

    return asyncio.ensure_future(until_eof())


def parse_modes(given: list[str]) -> dict[Provider, str]:
    """``--mode`` values -> each provider's mode: ``thinking`` is for every provider asked,
    ``chatgpt=thinking`` for one (docs/sites.md#modes)."""
    modes: dict[Provider, str] = {}
    for value in given:
        provider, sep, mode = value.partition("=")
        targets: list[Provider] = list(PROVIDERS)
        if not sep:
            mode = value
        if sep and provider not in ("chatgpt", "gemini"):
            raise ValueError(
                f"--mode {value!r}: {provider!r} is no provider; write MODE or chatgpt=MODE / "
                "gemini=MODE"
            )
        if not mode.strip():
            raise ValueError(f"--mode {value!r} names no mode (e.g. --mode thinking)")
        if sep:
            targets = [cast(Provider, provider)]
        for target in targets:
            modes[target] = mode.strip()
    return modes


def parse_where(
    args: argparse.Namespace, providers: list[Provider], state_dir: Path | None = None
) -> dict[Provider, Where]:
    """``--conversation``, ``--project``, ``--gpt``, ``--gem``, ``--temporary`` -> each
    provider's place (docs/sites.md#where), every form checked (ValueError) before a browser
    starts. ``--conversation`` is ``URL`` (with both providers, the URL's host says whose),
    ``ID`` for one provider, or ``chatgpt=URL|ID`` / ``gemini=URL|ID`` (repeatable)."""
    conversations: dict[Provider, str] = {}
    for value in args.conversation:
        target, sep, rest = value.partition("=")
        if sep and target in PROVIDERS:
            conversations[cast(Provider, target)] = rest
            continue
        hosts = [p for p in PROVIDERS if value.startswith(provider_spec(p).url_prefixes)]
        if len(providers) == 1:
            conversations[providers[0]] = value
        elif len(hosts) == 1:
            conversations[hosts[0]] = value
        else:
            raise ValueError(
                f"--conversation {value!r}: with both providers, give chatgpt=URL|ID or "
                "gemini=URL|ID (or a URL on one of their sites)"
            )
    for side in conversations:
        if side not in providers:
            raise ValueError(f"--conversation names {side}, which is not asked (--provider)")
    for flag, site in (("project", "chatgpt"), ("gpt", "chatgpt"), ("gem", "gemini")):
        if getattr(args, flag) is not None and site not in providers:
            raise ValueError(f"--{flag} is a {site} place: ask {site} (--provider {site}|both)")
    where: dict[Provider, Where] = {}
    for p in providers:
        where[p] = {
            "conversation": conversations.get(p),
            "project": args.project if p == "chatgpt" else None,
            "gpt": args.gpt if p == "chatgpt" else None,
            "gem": args.gem if p == "gemini" else None,
            "temporary": bool(args.temporary),
        }
        if any(where[p].values()):  # only a place needs the pack (its URL forms)
            resolve_place(
                provider_spec(p, state_dir), AskOptions(new_chat=bool(args.new_chat), **where[p])
            )
    return where


def check_effort_args(provider: str, effort: str | None, deep_think: bool) -> None:
    """``--effort`` is ChatGPT's, ``--deep-think`` Gemini's (docs/sites.md#effort): refused
    before any browser starts when the side it belongs to is not asked."""
    if effort is not None and provider not in ("chatgpt", "both"):
        raise ValueError(
            "--effort is ChatGPT's thinking effort: use it with --provider chatgpt or both "
            "(for Gemini, --deep-think)"
        )
    if effort is not None and not effort.strip():
        raise ValueError("--effort names no tier (e.g. --effort high)")
    if deep_think and provider not in ("gemini", "both"):
        raise ValueError(
            "--deep-think is Gemini's Deep Think: use it with --provider gemini or both "
            "(for ChatGPT, --effort)"
        )


def check_research_args(
    provider: str, research: bool, answers: str | None, temporary: bool
) -> None:
    """``--research-answers`` needs ``--research`` (with ``--provider both`` the same answers
    go to whichever site asks questions: docs/sites.md#research); neither goes with
    ``--temporary`` (the site refuses research there, SITE-FACTS C9.13)."""
    if answers is not None and not research:
        raise ValueError("--research-answers answers Deep Research's questions: add --research")
    if research and temporary:
        raise ValueError("--research does not go with --temporary (no Deep Research there)")
    if answers is not None and not answers.strip():
        raise ValueError("--research-answers is empty")


async def _ask_main(args: argparse.Namespace, options: RuntimeOptions | None = None) -> int:
    options = options or options_from_args(args)
    try:  # before any browser starts: a file that cannot go costs nothing
        files = await asyncio.to_thread(prepare_files, args.file, policy=file_policy(options))
    except (AttachmentRefused, PathNotAllowed) as exc:
        print(f"error [{exc.code}]: {exc}", file=sys.stderr)
        return 1
    providers: list[Provider] = (
        list(PROVIDERS) if args.provider == "both" else [cast(Provider, args.provider)]
    )
    try:
        modes = parse_modes(args.mode)
        where = parse_where(args, providers, options.state_dir)
        check_effort_args(args.provider, args.effort, args.deep_think)
        check_research_args(args.provider, args.research, args.research_answers, args.temporary)
    except BridgeError as exc:  # a pack override that cannot be used: not a usage error
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    options.connect_timeout = args.connect_timeout
    runtime = Runtime(options)
    # The live lines only where a person watches: a terminal, and not --json.
    live = (
        TerminalProgress(providers, sys.stdout, lambda: shutil.get_terminal_size().columns)
        if not args.json and sys.stdout.isatty()
        else None
    )
    try:
        await runtime.start()
        if live is not None:
            live.start()
        try:
            return await _ask_and_print(args, runtime, files, modes, where, live)
        finally:
            if live is not None:
                await live.close()
    except BridgeError as exc:
        print(f"error [{exc.code}]: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # at start-up: the relay's port, the runtime directory, …
        print(f"error: {_start_error(exc, args)}", file=sys.stderr)
        return 1
    finally:
        await runtime.stop()


def _side_text(provider: Provider, outcome: AskResult | Exception) -> str:
    """One side of ``--provider both`` as printed: its answer, or its error."""
    if isinstance(outcome, AskResult):
        return f"## {provider}\n\n{outcome.answer}\n"
    code = getattr(outcome, "code", type(outcome).__name__)
    return f"## {provider}\n\nerror [{code}]: {outcome}\n"


async def _ask_and_print(
    args: argparse.Namespace,
    runtime: Runtime,
    files: Attachments,
    modes: dict[Provider, str],
    where: dict[Provider, Where],
    live: TerminalProgress | None,
) -> int:
    """Ask, printing each answer the moment it is complete (above the live lines on a
    terminal), or with ``--json`` the whole result once at the end."""
    on_progress = live.on_progress if live is not None else None
    if args.provider == "both":

        def side_done(provider: Provider, outcome: AskResult | Exception) -> None:
            if args.json:
                return
            text = _side_text(provider, outcome)
            if live is None:
                print(text, flush=True)
            elif isinstance(outcome, AskResult):
                live.answer(provider, text, chars=len(outcome.answer))
            else:
                live.answer(provider, text, error=getattr(outcome, "code", "error"))

        both = await runtime.bridge.ask_both(
            args.question,
            new_chat=args.new_chat,
            timeout=args.timeout,
            files=files,
            modes=modes,
            effort=args.effort,
            deep_think=args.deep_think,
            on_progress=on_progress,
            on_done=side_done,
            conversations={p: w["conversation"] for p, w in where.items()},
            project=where["chatgpt"]["project"],
            gpt=where["chatgpt"]["gpt"],
            gem=where["gemini"]["gem"],
            temporary=args.temporary,
            outputs_dir=args.outputs,
            research=args.research,
            research_answers=dict.fromkeys(PROVIDERS, args.research_answers),
        )
        if args.json:
            print(json.dumps(both.to_dict(), ensure_ascii=False, indent=2))
        for side in both.results.values():
            _print_outputs(side)
        return 0 if both.results else 1
    provider = cast(Provider, args.provider)
    try:
        result = await runtime.bridge.ask(
            provider,
            args.question,
            new_chat=args.new_chat,
            timeout=args.timeout,
            files=files,
            mode=modes.get(provider),
            effort=args.effort,
            deep_think=args.deep_think,
            on_progress=on_progress,
            **where[provider],
            outputs_dir=args.outputs,
            research=args.research,
            research_answers=args.research_answers,
        )
    except BridgeError as exc:
        if live is not None:  # the line says how it ended; the message follows on stderr
            live.board.end(provider, live.clock(), error=exc.code)
        raise
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    elif live is not None:
        live.answer(provider, result.answer, chars=len(result.answer))
    else:
        print(result.answer, flush=True)
    _print_outputs(result)
    return 0


def _print_outputs(result: AskResult) -> None:
    """Where the answer's generated images and files were saved (docs/sites.md#outputs):
    on stderr, so stdout stays the answer alone."""
    for output in result.used.outputs:
        print(
            f"saved {output['kind']}: {output['path']} ({output['bytes']} bytes, {output['mime']})",
            file=sys.stderr,
            flush=True,
        )


async def _ask_demo(args: argparse.Namespace) -> int:
    """``ask --demo``: the same ask against the built-in fake sites (bridge.cli.demo), then the
    timings and history lines the ask left, from a state directory that is removed after."""
    options = options_from_args(args)
    refusal = refuse_demo_options(options)
    if refusal is not None:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    with demo_setup(options) as setup:
        print(DEMO_NOTE, file=sys.stderr, flush=True)
        started = time.monotonic()
        status = await _ask_main(args, options)
        wall_ms = (time.monotonic() - started) * 1000
        if status == 0 and not args.json:
            history = StateStore(setup.state_dir).history()
            print("\n".join(demo_summary(history, wall_ms)), flush=True)
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bridge", description="Terminal commands over the same core the MCP server uses."
    )
    parser.add_argument("--version", action="version", version=version_line("bridge"))
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser(
        "extension-path",
        help="print the folder of the extension that ships with bridge (for Load unpacked)",
        description="Print the folder of bridge's extension. In Chrome: chrome://extensions, "
        "turn on Developer mode, Load unpacked, and choose this folder.",
    )
    ask = sub.add_parser("ask", help="ask ChatGPT, Gemini or both once and print the answer")
    ask.add_argument("question")
    ask.add_argument("--provider", choices=["chatgpt", "gemini", "both"], default="both")
    ask.add_argument("--new-chat", action="store_true", help="start a new conversation")
    ask.add_argument("--timeout", type=float, default=None, help="seconds to wait for the answer")
    ask.add_argument("--json", action="store_true", help="print the whole result as JSON")
    ask.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="PATH",
        help="a file to send with the question (repeatable): small text files go into the "
        "question, others through the site's upload; at most 10, 25 MB each, 50 MB in all",
    )
    ask.add_argument(
        "--mode",
        action="append",
        default=[],
        metavar="[PROVIDER=]MODE",
        help="the site's mode to ask in, as its picker names it (e.g. thinking, instant, pro); "
        "chatgpt=MODE or gemini=MODE for one side (repeatable). The ask fails, with nothing "
        "sent, when the page does not show the mode chosen",
    )
    ask.add_argument(
        "--conversation",
        action="append",
        default=[],
        metavar="[PROVIDER=]URL|ID",
        help="continue this conversation: its URL on the site, or its id; with both "
        "providers chatgpt=… or gemini=… (repeatable). Fails, nothing sent, when the page "
        "does not show it",
    )
    ask.add_argument(
        "--project",
        metavar="ID|URL",
        help="ChatGPT: ask in a new chat inside this project (g-p-<32 hex> or its URL)",
    )
    ask.add_argument(
        "--gpt", metavar="ID|URL", help="ChatGPT: ask this custom GPT (g-<id> or its URL)"
    )
    ask.add_argument(
        "--gem", metavar="ID|URL", help="Gemini: ask this Gem (its id or /gem/<id> URL)"
    )
    ask.add_argument(
        "--temporary",
        action="store_true",
        help="ask in a temporary chat: the site keeps no history and bridge records no "
        "session; fails, nothing sent, when the page does not confirm it",
    )
    ask.add_argument(
        "--effort",
        metavar="TIER",
        help="ChatGPT's thinking effort, as its Effort menu names the tier (instant, medium, "
        "high, extra high, pro; also light, standard, extended, heavy, max). The ask fails, "
        "with nothing sent, when the page does not show the tier chosen",
    )
    ask.add_argument(
        "--deep-think",
        action="store_true",
        help="turn on Gemini's Deep Think (Tools -> Deep Think) before asking; the ask fails, "
        "with nothing sent, when the page does not show it on",
    )
    ask.add_argument(
        "--outputs",
        metavar="DIR",
        help="save the images and files the answer generates in DIR (default: a folder of "
        "the ask's own under the state directory, docs/sites.md#outputs); their paths are "
        "printed on stderr (in used.outputs with --json). A protected place (~/.ssh, browser "
        "profiles, bridge's state) is refused before anything is asked",
    )
    ask.add_argument(
        "--research",
        action="store_true",
        help="Deep Research (docs/sites.md#research): turned on in the site's own control "
        "(nothing is sent when it is not offered), then waits (default timeout 40 min) and "
        "prints the report with its sources, or the site's clarifying questions",
    )
    ask.add_argument(
        "--research-answers",
        metavar="TEXT",
        default=None,
        help="with --research: the answers to the site's clarifying questions, sent as the "
        "next message when it asks them",
    )
    ask.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        help="seconds to wait for the extension to connect (default 10)",
    )
    ask.add_argument(
        "--demo",
        action="store_true",
        help="try it without an account: ask bridge's built-in fake ChatGPT and Gemini in a "
        "headless Chromium it launches (temporary profile and state; nothing leaves this "
        "machine), then show the timings and the history line",
    )
    add_runtime_arguments(ask)
    add_allow_path_argument(ask)
    relay = sub.add_parser("relay", help="run a relay and report the extension's connection")
    add_runtime_arguments(relay, state=False)
    cdp = sub.add_parser(
        "cdp", help="serve a DevTools endpoint for Playwright/Puppeteer through the extension"
    )
    add_runtime_arguments(cdp)
    token = sub.add_parser(
        "token",
        help="print the MCP or DevTools token (stdout only; servers never print it)",
        description="Print a token bridge keeps in its state directory, for a client's "
        "configuration: bridge token mcp, bridge token cdp [--url].",
    )
    token_command.add_arguments(token)
    cdp.add_argument(
        "--allow-file-urls",
        action="store_true",
        help="let DevTools clients open and drive file: URLs (the person's local files)",
    )
    native = sub.add_parser(
        "install-native-host",
        help="register bridge's native host with a browser: the extension then learns of "
        "relays the moment they start, with no port probing",
    )
    native_install.add_arguments(native)
    pair = sub.add_parser(
        "pair",
        help="pair the extension by hand, without the native host: a one-time code for its popup",
    )
    pair.add_argument("--relay-port", type=int, help="relay port (default: first free)")
    pair.add_argument(
        "--timeout", type=float, default=PAIRING_S, help="seconds the code stays valid"
    )
    doc = sub.add_parser(
        "doctor", help="check the browser, extension, ports, tokens and native host (and sites)"
    )
    doctor.add_arguments(doc)
    add_runtime_arguments(doc)
    capture_command.add_arguments(
        sub.add_parser(
            "capture",
            help="show a site capture, or compare two (docs/captures.md)",
            description="Show what a capture (bridge doctor --live --capture DIR) kept, or "
            "list the differences that matter to bridge between two captures.",
        )
    )
    snapshot_command.add_arguments(
        sub.add_parser(
            "snapshot",
            help="what a tab shows: its accessibility outline, and a screenshot file",
            description="Print the accessibility outline of a tab (chatgpt, gemini or a tab "
            "id) and write a PNG screenshot of it: what the MCP tool take_cdp_snapshot shows.",
        )
    )
    for command in sub.choices.values():  # every command logs the same way (bridge.logs)
        add_log_arguments(command)
    args = parser.parse_args(argv)
    try:
        setup_logging(log_file=args.log_file)
    except LogSetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.command == "extension-path":
        print(extension_dir())
        return 0
    if args.command == "install-native-host":
        return native_install.run(args)
    if args.command == "doctor":
        return doctor.run(args)
    if args.command == "token":
        return token_command.run(args)
    if args.command == "capture":
        return capture_command.run(args)
    runners: dict[str, Callable[[argparse.Namespace], Coroutine[Any, Any, int]]] = {
        "ask": _ask_demo if args.command == "ask" and args.demo else _ask_main,
        "relay": _relay_main,
        "cdp": _cdp_main,
        "pair": _pair_main,
        "snapshot": snapshot_command.run,
    }
    runner = runners[args.command]
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(runner(args))
    return 130


if __name__ == "__main__":
    sys.exit(main())
