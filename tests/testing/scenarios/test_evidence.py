"""A failure's evidence: captured once per provider tab (a JPEG screenshot, the DOM), and in
the report's form (base64, a DOM excerpt of the newest turns or else the start of <body>)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from bridge.cdp.browser import TabInfo
from bridge.cdp.session import CdpSession
from bridge.errors import CdpError
from bridge.providers.specs import provider_spec
from bridge.store.state import StateStore
from bridge.testing.scenarios.evidence import (
    DOM_EXCERPT_CHARS,
    Evidence,
    Excerpt,
    body_excerpt,
    capture_evidence,
    evidence_record,
    image_kind,
    turns_excerpt,
)
from bridge.tools.dom import DOM_SCRIPT, dom_page
from tests.testing.scenarios.test_plugin import INI, STUB_CONFTEST, only_report, scenario, write

pytest_plugins = ["pytester"]

JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 16
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


# -- the excerpt --------------------------------------------------------------------------------


def test_without_turns_the_excerpt_is_the_start_of_the_body_without_code_styles_or_icons() -> None:
    shadow = "<template shadowrootmode='open'><b>x</b></template>"  # a shadow root: kept
    page = (
        "<head><title>t</title><style>p{}</style></head><body><p>Log in</p>"
        f"<script>var secret = 1;</script><svg><path d='M0'/></svg>{shadow}<p>or sign up</p>"
        "</body>"
    )
    excerpt = body_excerpt(page)
    assert excerpt.text == f"<body><p>Log in</p>{shadow}<p>or sign up</p></body>"
    assert excerpt.of == "the start of <body> (no turn found)"


def test_a_long_body_keeps_its_start_and_says_how_much_was_cut() -> None:
    page = "<body>" + "".join(f"<p>block {i}</p>" for i in range(1000)) + "</body>"
    text = body_excerpt(page, limit=100).text
    assert text.startswith("<body><p>block 0</p>")
    kept, _, note = text.partition("\n")
    assert len(kept) == 100
    assert note == f"<!-- {len(page) - 100} more characters -->"


def test_the_newest_turns_that_fit_are_kept_oldest_first() -> None:
    turns = [f"<article>turn {i}<script>x()</script></article>" for i in range(5)]
    excerpt = turns_excerpt(turns, total=9, limit=60)
    assert excerpt.text == "<article>turn 3</article>\n<article>turn 4</article>"
    assert excerpt.of == "the newest 2 turns of 9"


def test_a_newest_turn_longer_than_the_limit_keeps_its_start() -> None:
    answer = "<model-response>" + "word " * 100 + "</model-response>"
    excerpt = turns_excerpt(["<user-query>q</user-query>", answer], total=2, limit=50)
    kept, _, note = excerpt.text.partition("\n")
    assert kept == answer[:50]
    assert note == f"<!-- {len(answer) - 50} more characters of this turn -->"
    assert excerpt.of == "the newest turn of 2"


def test_records_are_json_ready_with_the_image_kind_from_its_bytes() -> None:
    assert image_kind(JPEG) == "jpeg" and image_kind(PNG) == "png"
    turns = Excerpt("<article>hi</article>", "the newest turn of 1")
    record = evidence_record(
        [
            Evidence("chatgpt tab 3 screenshot", JPEG, "jpeg"),
            Evidence("chatgpt tab 3 DOM", "<body><p>whole</p></body>", "html", turns),
            Evidence("gemini tab 4 DOM", "<body><script>x</script><p>hi</p></body>", "html"),
            Evidence("gemini tab 4 screenshot", "could not capture: tab closed", "text"),
        ]
    )
    assert json.loads(json.dumps(record)) == record
    assert record[0] == {
        "name": "chatgpt tab 3 screenshot",
        "kind": "jpeg",
        "data": base64.b64encode(JPEG).decode(),
    }
    assert record[1] == {
        "name": "chatgpt tab 3 DOM excerpt",
        "kind": "html",
        "text": "<article>hi</article>",
        "excerpt_of": "the newest turn of 1",
    }
    assert record[2]["text"] == "<body><p>hi</p></body>"  # no excerpt given: the body's start
    assert record[3] == {
        "name": "gemini tab 4 screenshot",
        "kind": "text",
        "text": "could not capture: tab closed",
    }


# -- the capture, against a recorded tab -------------------------------------------------------


class _Tab:
    """A provider tab as capture_evidence drives it: records what it was sent."""

    ended = None

    def __init__(self, *, screenshot_fails: bool = False) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.evaluated: list[str] = []
        self.screenshot_fails = screenshot_fails

    async def evaluate(self, expression: str, **_: Any) -> Any:
        self.evaluated.append(expression)
        if expression == "document.visibilityState":
            return "visible"
        if ".turnsHtml(" in expression:  # dom.js, already in the page
            return {"turns": ["<article>the answer</article>"], "total": 4}
        return "<head></head><body><p>page</p></body>"

    async def send(self, method: str, params: Any = None, **_: Any) -> dict[str, Any]:
        self.sent.append((method, params))
        if method == "Page.captureScreenshot":
            if self.screenshot_fails:
                raise CdpError(method, "no frame")
            return {"data": base64.b64encode(JPEG).decode()}
        return {}


def _turns_call(css: list[str]) -> str:
    """What capture_evidence evaluates to get the newest turns by ``css``."""
    return DOM_SCRIPT.call_expression("turnsHtml", css, DOM_EXCERPT_CHARS)


class _Browser:
    def __init__(self, tabs: dict[int, tuple[str, _Tab]]) -> None:
        self.sessions = {tab_id: tab for tab_id, (_, tab) in tabs.items()}
        self.infos = [TabInfo(tab_id, url, "", True, True) for tab_id, (url, _) in tabs.items()]

    async def list_tabs(self) -> list[TabInfo]:
        return self.infos


class _Bridge:
    def __init__(self, browser: _Browser, state: Path) -> None:
        self.browser = browser
        self.store = StateStore(state)


async def _capture(bridge: _Bridge, providers: tuple[str, ...]) -> list[Evidence]:
    return await capture_evidence(bridge, providers)  # type: ignore[arg-type]


async def test_each_provider_tab_gives_a_jpeg_and_its_dom_with_the_newest_turns(
    tmp_path: Path,
) -> None:
    chatgpt, other = _Tab(), _Tab()
    browser = _Browser(
        {3: ("https://chatgpt.com/c/1", chatgpt), 4: ("https://example.com/", other)}
    )
    evidence = await _capture(_Bridge(browser, tmp_path), ("chatgpt",))
    assert [(e.name, e.kind) for e in evidence] == [
        ("chatgpt tab 3 screenshot", "jpeg"),
        ("chatgpt tab 3 DOM", "html"),
    ]
    assert ("Page.captureScreenshot", {"format": "jpeg", "quality": 70}) in chatgpt.sent
    dom = evidence[1]
    assert dom.body == "<head></head><body><p>page</p></body>"  # whole, for Allure
    assert dom.excerpt == Excerpt("<article>the answer</article>", "the newest turn of 4")
    assert not other.sent and not other.evaluated  # not a provider tab


async def test_the_turns_are_found_with_the_provider_pack_s_own_selectors(tmp_path: Path) -> None:
    tabs = {1: ("https://chatgpt.com/", _Tab()), 2: ("https://gemini.google.com/app", _Tab())}
    await _capture(_Bridge(_Browser(tabs), tmp_path), ("chatgpt", "gemini"))
    chatgpt = provider_spec("chatgpt", tmp_path).pack.selectors
    assert _turns_call(list(chatgpt["turn"].css)) in tabs[1][1].evaluated
    gemini = provider_spec("gemini", tmp_path).pack.selectors
    assert "turn" not in gemini  # so its messages stand for turns
    messages = [*gemini["user_message"].css, *gemini["assistant_message"].css]
    assert _turns_call(messages) in tabs[2][1].evaluated


async def test_a_screenshot_that_fails_still_leaves_the_dom(tmp_path: Path) -> None:
    tab = _Tab(screenshot_fails=True)
    evidence = await _capture(
        _Bridge(_Browser({5: ("https://chatgpt.com/", tab)}), tmp_path), ("chatgpt",)
    )
    assert [(e.name, e.kind) for e in evidence] == [
        ("chatgpt tab 5 screenshot", "text"),
        ("chatgpt tab 5 DOM", "html"),
    ]
    assert "could not capture" in str(evidence[0].body) and "no frame" in str(evidence[0].body)


# -- the page script, in Chromium ----------------------------------------------------------------

PAGE = """
const conversation = document.createElement('main');
conversation.innerHTML = `
  <section class="turn" data-note='say "hi" &amp; go'><p>question 1</p></section>
  <section class="turn"><p>answer 1</p><section class="turn">nested</section></section>
  <section class="turn"><p>question 2</p></section>
  <section class="turn" id="newest"><p>answer 2</p></section>`;
