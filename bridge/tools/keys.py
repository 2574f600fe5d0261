"""Key chords ("Enter", "Control+Shift+K", "a") as the CDP key events a real keyboard sends.

Pages react to ``key``, ``code`` and ``keyCode`` (legacy handlers) and to held modifiers, and
Chrome only inserts text for a ``keyDown`` that carries ``text``. So a chord becomes: each
modifier pressed (``rawKeyDown``, left-hand ``location``), the key pressed (``keyDown`` with
``text`` if it types something and no Control/Alt/Meta is held, else ``rawKeyDown``), the key
released, the modifiers released in reverse. The US keyboard layout is assumed.

Chord syntax: names joined by "+", modifiers first. Names are case-insensitive except single
characters ("a" and "A" differ). "+" itself is written "+", "Plus" or, after modifiers,
"Control++" / "Control+Plus". Space is "Space" or " ". With Shift held a character becomes
its shifted form ("Shift+a" is "A", "Shift+1" is "!"); with Control/Alt/Meta held a letter
follows the Shift state like a real keyboard ("Control+A" sends key "a").

On macOS, Chrome does not run editing shortcuts (Meta+A, Meta+Z…) from synthetic events;
like Playwright, those carry the editor ``commands`` to run.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MODIFIER_BITS",
    "KeyChord",
    "chord_modifiers",
    "key_events",
    "parse_chord",
]

#: CDP ``modifiers`` bits.
MODIFIER_BITS = {"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8}

# modifier -> (code, windowsVirtualKeyCode)
_MODIFIER_KEYS = {
    "Alt": ("AltLeft", 18),
    "Control": ("ControlLeft", 17),
    "Meta": ("MetaLeft", 91),
    "Shift": ("ShiftLeft", 16),
}
_MODIFIER_ALIASES = {
    "alt": "Alt",
    "option": "Alt",
    "control": "Control",
    "ctrl": "Control",
    "meta": "Meta",
    "cmd": "Meta",
    "command": "Meta",
    "shift": "Shift",
}
_CONTROL_OR_META = "controlormeta"


@dataclass(frozen=True)
class _Key:
    key: str
    code: str
    key_code: int
    text: str = ""


def _named_keys() -> dict[str, _Key]:
    keys = [
        _Key("Enter", "Enter", 13, "\r"),
        _Key("Escape", "Escape", 27),
        _Key("Tab", "Tab", 9),
        _Key("Backspace", "Backspace", 8),
        _Key("Delete", "Delete", 46),
        _Key("Insert", "Insert", 45),
        _Key("Home", "Home", 36),
        _Key("End", "End", 35),
        _Key("PageUp", "PageUp", 33),
        _Key("PageDown", "PageDown", 34),
        _Key("ArrowLeft", "ArrowLeft", 37),
        _Key("ArrowUp", "ArrowUp", 38),
        _Key("ArrowRight", "ArrowRight", 39),
        _Key("ArrowDown", "ArrowDown", 40),
        _Key("ContextMenu", "ContextMenu", 93),
        *(_Key(f"F{n}", f"F{n}", 111 + n) for n in range(1, 13)),
    ]
    named = {k.key.lower(): k for k in keys}
    named["space"] = _Key(" ", "Space", 32, " ")
    aliases = {"esc": "escape", "return": "enter", "del": "delete", "spacebar": "space"}
    named.update({alias: named[target] for alias, target in aliases.items()})
    return named


_NAMED = _named_keys()


def _printable_keys() -> dict[str, tuple[_Key, str]]:
    """Every US-layout character -> (its key, the character Shift turns it into)."""
    table: dict[str, tuple[_Key, str]] = {}
    for letter in "abcdefghijklmnopqrstuvwxyz":
        code, key_code, upper = f"Key{letter.upper()}", ord(letter.upper()), letter.upper()
        table[letter] = (_Key(letter, code, key_code, letter), upper)
        table[upper] = (_Key(upper, code, key_code, upper), upper)
    rows = [
        ("0123456789", ")!@#$%^&*(", [f"Digit{d}" for d in range(10)], list(range(48, 58))),
        (
            ";=,-./`[\\]'",
            ':+<_>?~{|}"',
            [
                "Semicolon",
                "Equal",
                "Comma",
                "Minus",
                "Period",
                "Slash",
                "Backquote",
                "BracketLeft",
                "Backslash",
                "BracketRight",
                "Quote",
            ],
            [186, 187, 188, 189, 190, 191, 192, 219, 220, 221, 222],
        ),
    ]
    for plain, shifted, codes, key_codes in rows:
        for low, high, code, key_code in zip(plain, shifted, codes, key_codes, strict=True):
            table[low] = (_Key(low, code, key_code, low), high)
            table[high] = (_Key(high, code, key_code, high), high)
    return table


_PRINTABLE = _printable_keys()

# macOS editing commands (as Playwright sends them): (modifier bits, code) -> commands.
_MAC_COMMANDS = {
    (4, "KeyA"): ["selectAll"],
    (4, "KeyC"): ["copy"],
    (4, "KeyX"): ["cut"],
    (4, "KeyV"): ["paste"],
    (4, "KeyZ"): ["undo"],
    (12, "KeyZ"): ["redo"],
    (4, "ArrowLeft"): ["moveToBeginningOfLine"],
    (4, "ArrowRight"): ["moveToEndOfLine"],
    (4, "ArrowUp"): ["moveToBeginningOfDocument"],
    (4, "ArrowDown"): ["moveToEndOfDocument"],
    (12, "ArrowLeft"): ["moveToBeginningOfLineAndModifySelection"],
    (12, "ArrowRight"): ["moveToEndOfLineAndModifySelection"],
    (1, "ArrowLeft"): ["moveWordLeft"],
    (1, "ArrowRight"): ["moveWordRight"],
    (4, "Backspace"): ["deleteToBeginningOfLine"],
    (1, "Backspace"): ["deleteWordBackward"],
}

_EXAMPLES = (
    "use a key name such as Enter, Escape, Tab, Backspace, Delete, ArrowDown, Home, End, "
    "PageUp, PageDown, F1..F12, Space, or one character like 'a', 'A', '1', '/'; put "
    "modifiers (Shift, Control, Alt, Meta, ControlOrMeta) first, joined by '+', e.g. "
    "'Shift+Tab' or 'Control+Shift+K'; write '+' itself as 'Plus' or 'Control++'"
)


@dataclass(frozen=True)
class KeyChord:
    """A parsed chord: canonical modifier names in press order, and the canonical key ("Enter",
    "a", "+", " ", or a modifier name when a modifier itself is the key)."""

    modifiers: tuple[str, ...]
    key: str


def parse_chord(chord: str, *, platform: str = sys.platform) -> KeyChord:
    """Split and validate ``chord``; ValueError (with examples) if any part is unknown."""
    if chord in ("+", " "):
        return KeyChord((), chord)
    if chord.endswith("++"):
        head, key, has_head = chord[:-2], "+", True
    else:
        head, sep, key = chord.rpartition("+")
        has_head = bool(sep)
        if key != " ":
            key = key.strip()
    modifiers = _modifier_names(head.split("+"), chord, platform) if has_head else ()
    as_modifier = _modifier_alias(key, platform)
    if as_modifier is not None:
        return KeyChord(modifiers, as_modifier)
    return KeyChord(modifiers, _key(key, chord).key)


def chord_modifiers(names: list[str], *, platform: str = sys.platform) -> int:
    """The CDP ``modifiers`` bitmask for modifier names (Shift, Control, Alt, Meta, or
    ControlOrMeta: Meta on macOS, Control elsewhere), e.g. for a click with modifiers."""
    bits = 0
    for name in _modifier_names(names, "+".join(names), platform):
        bits |= MODIFIER_BITS[name]
    return bits


def key_events(chord: str, *, platform: str = sys.platform) -> list[dict[str, Any]]:
    """``Input.dispatchKeyEvent`` parameters that press and release ``chord``, in order."""
    parsed = parse_chord(chord, platform=platform)
    held = list(parsed.modifiers)
    if parsed.key in MODIFIER_BITS:  # "Shift", "Control+Shift": pressed like the others
        if parsed.key not in held:
            held.append(parsed.key)
        return _modifier_downs(held) + _modifier_ups(held)

    bits = 0
    for name in held:
        bits |= MODIFIER_BITS[name]
    key = _shaped(_key(parsed.key, chord), bits)
    shortcut = bits & (MODIFIER_BITS["Control"] | MODIFIER_BITS["Alt"] | MODIFIER_BITS["Meta"])
    types_text = bool(key.text) and not shortcut
    common = {
        "modifiers": bits,
        "key": key.key,
        "code": key.code,
        "windowsVirtualKeyCode": key.key_code,
        "nativeVirtualKeyCode": key.key_code,
    }
    down: dict[str, Any] = {"type": "keyDown" if types_text else "rawKeyDown", **common}
    if types_text:
        down["text"] = key.text
        down["unmodifiedText"] = key.text
    commands = _MAC_COMMANDS.get((bits, key.code)) if platform == "darwin" else None
    if commands:
        down["commands"] = list(commands)
    up: dict[str, Any] = {"type": "keyUp", **common}
    return [*_modifier_downs(held), down, up, *_modifier_ups(held)]


def _modifier_alias(name: str, platform: str) -> str | None:
    lowered = name.strip().lower()
    if lowered == _CONTROL_OR_META:
        return "Meta" if platform == "darwin" else "Control"
    return _MODIFIER_ALIASES.get(lowered)


def _modifier_names(names: list[str], chord: str, platform: str) -> tuple[str, ...]:
    found: list[str] = []
    for name in names:
        canonical = _modifier_alias(name, platform)
        if canonical is None:
            what = "an empty part" if not name.strip() else f"{name.strip()!r}"
            raise ValueError(f"{what} in key chord {chord!r} is not a modifier: {_EXAMPLES}")
        if canonical not in found:
            found.append(canonical)
    return tuple(found)


def _key(name: str, chord: str) -> _Key:
    if len(name) == 1:
        hit = _PRINTABLE.get(name)
        if hit is not None:
            return hit[0]
        if name == " ":
            return _NAMED["space"]
        if name.isprintable():
            return _Key(name, "", 0, name)  # other characters: typed as text, no key code
        raise ValueError(f"{name!r} in key chord {chord!r} is not a printable key: {_EXAMPLES}")
    if not name:
        raise ValueError(f"key chord {chord!r} has no key: {_EXAMPLES}")
    lowered = name.lower()
    if lowered == "plus":
        return _PRINTABLE["+"][0]
    named = _NAMED.get(lowered)
    if named is not None:
        return named
    hint = " (to type text rather than press a key, use the type tool)" if name.isalnum() else ""
    raise ValueError(f"unknown key {name!r} in key chord {chord!r}{hint}: {_EXAMPLES}")


def _shaped(key: _Key, bits: int) -> _Key:
    """What the key sends under the held modifiers: Shift picks the shifted character; a
    letter under Control/Alt/Meta follows Shift (lowercase without it), as a keyboard does."""
    hit = _PRINTABLE.get(key.key)
    if hit is None:
        return key
    if bits & MODIFIER_BITS["Shift"]:
        upper = hit[1]
        return _Key(upper, key.code, key.key_code, upper)
    if bits and key.key.isalpha():
        lower = key.key.lower()
        return _Key(lower, key.code, key.key_code, lower)
    return key


def _modifier_downs(held: list[str]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    bits = 0
    for name in held:
        bits |= MODIFIER_BITS[name]
        events.append(_modifier_event("rawKeyDown", name, bits))
    return events


def _modifier_ups(held: list[str]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    bits = 0
    for name in held:
        bits |= MODIFIER_BITS[name]
    for name in reversed(held):
        bits &= ~MODIFIER_BITS[name]
        events.append(_modifier_event("keyUp", name, bits))
    return events


def _modifier_event(kind: str, name: str, bits: int) -> dict[str, Any]:
    code, key_code = _MODIFIER_KEYS[name]
    return {
        "type": kind,
        "modifiers": bits,
        "key": name,
        "code": code,
        "windowsVirtualKeyCode": key_code,
        "nativeVirtualKeyCode": key_code,
        "location": 1,
    }
