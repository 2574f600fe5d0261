"""What each emulation setting sends, what undoes it, and what is refused (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from bridge.errors import EmulationInvalid
from bridge.tools.emulation_core import FIELDS, NETWORK_PRESETS, network_params, plan, undo


def commands(settings: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    steps, _ = plan(settings)
    return [c for step in steps for c in step.commands]


def test_each_setting_becomes_its_cdp_commands() -> None:
    sent = commands(
        {
            "cpu_throttling_rate": 4,
            "network": "Slow 3G",
            "viewport": {
                "width": 390,
                "height": 844,
                "device_scale_factor": 3,
                "mobile": True,
                "touch": True,
            },
            "geolocation": {"latitude": 35.68, "longitude": 139.76},
            "user_agent": "Agent/1",
            "color_scheme": "dark",
        }
    )
    assert [m for m, _ in sent] == [
        "Emulation.setCPUThrottlingRate",
        "Network.emulateNetworkConditions",
        "Emulation.setDeviceMetricsOverride",
        "Emulation.setTouchEmulationEnabled",
        "Emulation.setGeolocationOverride",
        "Emulation.setUserAgentOverride",
        "Emulation.setEmulatedMedia",
    ]
    params = dict(sent)
    assert params["Emulation.setCPUThrottlingRate"] == {"rate": 4}
    assert params["Network.emulateNetworkConditions"]["latency"] == 2000
    assert params["Emulation.setDeviceMetricsOverride"] == {
        "width": 390,
        "height": 844,
        "deviceScaleFactor": 3,
        "mobile": True,
    }
    assert params["Emulation.setTouchEmulationEnabled"] == {"enabled": True, "maxTouchPoints": 5}
    assert params["Emulation.setGeolocationOverride"]["accuracy"] == 100
    assert params["Emulation.setEmulatedMedia"] == {
        "features": [{"name": "prefers-color-scheme", "value": "dark"}]
    }


def test_default_values_are_resets_of_their_field() -> None:
    steps, resets = plan(
        {
            "cpu_throttling_rate": 1,
            "network": "No throttling",
            "user_agent": "",
            "color_scheme": "auto",
            "geolocation": None,
        }
    )
    assert steps == []
    assert resets == ["cpu_throttling_rate", "network", "geolocation", "user_agent", "color_scheme"]


def test_every_field_has_an_undo_back_to_chromes_default() -> None:
    for name in FIELDS:
        assert undo(name)
    assert undo("viewport") == (
        ("Emulation.clearDeviceMetricsOverride", {}),
        ("Emulation.setTouchEmulationEnabled", {"enabled": False}),
    )
    assert undo("network") == (
        (
            "Network.emulateNetworkConditions",
            {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
        ),
    )


def test_network_presets_and_custom_conditions() -> None:
    assert network_params("Offline")["offline"] is True
    for name in NETWORK_PRESETS:
        assert network_params(name)["downloadThroughput"] > 0
    custom = network_params({"latency": 300, "download_throughput": 50_000})
    assert custom == {
        "offline": False,
        "latency": 300,
        "downloadThroughput": 50_000,
        "uploadThroughput": -1,
    }


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"cpu_throttling_rate": 0.5}, "cpu_throttling_rate"),
        ({"cpu_throttling_rate": True}, "number"),
        ({"network": "5G"}, "unknown network preset"),
        ({"network": {"latency": -1}}, "latency"),
        ({"network": {"speed": 1}}, "unknown network setting"),
        ({"viewport": {"width": 100}}, "width and height"),
        ({"viewport": {"width": 0, "height": 10}}, "width"),
        (
            {"viewport": {"width": 10, "height": 10, "device_scale_factor": 50}},
            "device_scale_factor",
        ),
        ({"geolocation": {"latitude": 91, "longitude": 0}}, "latitude"),
        ({"geolocation": {"lat": 1, "lng": 2}}, "latitude"),
        ({"user_agent": "A\r\nX-Injected: 1"}, "one line"),
        ({"color_scheme": "sepia"}, "color_scheme"),
        ({"timezone": "UTC"}, "unknown emulation setting"),
        ({"cpu_throttling_rate": float("nan")}, "number"),
    ],
)
def test_bad_settings_are_refused_before_anything_is_sent(
    settings: dict[str, Any], says: str
) -> None:
    with pytest.raises(EmulationInvalid, match=says):
        plan({"color_scheme": "dark", **settings})


def test_the_answer_says_what_was_set() -> None:
    steps, _ = plan(
        {"viewport": {"width": 390, "height": 844, "device_scale_factor": 3, "mobile": True}}
    )
    assert steps[0].said == "viewport 390×844 at DPR 3 mobile"
