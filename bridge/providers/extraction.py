"""Reading the finished answer out of the page (docs/sites.md#extraction-chatgpt,
docs/sites.md#extraction-gemini): page.js tries its steps in order and says which one won."""

from __future__ import annotations

from bridge.providers.context import AskContext

__all__ = ["extract"]


async def extract(ctx: AskContext) -> tuple[str, str]:
    """The answer's text (markdown where the page allows) and the extraction step used."""
    await ctx.progress("extracting")
    found = await ctx.page.call("extract", ctx.provider)
    text = ctx.spec.normalize_answer(str(found.get("text", "")))
    return text.strip(), str(found.get("method", ""))
