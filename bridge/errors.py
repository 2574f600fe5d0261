"""Typed errors. Each says what went wrong and what a person can do about it."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "AttachmentFailed",
    "AttachmentRefused",
    "BridgeError",
    "BridgeTimeout",
    "CdpError",
    "ClaudeExtensionNotConnected",
    "ClaudeToolError",
    "CommandFailed",
    "ConsentRequired",
    "DebuggerDetached",
    "EmulationInvalid",
    "ExtensionDisconnected",
    "ExtensionNotConnected",
    "FileAccessOff",
    "InsightUnknown",
    "NotOverClaudeExtension",
    "NotSent",
    "PathNotAllowed",
    "PdfFailed",
    "PlaceNotFound",
    "QuestionTakenBack",
    "StorageScopeRefused",
    "StorageStateInvalid",
    "TabClosed",
    "TemporaryChatUnavailable",
    "TraceBusy",
    "TraceFileRefused",
    "TraceNotRunning",
    "TraceOptionsInvalid",
    "TraceTooLarge",
]


class BridgeError(Exception):
    """Base of every error bridge raises on purpose. ``code`` is stable for machines."""

    code = "bridge_error"


class ExtensionNotConnected(BridgeError):
    """No extension linked to this relay in time; the message says how to set it up."""

    code = "extension_not_connected"

    def __init__(self, detail: str = "") -> None:
        msg = (
            "The bridge extension is not connected to this relay"
            + (f" ({detail})" if detail else "")
            + ". Load it in Chrome: chrome://extensions -> Developer mode -> Load unpacked -> "
            "the folder `bridge extension-path` prints; then give it your secret once: "
            "`bridge install-native-host` (and reload the extension), or `bridge pair` and type "
            "the code into its popup. Or "
            "start bridge with --launch so it opens its own browser."
        )
        super().__init__(msg)


class ExtensionDisconnected(BridgeError):
    """The extension's connection dropped while something was in flight."""

    code = "extension_disconnected"


class TabClosed(BridgeError):
    """The tab is gone (closed, crashed for good, or in a browser bridge no longer serves)."""

    code = "tab_closed"

    def __init__(self, tab_id: int, detail: str = "") -> None:
        super().__init__(f"tab {tab_id} was closed" + (f" ({detail})" if detail else ""))
        self.tab_id = tab_id


class TabCrashed(BridgeError):
    """The tab's page crashed ("Aw, Snap!"): commands fail at once until it loads again."""

    code = "tab_crashed"

    def __init__(self, tab_id: int) -> None:
        super().__init__(
            f"the page in tab {tab_id} crashed; reload the tab (or navigate it) and retry"
        )
        self.tab_id = tab_id


class NavigatedAway(BridgeError):
    """The provider's page was replaced by another document while it was answering."""

    code = "navigated_away"

    def __init__(self, provider: str, url: str) -> None:
        super().__init__(
            f"the {provider} tab left the answer for {url or 'another page'} while it was being "
            "written; ask again"
        )
        self.url = url


class DebuggerDetached(BridgeError):
    """Chrome took the debugger off a tab that still exists (the person's Cancel, chrome://)."""

    code = "debugger_detached"

    def __init__(self, tab_id: int, reason: str) -> None:
        hint = (
            " (someone pressed Cancel on Chrome's 'is debugging this browser' bar: bridge"
            " let go of every tab and attaches again only when asked, by the next ask or tool"
            " call)"
            if reason == "canceled_by_user"
            else ""
        )
        super().__init__(f"the debugger detached from tab {tab_id}: {reason}{hint}")
        self.tab_id = tab_id
        self.reason = reason


class CdpError(BridgeError):
    """Chrome answered a CDP command with an error."""

    code = "cdp_error"

    def __init__(self, method: str, message: str, cdp_code: int | None = None) -> None:
        super().__init__(f"{method} failed: {message}" + (f" (CDP {cdp_code})" if cdp_code else ""))
        self.method = method
        self.cdp_code = cdp_code
        self.detail = message  # Chrome's own words, e.g. "Not allowed"


class CommandFailed(BridgeError):
    """The extension refused or failed a relay command (not a CDP error)."""

    code = "command_failed"

    def __init__(self, method: str, error_code: str, message: str) -> None:
        super().__init__(f"{method}: {message} [{error_code}]")
        self.method = method
        self.error_code = error_code
        self.message = message


