"""Saving what an answer generated (docs/sites.md#outputs): the pure decisions, then the
fake ChatGPT's images and files end to end in real Chromium through the extension.

The fake serves each image and file at a signed estuary URL that answers only with the
page's session cookie (U80), so a saved file proves the page fetched it with its own
credentials (C10.7); the bytes are compared with what the fake served.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from bridge.app.facade import Bridge
from bridge.app.jobs import Job
from bridge.errors import OutputDownloadRefused, OutputsFolderRefused
from bridge.fakes import Behaviour, FakeSites
from bridge.fakes.gemini import image_token, original_image
from bridge.fakes.images import png
from bridge.providers.outputs import (
    conversation_id,
    download_reply,
    image_refs,
    original_url,
    sandbox_paths,
)

ESTUARY = "https://chatgpt.com/backend-api/estuary/content"

# -- pure ------------------------------------------------------------------------------------


def test_images_are_deduplicated_by_file_id_and_confined_to_the_sites_hosts() -> None:
    found = [
        {"src": f"{ESTUARY}?id=file_abc&sig=1"},  # blurred copy
        {"src": f"{ESTUARY}?id=file_abc&sig=1"},  # sharp copy (C10.5)
        {"src": "blob:https://chatgpt.com/1234"},  # revoked once loaded (G12.4)
        {"src": "https://evil.example/backend-api/estuary/content?id=file_x"},
        {"src": "http://chatgpt.com/backend-api/estuary/content?id=file_y"},
        {"src": f"{ESTUARY}?id=file_def&sig=2"},
    ]
    refs = image_refs("chatgpt", found)
    assert [r.stem for r in refs] == ["file_abc", "file_def"]
    gemini = image_refs(
        "gemini", [{"src": "https://lh3.googleusercontent.com/rd-gg-dl/AbC=s1024-rj?alr=yes"}]
    )
    assert [r.stem for r in gemini] == ["AbC"]


def test_geminis_original_is_the_s0_d_form_of_the_preview() -> None:
    preview = "https://lh3.googleusercontent.com/rd-gg-dl/AbC=s1024-rj?alr=yes"
    assert original_url("gemini", preview) == "https://lh3.googleusercontent.com/rd-gg-dl/AbC=s0-d"
    bare = "https://lh3.googleusercontent.com/gg-dl/AbC"
    assert original_url("gemini", bare) == bare + "=s0-d"
    chatgpt = f"{ESTUARY}?id=file_1&sig=2"
    assert original_url("chatgpt", chatgpt) == chatgpt


def test_sandbox_links_name_the_files_in_order_once() -> None:
    text = (
        "See [the data](sandbox:/mnt/data/report.csv) and [again](sandbox:/mnt/data/report.csv)"
        " and [x](sandbox:/mnt/data/..%2F..%2Fevil.sh) but not [y](https://example.com/a)."
    )
    assert sandbox_paths(text) == ["/mnt/data/report.csv", "/mnt/data/../../evil.sh"]


def test_the_download_reply_is_read_or_refused_with_a_reason() -> None:
    ok = {"download_url": f"{ESTUARY}?id=file_1&sig=s", "file_name": "a.csv", "mime_type": "t"}
    assert download_reply(200, json.dumps(ok).encode()) == (ok["download_url"], "a.csv", "t")
    error = {"status": "error", "error_code": "x", "error_message": "The file has expired."}
    with pytest.raises(ValueError, match="The file has expired"):
        download_reply(200, json.dumps(error).encode())
    with pytest.raises(ValueError, match="HTTP 403"):
        download_reply(403, b"{}")
    with pytest.raises(ValueError, match="not JSON"):
        download_reply(200, b"<html>")
    with pytest.raises(ValueError, match=r"not on chatgpt\.com"):
        download_reply(200, json.dumps({"download_url": "https://evil.example/x"}).encode())
    assert conversation_id("https://chatgpt.com/c/6a1b-22") == "6a1b-22"
    assert conversation_id("https://chatgpt.com/") == ""


async def test_a_named_folder_in_bridges_own_state_is_refused_before_asking(
    bridge: Bridge,
) -> None:
    with pytest.raises(OutputsFolderRefused, match="protected place"):
        await bridge.ask("chatgpt", "Draw a cat.", outputs_dir=bridge.store.root / "x")


# -- end to end ------------------------------------------------------------------------------


@pytest.mark.e2e
async def test_a_generated_image_is_saved_after_its_skeleton_not_at_stop(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.chatgpt.queue(Behaviour(image=True, image_ms=600))
    result = await bridge.ask("chatgpt", "Draw a lighthouse at dusk.", new_chat=True)
    record = fakes.chatgpt.records[-1]
    assert len(result.used.outputs) == 1  # blurred and sharp copies: one file (C10.5)
    saved = result.used.outputs[0]
    assert saved["kind"] == "image" and saved["mime"] == "image/png"
    path = Path(saved["path"])
    assert path.read_bytes() == png(record.id)
    assert saved["bytes"] == len(png(record.id))
    assert path.parent.parent == bridge.store.root / "outputs"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert result.answer.startswith(record.answer.splitlines()[0])
    assert not [f for f in result.used.fallbacks if f.startswith("outputs:")]


@pytest.mark.e2e
@pytest.mark.parametrize("named", [False, True], ids=["state-dir", "outputs_dir"])
async def test_a_job_picked_up_from_its_conversation_saves_its_image_in_the_jobs_folder(
    bridge: Bridge, fakes: FakeSites, tmp_path: Path, named: bool
) -> None:
    """The asking process died before it saved anything; the process that picks the job up
    (bridge.providers.resume) reads the answer from the conversation and saves its image in
    the job's folder, as the asking process would have."""
    fakes.chatgpt.queue(Behaviour(image=True))
    question = "Draw a lighthouse at dusk."
    asked = await bridge.ask("chatgpt", question, new_chat=True)
    record = fakes.chatgpt.records[-1]
    tab = await bridge.provider_tab("chatgpt")
    await tab.navigate(asked.url, timeout=30)  # the page that asked is gone; its chat reopened
    job = Job.new("chatgpt", question, bridge.session_key, 60)
    job.url = asked.url
    if named:
        job.outputs_dir = str(tmp_path / "job-out")
    result = await bridge.collect_answer(job, on_progress=lambda p: None, on_tab=lambda t: None)
    assert len(fakes.chatgpt.records) == 1  # nothing asked again
    assert result.used.completion == "resumed_finished"
    [saved] = result.used.outputs
    assert saved["kind"] == "image" and saved["mime"] == "image/png"
    path = Path(saved["path"])
    folder = tmp_path / "job-out" if named else bridge.store.root / "outputs" / job.id
    assert path.parent == folder
    assert path.read_bytes() == png(record.id)


