"""What ``browser_emulate`` sends, and what puts each setting back (pure: no I/O).

Each setting is one *field* (``cpu_throttling_rate``, ``network``, ``viewport``,
``geolocation``, ``user_agent``, ``color_scheme``). :func:`plan` checks every value first (a
bad one changes nothing) and turns each into the CDP commands that set it; :func:`undo`
gives, per field, the commands that clear it. The client remembers which fields it set, so
its reset (and its leaving) clears only those: another client's emulation of the same tab is
left alone, and the person's tab gets back exactly its own behaviour (every CDP override
cleared is Chrome's default again).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bridge.errors import EmulationInvalid

__all__ = [
    "FIELDS",
    "NETWORK_PRESETS",
    "Command",
    "Step",
    "network_params",
    "plan",
    "undo",
]

Command = tuple[str, dict[str, Any]]

FIELDS = (
    "cpu_throttling_rate",
    "network",
    "viewport",
    "geolocation",
    "user_agent",
    "color_scheme",
)

#: DevTools' own throttling presets (its Network panel's names, so prompts carry over):
#: bytes per second down and up, and added latency in ms.
NETWORK_PRESETS: dict[str, tuple[float, float, float]] = {
    "Slow 3G": (500 * 1000 / 8 * 0.8, 500 * 1000 / 8 * 0.8, 400 * 5),
    "Fast 3G": (1.6 * 1000 * 1000 / 8 * 0.9, 750 * 1000 / 8 * 0.9, 150 * 3.75),
    "Slow 4G": (1.6 * 1000 * 1000 / 8 * 0.9, 750 * 1000 / 8 * 0.9, 150 * 3.75),
    "Fast 4G": (9 * 1000 * 1000 / 8 * 0.9, 1.5 * 1000 * 1000 / 8 * 0.9, 60 * 2.75),
}
#: No throttling: what Chrome has when nothing is emulated.
_NO_THROTTLING: dict[str, Any] = {
    "offline": False,
    "latency": 0,
    "downloadThroughput": -1,
    "uploadThroughput": -1,
}
_SCHEMES = ("light", "dark", "auto")
#: Above this, a page can neither lay out nor be read back sensibly (Chrome's own limit is
#: 10,000,000 px; DevTools' device toolbar stops at 9,999).
MAX_SIDE = 10_000


@dataclass(frozen=True)
class Step:
    """One field to set: its commands, and how it reads in the tool's answer."""

    field: str
    commands: tuple[Command, ...]
    said: str


