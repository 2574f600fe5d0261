"""The browser tools in real Chromium through the extension, on local pages of the shapes
real sites have. Each test acts as an agent would: snapshot, then act on refs or selectors."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from bridge.cdp.session import CdpSession
from bridge.errors import TabClosed
from bridge.policy.urls import UrlRefused
from bridge.tools.actions import ActionBlocked
from bridge.tools.browsing import (
    BrowserTools,
    DialogOpen,
    NoCurrentTab,
    ToolHub,
    ToolSettings,
)
from bridge.tools.operations import reading
from bridge.tools.targets import TargetNotFound

pytestmark = pytest.mark.e2e


def ref_of(snapshot: str, pattern: str) -> str:
    """The ref on the first snapshot line matching ``pattern``."""
    for line in snapshot.splitlines():
        if re.search(pattern, line):
            match = re.search(r"\[ref=(\w+)\]", line)
            assert match, line
            return match.group(1)
    raise AssertionError(f"no line matches {pattern!r} in:\n{snapshot}")


async def text_of(tools: BrowserTools, selector: str) -> str:
    return str(await tools.evaluate(f"() => document.querySelector({selector!r}).textContent"))


async def test_a_form_filled_from_a_snapshot(tools: BrowserTools, site: str) -> None:
    report = await tools.navigate(f"{site}/form")
    assert report.url_changed and report.title == "Sign up"
    snap = await tools.snapshot()
    assert 'heading "Sign up" [level=1]' in snap
    await tools.fill_form(
        [
            {"target": ref_of(snap, r'textbox "Name'), "value": "Ada"},
            {"target": ref_of(snap, r'textbox "Email'), "value": "ada@example.test"},
            {"target": ref_of(snap, r'checkbox "I agree'), "value": True},
            {"target": "#pro", "value": "true"},
            {"target": ref_of(snap, r'combobox "Country'), "value": "Japan"},
            {"target": "#notes", "value": "line one"},
        ]
    )
    await tools.click(ref_of(snap, r'button "Create account"'))
    sent = await text_of(tools, "#out")
    assert '"name":"Ada"' in sent and '"agree":"yes"' in sent
    assert '"plan":"pro"' in sent and '"country":"jp"' in sent and '"notes":"line one"' in sent
    again = await tools.snapshot()
    assert re.search(r'textbox "Name[^"]*" \[ref=\w+\]: Ada', again), again
    assert ref_of(again, r'textbox "Name') == ref_of(snap, r'textbox "Name')  # refs are stable


async def test_typing_keys_and_chords(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/form")
    await tools.type("#name", "Grace", slowly=True)
    assert await tools.evaluate("() => document.querySelector('#name').value") == "Grace"
    await tools.press_key("Control+A")
    await tools.press_key("Backspace")
    assert await tools.evaluate("() => document.querySelector('#name').value") == ""
    await tools.type("#name", "Linus", submit=True)
    assert '"name":"Linus"' in await text_of(tools, "#out")


async def test_a_cross_origin_iframe_is_in_the_snapshot_and_clickable(
    tools: BrowserTools, site: str
) -> None:
    await tools.navigate(f"{site}/frames")
    snap = await tools.snapshot()
    frame_buttons = [line for line in snap.splitlines() if 'button "Press me"' in line]
    assert len(frame_buttons) == 2 and all("[ref=f" in line for line in frame_buttons), snap
    cross = ref_of(snap, r'button "Press me"')
    await tools.click(cross)
    after = await tools.snapshot()
    port = site.rsplit(":", 1)[1]
    assert f'button "Clicked inside localhost:{port}"' in after or (
        f'button "Clicked inside 127.0.0.1:{port}"' in after
    ), after


async def test_open_shadow_dom_by_selector_and_by_ref(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/shadow")
    await tools.click("#inner")  # the selector pierces the open shadow root
    assert await text_of(tools, "#result") == "shadow clicked"
    await tools.evaluate("() => document.querySelector('#result').textContent = 'none'")
    snap = await tools.snapshot()
    await tools.click(ref_of(snap, r'button "Shadow button"'))
    assert await text_of(tools, "#result") == "shadow clicked"


async def test_a_hover_menu(tools: BrowserTools, site: str) -> None:
    tools.hub.settings = ToolSettings(action_timeout=1.0)  # the first click must fail
    await tools.navigate(f"{site}/hover")
    with pytest.raises(ActionBlocked, match=r"display:none on div#menu"):
        await tools.click("#item")
    await tools.hover("#top")
    await tools.click("#item")
    assert await text_of(tools, "#chosen") == "pricing"


async def test_html5_drag_and_drop(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/dnd")
    await tools.drag("#card", "#bin")
    assert "drop:card-1" in await text_of(tools, "#log")


@pytest.mark.parametrize(
    ("button", "accept", "prompt", "result"),
    [
        ("#alert", True, None, "after alert"),
        ("#confirm", False, None, "no"),
        ("#confirm", True, None, "yes"),
        ("#prompt", True, "Bob", "name=Bob"),
    ],
)
@pytest.mark.reliability(17)
async def test_dialogs_never_hang_a_call(
    tools: BrowserTools, site: str, button: str, accept: bool, prompt: str | None, result: str
) -> None:
    await tools.navigate(f"{site}/dialogs")
    report = await tools.click(button)
    assert report.dialog is not None and report.dialog["type"] == button[1:]
    assert "browser_handle_dialog" in report.to_text()
    with pytest.raises(DialogOpen, match="answer it with browser_handle_dialog"):
        await tools.snapshot()  # at once: a page behind a dialog would never answer
    await tools.handle_dialog(accept, prompt)
    assert await text_of(tools, "#r") == result


@pytest.mark.reliability(17)
async def test_a_beforeunload_dialog_is_reported(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/leave")
    await tools.type("#t", "unsaved")  # a user gesture arms beforeunload
    report = await tools.navigate(f"{site}/form")
    assert report.dialog is not None and report.dialog["type"] == "beforeunload"
    await tools.handle_dialog(True)
    await tools.wait(text="Sign up")


async def test_files_go_into_a_file_input(tools: BrowserTools, site: str, tmp_path: Path) -> None:
    tools.hub.files = tools.hub.files.allowing(tmp_path)  # as with --allow-path <tmp_path>
    await tools.navigate(f"{site}/upload")
    one, two = tmp_path / "notes.txt", tmp_path / "data.csv"
    one.write_text("hello upload")
    two.write_text("x,y\n")
    report = await tools.file_upload("#files", [str(one), str(two)])
    # Chrome reads the files itself: the launched browser's unpacked extension has file access.
    assert report.extra["method"] == "set_file_input_files"
    await tools.wait(text="notes.txt")
    assert await text_of(tools, "#got") == "notes.txt:12:hello upload|data.csv:4:x,y\n"


async def test_a_target_blank_link_opens_a_tab_to_select(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/popup")
    report = await tools.click("#blank")
    assert report.new_tabs, report.to_text()
    listed = await tools.tabs("list")
    new_id = report.new_tabs[0].get("tab")
    if new_id is None:  # the tab appeared after the report was written
        new_id = max(t["tab"] for t in listed["tabs"])
    assert new_id in {t["tab"] for t in listed["tabs"]}
    selected = await tools.tabs("select", tab=new_id)
    await tools.wait(text="Sign up")
    assert selected["tab"] == new_id and tools.current == new_id


# The page leaves for /form the first time anything reads an element's innerText.
LEAVE_ON_FIRST_READ = """() => {
  const text = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'innerText');
  Object.defineProperty(HTMLElement.prototype, 'innerText', {
    configurable: true,
    get() {
      Object.defineProperty(HTMLElement.prototype, 'innerText', text);
      location.href = '/form';
      return text.get.call(this);
    },
  });
}"""


async def test_a_wait_goes_on_in_the_page_a_navigation_brings(
    tools: BrowserTools, site: str
) -> None:
    """The page leaves for another while the wait runs: the wait ends in the new page, not
    with a destroyed context. The leaving is set off by the wait itself (its first read of
    the page's text), so it falls inside the wait every time, with no timer."""
    await tools.navigate(f"{site}/popup")
    await tools.evaluate(LEAVE_ON_FIRST_READ)
    assert await tools.wait(text="Sign up") == {"held": True}
    assert (await tools.evaluate("() => location.pathname")) == "/form"


async def test_console_errors_are_reported_and_kept(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/console")
    report = await tools.click("#err")
    assert any("bad thing 7" in e for e in report.console_errors), report.to_text()
    assert any("TypeError" in e for e in report.console_errors), report.to_text()
    logs = await tools.console_logs(level="error")
    assert [m["source"] for m in logs["messages"]][-2:] == ["console", "exception"]


async def test_fetches_are_listed_with_bodies(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/fetch")
    await tools.click("#go")
    await tools.wait(text="42")
    requests = (await tools.network_requests(filter=r"/api/data"))["requests"]
    assert [(r["method"], r["status"], r["type"]) for r in requests] == [("POST", 200, "Fetch")]
    detail = await tools.network_request(requests[0]["index"])
    assert detail["request_body"] == "q=1" and '"answer": 42' in detail["response_body"]


async def test_a_download_is_reported(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/download")
    report = await tools.click("#dl")
    assert [d["file_name"] for d in report.downloads] == ["report.csv"], report.to_text()
    saved = Path(report.downloads[0]["path"])
    # Chrome names a second download of the same file "report (1).csv" (another test may
    # have saved one in this profile before).
    assert re.fullmatch(r"report( \(\d+\))?\.csv", saved.name), saved.name
    assert saved.parent.name == "Downloads"
    assert f"saved to {saved}" in report.to_text()


async def test_a_covered_button_says_what_covers_it(tools: BrowserTools, site: str) -> None:
    tools.hub.settings = ToolSettings(action_timeout=1.0)  # the first click must fail
    await tools.navigate(f"{site}/covered")
    with pytest.raises(ActionBlocked, match=r"covered by div#overlay\.modal"):
        await tools.click("#under")
    await tools.evaluate("() => document.querySelector('#overlay').remove()")
    await tools.click("#under")
    assert await text_of(tools, "#r") == "clicked"


async def test_a_stale_ref_says_take_a_new_snapshot(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/covered")
    snap = await tools.snapshot()
    ref = ref_of(snap, r'button "Buy"')
    await tools.evaluate("() => document.querySelector('#under').remove()")
    with pytest.raises(TargetNotFound, match="take a new snapshot"):
        await tools.click(ref)
    with pytest.raises(TargetNotFound, match="take a new snapshot"):
        await tools.click("e999")


@pytest.mark.reliability(18)
async def test_background_tab_acts_and_screenshots_without_focus(
    tools: BrowserTools, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tab behind another in its window (a person's tab the agent selected)."""
    # A plain capture of this tab often waits in vain until its deadline (5 s), then the
    # screencast fallback answers at once: 1 s takes the same path, each capture.
    monkeypatch.setattr(reading, "CAPTURE_WAIT_S", 1.0)
    active_before = {t["tab"] for t in (await tools.tabs("list"))["tabs"] if t["active"]}
    behind = await tools.hub.browser.new_tab(f"{site}/covered")  # not active, same window
    await tools.tabs("select", tab=behind.tab_id)
    await tools.evaluate("() => document.querySelector('#overlay').remove()")
    await tools.click("#under")
    assert await text_of(tools, "#r") == "clicked"
    for _ in range(3):  # plain captures of a background tab stall now and then: never here
        png, kind = await tools.screenshot()
        assert kind == "png" and png[:8] == b"\x89PNG\r\n\x1a\n"
    listed = (await tools.tabs("list"))["tabs"]
    assert {t["tab"] for t in listed if t["active"]} == active_before  # no focus taken
    assert not next(t for t in listed if t["tab"] == behind.tab_id)["active"]


async def test_tabs_the_tools_open_render_in_a_window_of_their_own(
    tools: BrowserTools, site: str
) -> None:
    await tools.tabs("new", url=f"{site}/covered")
    shot, _ = await tools.screenshot(full_page=True)
    assert shot[:4] in (b"\x89PNG", b"\xff\xd8\xff\xe0", b"\xff\xd8\xff\xdb")
    box, _ = await tools.screenshot(target="#under")
    assert box[:8] == b"\x89PNG\r\n\x1a\n"


async def test_waits_end_on_the_change(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/form")
    waiting = asyncio.ensure_future(tools.wait(text="Arrived", time=20))
    await asyncio.sleep(0)
    assert not waiting.done()
    await tools.evaluate("() => document.body.append('Arrived')")
    assert await asyncio.wait_for(waiting, 10) == {"held": True}
    gone = asyncio.ensure_future(tools.wait(text_gone="Arrived", time=20))
    await tools.evaluate("() => document.body.lastChild.remove()")
    assert await asyncio.wait_for(gone, 10) == {"held": True}


async def test_a_pause_ends_at_once_when_its_tab_closes(
    tools: BrowserTools, hub: ToolHub, site: str
) -> None:
    await tools.navigate(f"{site}/form")
    pausing = asyncio.ensure_future(tools.wait(time=30))
    tab_id = next(iter(hub.states))
    for _ in range(20):  # loop turns (no time passes): the pause starts listening
        await asyncio.sleep(0)
    assert not pausing.done()
    await hub.browser.close_tab(tab_id)
    with pytest.raises(TabClosed):
        await asyncio.wait_for(pausing, 5)  # not at the 30 s it asked for


async def test_history_resize_and_evaluate(tools: BrowserTools, site: str) -> None:
    await tools.navigate(f"{site}/form")
    await tools.navigate(f"{site}/dialogs")
    back = await tools.go_back()
    assert back.url.endswith("/form") and not back.still_loading
    forward = await tools.go_forward()
    assert forward.url.endswith("/dialogs")
    await tools.resize(800, 600)
    assert await tools.evaluate("() => [innerWidth, innerHeight]") == [800, 600]
    assert await tools.evaluate("(el) => el.textContent", target="#confirm") == "Confirm"


@pytest.mark.reliability(7)
async def test_refused_urls_and_missing_tabs(tools: BrowserTools) -> None:
    for url in ("javascript:alert(1)", "file:///etc/passwd", "chrome://settings"):
        with pytest.raises(UrlRefused):
            await tools.navigate(url)
    with pytest.raises(NoCurrentTab, match="browser_navigate"):
        await tools.snapshot()


async def test_clients_keep_their_own_current_tab(hub: ToolHub, site: str) -> None:
    one, two = hub.client("one"), hub.client("two")
    await one.navigate(f"{site}/form")
    await two.navigate(f"{site}/dialogs")
    assert one.current != two.current
    assert "Sign up" in await one.snapshot() and "Confirm" in await two.snapshot()


async def test_provider_tabs_are_never_a_default(
    tools: BrowserTools, site: str, chatgpt_tab: CdpSession
) -> None:
    """The ask tools' ChatGPT tab is left alone unless an agent names it."""
    before = await chatgpt_tab.evaluate("location.href")
    await tools.navigate(f"{site}/form")
    assert tools.current != chatgpt_tab.tab_id
    await tools.click("#agree")
    assert await chatgpt_tab.evaluate("location.href") == before
    named = await tools.snapshot(tab=chatgpt_tab.tab_id)  # explicit: allowed
    assert named.startswith(f"tab {chatgpt_tab.tab_id}: https://chatgpt.com/")
