"""``python -m bridge.bench.peers``: bridge's browser tools against playwright-mcp's.

Both MCP servers run over stdio, each with its own headless Chromium (the same executable),
driven by the MCP SDK client through the same task list on the same local pages (a form, a
long article, a table of a few thousand nodes): navigate, snapshot, click, type and read
text (``browser_evaluate`` on both sides: the closest tool each has), and the lean calls:
``browser_snapshot`` with ``depth`` and ``target``, ``browser_find``, and bridge's snapshot
``diff`` after acting (playwright-mcp has none: it returns its whole snapshot there). Calls
are interleaved task by task, the order alternating every round, so drift hits both.
Figures, each bridge ÷ playwright-mcp: spawn to first page open, the median time per tool
call by task, the characters each snapshot and search returns, and all the text the task
list returns.

playwright-mcp is an optional peer: without Node.js or the npm package the comparison is
skipped with a note (``{"skipped": why}``), never an error, and no browser is downloaded.
Install it with ``npm install --prefix ~/.cache/bridge-bench @playwright/mcp``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from bridge import __version__
from bridge.app.launcher import find_browser
from bridge.bench import serve_pages
from bridge.bench.stats import Figure, median, render_table

__all__ = ["INSTALL_HINT", "PEER", "SETTLE_OFF", "Peer", "find_peer", "main", "measure_peers"]

PEER = "playwright-mcp"
#: The same peer with its settle wait off (by default it waits 500 ms after each action for
#: triggered work to settle): the comparison the issue on speed sets the target on.
SETTLE_OFF = "playwright-mcp --timeout-settle=0"
SETTLE_OFF_ARGS = ["--timeout-settle=0"]
PACKAGE = "@playwright/mcp"
DEFAULT_PREFIX = Path("~/.cache/bridge-bench")
PREFIX_ENV = "BRIDGE_BENCH_NODE_PREFIX"
INSTALL_HINT = (
    "install Node.js (sudo apt-get install nodejs npm) and the package "
    "(PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix ~/.cache/bridge-bench "
    "@playwright/mcp), or point $BRIDGE_BENCH_NODE_PREFIX at another npm prefix"
)
#: The capability groups both servers serve for the task list (the same names on both).
CAPS = "network,storage,vision,testing"
CALL_TIMEOUT = 60.0  # seconds one tool call may take before the run fails
START_TIMEOUT = 90.0  # seconds a server may take to start and open its first page
EXIT_GRACE = 10.0  # seconds the servers' processes get to end on their own after the run
#: What kills a server left running: SIGKILL; Windows has none (os.kill's SIGTERM there is
#: TerminateProcess, which cannot be caught either).
_KILL: int = getattr(signal, "SIGKILL", signal.SIGTERM)


# -- the pages ---------------------------------------------------------------------------


def _form() -> str:
    countries = "".join(
        f"<option>{c}</option>"
        for c in ("France", "Germany", "Japan", "Kenya", "Brazil", "Canada", "India", "Spain")
    )
    return (
        "<title>Sign up</title><header><nav aria-label=Site><a href=#>Home</a> "
        "<a href=#pricing>Pricing</a> <a href=#docs>Docs</a></nav></header>"
        "<main><h1>Create your account</h1>"
        '<form id=signup onsubmit="event.preventDefault(); '
        "document.getElementById('status').textContent = 'Submitted'\">"
        "<p><label>Full name <input id=name name=name autocomplete=off></label></p>"
        "<p><label>Email <input id=email name=email type=email></label></p>"
        "<p><label>Password <input id=password type=password></label></p>"
        "<p><label>Company <input id=company></label></p>"
        f"<p><label>Country <select id=country>{countries}</select></label></p>"
        "<fieldset><legend>Plan</legend>"
        "<label><input type=radio name=plan value=free checked> Free</label> "
        "<label><input type=radio name=plan value=pro> Pro</label></fieldset>"
        "<p><label><input type=checkbox id=terms> I accept the terms</label></p>"
        "<p><label>About you <textarea id=about></textarea></label></p>"
        '<button type=button id=add onclick="this.dataset.n = (+this.dataset.n || 0) + 1; '
        "document.getElementById('status').textContent = 'Team members: ' + this.dataset.n\">"
        "Add a team member</button> "
        "<button type=submit>Create account</button> <button type=reset>Clear</button>"
        "</form><p id=status role=status>No team members yet</p></main>"
        "<script>console.log('form ready')</script>"
    )


def _article() -> str:
    toc = "".join(f"<li><a href=#s{i}>Section {i}</a></li>" for i in range(40))
    body = "".join(
        f"<section><h2 id=s{i}>Section {i}: how generators work</h2>"
        + "".join(
            f"<p>Paragraph {j} of section {i}. Generators produce values lazily; each next() "
            "resumes the function where it yielded, so pipelines process one item at a time "
            "and memory stays flat however long the input is.</p>"
            for j in range(5)
        )
        + "</section>"
        for i in range(40)
    )
    return (
        "<title>Generators</title><nav aria-label=Contents><ul>"
        f"{toc}</ul></nav><main><article><h1>Generators in depth</h1>{body}</article></main>"
    )


TABLE_ROWS = 400


def _table() -> str:
    head = "".join(f"<th>{c}</th>" for c in ("Id", "Name", "Email", "City", "Plan", "Spent"))
    rows = "".join(
        f"<tr><td>{i}</td><td>User {i}</td><td>user{i}@example.test</td><td>City {i % 40}</td>"
        f"<td>{'pro' if i % 3 else 'free'}</td><td>{i * 7.5:.2f}</td></tr>"
        for i in range(TABLE_ROWS)
    )
    return (
        "<title>Customers</title><main><h1>Customers</h1>"
        "<p><label>Filter <input id=filter type=search></label> "
        '<button id=more onclick="this.dataset.n = (+this.dataset.n || 0) + 1; '
        "document.querySelector('caption').textContent = 'Customers, page ' + "
        '(1 + +this.dataset.n)">Next page</button></p>'
        f"<table><caption>Customers, page 1</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{rows}</tbody></table></main>"
    )


PAGES = {"form": _form(), "article": _article(), "table": _table()}


def _page(path: str, query: Mapping[str, list[str]]) -> str | None:
    page = PAGES.get(path.strip("/"))
    return None if page is None else "<!doctype html><meta charset=utf-8>" + page


# -- the task list -----------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One held-out browser task: the page it opens and the tool call each peer makes on it
    (``peer_args``: what playwright-mcp is asked instead, when it lacks the option, e.g. the
    whole snapshot where bridge is asked for a diff)."""

    name: str
    page: str
    tool: str
    args: dict[str, Any]
    peer_args: dict[str, Any] | None = None
    #: playwright-mcp's name for the same tool, where it differs from bridge's.
    peer_tool: str | None = None

    @property
    def is_snapshot(self) -> bool:
        return self.tool == "browser_snapshot"

    def args_for(self, label: str) -> dict[str, Any]:
        if label != "bridge" and self.peer_args is not None:
            return self.peer_args
        return self.args

    def tool_for(self, label: str) -> str:
        return self.peer_tool if label != "bridge" and self.peer_tool else self.tool

    @property
    def size_figure(self) -> str | None:
        """The name of this task's size row, if its size is a figure: the page's whole
        snapshot ("snapshot size: form page"), a lean snapshot or a search (by task name)."""
        if self.is_snapshot and not self.args:
            return f"snapshot size: {self.page} page"
        if self.is_snapshot:
            return f"snapshot size: {self.name}"
        if self.tool == "browser_find":
            return f"find size: {self.name}"
        return None


