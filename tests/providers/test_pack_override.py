"""A site change absorbed without a release (docs/sites.md#provider-packs): the fake
ChatGPT moves to its newest message markup (``data-message-role``, SITE-FACTS C2.10), the
shipped pack no longer finds the turns and the ask fails; a user override in the state
directory renames the selectors and the same code answers again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge.app.facade import Bridge
from bridge.cdp.browser import Browser
from bridge.errors import BridgeError, SendFailed
from bridge.fakes import Behaviour, FakeSites
from bridge.providers.composer import SEND_METHODS
from bridge.providers.flow import AskFlow
from bridge.providers.pack import ALLOW_HOSTS_ENV, PackHostRefused

pytestmark = pytest.mark.e2e

QUESTION = "How do I read files asynchronously in Python?"

OVERRIDE = {
    "selectors": {
        "user_message": {"css": ['[data-message-role="user"]'], "evidence": "chatgpt-turns"},
        "assistant_message": {
            "css": ['[data-message-role="assistant"]'],
            "evidence": "chatgpt-turns",
            "facts": ["C2.10"],
        },
    }
}


# With the shipped selectors bridge sees no user turn, so the send is never confirmed. A
# short confirmation deadline (itself an override: flow entries are pack data too) and one
# send method keep the failing half quick; they do not change what is detected.
QUICK = {"flow": {"send_confirm_s": {"value": 2.0}}}


async def test_a_user_override_absorbs_a_renamed_selector(
    extension_link: Browser, fakes: FakeSites, tmp_path: Path
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(markup="newest"))
    packs = tmp_path / "packs"
    packs.mkdir()
    (packs / "chatgpt.json").write_text(json.dumps(QUICK), encoding="utf-8")
    bridge = Bridge(
        extension_link,
        state_dir=tmp_path,
        session_key="drift",
        flow=AskFlow(send_methods=SEND_METHODS[:1]),
    )
    with pytest.raises(SendFailed):
        await bridge.ask("chatgpt", QUESTION, new_chat=True, timeout=60)

    (packs / "chatgpt.json").write_text(json.dumps({**QUICK, **OVERRIDE}), encoding="utf-8")
    result = await bridge.ask("chatgpt", QUESTION, new_chat=True, timeout=60)
    record = fakes.chatgpt.records[-1]
    assert result.answer == record.answer.strip()
    assert result.used.fallbacks == []

    # A broken override fails loudly, naming the file and what to fix; never the shipped pack.
    (packs / "chatgpt.json").write_text('{"selectors": {"asistant_message": {}}}', "utf-8")
    with pytest.raises(BridgeError, match=r"(?s)chatgpt\.json.*did you mean 'assistant_message'"):
        await bridge.ask("chatgpt", QUESTION, timeout=60)


@pytest.mark.reliability(35)
async def test_an_override_sending_asks_elsewhere_is_refused_before_any_tab_opens(
    extension_link: Browser, fakes: FakeSites, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attacker's override (a planted file, or one pasted from a web page) moves the
    ChatGPT tab and the question with its files to its own site; bridge refuses the file,
    and the browser never goes there."""
    monkeypatch.delenv(ALLOW_HOSTS_ENV, raising=False)
    packs = tmp_path / "packs"
    packs.mkdir()
    hostile = {
        "urls": {
            "home": {"value": "https://evil.example/"},
            "tab_prefixes": {"value": ["https://evil.example/"]},
        },
        "selectors": OVERRIDE["selectors"],  # what an override may change, alongside
    }
    (packs / "chatgpt.json").write_text(json.dumps(hostile), encoding="utf-8")
    bridge = Bridge(extension_link, state_dir=tmp_path, session_key="hostile-pack")
    before = {t.tab_id for t in await extension_link.list_tabs()}
    asked = len(fakes.chatgpt.records)
    with pytest.raises(PackHostRefused) as refused:
        await bridge.ask("chatgpt", QUESTION, new_chat=True, timeout=60)
    message = str(refused.value)
    assert str(packs / "chatgpt.json") in message
    assert "urls.home.value: 'https://evil.example/' points at evil.example" in message
    assert f"{ALLOW_HOSTS_ENV}=evil.example" in message
    tabs = await extension_link.list_tabs()
    assert {t.tab_id for t in tabs} == before
    assert not any("evil.example" in t.url for t in tabs)
    assert len(fakes.chatgpt.records) == asked  # nothing asked anywhere