def _number(field: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise EmulationInvalid(f"{field} must be a number from {low} to {high}, not {value!r}")
    if not low <= value <= high:
        raise EmulationInvalid(f"{field} must be from {low} to {high}, not {value}")
    return float(value)


def network_params(spec: str | Mapping[str, Any]) -> dict[str, Any]:
    """``Network.emulateNetworkConditions`` for a preset name ("Offline", "Slow 3G", "Fast
    3G", "Slow 4G", "Fast 4G", "No throttling") or a custom ``{offline, latency,
    download_throughput, upload_throughput}`` (ms; bytes per second, -1 = unlimited)."""
    if isinstance(spec, str):
        if spec == "Offline":
            return {**_NO_THROTTLING, "offline": True}
        if spec == "No throttling":
            return dict(_NO_THROTTLING)
        if spec not in NETWORK_PRESETS:
            names = ", ".join(["Offline", *NETWORK_PRESETS, "No throttling"])
            raise EmulationInvalid(f"unknown network preset {spec!r}: use one of {names}")
        down, up, latency = NETWORK_PRESETS[spec]
        return {
            "offline": False,
            "latency": latency,
            "downloadThroughput": down,
            "uploadThroughput": up,
        }
    unknown = set(spec) - {"offline", "latency", "download_throughput", "upload_throughput"}
    if unknown:
        raise EmulationInvalid(
            f"unknown network setting(s) {sorted(unknown)}: use offline, latency, "
            "download_throughput, upload_throughput"
        )
    offline = spec.get("offline", False)
    if not isinstance(offline, bool):
        raise EmulationInvalid(f"network offline must be true or false, not {offline!r}")
    return {
        "offline": offline,
        "latency": _number("network latency", spec.get("latency", 0), 0, 60_000),
        "downloadThroughput": _throughput("download", spec.get("download_throughput", -1)),
        "uploadThroughput": _throughput("upload", spec.get("upload_throughput", -1)),
    }


def _throughput(which: str, value: Any) -> float:
    if value == -1:
        return -1
    return _number(f"network {which}_throughput (bytes/s, -1 = unlimited)", value, 1, 1e10)


def _viewport(spec: Mapping[str, Any]) -> tuple[Command, ...]:
    unknown = set(spec) - {"width", "height", "device_scale_factor", "mobile", "touch"}
    if unknown:
        raise EmulationInvalid(
            f"unknown viewport setting(s) {sorted(unknown)}: use width, height, "
            "device_scale_factor, mobile, touch"
        )
    if "width" not in spec or "height" not in spec:
        raise EmulationInvalid("viewport needs width and height (CSS pixels)")
    width = int(_number("viewport width", spec["width"], 1, MAX_SIDE))
    height = int(_number("viewport height", spec["height"], 1, MAX_SIDE))
    scale = _number("viewport device_scale_factor", spec.get("device_scale_factor", 0), 0, 10)
    mobile, touch = spec.get("mobile", False), spec.get("touch", False)
    if not isinstance(mobile, bool) or not isinstance(touch, bool):
        raise EmulationInvalid("viewport mobile and touch must be true or false")
    metrics = {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": mobile}
    touch_params: dict[str, Any] = {"enabled": touch}
    if touch:
        touch_params["maxTouchPoints"] = 5
    return (
        ("Emulation.setDeviceMetricsOverride", metrics),
        ("Emulation.setTouchEmulationEnabled", touch_params),
    )


def _geolocation(spec: Mapping[str, Any]) -> dict[str, Any]:
    unknown = set(spec) - {"latitude", "longitude", "accuracy"}
    if unknown or "latitude" not in spec or "longitude" not in spec:
        raise EmulationInvalid(
            "geolocation takes latitude (-90..90), longitude (-180..180) and optionally "
            "accuracy (metres)"
        )
    return {
        "latitude": _number("geolocation latitude", spec["latitude"], -90, 90),
        "longitude": _number("geolocation longitude", spec["longitude"], -180, 180),
        "accuracy": _number("geolocation accuracy", spec.get("accuracy", 100), 0, 1e7),
    }


def plan(settings: Mapping[str, Any]) -> tuple[list[Step], list[str]]:
    """Every setting checked (``EmulationInvalid`` before anything is sent), as the steps
    that set them and the fields that go back to Chrome's default ("auto", "", rate 1, "No
    throttling", None values are resets of that one field)."""
    unknown = set(settings) - set(FIELDS)
    if unknown:
        raise EmulationInvalid(f"unknown emulation setting(s) {sorted(unknown)}: use {FIELDS}")
    steps: list[Step] = []
    resets: list[str] = []
    for field in FIELDS:
        if field not in settings:
            continue
        value = settings[field]
        if value is None:
            resets.append(field)
        elif field == "cpu_throttling_rate":
            rate = _number("cpu_throttling_rate", value, 1, 20)
            if rate == 1:
                resets.append(field)
            else:
                command: Command = ("Emulation.setCPUThrottlingRate", {"rate": rate})
                steps.append(Step(field, (command,), f"CPU {rate:g}× slower"))
        elif field == "network":
            if value == "No throttling":
                resets.append(field)
                continue
            params = network_params(value)
            said = value if isinstance(value, str) else "custom network conditions"
            command = ("Network.emulateNetworkConditions", params)
            steps.append(Step(field, (command,), f"network: {said}"))
        elif field == "viewport":
            if not isinstance(value, Mapping):
                raise EmulationInvalid("viewport is {width, height, device_scale_factor, …}")
            commands = _viewport(value)
            metrics = commands[0][1]
            dpr = (
                f" at DPR {metrics['deviceScaleFactor']:g}" if metrics["deviceScaleFactor"] else ""
            )
            kind = " mobile" if metrics["mobile"] else ""
            touch = " with touch" if commands[1][1]["enabled"] else ""
            said = f"viewport {metrics['width']}×{metrics['height']}{dpr}{kind}{touch}"
            steps.append(Step(field, commands, said))
        elif field == "geolocation":
            if not isinstance(value, Mapping):
                raise EmulationInvalid("geolocation is {latitude, longitude, accuracy}")
            params = _geolocation(value)
            command = ("Emulation.setGeolocationOverride", params)
            said = f"geolocation {params['latitude']:g}, {params['longitude']:g}"
            steps.append(Step(field, (command,), said))
        elif field == "user_agent":
            if not isinstance(value, str) or "\n" in value or "\r" in value:
                raise EmulationInvalid("user_agent must be one line of text")
            if value == "":
                resets.append(field)
            else:
                command = ("Emulation.setUserAgentOverride", {"userAgent": value})
                steps.append(Step(field, (command,), f"user agent {value!r}"))
        elif field == "color_scheme":
            if value not in _SCHEMES:
                raise EmulationInvalid(f"color_scheme must be one of {_SCHEMES}, not {value!r}")
            if value == "auto":
                resets.append(field)
            else:
                features = [{"name": "prefers-color-scheme", "value": value}]
                command = ("Emulation.setEmulatedMedia", {"features": features})
                steps.append(Step(field, (command,), f"color scheme {value}"))
    return steps, resets


def undo(field: str) -> tuple[Command, ...]:
    """The commands that put ``field`` back to Chrome's own behaviour."""
    if field == "cpu_throttling_rate":
        return (("Emulation.setCPUThrottlingRate", {"rate": 1}),)
    if field == "network":
        return (("Network.emulateNetworkConditions", dict(_NO_THROTTLING)),)
    if field == "viewport":
        return (
            ("Emulation.clearDeviceMetricsOverride", {}),
            ("Emulation.setTouchEmulationEnabled", {"enabled": False}),
        )
    if field == "geolocation":
        return (("Emulation.clearGeolocationOverride", {}),)
    if field == "user_agent":
        # An empty override is Chrome's "no override": the browser's own string again.
        return (("Emulation.setUserAgentOverride", {"userAgent": ""}),)
    if field == "color_scheme":
        return (("Emulation.setEmulatedMedia", {"features": []}),)
    raise EmulationInvalid(f"unknown emulation setting {field!r}: use {FIELDS}")
