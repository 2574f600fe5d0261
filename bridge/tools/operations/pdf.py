"""The pdf family (the ``pdf`` tool group): the current page printed to a PDF file under an
allowed folder (``bridge.tools.saving``)."""

from __future__ import annotations

import base64
from pathlib import Path

from bridge.errors import CdpError, PdfFailed
from bridge.tools.operations.client import ToolClient
from bridge.tools.saving import default_name, save_file, writable_path

__all__ = ["Pdf"]


class Pdf(ToolClient):
    """``browser_pdf_save``."""

    async def pdf_save(self, filename: str | None = None, tab: int | None = None) -> Path:
        """Print the page (``Page.printToPDF``, backgrounds included) and save it: where."""
        name = filename or default_name("page", "pdf")
        writable_path(self.hub.files, name)  # a refused name fails before the page prints
        state = await self._state(tab)
        try:
            result = await state.tab.send("Page.printToPDF", {"printBackground": True})
        except CdpError as exc:
            raise PdfFailed(
                f"Chrome did not print tab {state.tab_id} to PDF: {exc}. Printing needs a "
                "page that is not behind a dialog and has finished loading; in a headed "
                "(not headless) Chrome, printToPDF may be refused for a page that is not "
                "visible: select the tab in its window and try again."
            ) from exc
        return save_file(self.hub.files, name, base64.b64decode(result["data"]), "application/pdf")
