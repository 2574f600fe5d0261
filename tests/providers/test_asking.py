"""Asking through the web UIs, end to end: real Chromium, the extension, the fake sites.

Each test names the behaviour it guards (docs/flows.md, docs/sites.md). The fakes answer deterministically, so
answers are compared with what the fake actually sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bridge.app.facade import Bridge
from bridge.app.launcher import LaunchedBrowser
from bridge.cdp.browser import Browser
from bridge.cdp.direct import DirectCdp
from bridge.cdp.session import CdpSession
from bridge.errors import (
    ChallengeShown,
    LoginRequired,
    ProviderErrorTurn,
    ProviderStuck,
    RateLimited,
    TabClosed,
)
from bridge.fakes import Behaviour, FakeSites
from bridge.providers.completion import CompletionTimings
from bridge.providers.completion_loop import CompletionSettings
from bridge.providers.composer import INPUT_METHODS, SEND_METHODS
from bridge.providers.dumps import ENV_SCREENSHOT_S
from bridge.providers.flow import AskFlow
from bridge.providers.results import AskResult

pytestmark = pytest.mark.e2e

QUESTION = "How do I read files asynchronously in Python?"


def starting_input_at(phase: int, *names: str) -> AskFlow:
    """The product's input methods from ``phase`` on: proves that fallback works alone."""
    return AskFlow(input_methods=[INPUT_METHODS[n] for n in names][phase - 1 :])


