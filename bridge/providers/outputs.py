"""Saving what an answer generated: images and files (docs/sites.md#outputs).

After the answer is read (the flow's extraction step), the newest answer's turn is looked at
through page.js ``outputs`` (the pack's ``image_loading``, ``generated_image``,
``image_exclude`` and ``generated_file`` selectors):

- **Images.** ChatGPT's stop button goes while the image's loading skeleton still shows, and
  the ``<img>`` may come after the skeleton (SITE-FACTS C10.2): an image is done when the
  skeleton is gone and the image is there (page.js ``whenOutputsSettled``, bounded by the
  ask's deadline). Copies of one file (blurred and sharp) are one image, by the estuary
  URL's ``id=`` (C10.5). The bytes are fetched by the page itself with its credentials
  (C10.7: estuary URLs need the session even with their ``sig``) — the evidence's way, and
  the original the page shows, not a re-encoding.
- **Files.** ChatGPT's rendered answer drops the ``sandbox:`` hrefs (C11.2), so the names
  come from the answer's own text on the wire (``[label](sandbox:/mnt/data/<name>)``,
  C11.1); each is asked of the site's interpreter download (C11.3: ``message_id`` of the
  assistant message, ``sandbox_path``) whose JSON names a signed ``download_url``, fetched by
  the page like an image.

A download the site refuses (an error reply, a status other than 200, the wrong kind of
content, no URL) ends the ask with :class:`~bridge.errors.OutputDownloadRefused` naming the
file and why. Everything is written only through :class:`bridge.store.outputs.OutputFolder`.

The decisions (which URLs, which names, which reply means what) are pure functions here,
tested on their own; :func:`collect_outputs` is the I/O around them.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from bridge.cdp.session import JavaScriptError
from bridge.errors import OutputDownloadRefused
from bridge.providers.context import AskContext
from bridge.providers.results import Provider
from bridge.providers.streams import StreamAnswer
from bridge.store.outputs import OutputFolder, SavedOutput, mime_extension
from bridge.waiting import scaled

__all__ = [
    "MAX_OUTPUT_BYTES",
    "ImageRef",
    "collect_outputs",
    "download_reply",
    "image_refs",
    "original_url",
    "sandbox_paths",
]

log = logging.getLogger(__name__)

#: The most one output may weigh (an image of ChatGPT's is a few MB; G12.5: ~1 MB).
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
#: C10.2: the ``<img>`` can appear up to ~5 s after the skeleton clears.
IMAGE_AFTER_SKELETON_S = 8.0
#: Waiting for an image still loading once the answer is read (C10.8: oracle waits 15 min
#: at most, G2A 300 s): what is left of the ask's own timeout, at least this.
IMAGE_WAIT_MIN_S = 30.0
#: One download's round trip through the page.
FETCH_S = 60.0

#: Where each site's generated images are served (a URL elsewhere is not fetched):
#: ChatGPT's estuary content (C10.5); Gemini's googleusercontent originals (G12.4).
_IMAGE_URLS: dict[Provider, tuple[tuple[str, str], ...]] = {
    "chatgpt": (("chatgpt.com", "/backend-api/estuary/content"),),
    "gemini": (("lh3.googleusercontent.com", "/"),),
}
_SANDBOX = re.compile(r"\]\(sandbox:(/mnt/data/[^)\s]+)\)")
_CONVERSATION = re.compile(r"/c/([0-9A-Za-z-]+)")


@dataclass(frozen=True)
class ImageRef:
    """One generated image to save: its URL and the name it is saved under (before the
    extension its type gives)."""

    url: str
    stem: str


def image_refs(provider: Provider, images: Iterable[dict[str, Any]]) -> list[ImageRef]:
    """The images worth saving, in page order, each file once (pure).

    Only URLs where the site serves generated images (``_IMAGE_URLS``); copies of one
    file (C10.5: blurred and sharp) by the ``id=`` query value, else by the whole URL.
    ``blob:`` sources are skipped (G12.4: revoked once loaded)."""
    seen: set[str] = set()
    out: list[ImageRef] = []
    for image in images:
        url = str(image.get("src", ""))
        parts = urlsplit(url)
        if parts.scheme != "https" or not any(
            parts.hostname == host and parts.path.startswith(path)
            for host, path in _IMAGE_URLS[provider]
        ):
            continue
        file_id = parse_qs(parts.query).get("id", [""])[0]
        key = file_id or url
        if key in seen:
            continue
        seen.add(key)
        stem = file_id or parts.path.rstrip("/").rsplit("/", 1)[-1].split("=", 1)[0]
        out.append(ImageRef(url, stem or f"image-{len(out) + 1}"))
    return out


def original_url(provider: Provider, url: str) -> str:
    """The URL of an image's original (pure): Gemini's ``=s0-d`` in place of the preview's
    size suffix (G12.4: ``=s1024-rj`` is the 1024 px preview; ``=s0-d`` is what the page's
    own download button fetches, G12.5); ChatGPT's estuary URL is the file itself (C10.5)."""
    if provider != "gemini":
        return url
    parts = urlsplit(url)
    head, sep, _ = parts.path.rpartition("=")
    path = f"{head}=s0-d" if sep and "/" not in parts.path[len(head) :] else f"{parts.path}=s0-d"
    return parts._replace(path=path, query="").geturl()