class BridgeTimeout(BridgeError, TimeoutError):
    """A wait bounded by a deadline ran out; the message names what was awaited and how long."""

    code = "timeout"

    def __init__(self, what: str, seconds: float) -> None:
        super().__init__(f"timed out after {seconds:.1f}s waiting for {what}")
        self.what = what
        self.seconds = seconds


class ProviderError(BridgeError):
    """Something the provider's page showed or did; ``provider`` is chatgpt or gemini."""

    code = "provider_error"

    def __init__(self, provider: str, message: str) -> None:
        super().__init__(message)
        self.provider = provider


class LoginRequired(ProviderError):
    """The site shows its login wall: the person must log in in that browser first."""

    code = "login_required"

    def __init__(self, provider: str) -> None:
        site = "ChatGPT (chatgpt.com)" if provider == "chatgpt" else "Gemini (gemini.google.com)"
        super().__init__(
            provider,
            f"{site} shows its login page: log in to {site} in the browser bridge uses "
            "(with --launch, the bridge window; its profile keeps the login), then ask again.",
        )


class ChallengeShown(ProviderError):
    """A Cloudflare check ("Just a moment…") stands in front of the site."""

    code = "challenge"

    def __init__(self, provider: str) -> None:
        site = "chatgpt.com" if provider == "chatgpt" else "gemini.google.com"
        super().__init__(
            provider,
            f"{site} shows a Cloudflare check ('Just a moment…', 'Verify you are human'): open "
            "that tab in the browser bridge uses, complete the check, then ask again.",
        )


class RateLimited(ProviderError):
    """The site says too many requests: try later (the message keeps the site's words)."""

    code = "rate_limited"

    def __init__(self, provider: str, notice: str, *, reset: str | None = None) -> None:
        when = (
            f"Try again after {reset.strip()} (the site's reset time)"
            if reset
            else "Wait until the limit resets (the notice may say when)"
        )
        super().__init__(
            provider,
            f"{provider} is rate limiting this account: {notice.strip()!r}. {when}, or ask "
            "the other provider meanwhile.",
        )
        self.notice = notice
        #: When the limit resets, as the site said it (a ``retry-after`` value in seconds or
        #: an HTTP date, or the time the notice shows); None when it said nothing.
        self.reset = reset


class ProviderErrorTurn(ProviderError):
    """The site answered with an error turn instead of an answer."""

    code = "error_turn"

    def __init__(self, provider: str, notice: str) -> None:
        super().__init__(
            provider,
            f"{provider} answered with an error instead of an answer: {notice.strip()[:200]!r}. "
            "Ask again (a new chat often helps).",
        )


class ProviderStuck(ProviderError):
    """The answer stopped progressing and never completed within the deadline."""

    code = "stuck"

    def __init__(self, provider: str, reason: str, attempts: int) -> None:
        what = (
            "its stop button never went away"
            if reason == "stuck_stop_button"
            else "no response ever started"
        )
        super().__init__(
            provider,
            f"{provider} got stuck ({what}) on {attempts} attempt(s). Reload the "
            f"{provider} tab or start a new chat, then ask again.",
        )
        self.reason = reason


class NoResponse(ProviderError):
    """The question was sent but no answer turn ever appeared (not a timeout of ours)."""

    code = "no_response"

    def __init__(self, provider: str, reason: str) -> None:
        super().__init__(
            provider,
            f"{provider} showed no answer after the question was sent ({reason}). Look at the "
            f"{provider} tab (take_cdp_snapshot shows it): the site may be waiting for you, "
            "e.g. a dialog or a model choice; then ask again.",
        )
        self.reason = reason


class ConversationNotFound(ProviderError):
    """The site has no conversation at the URL asked for (its read request said 404 and the
    page showed no turns)."""

    code = "conversation_not_found"

    def __init__(self, provider: str, url: str) -> None:
        super().__init__(
            provider,
            f"{provider} has no conversation at {url}: check the URL (list_conversations "
            "shows the recent ones) and that the browser is logged in to the account that "
            "owns it.",
        )
        self.url = url


class InputNotAccepted(ProviderError):
    """The question could not be put into the composer by any input method."""

    code = "input_not_accepted"


