"""The GIF encoder, pure: frames and clicks in, an animated GIF out (bridge.tools.gif_core)."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from bridge.tools.gif_core import MARKER_COLOUR, Frame, Marker, encode_gif, timeline


def _jpeg(colour: tuple[int, int, int], size: tuple[int, int] = (200, 100)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, format="JPEG", quality=90)
    return out.getvalue()


def _frames(gif: bytes) -> list[Image.Image]:
    with Image.open(io.BytesIO(gif)) as image:
        frames = []
        for n in range(image.n_frames):
            image.seek(n)
            frames.append(image.convert("RGB"))
        return frames


def _reddish(pixel: tuple[int, ...]) -> bool:
    r, g, b = pixel[:3]
    return r > 200 and g < 80 and b < 80


BLUE, GREEN = (0, 0, 200), (0, 160, 0)


def test_frames_become_an_animated_gif_at_the_pace_they_came() -> None:
    frames = [Frame(_jpeg(BLUE), 10.0, 200, 100), Frame(_jpeg(GREEN), 10.5, 200, 100)]
    gif = encode_gif(frames)
    assert gif[:6] == b"GIF89a"
    decoded = _frames(gif)
    assert len(decoded) == 2
    assert decoded[0].getpixel((5, 5))[2] > 150 and decoded[1].getpixel((5, 5))[1] > 120
    with Image.open(io.BytesIO(gif)) as image:
        assert image.info["duration"] == 500  # the first frame shows until the second came


def test_a_click_that_changed_nothing_still_gets_its_marker() -> None:
    frames = [Frame(_jpeg(BLUE), 10.0, 200, 100)]
    gif = encode_gif(frames, [Marker(50, 25, 11.0)])
    decoded = _frames(gif)
    assert len(decoded) == 2  # the frame repeated from the click on, with the marker
    assert not _reddish(decoded[0].getpixel((50, 25)))
    assert _reddish(decoded[1].getpixel((50, 25)))


def test_markers_map_css_pixels_onto_a_scaled_frame_and_fade() -> None:
    # The frame is half the viewport's CSS size (a screencast of a 400x200 viewport).
    frames = [
        Frame(_jpeg(BLUE), 1.0, 400, 200),
        Frame(_jpeg(GREEN), 1.2, 400, 200),
        Frame(_jpeg(BLUE), 5.0, 400, 200),
    ]
    decoded = _frames(encode_gif(frames, [Marker(300, 100, 1.1)]))
    assert len(decoded) == 4
    assert _reddish(decoded[1].getpixel((150, 50)))  # the click's own moment
    assert _reddish(decoded[2].getpixel((150, 50)))  # the frame after it
    assert not _reddish(decoded[3].getpixel((150, 50)))  # seconds later: gone
    assert MARKER_COLOUR == (255, 0, 0)


def test_large_frames_are_scaled_down_never_up() -> None:
    big = encode_gif([Frame(_jpeg(BLUE, (1600, 800)), 0.0, 1600, 800)], max_side=400)
    with Image.open(io.BytesIO(big)) as image:
        assert image.size == (400, 200)
    small = encode_gif([Frame(_jpeg(BLUE, (100, 50)), 0.0, 100, 50)], max_side=400)
    with Image.open(io.BytesIO(small)) as image:
        assert image.size == (100, 50)


def test_timeline_bounds_each_frames_delay() -> None:
    frames = [Frame(b"", 0.0, 1, 1), Frame(b"", 0.001, 1, 1), Frame(b"", 60.0, 1, 1)]
    assert [s.ms for s in timeline(frames, [])] == [40, 2000, 1000]
    assert timeline([], [Marker(1, 1, 1)]) == []


def test_no_frames_is_an_error() -> None:
    with pytest.raises(ValueError, match="no frames"):
        encode_gif([])


def test_frames_of_other_sizes_are_scaled_onto_one_canvas_not_cropped() -> None:
    # The screencast's first frame came smaller: scaled to the canvas, markers mapped on it.
    frames = [Frame(_jpeg(BLUE, (100, 50)), 0.0, 400, 200), Frame(_jpeg(GREEN), 1.0, 400, 200)]
    decoded = _frames(encode_gif(frames, [Marker(360, 180, 0.5)]))
    assert [f.size for f in decoded] == [(200, 100)] * 3
    assert decoded[0].getpixel((190, 90))[2] > 150  # blue all over: scaled, not cropped
    assert _reddish(decoded[1].getpixel((180, 90)))