def sandbox_paths(answer_text: str) -> list[str]:
    """The ``/mnt/data/<name>`` paths the answer links (C11.1), in order, each once (pure).
    The names are the site's, percent-decoded; they are hostile input to the folder."""
    return list(dict.fromkeys(unquote(m.group(1)) for m in _SANDBOX.finditer(answer_text)))


def conversation_id(url: str) -> str:
    """The conversation id in a ChatGPT URL (``/c/<id>``, C6.1), "" if none (pure)."""
    found = _CONVERSATION.search(urlsplit(url).path)
    return found.group(1) if found else ""


def download_reply(status: int, body: bytes) -> tuple[str, str, str]:
    """``(download_url, file_name, mime_type)`` from the interpreter download's reply
    (C11.3), or the refusal's reason as a ValueError (pure): a status other than 200, a body
    that is not JSON, ``status: "error"`` (C10.6's shape: its ``error_message``), or no URL
    on the site's own host."""
    if status != 200:
        raise ValueError(f"the download request answered HTTP {status}")
    try:
        reply = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("the download request's reply is not JSON") from exc
    if not isinstance(reply, dict):
        raise ValueError("the download request's reply is not an object")
    if reply.get("status") == "error":
        why = reply.get("error_message") or reply.get("error_code") or "an error"
        raise ValueError(f"the site says {str(why)!r}")
    url = reply.get("download_url")
    if not isinstance(url, str) or not url:
        raise ValueError("the reply names no download_url")
    if urlsplit(url).scheme != "https" or urlsplit(url).hostname != "chatgpt.com":
        raise ValueError(f"the download_url is not on chatgpt.com ({urlsplit(url).hostname})")
    name = reply.get("file_name")
    mime = reply.get("mime_type")
    return url, str(name) if isinstance(name, str) else "", str(mime) if mime else ""


@dataclass(frozen=True)
class _Fetched:
    status: int
    mime: str
    data: bytes


async def _fetch(ctx: AskContext, url: str, name: str) -> _Fetched:
    """``url`` fetched by the page with its credentials (C10.7); refused when it cannot."""
    try:
        got = await ctx.page.call("fetchOutput", url, MAX_OUTPUT_BYTES, timeout=scaled(FETCH_S))
    except JavaScriptError as exc:
        why = f"the page could not fetch it ({exc})"
        raise OutputDownloadRefused(ctx.provider, name, why) from exc
    if not isinstance(got, dict):
        raise OutputDownloadRefused(ctx.provider, name, "the page returned nothing")
    size = int(got.get("size", 0))
    if size > MAX_OUTPUT_BYTES:
        raise OutputDownloadRefused(
            ctx.provider, name, f"it is {size} bytes, over the {MAX_OUTPUT_BYTES} bytes allowed"
        )
    try:
        data = base64.b64decode(str(got.get("base64", "")), validate=True)
    except binascii.Error as exc:
        raise OutputDownloadRefused(ctx.provider, name, "the page's copy is garbled") from exc
    mime = str(got.get("type", "")).split(";")[0].strip().lower()
    return _Fetched(int(got.get("status", 0)), mime, data)


def _deadline_s(ctx: AskContext) -> float:
    left = ctx.options.timeout - (time.monotonic() - ctx.started)
    return max(scaled(IMAGE_WAIT_MIN_S), left)