def _read(selector: str) -> dict[str, Any]:
    return {"function": f"() => document.querySelector({selector!r}).innerText"}


def tasks(base: str) -> list[Task]:
    """Every call of one round, in order (each server keeps its own page between calls).
    Elements are named by CSS selectors, which both tool sets take as ``target``. The lean
    calls (depth, target, browser_find) use the options both have under the same names;
    playwright-mcp has no snapshot diff, so there it is asked for the whole snapshot (what
    an agent without diffs reads after acting)."""
    return [
        Task("navigate (form)", "form", "browser_navigate", {"url": f"{base}/form"}),
        Task("snapshot (form)", "form", "browser_snapshot", {}),
        Task("click (form)", "form", "browser_click", {"target": "#add"}),
        Task("type (form)", "form", "browser_type", {"target": "#name", "text": "Ada Lovelace"}),
        Task("read text (form)", "form", "browser_evaluate", _read("#status")),
        Task(
            "snapshot diff after click+type (form)",
            "form",
            "browser_snapshot",
            {"diff": True},
            peer_args={},
        ),
        Task("find (form)", "form", "browser_find", {"text": "team member"}),
        # The rest of the tools both have by default (the issue on speed lists them).
        Task("screenshot (form)", "form", "browser_screenshot", {}, {}, "browser_take_screenshot"),
        Task("hover (form)", "form", "browser_hover", {"target": "#add"}),
        Task(
            "select (form)",
            "form",
            "browser_select_option",
            {"target": "#country", "values": ["Japan"]},
        ),
        Task("press key (form)", "form", "browser_press_key", {"key": "Tab"}),
        Task("tabs list (form)", "form", "browser_tabs", {"action": "list"}),
        Task(
            "wait for text (form)",
            "form",
            "browser_wait",
            {"text": "Create your account"},
            None,
            "browser_wait_for",
        ),
        Task(
            "console (form)",
            "form",
            "browser_get_console_logs",
            {},
            None,
            "browser_console_messages",
        ),
        Task("network (form)", "form", "browser_network_requests", {}),
        # The capability groups' tools both have (bridge's --tools and playwright-mcp's
        # --caps network,storage,vision,testing), on the same page.
        Task("route (form)", "form", "browser_route", {"pattern": "**/bench-mock", "body": "{}"}),
        Task("route list (form)", "form", "browser_route_list", {}),
        Task("unroute (form)", "form", "browser_unroute", {"pattern": "**/bench-mock"}),
        Task("cookie list (form)", "form", "browser_cookie_list", {}),
        Task("click x,y (form)", "form", "browser_mouse_click_xy", {"x": 5, "y": 5}),
        Task(
            "verify text visible (form)",
            "form",
            "browser_verify_text_visible",
            {"text": "Create your account"},
        ),
        Task("navigate (article)", "article", "browser_navigate", {"url": f"{base}/article"}),
        Task("snapshot (article)", "article", "browser_snapshot", {}),
        Task("read text (article)", "article", "browser_evaluate", _read("article")),
        Task("snapshot depth=2 (article)", "article", "browser_snapshot", {"depth": 2}),
        Task("snapshot target=nav (article)", "article", "browser_snapshot", {"target": "nav"}),
        Task("find (article)", "article", "browser_find", {"text": "Section 39"}),
        Task("navigate (table)", "table", "browser_navigate", {"url": f"{base}/table"}),
        Task("snapshot (table)", "table", "browser_snapshot", {}),
        Task("click (table)", "table", "browser_click", {"target": "#more"}),
        Task("type (table)", "table", "browser_type", {"target": "#filter", "text": "User 12"}),
        Task("read text (table)", "table", "browser_evaluate", _read("table")),
        Task("snapshot depth=3 (table)", "table", "browser_snapshot", {"depth": 3}),
        Task("snapshot target=thead (table)", "table", "browser_snapshot", {"target": "thead"}),
        Task("find (table)", "table", "browser_find", {"text": "user12@"}),
        Task(
            "screenshot (table)", "table", "browser_screenshot", {}, {}, "browser_take_screenshot"
        ),
    ]