def _first_line(markdown: str) -> str:
    return markdown.strip().splitlines()[0]


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_new_chat_returns_the_answer_the_site_sent(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    result = await bridge.ask(provider, QUESTION, new_chat=True)  # type: ignore[arg-type]
    record = getattr(fakes, provider).records[-1]
    assert record.text == QUESTION
    assert result.answer.startswith(_first_line(record.answer))
    assert record.answer.strip().splitlines()[-1] in result.answer
    conversation = "/c/" if provider == "chatgpt" else "/app/"
    assert conversation + record.conversation_id in result.url
    assert result.used.fallbacks == []
    assert result.timings.total_ms >= result.timings.wait_response_ms > 0
    history = bridge.store.history()
    assert history[-1]["outcome"] == "ok" and history[-1]["answer"] == result.answer
    saved = bridge.store.get_session(bridge.session_key, provider)
    assert saved is not None and saved.url == result.url


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_existing_chat_never_returns_the_previous_answer(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    first = await bridge.ask(provider, "Explain Python generators briefly.", new_chat=True)  # type: ignore[arg-type]
    second = await bridge.ask(provider, "Explain Rust lifetimes briefly.")  # type: ignore[arg-type]
    assert second.used.tab == "session"
    assert second.url == first.url  # same conversation
    assert "lifetime" in second.answer and "lifetime" not in first.answer
    assert "generator" not in second.answer


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_conversation_loaded_from_its_url_counts_its_earlier_turns(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    site = getattr(fakes, provider)
    conversation = site.create_conversation(
        [("Old question one", "Old answer one."), ("Old question two", "Old answer two.")]
    )
    base = "https://chatgpt.com/c/" if provider == "chatgpt" else "https://gemini.google.com/app/"
    bridge.store.put_session(bridge.session_key, provider, base + conversation, None)
    result = await bridge.ask(provider, "What is a Python context manager?")  # type: ignore[arg-type]
    assert "context" in result.answer and "Old answer" not in result.answer
    assert result.url == base + conversation


@pytest.mark.parametrize("input_kind", ["prosemirror", "textarea"])
@pytest.mark.parametrize("phase", [1, 2, 3])
async def test_chatgpt_input_phases_on_both_composers(
    bridge: Bridge, fakes: FakeSites, input_kind: str, phase: int
) -> None:
    fakes.chatgpt.set_behaviour(Behaviour(input_kind=input_kind))  # type: ignore[arg-type]
    bridge.flow = starting_input_at(phase, "script", "insert_text", "key_events")
    result = await bridge.ask("chatgpt", QUESTION, new_chat=True)
    assert fakes.chatgpt.records[-1].text == QUESTION  # the composer sent exactly the question
    assert result.used.input_phase == phase
    assert (f"input:phase{phase}" in result.used.fallbacks) == (phase > 1)


async def test_gemini_input_by_insert_text(bridge: Bridge, fakes: FakeSites) -> None:
    bridge.flow = starting_input_at(2, "script", "insert_text")
    result = await bridge.ask("gemini", QUESTION, new_chat=True)
    assert fakes.gemini.records[-1].text == QUESTION
    assert result.used.input_phase == 2


async def test_chatgpt_thinking_mode_waits_out_the_thinking_phase(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.chatgpt.queue(Behaviour(thinking_ms=1500))
    question = "Design a shortest path algorithm for a weighted graph."
    result = await bridge.ask("chatgpt", question, new_chat=True)
    assert result.used.thinking and not result.used.skipped_thinking
    assert "Thinking time" not in result.answer  # the button text is filtered out
    assert result.answer.startswith(_first_line(fakes.chatgpt.records[-1].answer))


async def test_chatgpt_skip_thinking_button_is_used_when_asked(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.chatgpt.queue(Behaviour(thinking_ms=30000))
    question = "Explain recursion in detail with the call stack."
    started = time.monotonic()
    result = await bridge.ask("chatgpt", question, new_chat=True, skip_thinking=True)
    assert result.used.thinking and result.used.skipped_thinking
    assert time.monotonic() - started < 25  # did not sit out the 30 s thinking phase
    assert result.answer.startswith(_first_line(fakes.chatgpt.records[-1].answer))


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_code_answers_keep_their_fenced_blocks(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    question = "Show a JavaScript code example of a deep copy of an object."
    result = await bridge.ask(provider, question, new_chat=True)  # type: ignore[arg-type]
    sent = getattr(fakes, provider).records[-1].answer
    assert "```" in sent
    fence = sent[sent.index("```") : sent.index("```", sent.index("```") + 3) + 3]
    assert fence in result.answer  # the whole block, language tag and all


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_long_answer_arrives_complete(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    getattr(fakes, provider).queue(Behaviour(length="long", chunk_chars=400, chunk_interval_ms=5))
    result = await bridge.ask(provider, "Explain Python asyncio in depth.", new_chat=True)  # type: ignore[arg-type]
    sent = getattr(fakes, provider).records[-1].answer
    assert len(sent) >= 20_000
    assert len(result.answer) >= 20_000
    assert result.answer.splitlines()[-1] == sent.strip().splitlines()[-1]


@pytest.mark.reliability(18)
async def test_background_tab_text_is_revealed_without_stealing_focus(
    bridge: Bridge, fakes: FakeSites, extension_link: Browser
) -> None:
    result = await bridge.ask("chatgpt", QUESTION, new_chat=True)
    tabs = {t.tab_id: t for t in await extension_link.list_tabs()}
    chatgpt = next(t for t in tabs.values() if t.url == result.url)
    assert not chatgpt.active  # bridge opened it in the background and left it there
    assert result.used.focus_emulated and not result.used.brought_to_front
    assert result.answer.startswith(_first_line(fakes.chatgpt.records[-1].answer))


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_the_answer_is_the_streamed_markdown_and_the_dom_agrees(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    """docs/sites.md#answer-sources: the network reading wins, checked against the page
    (Gemini's turns are light DOM, docs/sites.md#gemini-shadow-dom)."""
    site = getattr(fakes, provider)
    markdown = "## Links\n\nSee [the docs](https://example.org/docs) and $e^{i\\pi}+1=0$."
    site.queue(Behaviour(answer=markdown))
    result = await bridge.ask(provider, QUESTION, new_chat=True)  # type: ignore[arg-type]
    assert (result.used.extraction, result.answer) == ("network", markdown), result.used.fallbacks
    assert result.used.fallbacks == []
    # The page's own reading, asked for by name, is the DOM's (bridge.bench.fidelity).
    site.queue(Behaviour(answer=markdown))
    dom = await bridge.ask(provider, QUESTION, answer_source="dom")  # type: ignore[arg-type]
    assert dom.used.extraction == "dom" and dom.used.extraction_step, dom.answer
    assert dom.answer.startswith("## Links") and "the docs" in dom.answer


async def test_chatgpt_copy_action_reads_the_whole_turn_and_leaves_the_clipboard_alone(
    bridge: Bridge, fakes: FakeSites
) -> None:
    """docs/sites.md#answer-sources: the turn's copy button (SITE-FACTS C2.6, C2.7), never a
    code block's "Copy code"; the clipboard write is captured, not performed."""
    markdown = "Two blocks:\n\n```python\nprint(1)\n```\n\nand\n\n```bash\necho 2\n```"
    fakes.chatgpt.queue(Behaviour(answer=markdown))
    result = await bridge.ask("chatgpt", QUESTION, new_chat=True, answer_source="copy")
    assert (result.used.extraction, result.answer) == ("copy", markdown)
    tab = await bridge.provider_tab("chatgpt")
    # The page's clipboard object is as it was: nothing of bridge's left on it.
    assert await tab.evaluate("Object.getOwnPropertyNames(navigator.clipboard).length") == 0


async def test_gemini_stuck_is_retried_then_succeeds(
    extension_link: Browser, fakes: FakeSites, tmp_path: Path
) -> None:
    bridge = Bridge(
        extension_link,
        state_dir=tmp_path,
        flow=AskFlow(settings=CompletionSettings(timings=_quick_stuck())),
    )
    fakes.gemini.queue(Behaviour(state="stuck"))
    result = await bridge.ask("gemini", QUESTION, new_chat=True)
    assert result.used.retries == 1
    assert len(fakes.gemini.records) == 2


async def test_gemini_stuck_every_time_is_an_error_after_the_last_retry(
    extension_link: Browser, fakes: FakeSites, tmp_path: Path
) -> None:
    bridge = Bridge(
        extension_link,
        state_dir=tmp_path,
        flow=AskFlow(settings=CompletionSettings(timings=_quick_stuck())),
    )
    fakes.gemini.queue(*[Behaviour(state="stuck")] * 3)
    with pytest.raises(ProviderStuck, match="3 attempt"):
        await bridge.ask("gemini", QUESTION, new_chat=True)
    assert len(fakes.gemini.records) == 3
    assert bridge.store.history()[-1]["outcome"] == "stuck"
    assert list((tmp_path / "debug").glob("gemini-*.json"))  # each stuck attempt left a dump


def _quick_stuck() -> CompletionTimings:
    return CompletionTimings(gemini_stuck_s=1.0, gemini_no_response_s=5.0)


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_login_wall_is_login_required(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    """ChatGPT's logged-out page keeps a usable composer (guest mode, SITE-FACTS C5.1), so
    the wall is its login buttons; Gemini's is a Sign in link and no composer (G5.1)."""
    getattr(fakes, provider).set_behaviour(Behaviour(state="logged_out"))
    with pytest.raises(LoginRequired, match="log in") as info:
        await bridge.ask(provider, QUESTION, new_chat=True)  # type: ignore[arg-type]
    assert info.value.code == "login_required"
    assert getattr(fakes, provider).records == []  # nothing was asked as a guest


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_a_cloudflare_check_is_a_challenge_that_says_what_to_do(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    getattr(fakes, provider).set_behaviour(Behaviour(state="challenge"))
    with pytest.raises(ChallengeShown, match="complete the check") as info:
        await bridge.ask(provider, QUESTION, new_chat=True)  # type: ignore[arg-type]
    assert info.value.code == "challenge"
    assert getattr(fakes, provider).records == []  # nothing was sent


@pytest.mark.parametrize(
    ("provider", "locale"),
    [("chatgpt", "en"), ("chatgpt", "de"), ("chatgpt", "ja"), ("gemini", "en"), ("gemini", "ja")],
)
async def test_rate_limit_is_rate_limited_in_any_ui_language(
    bridge: Bridge, fakes: FakeSites, provider: str, locale: str
) -> None:
    """The limit is known by behaviour, whatever the notice's language: ChatGPT's send gets
    HTTP 429 with retry-after (SITE-FACTS C5.10), Gemini's stream carries wire code 1037
    (G5.5). The Japanese notice texts have no evidence, so nothing may depend on them."""
    site = getattr(fakes, provider)
    site.set_behaviour(Behaviour(locale=locale))  # type: ignore[arg-type]
    site.queue(Behaviour(state="rate_limited", locale=locale))  # type: ignore[arg-type]
    with pytest.raises(RateLimited) as info:
        await bridge.ask(provider, QUESTION, new_chat=True)  # type: ignore[arg-type]
    assert info.value.code == "rate_limited" and info.value.notice
    if provider == "chatgpt":
        assert info.value.reset == "60"  # the fake's retry-after, as the site's reset time
        assert "Try again after 60" in str(info.value)


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_error_turn_is_a_provider_error(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    getattr(fakes, provider).queue(Behaviour(state="error_turn"))
    with pytest.raises(ProviderErrorTurn):
        await bridge.ask(provider, QUESTION, new_chat=True)  # type: ignore[arg-type]


@pytest.mark.reliability(15)
async def test_tab_closed_mid_answer_is_tab_closed_at_once(
    bridge: Bridge, fakes: FakeSites, direct_cdp: DirectCdp
) -> None:
    fakes.chatgpt.queue(Behaviour(length="long", chunk_chars=10, chunk_interval_ms=50))
    asking = asyncio.ensure_future(bridge.ask("chatgpt", QUESTION, new_chat=True))
    await fakes.chatgpt.wait_for_record_async(lambda r: r.first_token_at is not None, 30)
    page = next(
        t for t in await direct_cdp.targets("page") if t["url"].startswith("https://chatgpt.com/")
    )
    closed_at = time.monotonic()
    await direct_cdp.call("Target.closeTarget", {"targetId": page["targetId"]})
    with pytest.raises(TabClosed):
        await asyncio.wait_for(asking, 30)
    # Measured, and bounded generously: the ask noticed the close, not its own timeout.
    assert time.monotonic() - closed_at < 5


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_japanese_ui(bridge: Bridge, fakes: FakeSites, provider: str) -> None:
    getattr(fakes, provider).set_behaviour(Behaviour(locale="ja"))
    question = "Pythonで非同期にファイルを読む方法を教えてください。"
    result = await bridge.ask(provider, question, new_chat=True)  # type: ignore[arg-type]
    sent = getattr(fakes, provider).records[-1]
    assert sent.text == question
    assert result.answer.startswith(_first_line(sent.answer))


async def test_ask_both_returns_each_answer_concurrently(bridge: Bridge, fakes: FakeSites) -> None:
    slow = Behaviour(chunk_chars=8, chunk_interval_ms=40)
    fakes.chatgpt.queue(slow)
    fakes.gemini.queue(slow)
    both = await bridge.ask_both(QUESTION, new_chat=True)
    assert both.all_ok
    assert set(both.results) == {"chatgpt", "gemini"}
    chatgpt, gemini = fakes.chatgpt.records[-1], fakes.gemini.records[-1]
    # They overlapped: each site received its question before the other finished answering.
    assert chatgpt.received_at < (gemini.completed_at or 0)
    assert gemini.received_at < (chatgpt.completed_at or 0)
    slower = max(r.timings.total_ms for r in both.results.values())
    assert both.wall_ms < 1.5 * slower + 500


async def test_ask_both_one_side_failing_keeps_the_other_answer(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.gemini.queue(Behaviour(state="rate_limited"))
    both = await bridge.ask_both(QUESTION, new_chat=True)
    assert isinstance(both.errors["gemini"], RateLimited)
    assert both.results["chatgpt"].answer.startswith(_first_line(fakes.chatgpt.records[-1].answer))
    payload = both.to_dict()
    assert payload["gemini"]["error"]["code"] == "rate_limited"
    assert payload["chatgpt"]["answer"]


async def test_ask_both_tells_each_side_as_it_ends_and_survives_a_broken_listener(
    bridge: Bridge, fakes: FakeSites
) -> None:
    """``on_done`` hears the fast side while the slow one still streams (bridge ask prints
    the first answer then); a listener that raises costs nothing but itself."""
    fakes.gemini.queue(Behaviour(state="rate_limited"))
    fakes.chatgpt.queue(Behaviour(duration_ms=1500))
    heard: list[tuple[str, str, bool]] = []

    async def on_done(provider: str, outcome: object) -> None:
        kind = "answer" if isinstance(outcome, AskResult) else type(outcome).__name__
        # ChatGPT still working: not done answering, or (under load) not even asked yet.
        records = fakes.chatgpt.records
        heard.append((provider, kind, not records or records[-1].completed_at is None))
        raise RuntimeError("a broken display")

    both = await bridge.ask_both(QUESTION, new_chat=True, on_done=on_done)
    assert heard == [("gemini", "RateLimited", True), ("chatgpt", "answer", False)]
    assert both.results["chatgpt"].answer and isinstance(both.errors["gemini"], RateLimited)


_CONCURRENT_ASKER = """
import asyncio, sys
from pathlib import Path
from bridge.cdp.browser import Browser
from bridge.app.facade import Bridge
from bridge.link.relay import Relay

async def main(state, key, provider, n):
    # The launched browser's island (secret and runtime directory) comes in the environment.
    async with Relay() as relay:
        bridge = Bridge(Browser(relay), state_dir=Path(state), session_key=key)
        for i in range(n):
            await bridge.ask(provider, f"Question {i} from {key} about Python decorators?", new_chat=(i == 0))
        await bridge.browser.detach_all()

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
"""


@pytest.mark.reliability(23)
async def test_two_processes_asking_at_once_keep_state_files_whole(
    fakes: FakeSites,
    launched_browser: LaunchedBrowser | None,
    extension_link: Browser,
    tmp_path: Path,
) -> None:
    if launched_browser is None:
        pytest.skip("needs the launched test browser (not in --live mode)")
    script = tmp_path / "asker.py"
    script.write_text(_CONCURRENT_ASKER)
    env = {
        **os.environ,
        **launched_browser.island.browser_env(),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    n = 3
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(script),
            str(tmp_path / "state"),
            key,
            provider,
            str(n),
            env=env,
            stderr=subprocess.PIPE,
        )
        for key, provider in (("agent-a", "chatgpt"), ("agent-b", "gemini"))
    ]
    for proc in procs:
        _, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()[-2000:]
    lines = (tmp_path / "state" / "history.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line is whole JSON
    assert len(records) == 2 * n
    assert {r["project"] for r in records} == {"agent-a", "agent-b"}
    assert all(r["outcome"] == "ok" for r in records)
    sessions = json.loads((tmp_path / "state" / "sessions.json").read_text())["projects"]
    assert sessions["agent-a"]["chatgpt"]["url"].startswith("https://chatgpt.com/c/")
    assert sessions["agent-b"]["gemini"]["url"].startswith("https://gemini.google.com/app/")


async def test_suspicious_answer_is_flagged_and_dumped(
    bridge: Bridge, fakes: FakeSites, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The dump's screenshot is asserted: the product's own wait for it, not the suite's
    # short one (tests/conftest.py; a background tab's frame can take seconds to come).
    monkeypatch.delenv(ENV_SCREENSHOT_S, raising=False)
    # docs/flows.md#suspicious-answer: the question has digits, the answer has none.
    fakes.chatgpt.queue(Behaviour(answer="ok"))
    result = await bridge.ask("chatgpt", "What changed in Python 3.12 typing?", new_chat=True)
    assert result.answer == "ok" and result.suspicious
    dumps = list((bridge.store.debug_dir).glob("chatgpt-*.json"))
    assert len(dumps) == 1
    dump = json.loads(dumps[0].read_text())
    assert dump["why"] == "suspicious answer"
    assert dump["observations"] and dump["page"]["url"].startswith("https://chatgpt.com/")
    assert (dumps[0].with_suffix(".png")).read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_progress_is_reported_while_waiting(
    bridge: Bridge, fakes: FakeSites, provider: str
) -> None:
    getattr(fakes, provider).queue(Behaviour(chunk_chars=20, chunk_interval_ms=30))
    seen: list[tuple[str, int]] = []
    await bridge.ask(
        provider, QUESTION, new_chat=True, on_progress=lambda p: seen.append((p.phase, p.chars))
    )  # type: ignore[arg-type]
    phases = [phase for phase, _ in seen]
    assert phases[0] == "connect" and phases[-1] == "done"
    assert "streaming" in phases
    chars = [c for phase, c in seen if phase == "streaming"]
    assert chars == sorted(chars) and chars[-1] > 0  # characters so far, growing


@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
@pytest.mark.parametrize(("first", "method"), [(1, "cdp_mouse"), (2, "enter")])
async def test_send_fallbacks_send_the_question(
    bridge: Bridge, fakes: FakeSites, provider: str, first: int, method: str
) -> None:
    bridge.flow = AskFlow(send_methods=SEND_METHODS[first:])
    result = await bridge.ask(provider, QUESTION, new_chat=True)  # type: ignore[arg-type]
    assert result.used.send_method == method
    assert f"send:{method}" in result.used.fallbacks
    assert getattr(fakes, provider).records[-1].text == QUESTION
    assert len(getattr(fakes, provider).records) == 1  # sent once, not twice


async def test_provider_tab_fixtures_are_the_tabs_an_ask_uses(
    bridge: Bridge, fakes: FakeSites, chatgpt_tab: CdpSession, gemini_tab: CdpSession
) -> None:
    assert str(await chatgpt_tab.evaluate("location.href")).startswith("https://chatgpt.com/")
    assert str(await gemini_tab.evaluate("location.href")).startswith(
        "https://gemini.google.com/app"
    )
    result = await bridge.ask("chatgpt", QUESTION)
    assert result.used.tab == "session"  # the fixture's tab, recorded for this session key
    assert await chatgpt_tab.evaluate("location.href") == result.url