async def collect_outputs(ctx: AskContext, answer_text: str, folder: Path) -> list[SavedOutput]:
    """Save the newest answer's generated images and files in ``folder`` (made only when
    there is something to save); what was saved, in page order, images first."""
    sel = ctx.spec.pack.selectors
    if "generated_image" not in sel and "generated_file" not in sel:
        return []
    found = await ctx.page.call("outputs", ctx.provider)
    if not isinstance(found, dict):
        return []
    wire = await _stream_answer(ctx)
    # Gemini's stream lists the images (G12.6) while the page may still be loading them.
    wire_images = wire.images if wire is not None else ()
    if wire_images and not found.get("images"):
        found = {**found, "loading": True}
    if found.get("loading"):
        await ctx.progress("outputs")
        wait = _deadline_s(ctx)
        found = await ctx.page.call(
            "whenOutputsSettled", ctx.provider, True, int(wait * 1000), timeout=wait
        )
        if found.get("loading"):
            raise OutputDownloadRefused(
                ctx.provider, "the generated image", f"it was still loading after {wait:.0f}s"
            )
        if not found.get("images"):
            # C10.2: the image can come some seconds after its skeleton went.
            wait = scaled(IMAGE_AFTER_SKELETON_S)
            found = await ctx.page.call(
                "whenOutputsSettled", ctx.provider, True, int(wait * 1000), timeout=wait
            )
            if not found.get("images"):
                ctx.used.fallbacks.append("outputs:image skeleton ended without an image")
    out_folder = OutputFolder(folder)
    saved: list[SavedOutput] = []
    shown = [{"src": original_url(ctx.provider, url)} for url in wire_images]
    for ref in image_refs(ctx.provider, shown or found.get("images") or []):
        fetched = await _fetch(ctx, ref.url, ref.stem)
        if fetched.status != 200 or not fetched.mime.startswith("image/"):
            why = (
                f"HTTP {fetched.status}"
                if fetched.status != 200
                else f"it is {fetched.mime or 'untyped'}, not an image"
            )
            raise OutputDownloadRefused(ctx.provider, ref.stem, why)
        extension = mime_extension(fetched.mime)
        name = f"{ref.stem}.{extension}" if extension else ref.stem
        saved.append(out_folder.save("image", name, fetched.data, fetched.mime, ref.stem))
    text = wire.text if wire is not None and wire.text else answer_text
    saved += await _files(ctx, text, found, out_folder)
    return saved


async def _stream_answer(ctx: AskContext) -> StreamAnswer | None:
    """The answer as the site sent it (ChatGPT's links intact, C11.1; Gemini's image URLs,
    G12.6), or None without a stream."""
    if ctx.stream is None:
        return None
    answer, _ = await ctx.stream.answer(scaled(5.0))
    return answer


async def _files(
    ctx: AskContext, answer_text: str, found: dict[str, Any], folder: OutputFolder
) -> list[SavedOutput]:
    controls: Sequence[str] = found.get("files") or []
    paths = sandbox_paths(answer_text)
    if not paths:
        if controls:
            ctx.used.fallbacks.append("outputs:file controls without sandbox links")
        return []
    message_id = str(found.get("messageId", ""))
    cid = conversation_id(str(await ctx.tab.evaluate("location.href")))
    saved: list[SavedOutput] = []
    for path in paths:
        shown = path.removeprefix("/mnt/data/")
        if not message_id or not cid:
            raise OutputDownloadRefused(
                ctx.provider, shown, "the page names no conversation or message to ask for it"
            )
        query = f"message_id={quote(message_id)}&sandbox_path={quote(path)}"
        asked = await _fetch(
            ctx, f"/backend-api/conversation/{quote(cid)}/interpreter/download?{query}", shown
        )
        try:
            url, file_name, mime = download_reply(asked.status, asked.data)
        except ValueError as exc:
            raise OutputDownloadRefused(ctx.provider, shown, str(exc)) from exc
        fetched = await _fetch(ctx, url, shown)
        if fetched.status != 200:
            raise OutputDownloadRefused(
                ctx.provider, shown, f"its download_url answered HTTP {fetched.status}"
            )
        kind = mime or fetched.mime or "application/octet-stream"
        saved.append(folder.save("file", file_name or shown, fetched.data, kind, path))
    return saved