# -- finding the peer --------------------------------------------------------------------


@dataclass(frozen=True)
class Peer:
    """An installed playwright-mcp: run as ``node <cli>``."""

    node: str
    cli: Path
    version: str


def _package_at(package_json: Path, node: str) -> Peer | None:
    try:
        meta = json.loads(package_json.read_text())
    except (OSError, ValueError):
        return None
    bins = meta.get("bin") or "cli.js"
    relative = bins if isinstance(bins, str) else next(iter(bins.values()), "cli.js")
    cli = package_json.parent / relative
    if not cli.is_file():
        return None
    return Peer(node=node, cli=cli, version=str(meta.get("version", "?")))


def find_peer(*, node: str = "node", prefix: Path | None = None) -> Peer | str:
    """playwright-mcp under the npm prefix (``prefix``, else ``$BRIDGE_BENCH_NODE_PREFIX``,
    else ``~/.cache/bridge-bench``, then a global ``playwright-mcp`` on PATH when no prefix
    was given), or why not, with how to install it. Nothing is downloaded."""
    node_path = shutil.which(node)
    if node_path is None:
        return f"Node.js not found ({node!r} is not on PATH); {INSTALL_HINT}"
    explicit = prefix is not None
    where = (prefix or Path(os.environ.get(PREFIX_ENV) or DEFAULT_PREFIX)).expanduser()
    candidates = [where / "node_modules" / "@playwright" / "mcp" / "package.json"]
    global_bin = None if explicit else shutil.which("playwright-mcp")
    if global_bin:  # a global install: node_modules/.bin/playwright-mcp -> ../@playwright/mcp
        candidates.append(Path(global_bin).resolve().parent / "package.json")
    for candidate in candidates:
        peer = _package_at(candidate, node_path)
        if peer is not None:
            return peer
    return f"{PACKAGE} is not installed under {where}; {INSTALL_HINT}"


