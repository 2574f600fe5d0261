"""The files a hostile page asks an agent to upload, laid out for the attacker tests.

A fake home with a fake SSH key (point ``HOME`` at it), a project to run bridge in (its
working directory) with a harmless note, a symlink to the key and one to a file outside,
and a folder outside the project with a PDF the person may choose to allow
(docs/flows.md#file-policy).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

FAKE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAfake\n-----END OPENSSH PRIVATE KEY-----\n"
# Binary (not UTF-8), so it is uploaded rather than put into the question.
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


@dataclass(frozen=True)
class World:
    home: Path
    key: Path  # home/.ssh/id_rsa
    project: Path  # the working directory
    note: Path  # project/notes.txt: may go
    key_link: Path  # project/key.txt -> the key
    outside_link: Path  # project/report.pdf -> outside/report.pdf
    outside: Path  # a folder outside the project
    outside_file: Path  # outside/report.pdf


def make_world(root: Path) -> World:
    home = root / "home"
    (home / ".ssh").mkdir(parents=True)
    key = home / ".ssh" / "id_rsa"
    key.write_text(FAKE_KEY)
    key.chmod(0o600)
    outside = root / "outside"
    outside.mkdir()
    outside_file = outside / "report.pdf"
    outside_file.write_bytes(PDF)
    project = root / "project"
    project.mkdir()
    note = project / "notes.txt"
    note.write_text("harmless notes\n")
    key_link = project / "key.txt"
    key_link.symlink_to(key)
    outside_link = project / "report.pdf"
    outside_link.symlink_to(outside_file)
    return World(home, key, project, note, key_link, outside_link, outside, outside_file)