class AttachmentRefused(BridgeError, ValueError):
    """A file given with a question that bridge will not send (missing, unreadable, over a
    limit: docs/sites.md#attachments). Raised before anything is typed or sent."""

    code = "file_refused"

    def __init__(self, path: str, problem: str, advice: str) -> None:
        super().__init__(
            f"the file {path!r} cannot go with the question: {problem}. {advice}. "
            "Nothing was typed or sent."
        )
        self.path = path
        self.problem = problem


class PathNotAllowed(BridgeError, ValueError):
    """A path bridge will not give to a page: outside the allowed folders, hidden, or a
    credential location (bridge.policy.files, docs/flows.md#file-policy). Raised before the
    file is read or anything reaches a page; the message names the path, why, and the flag
    that allows it, so an agent can relay it to the person."""

    code = "path_not_allowed"

    def __init__(self, message: str, path: str, reason: str) -> None:
        super().__init__(message)
        self.path = path  # as given
        self.reason = reason  # "outside" | "hidden" | "protected"


class FileAccessOff(BridgeError):
    """Chrome refused ``DOM.setFileInputFiles`` to bridge's extension ("Not allowed"): the
    extension has no file access in this browser. bridge never works around that by reading
    the bytes itself and handing them to the page (docs/flows.md#file-policy)."""

    code = "file_access_off"

    def __init__(self, names: str) -> None:
        super().__init__(
            f"Chrome refused to give {names} to the page: the bridge extension is not allowed "
            "to access files in this browser. Switch it on in Chrome: chrome://extensions → "
            'bridge → Details → "Allow access to file URLs" (the extension reloads and '
            "reconnects), then try again. Nothing was uploaded."
        )


class AttachmentFailed(ProviderError):
    """The site did not take a file through its upload control (no control, no chip, an
    upload that never finished). Nothing was sent."""

    code = "attachment_failed"


class ConsentRequired(ProviderError):
    """The site asks the person's consent before it takes files (Gemini's first upload shows
    "Creating content from images and files" with Cancel/Agree, SITE-FACTS G5.3). Agreeing is
    the person's decision, so bridge never presses Agree: it ends the ask at once, nothing
    typed or sent, and says how to agree (docs/sites.md#attachments)."""

    code = "consent_required"

    def __init__(self, provider: str, dialog: str) -> None:
        site = "Gemini" if provider == "gemini" else provider
        super().__init__(
            provider,
            f"{site} asks once for consent to upload files (its dialog {dialog!r}, with "
            f"Cancel and Agree). Open the {site} tab in the browser bridge uses, attach a "
            "file and press Agree yourself (bridge never agrees for you), then ask again. "
            "Nothing was typed or sent.",
        )
        #: The dialog's title as the pack knows it (texts.upload_consent).
        self.dialog = dialog


class ModeUnavailable(ProviderError):
    """The mode asked for is not one the site's picker offers (or the page has no picker).
    Raised before anything is typed; ``offered`` lists what the picker showed."""

    code = "mode_unavailable"

    def __init__(self, provider: str, wanted: str, problem: str, offered: list[str]) -> None:
        choices = "; ".join(offered) if offered else "none"
        super().__init__(
            provider,
            f"{provider} cannot be asked in mode {wanted!r}: {problem}. The picker offers: "
            f"{choices}. Ask again with one of them (its name or id), or without a mode to "
            "use the one the page has. Nothing was typed or sent.",
        )
        self.wanted = wanted
        self.offered = offered


class ModeUnconfirmed(ProviderError):
    """bridge chose the mode but the page never showed it chosen: bridge fails closed rather
    than ask in a mode nobody can vouch for. Raised before anything is typed."""

    code = "mode_unconfirmed"

    def __init__(self, provider: str, wanted: str, shown: str) -> None:
        super().__init__(
            provider,
            f"{provider} did not confirm mode {wanted!r}: after choosing it the picker shows "
            f"{shown}. Nothing was typed or sent. Look at the {provider} tab (the mode may "
            "need a plan or be out of quota), choose the mode there or ask without one.",
        )
        self.wanted = wanted
        self.shown = shown


