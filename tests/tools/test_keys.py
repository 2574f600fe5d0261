"""Key chords -> CDP key events, checked against what a US keyboard sends."""

from __future__ import annotations

from typing import Any

import pytest

from bridge.tools.keys import MODIFIER_BITS, KeyChord, chord_modifiers, key_events, parse_chord

LINUX = "linux"
MAC = "darwin"


def brief(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(type, key, code, keyCode, modifiers, text) per event: the parts tables compare."""
    return [
        (e["type"], e["key"], e["code"], e["windowsVirtualKeyCode"], e["modifiers"], e.get("text"))
        for e in events
    ]


# chord -> the main key's (type of its down event, key, code, keyCode, modifiers, text)
MAIN_KEY = [
    ("Enter", ("keyDown", "Enter", "Enter", 13, 0, "\r")),
    ("Escape", ("rawKeyDown", "Escape", "Escape", 27, 0, None)),
    ("Tab", ("rawKeyDown", "Tab", "Tab", 9, 0, None)),
    ("Shift+Tab", ("rawKeyDown", "Tab", "Tab", 9, 8, None)),
    ("Control+A", ("rawKeyDown", "a", "KeyA", 65, 2, None)),
    ("Control+a", ("rawKeyDown", "a", "KeyA", 65, 2, None)),
    ("Control+Shift+K", ("rawKeyDown", "K", "KeyK", 75, 10, None)),
    ("Meta+C", ("rawKeyDown", "c", "KeyC", 67, 4, None)),
    ("Alt+F4", ("rawKeyDown", "F4", "F4", 115, 1, None)),
    ("ArrowDown", ("rawKeyDown", "ArrowDown", "ArrowDown", 40, 0, None)),
    ("ArrowUp", ("rawKeyDown", "ArrowUp", "ArrowUp", 38, 0, None)),
    ("ArrowLeft", ("rawKeyDown", "ArrowLeft", "ArrowLeft", 37, 0, None)),
    ("ArrowRight", ("rawKeyDown", "ArrowRight", "ArrowRight", 39, 0, None)),
    ("Backspace", ("rawKeyDown", "Backspace", "Backspace", 8, 0, None)),
    ("Delete", ("rawKeyDown", "Delete", "Delete", 46, 0, None)),
    ("Home", ("rawKeyDown", "Home", "Home", 36, 0, None)),
    ("End", ("rawKeyDown", "End", "End", 35, 0, None)),
    ("PageUp", ("rawKeyDown", "PageUp", "PageUp", 33, 0, None)),
    ("PageDown", ("rawKeyDown", "PageDown", "PageDown", 34, 0, None)),
    ("Insert", ("rawKeyDown", "Insert", "Insert", 45, 0, None)),
    ("F1", ("rawKeyDown", "F1", "F1", 112, 0, None)),
    ("F12", ("rawKeyDown", "F12", "F12", 123, 0, None)),
    ("Space", ("keyDown", " ", "Space", 32, 0, " ")),
    (" ", ("keyDown", " ", "Space", 32, 0, " ")),
    ("Control+ ", ("rawKeyDown", " ", "Space", 32, 2, None)),
    ("a", ("keyDown", "a", "KeyA", 65, 0, "a")),
    ("A", ("keyDown", "A", "KeyA", 65, 0, "A")),
    ("Shift+a", ("keyDown", "A", "KeyA", 65, 8, "A")),
    ("z", ("keyDown", "z", "KeyZ", 90, 0, "z")),
    ("1", ("keyDown", "1", "Digit1", 49, 0, "1")),
    ("0", ("keyDown", "0", "Digit0", 48, 0, "0")),
    ("Shift+1", ("keyDown", "!", "Digit1", 49, 8, "!")),
    ("!", ("keyDown", "!", "Digit1", 49, 0, "!")),
    ("/", ("keyDown", "/", "Slash", 191, 0, "/")),
    ("Shift+/", ("keyDown", "?", "Slash", 191, 8, "?")),
    ("-", ("keyDown", "-", "Minus", 189, 0, "-")),
    ("'", ("keyDown", "'", "Quote", 222, 0, "'")),
    ("\\", ("keyDown", "\\", "Backslash", 220, 0, "\\")),
    ("+", ("keyDown", "+", "Equal", 187, 0, "+")),
    ("Plus", ("keyDown", "+", "Equal", 187, 0, "+")),
    ("Control++", ("rawKeyDown", "+", "Equal", 187, 2, None)),
    ("Control+Plus", ("rawKeyDown", "+", "Equal", 187, 2, None)),
    ("Control+Shift++", ("rawKeyDown", "+", "Equal", 187, 10, None)),
    ("Shift+Enter", ("keyDown", "Enter", "Enter", 13, 8, "\r")),
    ("Control+Enter", ("rawKeyDown", "Enter", "Enter", 13, 2, None)),
    ("é", ("keyDown", "é", "", 0, 0, "é")),
    # names are case-insensitive, with common aliases
    ("enter", ("keyDown", "Enter", "Enter", 13, 0, "\r")),
    ("ESC", ("rawKeyDown", "Escape", "Escape", 27, 0, None)),
    ("Return", ("keyDown", "Enter", "Enter", 13, 0, "\r")),
    ("ctrl+shift+k", ("rawKeyDown", "K", "KeyK", 75, 10, None)),
    ("Cmd+z", ("rawKeyDown", "z", "KeyZ", 90, 4, None)),
    ("Option+ArrowLeft", ("rawKeyDown", "ArrowLeft", "ArrowLeft", 37, 1, None)),
    (" Control + Enter ", ("rawKeyDown", "Enter", "Enter", 13, 2, None)),
]


@pytest.mark.parametrize(("chord", "main"), MAIN_KEY, ids=[repr(c) for c, _ in MAIN_KEY])
def test_main_key(chord: str, main: tuple[Any, ...]) -> None:
    events = key_events(chord, platform=LINUX)
    held = bin(main[4]).count("1")
    assert len(events) == 2 + 2 * held
    down, up = events[held], events[held + 1]
    assert brief([down])[0] == main
    assert brief([up])[0] == ("keyUp", *main[1:5], None)
    assert down["nativeVirtualKeyCode"] == down["windowsVirtualKeyCode"]
    assert up["nativeVirtualKeyCode"] == up["windowsVirtualKeyCode"]
    assert "location" not in down
    if main[5] is not None:
        assert down["unmodifiedText"] == main[5]


def test_modifiers_go_down_in_order_and_up_in_reverse() -> None:
    assert brief(key_events("Control+Shift+K", platform=LINUX)) == [
        ("rawKeyDown", "Control", "ControlLeft", 17, 2, None),
        ("rawKeyDown", "Shift", "ShiftLeft", 16, 10, None),
        ("rawKeyDown", "K", "KeyK", 75, 10, None),
        ("keyUp", "K", "KeyK", 75, 10, None),
        ("keyUp", "Shift", "ShiftLeft", 16, 2, None),
        ("keyUp", "Control", "ControlLeft", 17, 0, None),
    ]


def test_every_modifier_event_is_on_the_left() -> None:
    events = key_events("Alt+Control+Meta+Shift+x", platform=LINUX)
    modifier_events = events[:4] + events[-4:]
    assert {e["location"] for e in modifier_events} == {1}
    assert [(e["key"], e["code"], e["windowsVirtualKeyCode"]) for e in events[:4]] == [
        ("Alt", "AltLeft", 18),
        ("Control", "ControlLeft", 17),
        ("Meta", "MetaLeft", 91),
        ("Shift", "ShiftLeft", 16),
    ]
    assert events[4]["modifiers"] == 15


@pytest.mark.parametrize(
    ("chord", "expected"),
    [
        (
            "Shift",
            [
                ("rawKeyDown", "Shift", "ShiftLeft", 16, 8, None),
                ("keyUp", "Shift", "ShiftLeft", 16, 0, None),
            ],
        ),
        (
            "Control+Shift",
            [
                ("rawKeyDown", "Control", "ControlLeft", 17, 2, None),
                ("rawKeyDown", "Shift", "ShiftLeft", 16, 10, None),
                ("keyUp", "Shift", "ShiftLeft", 16, 2, None),
                ("keyUp", "Control", "ControlLeft", 17, 0, None),
            ],
        ),
        (
            "Control+Control",
            [
                ("rawKeyDown", "Control", "ControlLeft", 17, 2, None),
                ("keyUp", "Control", "ControlLeft", 17, 0, None),
            ],
        ),
    ],
)
def test_a_modifier_as_the_key(chord: str, expected: list[tuple[Any, ...]]) -> None:
    assert brief(key_events(chord, platform=LINUX)) == expected


@pytest.mark.parametrize(
    ("platform", "key", "bits"),
    [(MAC, "Meta", 4), (LINUX, "Control", 2), ("win32", "Control", 2)],
)
def test_control_or_meta_follows_the_platform(platform: str, key: str, bits: int) -> None:
    events = key_events("ControlOrMeta+a", platform=platform)
    assert events[0]["key"] == key
    assert events[1]["modifiers"] == bits
    assert parse_chord("ControlOrMeta+a", platform=platform) == KeyChord((key,), "a")


@pytest.mark.parametrize(
    ("chord", "commands"),
    [
        ("Meta+a", ["selectAll"]),
        ("Meta+Z", ["undo"]),
        ("Meta+Shift+z", ["redo"]),
        ("Meta+v", ["paste"]),
        ("Alt+Backspace", ["deleteWordBackward"]),
        ("Control+a", None),
        ("a", None),
    ],
)
def test_mac_editing_commands(chord: str, commands: list[str] | None) -> None:
    events = key_events(chord, platform=MAC)
    down = next(e for e in events if e["type"] != "keyUp" and e["key"] not in MODIFIER_BITS)
    assert down.get("commands") == commands
    assert all("commands" not in e for e in key_events(chord, platform=LINUX))


@pytest.mark.parametrize(
    ("chord", "parsed"),
    [
        ("Enter", KeyChord((), "Enter")),
        ("shift+tab", KeyChord(("Shift",), "Tab")),
        ("Control++", KeyChord(("Control",), "+")),
        ("+", KeyChord((), "+")),
        ("Space", KeyChord((), " ")),
        ("Meta+A", KeyChord(("Meta",), "A")),
        ("Shift", KeyChord((), "Shift")),
        ("Ctrl+Alt+Delete", KeyChord(("Control", "Alt"), "Delete")),
    ],
)
def test_parse_chord(chord: str, parsed: KeyChord) -> None:
    assert parse_chord(chord, platform=LINUX) == parsed


@pytest.mark.parametrize(
    ("chord", "message"),
    [
        ("hello", "unknown key 'hello'.*use the type tool"),
        ("Foo+a", "'Foo' in key chord 'Foo\\+a' is not a modifier"),
        ("Control+", "has no key"),
        ("+a", "empty part"),
        ("Control++a", "empty part"),
        ("++", "empty part"),
        ("", "has no key"),
        ("\x01", "not a printable key"),
        ("F13", "unknown key 'F13'"),
        ("Enter+a", "'Enter' in key chord 'Enter\\+a' is not a modifier"),
    ],
)
def test_unknown_chords_say_what_is_valid(chord: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        key_events(chord, platform=LINUX)
    assert "Enter" in str(caught.value) and "Control+Shift+K" in str(caught.value)


@pytest.mark.parametrize(
    ("names", "platform", "bits"),
    [
        ([], LINUX, 0),
        (["Shift"], LINUX, 8),
        (["Alt"], LINUX, 1),
        (["Control"], LINUX, 2),
        (["Meta"], LINUX, 4),
        (["Shift", "Control", "Alt", "Meta"], LINUX, 15),
        (["shift", "ctrl"], LINUX, 10),
        (["ControlOrMeta"], MAC, 4),
        (["ControlOrMeta"], LINUX, 2),
        (["ControlOrMeta", "Control"], MAC, 6),
        (["Shift", "Shift"], LINUX, 8),
    ],
)
def test_chord_modifiers(names: list[str], platform: str, bits: int) -> None:
    assert chord_modifiers(names, platform=platform) == bits


@pytest.mark.parametrize("names", [["Enter"], ["Shift", "x"], [""]])
def test_chord_modifiers_rejects_non_modifiers(names: list[str]) -> None:
    with pytest.raises(ValueError, match="not a modifier"):
        chord_modifiers(names, platform=LINUX)
