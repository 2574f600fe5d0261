"""A recording's frames and clicks -> one animated GIF (pure: bytes in, bytes out).

The frames are what Chrome's screencast sent (JPEG, only when the page changed), each with
when it came and the CSS size of the viewport it shows; the markers are where the vision
and click tools clicked, in CSS pixels of that viewport. A frame shows until the next one
came, so the GIF plays at the pace the page changed. A click that changed nothing on screen
brings no new frame: the frame showing at the click is repeated from the click's moment on,
so every click gets its marker (drawn on the frames of the next ``MARKER_S`` seconds).

Pillow decodes the JPEGs and quantizes to GIF palettes: a JPEG decoder and a colour
quantizer of our own would be a lot of code for no gain.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image, ImageDraw

__all__ = ["MARKER_COLOUR", "MARKER_S", "Frame", "Marker", "encode_gif", "timeline"]

#: How long a click's marker stays on the frames after it (seconds).
MARKER_S = 1.0
#: The marker: a red dot with a red ring, outlined in white to show on any page.
MARKER_COLOUR = (255, 0, 0)
#: A frame shows at least this long (GIF players round shorter delays up, or play them at
#: 100 ms) and at most this long (a long idle stretch becomes one pause, not a stall).
MIN_FRAME_MS = 40
MAX_FRAME_MS = 2000
LAST_FRAME_MS = 1000


@dataclass(frozen=True)
class Frame:
    """One screencast frame: its image bytes (JPEG or PNG), when it came (seconds, any
    clock shared with the markers) and the viewport's CSS size it shows."""

    image: bytes
    at: float
    css_width: float
    css_height: float


@dataclass(frozen=True)
class Marker:
    """A click at (x, y), CSS pixels of the viewport, at ``at`` seconds."""

    x: float
    y: float
    at: float


@dataclass(frozen=True)
class Still:
    """One GIF frame to be: which recorded frame, from when, for how long, which markers."""

    frame: int
    at: float
    ms: int
    markers: tuple[Marker, ...]


def timeline(
    frames: Sequence[Frame], markers: Sequence[Marker], marker_s: float = MARKER_S
) -> list[Still]:
    """The GIF's frames in order: each recorded frame from when it came, plus the frame
    showing at each click repeated from the click on (so the marker shows even when the
    click changed nothing), each with the markers of the last ``marker_s`` seconds."""
    if not frames:
        return []
    order = sorted(range(len(frames)), key=lambda i: frames[i].at)
    starts: list[tuple[float, int]] = [(frames[i].at, i) for i in order]
    for marker in markers:
        showing = [i for i in order if frames[i].at <= marker.at]
        if showing and all(frames[i].at != marker.at for i in order):
            starts.append((marker.at, showing[-1]))
    starts.sort(key=lambda s: s[0])
    stills = []
    for n, (at, index) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else None
        ms = LAST_FRAME_MS if end is None else round((end - at) * 1000)
        shown = tuple(m for m in markers if m.at <= at < m.at + marker_s)
        stills.append(Still(index, at, max(MIN_FRAME_MS, min(MAX_FRAME_MS, ms)), shown))
    return stills


def _draw(image: Image.Image, frame: Frame, markers: Sequence[Marker]) -> Image.Image:
    if not markers:
        return image
    image = image.copy()
    draw = ImageDraw.Draw(image)
    sx = image.width / frame.css_width if frame.css_width > 0 else 1.0
    sy = image.height / frame.css_height if frame.css_height > 0 else 1.0
    for marker in markers:
        x, y = marker.x * sx, marker.y * sy
        for radius, width, colour in ((16, 6, (255, 255, 255)), (14, 3, MARKER_COLOUR)):
            box = (x - radius, y - radius, x + radius, y + radius)
            draw.ellipse(box, outline=colour, width=width)
        draw.ellipse((x - 6, y - 6, x + 6, y + 6), fill=MARKER_COLOUR, outline=(255, 255, 255))
    return image


def encode_gif(
    frames: Sequence[Frame],
    markers: Sequence[Marker] = (),
    *,
    max_side: int = 800,
    marker_s: float = MARKER_S,
) -> bytes:
    """The animated GIF (looping) of ``frames`` with ``markers`` drawn; frames larger than
    ``max_side`` on their longest side are scaled down. ValueError when there are none."""
    stills = timeline(frames, markers, marker_s)
    if not stills:
        raise ValueError("no frames to encode")
    decoded: dict[int, Image.Image] = {}
    for index in sorted({s.frame for s in stills}):
        with Image.open(io.BytesIO(frames[index].image)) as opened:
            decoded[index] = opened.convert("RGB")
    # One canvas for all: a GIF crops every frame to its first frame's size, and Chrome's
    # screencast frames differ in size now and then (the first one, a resize). The canvas is
    # the last frame's size (the page as it ended), bounded by max_side.
    canvas = decoded[stills[-1].frame].copy()
    if max(canvas.size) > max_side:
        canvas.thumbnail((max_side, max_side))
    for index, image in decoded.items():
        if image.size != canvas.size:
            decoded[index] = image.resize(canvas.size, Image.Resampling.LANCZOS)
    images: list[Image.Image] = []
    for still in stills:
        base = decoded[still.frame]
        drawn = _draw(base, frames[still.frame], still.markers)
        images.append(drawn.convert("P", palette=Image.Palette.ADAPTIVE, colors=256))
    out = io.BytesIO()
    images[0].save(
        out,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=[s.ms for s in stills],
        loop=0,
        disposal=1,
    )
    return out.getvalue()
