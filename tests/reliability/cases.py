"""The fault and abuse cases of docs/RELIABILITY.md: what each is, and what bridge promises.

Tests name their case with ``@pytest.mark.reliability(N)``; ``table.py`` joins the two.
``NOTES`` says where a promise holds only in part, and what the person sees then.
"""

from __future__ import annotations

CASES: dict[int, tuple[str, str]] = {
    1: (
        "Foreign Origin / Host on every HTTP endpoint",
        "403 for a foreign Origin, 421 for a foreign Host; no CORS header that lets a page read",
    ),
    2: ("WebSocket to /extension from another origin", "403 before the upgrade"),
    3: (
        "Missing or wrong bearer token",
        "401, constant-time comparison; token files 0600, never printed or logged",
    ),
    4: ("Where servers listen", "127.0.0.1 unless told otherwise, and then still the token"),
    5: (
        "Malformed, oversized, nested, binary frames; unknown methods; other versions",
        "bounded memory, a clear error, the link keeps serving",
    ),
    6: ("A web page probing for bridge", "cannot reach any endpoint or read anything from it"),
    7: (
        "javascript:, file:, chrome:, chrome-extension: targets",
        "tools refuse them unless explicitly allowed",
    ),
    8: ("Service worker stopped while idle", "the next command works within 2 s"),
    9: (
        "Service worker stopped mid-command",
        "that command fails typed at once; the next works",
    ),
    10: ("Idle 35 s and 5 min", "the next command works at once, on the same link"),
    11: (
        "Cancel on the debugging bar (canceled_by_user)",
        "every tab released, the call says so, no re-attach on bridge's own",
    ),
    12: ("An attachment across a service-worker restart", "reused, not re-made"),
    13: (
        "target_closed on a tab that still exists",
        "re-attach and continue (domains enabled again)",
    ),
    14: (
        "Navigation to chrome:// mid-session",
        "a clear error while there, no zombie state, continues when back",
    ),
    15: (
        "Tab closed, crashed, navigated away, discarded, frozen mid-command or mid-ask",
        "typed error within 1 s; state files intact",
    ),
    16: ("Page with its own service worker; another extension's iframe", "can be attached"),
    17: ("alert, confirm, prompt, beforeunload", "never hang a call: it returns and says so"),
    18: (
        "Background tab in a background window",
        "screenshot and extraction work without stealing focus",
    ),
    19: ("20 tabs, one hung in an infinite loop", "the other 19 keep answering"),
    20: ("Relay killed with SIGKILL", "the extension reconnects to the next relay within 1 s"),
    21: (
        "Extension link drops under a connected MCP client",
        "calls fail typed, then work after reconnecting",
    ),
    22: (
        "Two bridge servers, two MCP clients",
        "no crosstalk, no kicking out, each sees its own tabs",
    ),
    23: ("Two processes asking at once", "no history line lost or torn, sessions.json valid"),
    24: ("Relay port range exhausted or port in use", "a clear error naming the range"),
    25: (
        "MCP client dies (stdin closed, SIGKILL)",
        "server and launched browser gone within 5 s, no temporary profile left",
    ),
    26: ("Browser restarted by the person", "reconnect, provider tabs found again by URL"),
    27: ("Extension and relay of different protocol versions", "refused, both versions named"),
    28: (
        "Disk full or read-only state directory",
        "asks still answer; the failure to record reported once",
    ),
    29: (
        "DevTools client disconnecting mid-command, sending garbage, flooding",
        "the person's tabs, other clients and the MCP server unaffected",
    ),
    30: (
        "Native host killed or removed",
        "fall back to probing and reconnect; a reinstall restores push, no browser restart",
    ),
    31: (
        "A rogue relay in the port range (a process without the person's secret)",
        "the extension serves no relay before it proves the secret: no tab, no cookie, no "
        "command; with the native host it is never even met; without a secret nothing is "
        "probed",
    ),
    32: (
        "A forged extension link (a program sending the extension's Origin)",
        "challenged, then refused (4004): no command, no tab list, no question; the real "
        "browser keeps serving; logged",
    ),
    33: (
        "The runtime directory squatted by another user (or a link)",
        "the native host fails closed: no secret handed over, the extension serves nothing, "
        "its popup says why",
    ),
    34: (
        "A second bridge (the demo, --launch) while the everyday server runs",
        "the everyday server keeps the person's browser; the launched browser links only to "
        "its own bridge",
    ),
    35: (
        "A hostile checkout (.local/bridge with packs and planted tokens)",
        "not adopted unless chosen; planted or loose token files replaced; a pack sending asks "
        "elsewhere refused",
    ),
    36: (
        "Download events naming paths (absolute, ..) or foreign files",
        "nothing written outside the client's download folder, nothing copied but the "
        "download itself",
    ),
    37: (
        "file: and chrome-extension: through the DevTools endpoint",
        "refused in every session; extension pages never listed, attached or driven",
    ),
    38: (
        "Tokens on stdout, stderr or in logs",
        "never, at any log level; `bridge token` prints one when asked",
    ),
    39: (
        "Files by prompt injection (~/.ssh/id_rsa, files outside the allowed roots)",
        "refused with the flag to pass named; nothing read or sent; no byte fallback",
    ),
    40: (
        "A client acting on one of the person's tabs",
        "refused until the person shares it from the popup (or --tabs all); never attached",
    ),
    41: (
        "Two of the person's browsers linked to one relay",
        "the first serves; the second waits until the first goes away or the person picks "
        "it in its popup; every switch logged",
    ),
    42: (
        "Pairing by hand",
        "the secret only to whoever types the relay's one-time code; a wrong code or a rogue "
        "relay learns nothing; the code dies after use, 10 minutes or 5 wrong proofs",
    ),
    43: (
        "--host beyond loopback",
        "refused without TLS (or --insecure-remote); HTTPS with the token",
    ),
    44: (
        "The test browser's own DevTools",
        "a pipe only the test process holds, no port anyone on the machine could drive it through",
    ),
    45: (
        "A program other than the Claude extension starts bridge's Claude host",
        "the host refuses any other caller origin and exits without a byte; the manifest names "
        "only that extension",
    ),
    46: (
        "A local process squats a Claude host's endpoint (Windows' loopback TCP)",
        "it cannot prove the person's secret: refused, its endpoint file removed, no call sent",
    ),
    47: (
        "The Claude extension answers a tool after its caller gave up",
        "the late answer is dropped, never handed to the next caller (its answers carry no id)",
    ),
    48: (
        "The Claude extension goes away during a call",
        "the call fails at once with extension_disconnected, not at its deadline",
    ),
}

