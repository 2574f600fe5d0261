"""Every MCP tool's title and annotations, in one table: ``TOOL_HINTS``.

Clients read the hints to decide what needs the person's approval, so each row says what the
tool truly does to the person's browser and to the sites in it. docs/mcp.md#annotations says
what each hint means here and why the rows are what they are (the ask tools: not read-only,
not destructive, open-world), and repeats the table; tests/mcp/test_annotations.py keeps the
two, and what clients are served, the same.

Read-only rows state destructive=false and idempotent=true outright: the defaults of absent
hints are the opposite, and not every client ignores them for a read-only tool.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_types import ToolAnnotations

__all__ = ["TOOL_HINTS", "ToolHints", "UnannotatedTool", "hints_for"]


@dataclass(frozen=True)
class ToolHints:
    """One tool's row: a short human title and the four MCP hints."""

    title: str
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool

    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title=self.title,
            read_only_hint=self.read_only,
            destructive_hint=self.destructive,
            idempotent_hint=self.idempotent,
            open_world_hint=self.open_world,
        )


Y, N = True, False

# The columns: read-only, destructive, idempotent, open-world (docs/mcp.md#annotations).

# fmt: off
TOOL_HINTS: dict[str, ToolHints] = {
    # tool                                      title                        read dest idem open
    # ask group: the providers, their jobs and conversations, diagnosis of their tabs
    "ask_chatgpt_web":                ToolHints("Ask ChatGPT",                N,   N,   N,   Y),
    "ask_gemini_web":                 ToolHints("Ask Gemini",                 N,   N,   N,   Y),
    "ask_chatgpt_gemini_web":         ToolHints("Ask ChatGPT and Gemini",     N,   N,   N,   Y),
    "get_answer":                     ToolHints("Get an ask's answer",        Y,   N,   Y,   Y),
    "list_jobs":                      ToolHints("List ask jobs",              Y,   N,   Y,   N),
    "take_cdp_snapshot":              ToolHints("Snapshot a provider tab",    Y,   N,   Y,   Y),
    "get_page_dom":                   ToolHints("Read a tab's DOM",           Y,   N,   Y,   Y),
    "get_conversation":               ToolHints("Read a conversation",        Y,   N,   Y,   Y),
    "list_conversations":             ToolHints("List conversations",         Y,   N,   Y,   Y),
    # browser group: any tab of the browser
    "browser_navigate":               ToolHints("Open a URL",                 N,   Y,   N,   Y),
    "browser_go_back":                ToolHints("Go back",                    N,   Y,   N,   Y),
    "browser_go_forward":             ToolHints("Go forward",                 N,   Y,   N,   Y),
    "browser_snapshot":               ToolHints("Page snapshot",              Y,   N,   Y,   Y),
    "browser_click":                  ToolHints("Click",                      N,   Y,   N,   Y),
    "browser_hover":                  ToolHints("Hover",                      N,   N,   Y,   Y),
    "browser_type":                   ToolHints("Type text",                  N,   Y,   N,   Y),
    "browser_fill_form":              ToolHints("Fill a form",                N,   Y,   N,   Y),
    "browser_select_option":          ToolHints("Select options",             N,   Y,   N,   Y),
    "browser_drag":                   ToolHints("Drag and drop",              N,   Y,   N,   Y),
    "browser_press_key":              ToolHints("Press a key",                N,   Y,   N,   Y),
    "browser_wait":                   ToolHints("Wait for the page",          Y,   N,   Y,   Y),
    "browser_screenshot":             ToolHints("Screenshot",                 Y,   N,   Y,   Y),
    "browser_get_console_logs":       ToolHints("Console messages",           Y,   N,   Y,   Y),
    "browser_network_requests":       ToolHints("Network requests",           Y,   N,   Y,   Y),
    "browser_network_request":        ToolHints("One network request",        Y,   N,   Y,   Y),
    "browser_tabs":                   ToolHints("Manage tabs",                N,   Y,   N,   Y),
    "browser_evaluate":               ToolHints("Run JavaScript",             N,   Y,   N,   Y),
    "browser_file_upload":            ToolHints("Upload files",               N,   Y,   N,   Y),
    "browser_handle_dialog":          ToolHints("Answer a dialog",            N,   Y,   N,   Y),
    "browser_resize":                 ToolHints("Resize the viewport",        N,   N,   Y,   Y),
    # the Claude extension's GIF recorder (--link claude), and the record group's
    "browser_record_gif":             ToolHints("Record a GIF",               N,   N,   N,   Y),
    # dom group (off by default): reading the DOM
    "browser_query_dom":              ToolHints("Query the DOM",              Y,   N,   Y,   Y),
    "browser_get_visible_text":       ToolHints("Visible text",               Y,   N,   Y,   Y),
    "browser_get_computed_styles":    ToolHints("Computed styles",            Y,   N,   Y,   Y),
    "browser_check_visibility":       ToolHints("Check visibility",           Y,   N,   Y,   Y),
    "browser_get_attributes":         ToolHints("Element attributes",         Y,   N,   Y,   Y),
    "browser_count_elements":         ToolHints("Count elements",             Y,   N,   Y,   Y),
    "browser_get_page_metadata":      ToolHints("Page metadata",              Y,   N,   Y,   Y),
    "browser_get_filtered_aria_tree": ToolHints("ARIA tree by role",          Y,   N,   Y,   Y),
    "browser_find_by_text":           ToolHints("Find by text",               Y,   N,   Y,   Y),
    "browser_get_form_values":        ToolHints("Form values",                Y,   N,   Y,   Y),
    "browser_check_element_state":    ToolHints("Element state",              Y,   N,   Y,   Y),
    # storage group (off by default): the current origin's cookies and web storage
    "browser_cookie_list":            ToolHints("List cookies",               Y,   N,   Y,   Y),
    "browser_cookie_get":             ToolHints("Get cookie",                 Y,   N,   Y,   Y),
    "browser_cookie_set":             ToolHints("Set cookie",                 N,   Y,   Y,   Y),
    "browser_cookie_delete":          ToolHints("Delete cookie",              N,   Y,   Y,   Y),
    "browser_cookie_clear":           ToolHints("Clear cookies",              N,   Y,   Y,   Y),
    "browser_localstorage_list":      ToolHints("List localStorage",          Y,   N,   Y,   Y),
    "browser_localstorage_get":       ToolHints("Get localStorage item",      Y,   N,   Y,   Y),
    "browser_localstorage_set":       ToolHints("Set localStorage item",      N,   Y,   Y,   Y),
    "browser_localstorage_delete":    ToolHints("Delete localStorage item",   N,   Y,   Y,   Y),
    "browser_localstorage_clear":     ToolHints("Clear localStorage",         N,   Y,   Y,   Y),
    "browser_sessionstorage_list":    ToolHints("List sessionStorage",        Y,   N,   Y,   Y),
    "browser_sessionstorage_get":     ToolHints("Get sessionStorage item",    Y,   N,   Y,   Y),
    "browser_sessionstorage_set":     ToolHints("Set sessionStorage item",    N,   Y,   Y,   Y),
    "browser_sessionstorage_delete":  ToolHints("Delete sessionStorage item", N,   Y,   Y,   Y),
    "browser_sessionstorage_clear":   ToolHints("Clear sessionStorage",       N,   Y,   Y,   Y),
    "browser_storage_state":          ToolHints("Save storage state",         N,   N,   N,   Y),
    "browser_set_storage_state":      ToolHints("Restore storage state",      N,   Y,   Y,   Y),
    # pdf group (off by default): the page printed to a file
    "browser_pdf_save":               ToolHints("Save as PDF",                N,   N,   N,   Y),
    # testing group (off by default): assertions, locators, a session written as a test
    "browser_verify_element_visible": ToolHints("Verify element visible",     Y,   N,   Y,   Y),
    "browser_verify_text_visible":    ToolHints("Verify text visible",        Y,   N,   Y,   Y),
    "browser_verify_list_visible":    ToolHints("Verify list visible",        Y,   N,   Y,   Y),
    "browser_verify_value":           ToolHints("Verify value",               Y,   N,   Y,   Y),
    "browser_generate_locator":       ToolHints("Generate a locator",         Y,   N,   Y,   Y),
    "browser_generate_test":          ToolHints("Generate a test file",       N,   N,   N,   Y),
    # browser group, lean snapshots (issue 29)
    "browser_find":                   ToolHints("Find in page snapshot",      Y,   N,   Y,   Y),
    # devtools group: performance traces and emulation (off by default)
    "performance_start_trace":        ToolHints("Start a performance trace",  N,   Y,   N,   Y),
    "performance_stop_trace":         ToolHints("Stop the performance trace", N,   N,   N,   Y),
    "performance_analyze_insight":    ToolHints("Explain a trace insight",    Y,   N,   Y,   Y),
    "browser_emulate":                ToolHints("Emulate a device",           N,   N,   Y,   Y),
    "browser_emulate_reset":          ToolHints("Reset emulation",            N,   N,   Y,   Y),
    # vision group (off by default): input by coordinates, a zoomed look
    "browser_mouse_click_xy":         ToolHints("Click at a point",           N,   Y,   N,   Y),
    "browser_mouse_move_xy":          ToolHints("Move the mouse",             N,   N,   Y,   Y),
    "browser_mouse_drag_xy":          ToolHints("Drag between points",        N,   Y,   N,   Y),
    "browser_scroll":                 ToolHints("Scroll",                     N,   N,   N,   Y),
    "browser_zoom":                   ToolHints("Zoom into a region",         Y,   N,   Y,   Y),
    # record group (off by default): browser_record_gif over bridge's own link (its row is
    # above, with the Claude extension's recorder: one tool, served over both links)
    # network group (off by default): this client's routes and offline, ended when it leaves
    "browser_route":                  ToolHints("Mock network requests",      N,   N,   N,   Y),
    "browser_route_list":             ToolHints("List network routes",        Y,   N,   Y,   Y),
    "browser_unroute":                ToolHints("Remove network routes",      N,   N,   Y,   Y),
    "browser_network_state_set":      ToolHints("Set network state",          N,   N,   Y,   Y),
}
# fmt: on


class UnannotatedTool(LookupError):
    """A tool registered without a row in TOOL_HINTS: refused, so no tool reaches a client
    without truthful hints (absent hints read as destructive and open-world, or worse, get
    guessed)."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"the MCP tool {name!r} has no row in bridge.mcp.annotations.TOOL_HINTS: add its "
            "title and hints there (and to docs/mcp.md#annotations) before registering it"
        )
        self.name = name


def hints_for(name: str) -> ToolHints:
    """The row of tool ``name``; ``UnannotatedTool`` when it has none."""
    try:
        return TOOL_HINTS[name]
    except KeyError:
        raise UnannotatedTool(name) from None