# -- running both servers ----------------------------------------------------------------


@dataclass
class _Server:
    label: str
    params: StdioServerParameters
    client: Client | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def command_line(self) -> list[str]:
        return [self.params.command, *self.params.args]


def _text_of(result: Any) -> str:
    return "".join(getattr(part, "text", "") or "" for part in result.content)


async def _call(server: _Server, task: Task) -> tuple[float, str, bool]:
    """(milliseconds, the text returned, whether it was an error) for one tool call."""
    assert server.client is not None
    t0 = time.perf_counter()
    result = await server.client.call_tool(task.tool_for(server.label), task.args_for(server.label))
    ms = (time.perf_counter() - t0) * 1000
    return ms, _text_of(result), bool(result.is_error)


async def _version_of(command: list[str]) -> str:
    with contextlib.suppress(OSError, TimeoutError):
        proc = await asyncio.create_subprocess_exec(
            *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), 15)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise
        lines = out.decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else "?"
    return "?"


def _ours(root: str) -> list[int]:
    """Processes started for this run: their working directory or command line is in
    ``root`` (both servers run there and make their browser profiles under it)."""
    found: list[int] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if cwd.startswith(root) or root in cmdline:
            found.append(int(entry.name))
    return found


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _pidfds(pids: list[int]) -> list[int]:
    """A descriptor per pid that becomes readable when the process ends (Linux's pidfd);
    none elsewhere (macOS, Windows), where what is left is killed without the grace period,
    as before on a Linux without pidfd. Pids already gone are left out."""
    fds: list[int] = []
    if sys.platform != "linux":
        return fds
    if not hasattr(os, "pidfd_open"):  # Linux before 5.3
        return fds
    for pid in pids:
        with contextlib.suppress(OSError):  # already gone
            fds.append(os.pidfd_open(pid))
    return fds


async def _reap(root: str) -> list[int]:
    """Waits (at most ``EXIT_GRACE``) for the servers' processes and browsers to end on
    their own, then kills any still there by pid. Returns the pids it had to kill (none
    when both servers tidied up after themselves)."""
    loop = asyncio.get_running_loop()
    ended: list[asyncio.Future[None]] = []
    fds: list[int] = []
    for fd in _pidfds(_ours(root)):
        fds.append(fd)
        future: asyncio.Future[None] = loop.create_future()
        loop.add_reader(fd, _settle, future)
        ended.append(future)
    try:
        if ended:
            await asyncio.wait(ended, timeout=EXIT_GRACE)
    finally:
        for fd in fds:
            loop.remove_reader(fd)
            os.close(fd)
    left = _ours(root)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, _KILL)
    return left