document.body.append(conversation);
const shadow = document.getElementById('newest').attachShadow({mode: 'open'});
shadow.innerHTML = '<b>in the shadow root</b><slot></slot>';
"""


@pytest.mark.e2e
async def test_the_page_script_returns_the_newest_whole_turns_with_shadow_roots(
    tab: CdpSession,
) -> None:
    await tab.evaluate(PAGE)
    found = await dom_page(tab).call("turnsHtml", [".turn"], 150)
    assert found["total"] == 4  # the nested turn belongs to its parent
    newest = found["turns"][-1]
    assert newest.startswith('<section class="turn" id="newest">')
    assert "in the shadow root" in newest and "<p>answer 2</p>" in newest
    assert len(found["turns"]) == 2  # the budget (150) is spent after two turns
    everything = await dom_page(tab).call("turnsHtml", [".turn"], 10**6)
    assert everything["turns"][0] == (
        '<section class="turn" data-note="say &quot;hi&quot; &amp; go"><p>question 1</p></section>'
    )
    assert everything["turns"][1].count("nested") == 1


# -- from a worker to the report -------------------------------------------------------------

# A bridge whose ask breaks after the tab is open, as a bug in bridge would (not a check that
# failed: an exception out of the scenario's run).
CRASHING_ASK = """

