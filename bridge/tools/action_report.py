"""What an action changed, said briefly: the result of every acting browser tool."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ActionReport", "PageState"]


@dataclass(frozen=True)
class PageState:
    """What is compared before and after an action."""

    url: str
    title: str
    tab_ids: frozenset[int]
    console_seen: int
    downloads: int
    opened: int


@dataclass
class ActionReport:
    """What a browser action did and what followed it: the tab's URL and title after, new tabs,
    console errors; the text a tool returns is made from it."""

    did: str  # "Clicked e12", "Navigated to https://…"
    tab_id: int
    url: str = ""
    title: str = ""
    url_changed: bool = False
    title_changed: bool = False
    new_tabs: list[dict[str, Any]] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    dialog: dict[str, Any] | None = None
    downloads: list[dict[str, Any]] = field(default_factory=list)
    still_loading: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    #: Its Playwright-for-Python lines (``--codegen python``), else empty.
    code: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"did": self.did, "tab": self.tab_id, "url": self.url}
        if self.title:
            out["title"] = self.title
        for name in ("url_changed", "title_changed", "still_loading"):
            if getattr(self, name):
                out[name] = True
        for name in ("new_tabs", "console_errors", "downloads"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.dialog is not None:
            out["dialog"] = self.dialog
        out.update(self.extra)
        if self.code:
            out["code"] = self.code
        return out

    def to_text(self) -> str:
        lines = [f"{self.did} (tab {self.tab_id})."]
        if self.dialog is not None:
            d = self.dialog
            lines.append(
                f"- A {d['type']} dialog is open: {d['message']!r}. Answer it with "
                "browser_handle_dialog (accept true/false) before anything else on this tab."
            )
        if self.url_changed:
            lines.append(f"- Page: {self.url}")
        if self.title_changed or (self.url_changed and self.title):
            lines.append(f"- Title: {self.title}")
        if self.still_loading:
            lines.append("- The page is still loading.")
        for tab in self.new_tabs:
            lines.append(
                f"- Opened a new tab {tab.get('tab', '?')}: {tab.get('url', '')} "
                "(browser_tabs select to use it)"
            )
        for error in self.console_errors[:5]:
            lines.append(f"- Console error: {error[:300]}")
        if len(self.console_errors) > 5:
            lines.append(f"- … and {len(self.console_errors) - 5} more console errors")
        for download in self.downloads:
            where = download.get("path") or "the browser's download folder"
            lines.append(
                f"- Download: {download.get('file_name', '?')} ({download.get('state', '')}) "
                f"saved to {where}"
            )
        for key, value in self.extra.items():
            lines.append(f"- {key}: {value}")
        if self.code:
            lines.append("- Playwright code:")
            lines.extend(f"  {line}" for line in self.code)
        return "\n".join(lines)