@pytest.mark.e2e
async def test_generated_files_are_saved_under_safe_names_in_a_named_folder(
    bridge: Bridge, fakes: FakeSites, tmp_path: Path
) -> None:
    names = ("report.csv", "../../escape.sh")
    fakes.chatgpt.queue(Behaviour(files=names))
    result = await bridge.ask(
        "chatgpt", "Make me a CSV report.", new_chat=True, outputs_dir=tmp_path / "out"
    )
    assert [(o["kind"], o["name"]) for o in result.used.outputs] == [
        ("file", "report.csv"),
        ("file", "escape.sh"),
    ]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["escape.sh", "report.csv"]
    assert (tmp_path / "out" / "report.csv").read_bytes() == b"name,value\nreport.csv,10\n"
    assert result.used.outputs[0]["mime"] == "text/csv"
    assert not (tmp_path / "escape.sh").exists()


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("download", "why"),
    [("refused", "The file has expired"), ("forbidden", "HTTP 403")],
)
async def test_a_refused_download_names_the_file_and_why(
    bridge: Bridge, fakes: FakeSites, tmp_path: Path, download: str, why: str
) -> None:
    fakes.chatgpt.queue(Behaviour(files=("data.xlsx",), download=download))  # type: ignore[arg-type]
    with pytest.raises(OutputDownloadRefused) as caught:
        await bridge.ask("chatgpt", "Make a spreadsheet.", new_chat=True, outputs_dir=tmp_path)
    assert caught.value.code == "download_refused"
    assert caught.value.name == "data.xlsx"
    assert why in str(caught.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.e2e
async def test_a_gemini_image_is_saved_as_its_full_size_original(
    bridge: Bridge, fakes: FakeSites
) -> None:
    fakes.gemini.queue(Behaviour(image=True))
    result = await bridge.ask("gemini", "Create an image of a red fox.", new_chat=True)
    record = fakes.gemini.records[-1]
    token = image_token(record.id)
    [saved] = result.used.outputs
    # The =s0-d original (G12.4, G12.5), not the 1024 px preview the page shows.
    assert saved["name"] == f"{token}.png" and saved["mime"] == "image/png"
    assert Path(saved["path"]).read_bytes() == original_image(token)
    assert original_image(token) != png(token, 16)


@pytest.mark.e2e
async def test_an_image_the_site_refuses_names_the_image_and_the_status(
    bridge: Bridge, fakes: FakeSites, tmp_path: Path
) -> None:
    fakes.chatgpt.queue(Behaviour(image=True, download="refused"))
    with pytest.raises(OutputDownloadRefused) as caught:
        await bridge.ask("chatgpt", "Draw a kite.", new_chat=True, outputs_dir=tmp_path)
    assert caught.value.name.startswith("file_")
    assert "HTTP 403" in str(caught.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.e2e
async def test_both_sides_images_share_one_named_folder(
    bridge: Bridge, fakes: FakeSites, tmp_path: Path
) -> None:
    fakes.chatgpt.queue(Behaviour(image=True))
    fakes.gemini.queue(Behaviour(image=True))
    both = await bridge.ask_both(
        "Create an image of a harbour.", new_chat=True, outputs_dir=tmp_path
    )
    assert both.all_ok, both.errors
    kinds = {p: [o["kind"] for o in r.used.outputs] for p, r in both.results.items()}
    assert kinds == {"chatgpt": ["image"], "gemini": ["image"]}
    assert len(list(tmp_path.iterdir())) == 2
