"""Asking through the web UIs, end to end: real Chromium, the extension, the fake sites."""

from __future__ import annotations

import pytest

from bridge.core import Bridge
from bridge.fakes import FakeSites

pytestmark = pytest.mark.e2e


async def test_chatgpt_new_chat(bridge: Bridge, fakes: FakeSites) -> None:
    result = await bridge.ask(
        "chatgpt", "How do I read files asynchronously in Python?", new_chat=True
    )
    print(result)
    assert "asynchronously" in result.answer.lower()
    assert result.url.startswith("https://chatgpt.com/c/")


async def test_gemini_new_chat(bridge: Bridge, fakes: FakeSites) -> None:
    result = await bridge.ask(
        "gemini", "Explain generic types in TypeScript briefly.", new_chat=True
    )
    print(result)
    assert "generic" in result.answer.lower()
    assert result.url.startswith("https://gemini.google.com/app/")
