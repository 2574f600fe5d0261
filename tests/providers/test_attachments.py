"""Files with the question (docs/sites.md#attachments): read and sorted (pure), then sent
through real Chromium, the extension and the fake sites, which record what they received.

Small text files go into the question between ``<file name="…">`` and ``</file>`` lines;
the rest go through the site's own upload control and must be fully uploaded before the
question is sent. Files that cannot go are refused before anything is typed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bridge.app.facade import Bridge
from bridge.errors import AttachmentFailed, AttachmentRefused, ConsentRequired, PathNotAllowed
from bridge.fakes import Behaviour, FakeSites
from bridge.fakes.controller import SiteController
from bridge.policy.files import FilePolicy
from bridge.providers import uploads
from bridge.providers.attachments import MB, Limits, prepare_files
from bridge.providers.results import Provider
from bridge.providers.uploads import _UploadTraffic
from bridge.waiting import Waiter, scaled
from tests.attack_files import make_world

QUESTION = "Summarise the attached notes and the report."
ROOT = Path(__file__).resolve().parents[2]

TEXTS = {
    "notes.md": "# Meeting notes\n- ship the attachments feature\n- measure the upload time\n",
    "config.toml": '[server]\nport = 8080\nname = "bridge-é"\n',
    "script.py": "def main():\n    print('hello from the attached script')\n",
}


def make_pdf(size: int, seed: int = 7) -> bytes:
    """A small valid PDF (one page saying something) padded with a binary stream object to
    exactly ``size`` bytes: the shape of a real, mostly binary document."""
    text = b"BT /F1 18 Tf 72 720 Td (bridge attachment test) Tj ET"
    font = b"<< /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>"
    head = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources "
        + font
        + b" >>",
        b"<< /Length %d >>\nstream\n" % len(text) + text + b"\nendstream",
    ]

    def build(padding: bytes) -> bytes:
        objects = [*head, b"<< /Length %d >>\nstream\n" % len(padding) + padding + b"\nendstream"]
        out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
        offsets = []
        for number, body in enumerate(objects, start=1):
            offsets.append(len(out))
            out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
        xref = len(out)
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
        for offset in offsets:
            out += b"%010d 00000 n \n" % offset
        out += b"trailer\n<< /Size %d /Root 1 0 R >>\n" % (len(objects) + 1)
        out += b"startxref\n%d\n%%%%EOF\n" % xref
        return bytes(out)

    padding = size - len(build(b""))
    data = build(b"")
    for _ in range(3):  # the padding's length field and the xref offset grow with it
        data = build(random.Random(seed).randbytes(max(0, padding)))
        padding += size - len(data)
    assert len(data) == size
    return data


def files_in(tmp_path: Path, pdf_size: int = 5 * MB) -> list[Path]:
    paths = []
    for name, text in TEXTS.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(make_pdf(pdf_size))
    return [paths[0], pdf, *paths[1:]]


def allowed(tmp_path: Path) -> FilePolicy:
    """The policy of a bridge started with ``--allow-path <tmp_path>``: the test's files are
    outside the working directory (docs/flows.md#file-policy)."""
    return FilePolicy.create([tmp_path])


def allow(bridge: Bridge, tmp_path: Path) -> Bridge:
    bridge.file_policy = bridge.file_policy.allowing(tmp_path)
    return bridge


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def site(fakes: FakeSites, provider: str) -> SiteController:
    return fakes.chatgpt if provider == "chatgpt" else fakes.gemini


# -- pure: reading, sorting, composing, limits ---------------------------------------------------


def test_the_generated_pdf_is_a_pdf_of_the_asked_size() -> None:
    data = make_pdf(5 * MB)
    assert len(data) == 5 * MB
    assert data.startswith(b"%PDF-1.7") and data.rstrip().endswith(b"%%EOF")
    assert b"startxref" in data[-64:]


def test_small_text_files_go_inline_and_the_rest_is_uploaded(tmp_path: Path) -> None:
    paths = files_in(tmp_path, pdf_size=200_000)
    binary_text = tmp_path / "nul.txt"
    binary_text.write_bytes(b"text with a \x00 byte")
    long_text = tmp_path / "long.txt"
    long_text.write_text("x" * 20_001)
    attachments = prepare_files([*paths, binary_text, long_text], policy=allowed(tmp_path))
    assert [p.name for p in attachments.inline] == ["notes.md", "config.toml", "script.py"]
    assert [p.name for p in attachments.uploads] == ["report.pdf", "nul.txt", "long.txt"]
    assert attachments.uploads[0].mime == "application/pdf"
    assert all(p.path.is_absolute() for p in attachments.uploads)


def test_inlining_stops_at_the_total_budget(tmp_path: Path) -> None:
    paths = []
    for index in range(3):
        path = tmp_path / f"part{index}.txt"
        path.write_text("y" * 15_000)
        paths.append(path)
    attachments = prepare_files(paths, policy=allowed(tmp_path))
    assert [p.name for p in attachments.inline] == ["part0.txt", "part1.txt"]  # 30k of 40k
    assert [p.name for p in attachments.uploads] == ["part2.txt"]


def test_the_question_carries_each_inlined_file_between_tags(tmp_path: Path) -> None:
    attachments = prepare_files(files_in(tmp_path, pdf_size=100_000), policy=allowed(tmp_path))
    text = attachments.compose(QUESTION)
    assert text.startswith(QUESTION + "\n\n")
    for name, body in TEXTS.items():
        assert f'<file name="{name}">\n{body.rstrip()}\n</file>' in text
    assert "report.pdf" not in text  # uploaded, not inlined
    summary = attachments.summary(["set_file_input_files"])
    assert [(s["name"], s["sent_as"], s["method"]) for s in summary] == [
        ("notes.md", "inline", ""),
        ("config.toml", "inline", ""),
        ("script.py", "inline", ""),
        ("report.pdf", "upload", "set_file_input_files"),
    ]


def test_crlf_and_a_bom_are_tidied_in_inlined_text(tmp_path: Path) -> None:
    path = tmp_path / "win.txt"
    path.write_bytes(b"\xef\xbb\xbfline one\r\nline two\r\n")
    attachments = prepare_files([path], policy=allowed(tmp_path))
    assert attachments.compose("Q") == 'Q\n\n<file name="win.txt">\nline one\nline two\n</file>'


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("missing", "does not exist"),
        ("directory", "is a directory"),
        ("too_big", "over the limit of 1.0 kB per file"),
        ("too_many", "3 files were given and at most 2"),
        ("total", "over the limit of 1.5 kB for one question"),
    ],
)
def test_files_that_cannot_go_are_refused_with_what_to_do(
    tmp_path: Path, case: str, says: str
) -> None:
    limits = Limits(max_files=2, max_file_bytes=1000, max_total_bytes=1500)
    small = tmp_path / "small.txt"
    small.write_text("s" * 800)
    other = tmp_path / "other.txt"
    other.write_text("o" * 800)
    paths = {
        "missing": [tmp_path / "nope.txt"],
        "directory": [tmp_path],
        "too_big": [tmp_path / "big.bin"],
        "too_many": [small, small, small],
        "total": [small, other],
    }[case]
    (tmp_path / "big.bin").write_bytes(b"b" * 1001)
    with pytest.raises(AttachmentRefused) as caught:
        prepare_files(paths, limits, policy=allowed(tmp_path))
    error = caught.value
    assert error.code == "file_refused"
    assert says in str(error)
    assert "Nothing was typed or sent" in str(error)
    culprit = {"missing": "nope.txt", "too_many": "small.txt", "total": "other.txt"}.get(case)
    if culprit:
        assert culprit in error.path