NOTES: dict[int, str] = {
    4: "IPv6 and a single LAN address for --host are not tested.",
    5: (
        "A frame over the configured maximum closes only its own link (code 1009) instead of "
        "being read: memory stays bounded; the extension reconnects."
    ),
    6: (
        "A page cannot read anything, but an opaque no-cors answer (or a WebSocket failing at "
        "once) still tells it that something listens on that port, as for any local server."
    ),
    15: (
        "Closed, crashed, navigated away and frozen are tested (a frozen tab still answers). "
        "Discarding has no DevTools command, so it is not tested."
    ),
    8: (
        "A stopped worker is started again by the extension's wake alarm: every 1.5 s while a "
        "relay is connected (bridge in use), every 30 s otherwise, so an idle browser is "
        "woken twice a minute at most; Chrome offers no faster wake-up from outside."
    ),
    11: (
        "Headless Chromium has no debugging bar to press Cancel on, so the browser side is "
        "played by a stand-in over the real relay; the extension forwards every detach "
        "reason unchanged (case 14 proves that path in real Chromium)."
    ),
    16: (
        "A page with its own service worker is attached and driven. A page holding another "
        "extension's frame cannot be: Chrome refuses chrome.debugger there ('Cannot access a "
        "chrome-extension:// URL of different extension'); bridge says so, typed, at once, and "
        "keeps serving its other tabs."
    ),
    18: (
        "Headless Chromium has no window focus; the tests check that no tab became active and, "
        "headed, that the person's page keeps focus."
    ),
    22: (
        "A server without --launch serves the browser that linked first (a later one waits, "
        "case 41); two servers on one browser are told apart by their relays, as tested."
    ),
    31: (
        "Another user is played by programs that never read the person's secret: a rogue "
        "relay in the range (tests/impostors.py) and a plain client; a process of another "
        "user cannot read it (0600 in a 0700 directory). A same-user process can, and is out "
        "of reach by design (docs/protocol.md#security)."
    ),
    33: (
        "Another user's directory is played by one chown-ed to nobody (root, as in CI) and "
        "by a symlink (any user)."
    ),
    35: "Another user's files are played by chown to uid 65534 (root, as in CI).",
    29: (
        "A flooding client is slowed (256 commands in flight, then its socket is not read), "
        "never dropped; one that dies with its reading paused is noticed by the WebSocket "
        "keepalive (20-40 s)."
    ),
}