class PlaceNotFound(ProviderError):
    """The project, GPT, Gem or conversation asked for is not what the site shows at its URL
    (another page, a redirect away, an error status): bridge fails closed rather than ask
    somewhere else. Raised before anything is typed (docs/sites.md#where)."""

    code = "place_not_found"

    def __init__(self, provider: str, kind: str, wanted: str, problem: str) -> None:
        super().__init__(
            provider,
            f"{provider} shows no {kind} {wanted!r}: {problem}. Nothing was typed or sent. "
            f"Check the {kind}'s id or URL (open it in the {provider} tab: it must show a "
            "composer there) and that the browser is logged in to the account that has it, "
            f"or ask without --{kind}.",
        )
        self.kind = kind
        self.wanted = wanted


class TemporaryChatUnavailable(ProviderError):
    """The site did not open (or would not confirm) a temporary chat: bridge fails closed
    rather than ask in a chat that is saved. Raised before anything is typed."""

    code = "temporary_chat_unavailable"

    def __init__(self, provider: str, problem: str) -> None:
        super().__init__(
            provider,
            f"{provider} did not confirm a temporary chat: {problem}. Nothing was typed or "
            f"sent. Look at the {provider} tab (temporary chats may need a login or be off "
            "for the account), or ask without temporary.",
        )
        self.problem = problem


class EffortUnavailable(ProviderError):
    """The thinking effort (ChatGPT's tier, Gemini's Deep Think) asked for is not one the
    page offers, is shown disabled (``notice`` is the page's own word on it, e.g. when an
    allotment resets), or the page has no control for it. Raised before anything is typed;
    ``offered`` lists what the page showed (docs/sites.md#effort)."""

    code = "effort_unavailable"

    def __init__(
        self, provider: str, wanted: str, problem: str, offered: list[str], notice: str = ""
    ) -> None:
        choices = "; ".join(offered) if offered else "none"
        said = f" The page says: {notice}" if notice else ""
        super().__init__(
            provider,
            f"{provider} cannot be asked with effort {wanted!r}: {problem}.{said} The page "
            f"offers: {choices}. Ask again with one of them, or without an effort to use the "
            "one the page has. Nothing was typed or sent.",
        )
        self.wanted = wanted
        self.offered = offered
        self.notice = notice


class EffortUnconfirmed(ProviderError):
    """bridge chose the effort but the page never showed it chosen: bridge fails closed rather
    than ask at a thinking effort nobody can vouch for. Raised before anything is typed."""

    code = "effort_unconfirmed"

    def __init__(self, provider: str, wanted: str, shown: str) -> None:
        super().__init__(
            provider,
            f"{provider} did not confirm effort {wanted!r}: after choosing it the page shows "
            f"{shown}. Nothing was typed or sent. Look at the {provider} tab (the tier may "
            "need a plan or be out of quota), choose it there or ask without one.",
        )
        self.wanted = wanted
        self.shown = shown


class SendFailed(ProviderError):
    """The question was typed but no send method made the site take it."""

    code = "send_failed"


class NotSent(ProviderError):
    """The question shows on the page as sent, but the site was never asked: the pack's
    answer request was not made (docs/sites.md#sent). Nothing will answer it."""

    code = "not_sent"

    def __init__(self, provider: str, request: str, seconds: float) -> None:
        super().__init__(
            provider,
            f"the question shows on the {provider} page, but the page never made its answer "
            f"request ({request}) within {seconds:.0f}s: the site was never asked, so there is "
            "nothing to wait for. Reload the tab and ask again; if it keeps happening, the "
            "site's request may have changed (fix the pack's network.answer_stream with an "
            "override, docs/sites.md#provider-packs).",
        )


class QuestionTakenBack(ProviderError):
    """The question appeared as sent, then the site took it back (its turn vanished and the
    text returned to the editor): the server refused it (SITE-FACTS G14.2)."""

    code = "taken_back"

    def __init__(self, provider: str) -> None:
        super().__init__(
            provider,
            f"{provider} took the question back: its message vanished from the page and the "
            "text returned to the editor, which means the site's server refused it. Nothing "
            "was answered; wait a moment and ask again (a new chat often helps).",
        )


class StepTimeout(BridgeTimeout):
    """A step of an ask ran out of time; ``step`` names it (connect, input, send, response…)."""

    code = "timeout"

    def __init__(self, provider: str, step: str, seconds: float) -> None:
        super().__init__(f"{provider} step '{step}'", seconds)
        self.provider = provider
        self.step = step