def test_the_cli_refuses_a_missing_file_before_starting_a_browser(tmp_path: Path) -> None:
    gone = str(tmp_path / "gone.pdf")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bridge",
            "ask",
            QUESTION,
            "--file",
            gone,
            "--allow-path",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 1
    assert "error [file_refused]" in done.stderr and "gone.pdf" in done.stderr
    assert "does not exist" in done.stderr


# -- the attacker: a page talked the agent into sending the person's key -----------------------


@pytest.mark.reliability(39)
@pytest.mark.parametrize("case", ["key", "outside", "symlink"])
def test_the_cli_refuses_the_key_and_files_outside_before_starting_a_browser(
    tmp_path: Path, case: str
) -> None:
    world = make_world(tmp_path)
    path = {"key": "~/.ssh/id_rsa", "outside": str(world.outside_file), "symlink": "key.txt"}
    done = subprocess.run(
        [sys.executable, "-m", "bridge", "ask", QUESTION, "--file", path[case]],
        capture_output=True,
        text=True,
        cwd=world.project,
        env={**os.environ, "HOME": str(world.home), "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "error [path_not_allowed]" in done.stderr and repr(path[case]) in done.stderr
    assert "--allow-path" in done.stderr and "Nothing was read or sent" in done.stderr
    assert "BEGIN OPENSSH" not in done.stderr + done.stdout


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("provider", "case"), [("chatgpt", "key"), ("gemini", "outside"), ("chatgpt", "symlink")]
)
@pytest.mark.reliability(39)
async def test_the_key_and_files_outside_never_reach_the_site(
    bridge: Bridge,
    fakes: FakeSites,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    provider: Provider,
    case: str,
) -> None:
    """As a bridge started in the project with HOME at the fake home: the key (by ``~``, or
    through a symlink in the project) and a file outside are refused with the flag named,
    before anything is read, typed, uploaded or sent; a harmless file beside them changes
    nothing."""
    world = make_world(tmp_path)
    monkeypatch.setenv("HOME", str(world.home))
    monkeypatch.chdir(world.project)
    bridge.file_policy = FilePolicy.create(flag="--bridge-allow-path")
    await bridge.provider_tab(provider, new_chat=True)
    path = {"key": "~/.ssh/id_rsa", "outside": str(world.outside_file), "symlink": "key.txt"}
    with pytest.raises(PathNotAllowed) as caught:
        await bridge.ask(provider, QUESTION, files=["notes.txt", path[case]])
    error = caught.value
    assert error.code == "path_not_allowed" and error.path == path[case]
    assert "--bridge-allow-path" in str(error)
    sent = site(fakes, provider)
    assert sent.records == [] and sent.uploads == []
    assert await _composer_state(bridge, provider) == ("", 0)


@pytest.mark.e2e
async def test_with_allow_path_the_file_outside_goes(
    bridge: Bridge, fakes: FakeSites, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(tmp_path)
    monkeypatch.setenv("HOME", str(world.home))
    monkeypatch.chdir(world.project)
    bridge.file_policy = FilePolicy.create([world.outside])
    result = await bridge.ask("gemini", QUESTION, new_chat=True, files=[world.outside_file])
    record = fakes.gemini.records[-1]
    assert [(f.name, f.sha256) for f in record.files] == [
        ("report.pdf", sha256(world.outside_file))
    ]
    assert result.used.attachments[0]["method"] == "set_file_input_files"


# -- end to end: real Chromium, the extension, the fake sites -----------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_files_reach_the_site_and_the_send_waits_for_the_upload(
    bridge: Bridge, fakes: FakeSites, tmp_path: Path, provider: Provider
) -> None:
    allow(bridge, tmp_path)
    sent = site(fakes, provider)
    # Each upload takes the server 0.8 s: a send that did not wait would go without the PDF
    # (Gemini's fake sends what has finished; ChatGPT's keeps send disabled meanwhile).
    sent.set_behaviour(Behaviour(upload_ms=800))
    paths = files_in(tmp_path)
    result = await bridge.ask(provider, QUESTION, new_chat=True, files=paths)
    record = sent.records[-1]
    pdf = paths[1]
    assert [(f.name, f.size, f.sha256) for f in record.files] == [
        ("report.pdf", pdf.stat().st_size, sha256(pdf))
    ]
    assert record.files[0].content_type == "application/pdf"
    assert record.text.startswith(QUESTION)
    for name, body in TEXTS.items():
        assert f'<file name="{name}">' in record.text
        for line in body.strip().splitlines():
            assert line in record.text, (name, line)
    assert record.text.count("</file>") == 3
    assert result.question == QUESTION
    assert result.answer.startswith(record.answer.splitlines()[0])
    attached = {a["name"]: a for a in result.used.attachments}
    assert attached["report.pdf"]["sent_as"] == "upload"
    assert attached["report.pdf"]["method"] == "set_file_input_files"
    assert {attached[n]["sent_as"] for n in TEXTS} == {"inline"}
    assert result.used.fallbacks == []


async def _composer_state(bridge: Bridge, provider: Provider) -> tuple[str, int]:
    tab = await bridge.provider_tab(provider)
    value = await tab.evaluate(
        "(() => { const input = document.querySelector("
        "'#prompt-textarea, rich-textarea [role=\"textbox\"]');"
        " const chips = document.querySelectorAll("
        '\'[data-testid*="attachment"], [data-test-id="file-preview"]\');'
        " return [input ? input.innerText.trim() : null, chips.length]; })()"
    )
    return str(value[0]), int(value[1])


@pytest.mark.e2e
@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
@pytest.mark.parametrize("case", ["too_big", "too_many", "missing"])
async def test_refused_files_leave_nothing_typed_or_sent(
    bridge: Bridge, fakes: FakeSites, tmp_path: Path, provider: Provider, case: str
) -> None:
    allow(bridge, tmp_path)
    await bridge.provider_tab(provider, new_chat=True)  # the tab an ask would type into
    ok = tmp_path / "ok.txt"
    ok.write_text("fine")
    if case == "too_big":
        big = tmp_path / "huge.bin"
        with big.open("wb") as f:
            f.truncate(25 * MB + 1)  # sparse: refused by its size, never read
        paths, culprit, says = [ok, big], "huge.bin", "over the limit of 25.0 MB per file"
    elif case == "too_many":
        paths, culprit, says = [ok] * 11, "ok.txt", "11 files were given and at most 10"
    else:
        paths, culprit, says = [ok, tmp_path / "absent.pdf"], "absent.pdf", "does not exist"
    with pytest.raises(AttachmentRefused) as caught:
        await bridge.ask(provider, QUESTION, files=paths)
    assert caught.value.code == "file_refused"
    assert culprit in caught.value.path and says in str(caught.value)
    sent = site(fakes, provider)
    assert sent.records == [] and sent.uploads == []
    assert await _composer_state(bridge, provider) == ("", 0)


class _Tab:
    """Just enough of a tab for the upload watch: a wait that only the tab's end resolves."""

    def expect_event(self, method: str, predicate: object = None) -> Waiter[dict[str, Any]]:
        return Waiter(method)


async def test_the_upload_watch_wakes_when_the_last_upload_ends() -> None:
    """Regression: the quiet wait woke only at its deadline (it waited for every future,
    the tab's end included, instead of the first)."""
    traffic = _UploadTraffic(_Tab())  # type: ignore[arg-type]
    traffic.touch()
    upload = {"requestId": "1", "type": "Fetch", "request": {"method": "POST", "hasPostData": True}}
    traffic.sent({"requestId": "0", "request": {"method": "GET"}})  # not an upload
    traffic.sent({**upload, "requestId": "2", "type": "Ping"})  # a beacon, not an upload
    traffic.sent(upload)
    assert traffic.in_flight == {"1"}
    asyncio.get_running_loop().call_later(0.2, traffic.ended, {"requestId": "1"})
    started = time.monotonic()
    assert await traffic.quiet(0.3, 20.0)
    assert 0.45 <= time.monotonic() - started < 5.0
    traffic.sent({**upload, "requestId": "3"})  # never ends
    assert not await traffic.quiet(0.1, 0.3)


# A control that opens no file chooser: ChatGPT's "+" pointed at another button, Gemini's menu
# opened but its item unknown. Then the pack's file input takes the files directly.
NO_CHOOSER = {
    "chatgpt": {"selectors": {"upload_button": {"css": ["button[data-start-dictation]"]}}},
    "gemini": {"selectors": {"upload_menu_item": None}},
}


@pytest.mark.e2e
@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_without_a_file_chooser_the_pack_file_input_takes_the_files(
    bridge: Bridge,
    fakes: FakeSites,
    tmp_path: Path,
    provider: Provider,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(uploads, "CHOOSER_S", 1.0)
    allow(bridge, tmp_path)
    packs = bridge.store.root / "packs"
    packs.mkdir(parents=True, exist_ok=True)
    (packs / f"{provider}.json").write_text(json.dumps(NO_CHOOSER[provider]), encoding="utf-8")
    pdf = tmp_path / "direct.pdf"
    pdf.write_bytes(make_pdf(300_000, seed=5))
    result = await bridge.ask(provider, "What is in this PDF?", new_chat=True, files=[pdf])
    record = site(fakes, provider).records[-1]
    assert [(f.name, f.sha256) for f in record.files] == [("direct.pdf", sha256(pdf))]
    assert "attach:file_input" in result.used.fallbacks


# Gemini's first upload asks consent (SITE-FACTS G5.3); the fake remembers an Agree here.
CONSENT_KEY = "fake-gemini-upload-consent"
PRESS_AGREE = (
    "[...document.querySelectorAll('mat-dialog-container[role=\"dialog\"] button')]"
    ".find((b) => b.textContent.trim() === 'Agree').click()"
)


@pytest.mark.e2e
async def test_gemini_upload_consent_ends_the_ask_until_the_person_agrees(
    bridge: Bridge, fakes: FakeSites, tmp_path: Path
) -> None:
    """The consent dialog ends the ask at once (not after the chooser's wait) with nothing
    typed, uploaded or sent, and bridge never presses Agree; once the person has agreed in
    the tab, the same ask goes through."""
    allow(bridge, tmp_path)
    sent = fakes.gemini
    sent.set_behaviour(Behaviour(upload_consent=True))
    tab = await bridge.provider_tab("gemini", new_chat=True)
    # The session's browser profile is shared by the tests: this one has never agreed.
    await tab.evaluate(f"localStorage.removeItem({CONSENT_KEY!r})")
    pdf = tmp_path / "consent.pdf"
    pdf.write_bytes(make_pdf(200_000, seed=3))

    started = time.monotonic()
    with pytest.raises(ConsentRequired) as caught:
        await bridge.ask("gemini", QUESTION, files=[pdf])
    took = time.monotonic() - started
    error = caught.value
    assert error.code == "consent_required"
    assert error.dialog == "Creating content from images and files"
    for says in ("asks once for consent", "attach a file and press Agree yourself",
                 "then ask again", "Nothing was typed or sent"):  # fmt: skip
        assert says in str(error), says
    assert took < scaled(uploads.CHOOSER_S), f"{took:.1f}s: it waited for a file chooser"
    assert sent.records == [] and sent.uploads == []
    assert await _composer_state(bridge, "gemini") == ("", 0)
    # Left for the person: still open, not agreed to.
    assert await tab.evaluate("document.querySelectorAll('mat-dialog-container').length") == 1
    assert await tab.evaluate(f"localStorage.getItem({CONSENT_KEY!r})") is None

    # Asked again with the dialog still open: ended before anything is clicked.
    with pytest.raises(ConsentRequired):
        await bridge.ask("gemini", QUESTION, files=[pdf])
    assert sent.records == []

    await tab.evaluate(PRESS_AGREE)  # the person agrees
    result = await bridge.ask("gemini", QUESTION, files=[pdf])
    record = sent.records[-1]
    assert [(f.name, f.sha256) for f in record.files] == [("consent.pdf", sha256(pdf))]
    assert result.used.attachments[0]["sent_as"] == "upload"
    assert await tab.evaluate("document.querySelectorAll('mat-dialog-container').length") == 0


@pytest.mark.e2e
@pytest.mark.parametrize("provider", ["chatgpt", "gemini"])
async def test_an_upload_not_finished_in_time_ends_the_ask_naming_the_file_and_why(
    bridge: Bridge,
    fakes: FakeSites,
    tmp_path: Path,
    provider: Provider,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/sites.md#sent: an attachment not ready in time ends the ask before anything is
    typed or sent, with which file and why. The fake server takes 10 s per upload; the wait
    for it is cut to about a second."""
    monkeypatch.setattr(uploads, "UPLOAD_BASE_S", 1.0)
    monkeypatch.setattr(uploads, "UPLOAD_BYTES_PER_S", 1000 * MB)
    allow(bridge, tmp_path)
    sent = site(fakes, provider)
    sent.set_behaviour(Behaviour(upload_ms=10_000))
    pdf = tmp_path / "slow.pdf"
    pdf.write_bytes(make_pdf(200_000, seed=3))
    started = time.monotonic()
    with pytest.raises(AttachmentFailed, match=r"slow\.pdf within 1s: .*(uploading|running)"):
        await bridge.ask(provider, QUESTION, new_chat=True, files=[pdf])
    assert time.monotonic() - started < 30  # the cut wait, not the upload's own 10 s each
    assert sent.records == []  # nothing was sent