_ask = StubBridge.ask


async def _crashing_ask(self, provider, question, **options):
    result = await _ask(self, provider, question, **options)
    if "CRASH" in question:
        raise RuntimeError("a bug in bridge")
    return result


StubBridge.ask = _crashing_ask
"""


def test_evidence_of_failed_and_crashed_scenarios_reaches_the_report_from_xdist_workers(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BRIDGE_REPORTS_DIR", raising=False)
    pytester.makeini(INI)
    pytester.makeconftest(STUB_CONFTEST.read_text(encoding="utf-8") + CRASHING_ASK)
    write(
        pytester,
        "scenarios/evidence.json",
        scenario("passes"),
        scenario("fails", "gemini", assertions={"minAnswerLength": 100000}),
        scenario("crashes", question="Why does this CRASH? ID:{{timestamp}}"),
    )
    pytester.runpytest_subprocess("-n", "2").assert_outcomes(passed=1, failed=2)
    records = {r["id"]: r for r in only_report(pytester)["results"]}
    assert {r["worker"] for r in records.values()} <= {"gw0", "gw1"}
    assert "evidence" not in records["passes"]  # only a failure pays for a capture
    assert "RuntimeError: a bug in bridge" in records["crashes"]["message"]
    for scenario_id, tab in (("fails", "gemini tab 2"), ("crashes", "chatgpt tab 1")):
        evidence = {e["name"]: e for e in records[scenario_id]["evidence"]}
        assert set(evidence) == {f"{tab} screenshot", f"{tab} DOM excerpt"}
        assert base64.b64decode(evidence[f"{tab} screenshot"]["data"]).startswith(b"\x89PNG")
        assert evidence[f"{tab} DOM excerpt"]["excerpt_of"] == "the start of <body> (no turn found)"