def _servers(
    peer: Peer,
    tmp: str,
    browser: str,
    chromium_args: list[str],
    peer_args: list[str],
    settle_off: bool,
) -> tuple[Path, _Server, list[_Server]]:
    """The run's directory (as /proc/<pid>/cwd shows it), bridge's server and the peer's
    (with its defaults, then with its settle wait off when ``settle_off``), to run in it."""
    root = Path(tmp).resolve()
    env = {**os.environ, "TMPDIR": str(root), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}
    bridge_args = ["-m", "bridge.mcp", "--launch", "--headless", "--isolated"]
    # The same groups on both sides: the default browser tools and the capabilities the
    # task list uses (playwright-mcp's --caps below).
    bridge_args += ["--tools", "browser," + CAPS, "--state-dir", str(root / "bridge-state")]
    bridge_args += ["--browser-path", browser]
    bridge_args += [f"--chrome-arg={arg}" for arg in chromium_args]
    bridge = _Server(
        "bridge",
        StdioServerParameters(command=sys.executable, args=bridge_args, env=env, cwd=str(root)),
    )
    # Chromium refuses to run as root with its sandbox; bridge's launcher adds the same flag.
    sandbox = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    config = {
        "browser": {
            "browserName": "chromium",
            "launchOptions": {
                "executablePath": browser,
                "headless": True,
                "args": [*sandbox, *chromium_args],
            },
        }
    }
    config_path = root / "playwright-mcp.json"
    config_path.write_text(json.dumps(config, indent=2))
    base_args = [str(peer.cli), "--config", str(config_path), "--isolated", "--headless"]
    base_args += ["--caps", CAPS]
    peers = []
    for n, (label, extra) in enumerate(
        [(PEER, []), *([(SETTLE_OFF, SETTLE_OFF_ARGS)] if settle_off else [])]
    ):
        args = [*base_args, "--output-dir", str(root / f"playwright-mcp-output-{n}")]
        args += [*peer_args, *extra]
        peers.append(
            _Server(
                label, StdioServerParameters(command=peer.node, args=args, env=env, cwd=str(root))
            )
        )
    return root, bridge, peers


