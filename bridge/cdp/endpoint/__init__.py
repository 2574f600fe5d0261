"""A DevTools endpoint through the extension: Playwright's ``connect_over_cdp`` and
Puppeteer's ``connect`` drive the person's Chrome, which exposes no debugging port.

On the relay's port: ``GET /json/version`` (and ``/json/version/``), ``/json/list`` (and
``/json``), and the ``/cdp`` WebSocket, each only with the token (``Authorization: Bearer``
or ``?token=``; the token is never served). Page-level CDP is forwarded to the tab through
``chrome.debugger``; browser-level CDP, which ``chrome.debugger`` does not have, is emulated
here: version, targets, auto-attach, sessions, contexts. Tabs are attached lazily, on the
first command a client sends to them. Each client has its own sessions; a client that
disconnects detaches nothing another user needs, and never closes the browser.

A client opens only what bridge's browser tools may open (``bridge.policy.urls``):
``Target.createTarget`` and ``Page.navigate``, in any session (page, iframe or browser), are
refused ``file:`` URLs unless the person started bridge with ``--allow-file-urls``, and every
``chrome-extension:`` URL (in bridge's own popup a script has ``chrome.debugger``). A tab
showing such a page is never listed, announced or sent commands, and neither is a tab whose
history holds bridge's own pages or (without the flag) a file: its script could go back there
(``history.back()``), which is no command the endpoint could recognise. Downloads are copied for
the client only once ``bridge.policy.downloads`` has checked what the extension link reported.

Every command frame gets exactly one answer: a frame that is no command (not JSON, not an
object, no integer id) a ``-32700`` error with a null id, a command of the wrong shape or
one that fails an error with its id. A client that sends faster than its commands complete
is slowed down, never dropped: at most ``MAX_IN_FLIGHT`` of its commands run at once, and
meanwhile nothing more is read from it (past ``MAX_QUEUED_FRAMES`` waiting frames, not even
from its socket), so a flood costs bounded memory and other clients keep their share.

The modules, one job each:

- ``server``: ``CdpEndpoint``, what the relay serves (``/json/*``, one ``/cdp`` connection
  per client) and which tabs clients may see;
- ``client``: ``CdpClient``, one connection: reading commands under backpressure, answering
  each exactly once, and what a client leaves behind when it goes;
- ``browser_methods``: the browser-level methods ``chrome.debugger`` lacks, as a table of
  handlers (``BROWSER_METHODS``);
- ``sessions``: a client's sessions on tabs (aliases), popups announced to it, and the
  page-level commands and events forwarded through them;
- ``downloads``: downloads reported as Chrome's browser-level events, and copied for a
  client once ``bridge.policy.downloads`` agrees;
- ``targets``: how a tab is described to DevTools clients.
"""

from __future__ import annotations

from bridge.cdp.endpoint.client import MAX_IN_FLIGHT, MAX_QUEUED_FRAMES, CdpClient
from bridge.cdp.endpoint.server import CdpEndpoint
from bridge.cdp.endpoint.targets import CONTEXT_ID

__all__ = ["CONTEXT_ID", "MAX_IN_FLIGHT", "MAX_QUEUED_FRAMES", "CdpClient", "CdpEndpoint"]