class StateDirUnsafe(BridgeError):
    """A state directory bridge will not keep secrets in: another user owns it (and could
    plant tokens or provider packs there), or it cannot be made private. Raised before
    anything in it is read or written."""

    code = "state_dir_unsafe"

    def __init__(self, path: Path, problem: str, advice: str) -> None:
        super().__init__(
            f"the state directory {path} {problem}: bridge keeps its tokens and provider pack "
            f"overrides only in a directory that is yours alone. {advice}"
        )
        self.path = path
        self.problem = problem


class ClaudeExtensionNotConnected(BridgeError):
    """No Claude extension host reached this process in time (``--link claude``)."""

    code = "claude_extension_not_connected"

    def __init__(self, detail: str = "") -> None:
        super().__init__(
            "The Claude browser extension is not connected"
            + (f" ({detail})" if detail else "")
            + ". Register bridge as its native host once: `bridge install-native-host "
            "--claude-extension` (add --browser for Chromium, Edge or Brave), then restart the "
            "browser and open the Claude extension's side panel so it starts the host; "
            "`bridge doctor` says which host is registered."
        )


class NotOverClaudeExtension(BridgeError, ValueError):
    """A bridge tool the Claude extension's tools cannot carry faithfully (``--link claude``)."""

    code = "not_over_claude_extension"

    def __init__(self, what: str, why: str) -> None:
        super().__init__(
            f"{what} is not available over the Claude extension: {why}. Use bridge's own "
            "extension for it (`bridge-mcp` without --link claude)."
        )


class ClaudeToolError(BridgeError):
    """The Claude extension ran a tool and reported an error (its own words follow)."""

    code = "claude_tool_error"

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(f"the Claude extension's {tool} failed: {message}")
        self.tool = tool
        self.extension_message = message


class OutputsFolderRefused(BridgeError, ValueError):
    """The folder an ask's generated images and files would be saved in cannot be used
    (docs/sites.md#outputs): a protected place, a symlink, or no free name in it."""

    code = "outputs_folder_refused"

    def __init__(self, folder: str, why: str) -> None:
        super().__init__(
            f"bridge will not save outputs in {folder!r}: {why}. Name another folder "
            "(outputs_dir / --outputs), or leave it out to save under bridge's state folder."
        )
        self.folder = folder
        self.why = why


class OutputDownloadRefused(ProviderError):
    """A file or image the site generated could not be downloaded (docs/sites.md#outputs):
    the site refused it (an error reply, a 403) or nothing came. Names the file and why; the
    answer itself was read, and nothing was written for this file."""

    code = "download_refused"

    def __init__(self, provider: str, name: str, why: str) -> None:
        super().__init__(
            provider,
            f"{provider} refused the download of {name!r}: {why}. The answer was received; "
            "open the conversation in the browser to download the file by hand, or ask again "
            "later (the site's download links expire).",
        )
        self.name = name
        self.why = why


class ResearchUnavailable(ProviderError):
    """Deep Research was asked for but the page does not offer it: no such item in the site's
    own control (ChatGPT's composer "+", Gemini's Tools), the item is shown disabled (no
    entitlement, signed out: SITE-FACTS C9.13, G11.9), or the page never showed it armed (no
    "Deep research" pill or chip). Raised before anything is typed (docs/sites.md#research)."""

    code = "research_unavailable"

    def __init__(self, provider: str, problem: str, offered: list[str], notice: str = "") -> None:
        choices = "; ".join(offered) if offered else "none"
        said = f" The page says: {notice}" if notice else ""
        super().__init__(
            provider,
            f"{provider} cannot run Deep Research here: {problem}.{said} The menu offers: "
            f"{choices}. Nothing was typed or sent. Deep Research needs a plan that includes "
            f"it and a signed-in, non-temporary chat: check the {provider} tab, or ask "
            "without research.",
        )
        self.problem = problem
        self.offered = offered
        self.notice = notice


class ResearchFailed(ProviderError):
    """The question was sent with Deep Research on but no research came of it: the site
    answered as an ordinary turn without ever starting it after its plan, or the research
    ended without a report (SITE-FACTS C9.13, G11.9). The conversation URL says where to
    look; asking again starts a new research (docs/sites.md#research)."""

    code = "research_failed"

    def __init__(self, provider: str, problem: str, url: str = "") -> None:
        where = f" The conversation: {url}." if url else ""
        super().__init__(
            provider,
            f"{provider} Deep Research did not deliver a report: {problem}.{where} Open the "
            "conversation to see what the site shows; ask again (research=True) to start a "
            "new research.",
        )
        self.problem = problem
        self.url = url