async def _start(server: _Server, stack: AsyncExitStack, errlog: Any, first: Task) -> float:
    """Spawns the server, then opens the first page: milliseconds from spawn to that page."""
    t0 = time.perf_counter()
    client = Client(stdio_client(server.params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT)
    server.client = await stack.enter_async_context(client)
    info = client.server_info
    server.info = {"name": info.name, "version": info.version} if info else {}
    _, text, error = await _call(server, first)
    if error:
        raise RuntimeError(f"{first.tool} failed: {text[:500]}")
    return (time.perf_counter() - t0) * 1000


def _stderr_tail(path: Path, limit: int = 1500) -> str:
    with contextlib.suppress(OSError):
        return path.read_text(errors="replace")[-limit:]
    return ""


async def measure_peers(
    *,
    rounds: int,
    quick: bool,
    chromium_args: list[str] | None = None,
    browser_path: str | None = None,
    node: str = "node",
    prefix: Path | None = None,
    peer_args: list[str] | None = None,
    settle_off: bool = True,
) -> tuple[list[Figure], dict[str, Any]]:
    """The same task list through bridge's MCP server and playwright-mcp, interleaved.

    ``rounds`` measured rounds (after one warm-up round; ``quick`` warms up with one page
    only). Returns the figures (bridge ÷ playwright-mcp: time per call by task, snapshot
    size by page, all text returned) and the raw numbers; or no figures and
    ``{"skipped": why}`` when Node.js or the package is missing or the peer cannot start.
    ``chromium_args`` go to both browsers; ``peer_args`` to playwright-mcp only (e.g.
    ``--timeout-settle=0``: by default it waits 500 ms for the page to settle after an
    action, which dominates its click and evaluate times). With ``settle_off`` a third
    server, playwright-mcp with ``--timeout-settle=0``, runs the same calls, and each tool
    call gets a second figure against it (target 1.0: bridge at most as slow).
    """
    found = find_peer(node=node, prefix=prefix)
    if isinstance(found, str):
        return [], {"skipped": found}
    peer = found
    browser = str(find_browser(browser_path))
    extra = list(chromium_args or [])
    with tempfile.TemporaryDirectory(prefix="bridge-peers-") as tmp, serve_pages(_page) as base:
        root, bridge, peers = _servers(peer, tmp, browser, extra, list(peer_args or []), settle_off)
        labels = [bridge.label, *(p.label for p in peers)]
        task_list = tasks(base)
        raw: dict[str, Any] = {
            "rounds": rounds,
            "quick": quick,
            "browser": await _version_of([browser, "--version"]),
            "node": await _version_of([peer.node, "--version"]),
            "read_text_tool": "browser_evaluate (both): () => element.innerText",
            "pages": {},
            "tasks": {
                t.name: {
                    "tool": t.tool,
                    "args": {k: v for k, v in t.args.items() if k != "url"},
                    **({f"{PEER}_args": t.peer_args} if t.peer_args is not None else {}),
                    **({f"{PEER}_tool": t.peer_tool} if t.peer_tool is not None else {}),
                    **{f"{label}_ms": [] for label in labels},
                    **{f"{label}_chars": [] for label in labels},
                    "errors": [],
                }
                for t in task_list
            },
        }
        try:
            await _run(bridge, peers, task_list, raw, root, rounds=rounds, quick=quick)
        except _PeerFailed as exc:
            return [], {"skipped": f"{PEER} could not run: {exc}", **_describe(bridge, peers)}
        finally:
            raw["killed_leftovers"] = await _reap(str(root))
            raw["tmp_root"] = str(root)
        raw.update(_describe(bridge, peers))
        raw["servers"]["bridge"]["version"] = __version__
        for server in peers:
            raw["servers"][server.label]["version"] = peer.version
    return _figures(task_list, raw), raw


class _PeerFailed(Exception):
    pass


def _describe(bridge: _Server, peers: list[_Server]) -> dict[str, Any]:
    return {
        "servers": {
            s.label: {"server_info": s.info, "command": s.command_line} for s in (bridge, *peers)
        }
    }


async def _run(
    bridge: _Server,
    peers: list[_Server],
    task_list: list[Task],
    raw: dict[str, Any],
    root: Path,
    *,
    rounds: int,
    quick: bool,
) -> None:
    async with AsyncExitStack() as stack:
        logs = {}
        for n, server in enumerate((bridge, *peers)):
            logs[server.label] = root / f"server-{n}.stderr.log"
            errlog = stack.enter_context(logs[server.label].open("w"))
            try:
                async with asyncio.timeout(START_TIMEOUT):
                    raw.setdefault("start_ms", {})[server.label] = round(
                        await _start(server, stack, errlog, task_list[0]), 1
                    )
            except Exception as exc:
                errlog.flush()
                why = f"{type(exc).__name__}: {exc} {_stderr_tail(logs[server.label])}".strip()
                if server is not bridge:
                    raise _PeerFailed(why) from exc
                raise RuntimeError(f"bridge's MCP server did not start: {why}") from exc
        # Sizes of the pages as the browser sees them (the same DOM for both).
        for page in PAGES:
            nav = next(t for t in task_list if t.page == page and t.tool == "browser_navigate")
            await _call(bridge, nav)
            count = Task("count", page, "browser_evaluate", {"function": _COUNT})
            _, text, _ = await _call(bridge, count)
            with contextlib.suppress(ValueError):
                raw["pages"][page] = json.loads(text)
        warm_up = task_list[:1] if quick else task_list
        for task in warm_up:
            for server in (bridge, *peers):
                await _call(server, task)
        for n in range(rounds):
            order = [bridge, *peers] if n % 2 == 0 else [*reversed(peers), bridge]
            for task in task_list:
                for server in order:
                    try:
                        ms, text, error = await _call(server, task)
                    except Exception as exc:  # a peer that crashes or hangs ends the run
                        if server is not bridge:
                            raise _PeerFailed(f"{task.name}: {type(exc).__name__}: {exc}") from exc
                        raise
                    record = raw["tasks"][task.name]
                    if error:
                        record["errors"].append(f"{server.label}: {text[:300]}")
                        continue
                    record[f"{server.label}_ms"].append(round(ms, 2))
                    record[f"{server.label}_chars"].append(len(text))
                    if task.tool == "browser_evaluate" and n == 0:
                        record[f"{server.label}_sample"] = text[:120]


_COUNT = (
    "() => ({html_chars: document.documentElement.outerHTML.length,"
    " elements: document.querySelectorAll('*').length,"
    " text_chars: document.body.innerText.length})"
)


def _figures(task_list: list[Task], raw: dict[str, Any]) -> list[Figure]:
    start = raw.get("start_ms", {})
    figures = [
        Figure(
            "start: spawn → first page open",
            "ms",
            start.get("bridge", float("nan")),
            start.get(PEER),
            PEER,
            None,
            note="one sample; both launch their own Chromium",
        )
    ]
    for task in task_list:
        record = raw["tasks"][task.name]
        b, p = median(record["bridge_ms"]), median(record[f"{PEER}_ms"])
        record["bridge_median_ms"], record[f"{PEER}_median_ms"] = round(b, 2), round(p, 2)
        note = f"{task.tool}; median of {len(record['bridge_ms'])}"
        if record["errors"]:
            note += f"; {len(record['errors'])} failed calls"
        figures.append(Figure(f"tool call: {task.name}", "ms", b, p, PEER, None, note=note))
    for task in task_list if f"{SETTLE_OFF}_ms" in raw["tasks"][task_list[0].name] else []:
        record = raw["tasks"][task.name]
        b, s = median(record["bridge_ms"]), median(record[f"{SETTLE_OFF}_ms"])
        record[f"{SETTLE_OFF}_median_ms"] = round(s, 2)
        note = f"{task.tool}; median of {len(record['bridge_ms'])}"
        figures.append(
            Figure(f"tool call (settle off): {task.name}", "ms", b, s, SETTLE_OFF, 1.0, note=note)
        )
    for task in task_list:
        label = task.size_figure
        if label is None:
            continue
        record = raw["tasks"][task.name]
        b, p = median(record["bridge_chars"]), median(record[f"{PEER}_chars"])
        elements = raw["pages"].get(task.page, {}).get("elements", "?")
        note = f"{elements} elements"
        if task.args:
            note += f"; {task.tool} {json.dumps(task.args)}"
        if task.peer_args is not None:
            note += f"; {PEER}: {json.dumps(task.peer_args)}"
        figures.append(Figure(label, "chars", b, p, PEER, None, note=note))
    # What the whole task list hands the model (one round): the token cost of the work.
    b_total = sum(median(raw["tasks"][t.name]["bridge_chars"]) for t in task_list)
    p_total = sum(median(raw["tasks"][t.name][f"{PEER}_chars"]) for t in task_list)
    figures.append(
        Figure(
            "text returned by the whole task list",
            "chars",
            b_total,
            p_total,
            PEER,
            None,
            note=f"{len(task_list)} calls, one round",
        )
    )
    return figures


# -- the command -------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bridge.bench.peers", description=(__doc__ or "").splitlines()[0]
    )
    p.add_argument("--quick", action="store_true", help="3 rounds, a one-page warm-up")
    p.add_argument("--rounds", type=int, help="measured rounds (default 10, quick 3)")
    p.add_argument("--out", type=Path, default=Path("reports"), help="where the JSON goes")
    p.add_argument("--browser-path", help="the Chromium both servers launch")
    p.add_argument("--node", default="node", help="the Node.js executable (default: node)")
    p.add_argument(
        "--node-prefix",
        type=Path,
        help=f"the npm prefix holding {PACKAGE} (default: ${PREFIX_ENV} or {DEFAULT_PREFIX})",
    )
    p.add_argument(
        "--peer-arg",
        action="append",
        default=[],
        metavar="ARG",
        help=f"an extra {PEER} option, e.g. --peer-arg=--timeout-settle=0 (repeatable)",
    )
    args = p.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 10)
    started = time.monotonic()
    figures, raw = asyncio.run(
        measure_peers(
            rounds=rounds,
            quick=args.quick,
            browser_path=args.browser_path,
            node=args.node,
            prefix=args.node_prefix,
            peer_args=args.peer_arg,
        )
    )
    report = {
        "created_at": datetime.now(UTC).isoformat(),
        "quick": args.quick,
        "rounds": rounds,
        "seconds": round(time.monotonic() - started, 1),
        "figures": [f.to_dict() for f in figures],
        "peers": raw,
    }
    if "skipped" in raw:
        print(f"peer comparison skipped: {raw['skipped']}")
    else:
        print(render_table(figures))
        servers = raw["servers"]
        print(
            f"\nbridge {servers['bridge']['version']} vs {PEER} {servers[PEER]['version']} "
            f"({servers[PEER]['server_info'].get('name', '')} "
            f"{servers[PEER]['server_info'].get('version', '')}), {raw['browser']}, "
            f"node {raw['node']}; read text = {raw['read_text_tool']}"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = args.out / f"peers-{stamp}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=2, default=str) + "\n")
    tmp.replace(path)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