# -- storage and pdf groups (issue 29) ---------------------------------------------------------


class StorageScopeRefused(BridgeError, ValueError):
    """A storage tool asked for something outside the current tab's origin (a cookie for
    another domain, a storage-state entry of another origin), or the current page has no
    origin of its own (about:blank, data:, file:). The storage tools touch only what the
    current page could touch itself (docs/mcp.md#storage)."""

    code = "storage_scope"


class StorageStateInvalid(BridgeError, ValueError):
    """A storage-state file that is not Playwright's storageState JSON ({cookies: […],
    origins: […]}), or too big to be one."""

    code = "storage_state_invalid"


class PdfFailed(BridgeError):
    """Chrome did not print the page to PDF (Page.printToPDF)."""

    code = "pdf_failed"


class VerificationFailed(BridgeError):
    """A testing tool's check (browser_verify_*) did not hold: the message says what was
    expected and what the page shows instead."""

    code = "verification_failed"


class NothingRecorded(BridgeError):
    """browser_generate_test found no recorded actions for the tab: nothing to write."""

    code = "nothing_recorded"


# -- the devtools group (performance traces, emulation) ----------------------------------


class TraceNotRunning(BridgeError):
    """performance_stop_trace (or an insight) asked for, but this client has no trace
    running (or none recorded yet)."""

    code = "trace_not_running"


class TraceBusy(BridgeError):
    """A trace is already being recorded: by this client, or by another one in this browser
    (Chrome records one trace at a time)."""

    code = "trace_busy"


class TraceTooLarge(BridgeError):
    """The browser's trace exceeded the size bridge reads (the trace was dropped)."""

    code = "trace_too_large"


class TraceFileRefused(BridgeError, ValueError):
    """The trace file named is outside the folders bridge may write to, hidden, or in a
    protected place (bridge.policy.files): nothing was written."""

    code = "trace_file_refused"

    def __init__(self, path: str, why: str) -> None:
        super().__init__(
            f"bridge will not write the trace to {path!r}: {why}. Nothing was written. Give a "
            "file name inside the working directory (or a folder the person allowed with "
            "--allow-path), or omit file_path to save it in bridge's outputs folder."
        )
        self.path = path
        self.why = why


class EmulationInvalid(BridgeError, ValueError):
    """An emulation setting out of range or of an unknown kind: nothing was changed."""

    code = "emulation_invalid"


class InsightUnknown(BridgeError, ValueError):
    """performance_analyze_insight was asked for an insight this trace summary has not."""

    code = "insight_unknown"


class TraceOptionsInvalid(BridgeError, ValueError):
    """A trace asked for with options that do not go together: nothing was started."""

    code = "trace_options_invalid"


# -- vision and record groups (issue 29) -------------------------------------------------------


class PointOutsideViewport(BridgeError, ValueError):
    """A vision tool's coordinates lie outside the tab's viewport (CSS pixels, as in a
    screenshot at scale 1): input there would reach nothing. The message gives the viewport's
    size, and says to take a new screenshot (or scroll) first."""

    code = "point_outside_viewport"


class GifRecordingError(BridgeError):
    """The record group's browser_record_gif cannot do what was asked: no recording to stop
    or export, nothing recorded yet. The message says which action comes first."""

    code = "gif_recording"


class OriginBlocked(BridgeError):
    """A navigation or request to an origin the person's flags keep the agent away from
    (``--blocked-origins``, or not in ``--allowed-origins``): refused below the tools, so the
    DevTools endpoint obeys too (docs/mcp.md#guard-rails)."""

    code = "origin_blocked"

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(
            f"{url} is refused: {reason}. Work on a page the person allowed, or ask them to "
            "change the flag and restart bridge."
        )
        self.url = url
        self.reason = reason


class ReadOnlyRefused(BridgeError):
    """An action under ``--read-only``: only reading (and navigation within
    ``--allowed-origins``) is served (docs/mcp.md#guard-rails)."""

    code = "read_only"

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what} is refused: bridge runs with --read-only, which allows reading pages "
            "only (no input, no changes, navigation only within --allowed-origins). Read with "
            "the snapshot and reading tools, or ask the person to restart bridge without "
            "--read-only."
        )
        self.what = what
