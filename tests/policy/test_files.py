"""The file policy (docs/flows.md#file-policy): which paths bridge may give to a page.

The rule on resolved paths (``judge``) as a table and under Hypothesis; then ``FilePolicy``
on a real file system, where symlinks and ``..`` must not let a path escape its root.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.errors import PathNotAllowed
from bridge.policy.files import FilePolicy, Root, judge, protected_locations

P = PurePosixPath
HOME = P("/h")
PROTECTED = (
    HOME / ".ssh",
    HOME / ".config/gcloud",
    HOME / ".docker/config.json",
    P("/w/state"),
    P("/t/bridge-profile-*"),  # every /t/bridge-profile-<something>
)


def _roots(cwd: str, *allow: str) -> tuple[Root, ...]:
    return (Root(Path(cwd), explicit=False), *(Root(Path(a), explicit=True) for a in allow))


@pytest.mark.parametrize(
    ("cwd", "allow", "path", "expected"),
    [
        ("/w", (), "/w/a.txt", None),
        ("/w", (), "/w/sub/b.pdf", None),
        ("/w", (), "/w/.env", ("hidden", ".env")),
        ("/w", (), "/w/.git/config", ("hidden", ".git")),
        ("/w", (), "/w/sub/.aws/credentials", ("hidden", ".aws")),
        ("/w", (), "/etc/passwd", ("outside", "")),
        ("/w", (), "/wx/a.txt", ("outside", "")),  # a sibling sharing the prefix
        ("/w", (), "/h/.ssh/id_rsa", ("protected", "/h/.ssh")),
        ("/w", (), "/w/state/mcp-token", ("protected", "/w/state")),
        ("/w", ("/x",), "/x/y/z.png", None),
        ("/w", ("/x",), "/x/.hidden", ("hidden", ".hidden")),
        # bridge started in the home directory: home files go, credentials and dotfiles not
        ("/h", (), "/h/docs/cv.pdf", None),
        ("/h", (), "/h/.ssh/id_rsa", ("protected", "/h/.ssh")),
        ("/h", (), "/h/.bashrc", ("hidden", ".bashrc")),
        # the working directory inside a protected place never allows it
        ("/h/.ssh", (), "/h/.ssh/id_rsa", ("protected", "/h/.ssh")),
        # an --allow-path that names the place allows what it names, and only that
        ("/w", ("/h/.ssh",), "/h/.ssh/id_rsa", None),
        ("/w", ("/h/.ssh/id_rsa",), "/h/.ssh/id_rsa", None),
        ("/w", ("/h/.ssh/id_rsa",), "/h/.ssh/id_ed25519", ("protected", "/h/.ssh")),
        ("/w", ("/w/.env",), "/w/.env", None),
        ("/w", ("/w/.github",), "/w/.github/workflows/ci.yml", None),
        ("/w", ("/h/.docker/config.json",), "/h/.docker/config.json", None),
        # an --allow-path above a protected place does not name it
        ("/w", ("/h",), "/h/.ssh/id_rsa", ("protected", "/h/.ssh")),
        (
            "/w",
            ("/h/.config",),
            "/h/.config/gcloud/credentials.db",
            ("protected", "/h/.config/gcloud"),
        ),
        ("/w", ("/h/.config",), "/h/.config/app/settings.json", None),
        ("/w", ("/h/.docker",), "/h/.docker/config.json", ("protected", "/h/.docker/config.json")),
        # folders matched by name: a launched browser's throwaway profile
        ("/t", (), "/t/bridge-profile-x1/Default/Cookies", ("protected", "/t/bridge-profile-*")),
        ("/t", (), "/t/bridge-profiles/a.txt", None),
        ("/w", ("/t/bridge-profile-x1/shot.png",), "/t/bridge-profile-x1/shot.png", None),
        # the innermost root decides when it allows (nested roots)
        ("/w", ("/w/.venv/share",), "/w/.venv/share/x.txt", None),
    ],
)
def test_the_rule(
    cwd: str, allow: tuple[str, ...], path: str, expected: tuple[str, str] | None
) -> None:
    refusal = judge(P(path), _roots(cwd, *allow), PROTECTED)
    assert (None if refusal is None else (refusal.reason, refusal.detail)) == expected


# -- Hypothesis on the pure rule ----------------------------------------------------------------

NAMES = st.sampled_from(["w", "x", "h", "a", ".ssh", ".env", "sub", "state", ".config", "b.txt"])
PATHS = st.lists(NAMES, min_size=0, max_size=6).map(lambda parts: P("/", *parts))


@given(path=PATHS, cwd=PATHS, allow=st.lists(PATHS, max_size=3))
def test_no_path_outside_the_roots_ever_passes(path: P, cwd: P, allow: list[P]) -> None:
    roots = _roots(str(cwd), *map(str, allow))
    if judge(path, roots, PROTECTED) is None:
        assert any(path == r.path or r.path in path.parents for r in roots)


@given(path=PATHS, cwd=PATHS, allow=st.lists(PATHS, max_size=3))
def test_what_passes_has_nothing_hidden_or_protected_below_its_root(
    path: P, cwd: P, allow: list[P]
) -> None:
    """A hidden name or a protected place is passed only by an --allow-path that names it:
    one at or below it. Never by the working directory."""
    roots = _roots(str(cwd), *map(str, allow))
    if judge(path, roots, PROTECTED) is not None:
        return
    ok = False
    for root in roots:
        if not (path == root.path or root.path in path.parents):
            continue
        below = path.relative_to(root.path).parts
        hidden = any(part.startswith(".") for part in below)
        guarded = any(
            (path == p or p in path.parents) and not (root.explicit and root.path.is_relative_to(p))
            for p in PROTECTED
        )
        ok = ok or not (hidden or guarded)
    assert ok


@given(path=PATHS)
def test_the_working_directory_alone_never_passes_a_protected_place(path: P) -> None:
    for cwd in (P("/"), HOME, HOME / ".ssh", P("/w")):
        if any(path == p or p in path.parents for p in PROTECTED):
            assert judge(path, _roots(str(cwd)), PROTECTED) is not None


# -- FilePolicy on a real file system -----------------------------------------------------------


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A fake home with a key, a project (the working directory) and a folder outside it."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nfake\n")
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "notes.txt").write_text("notes")
    (project / ".env").write_text("TOKEN=fake")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "report.pdf").write_bytes(b"%PDF-1.7")
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "BRIDGE_STATE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(project)
    return {"home": home, "project": project, "outside": outside}


def test_a_file_of_the_working_directory_goes_as_its_real_path(world: dict[str, Path]) -> None:
    policy = FilePolicy.create()
    assert policy.check("notes.txt") == world["project"].resolve() / "notes.txt"
    assert policy.check("sub/../notes.txt") == world["project"].resolve() / "notes.txt"


def test_the_key_is_refused_naming_the_path_why_and_the_flag(world: dict[str, Path]) -> None:
    with pytest.raises(PathNotAllowed) as refused:
        FilePolicy.create().check("~/.ssh/id_rsa")
    error = refused.value
    assert error.code == "path_not_allowed" and error.reason == "protected"
    text = str(error)
    assert "'~/.ssh/id_rsa'" in text and "~/.ssh" in text and "protected place" in text
    assert "--allow-path ~/.ssh/id_rsa" in text and "Nothing was read or sent" in text


def test_a_file_outside_is_refused_until_its_folder_is_allowed(world: dict[str, Path]) -> None:
    report = world["outside"] / "report.pdf"
    with pytest.raises(PathNotAllowed, match="outside the folders") as refused:
        FilePolicy.create().check(report)
    assert f"--allow-path {world['outside'].resolve()}" in str(refused.value)
    assert f"the working directory {world['project'].resolve()}" in str(refused.value)
    assert FilePolicy.create([world["outside"]]).check(report) == report.resolve()
    assert FilePolicy.create().allowing(world["outside"]).check(report) == report.resolve()


@pytest.mark.parametrize("target", ["key", "outside"])
def test_a_symlink_inside_the_working_directory_pointing_out_is_refused(
    world: dict[str, Path], target: str
) -> None:
    link = world["project"] / "harmless.txt"
    link.symlink_to(
        world["home"] / ".ssh" / "id_rsa" if target == "key" else world["outside"] / "report.pdf"
    )
    with pytest.raises(PathNotAllowed) as refused:
        FilePolicy.create().check("harmless.txt")
    assert refused.value.reason == ("protected" if target == "key" else "outside")
    assert "(that is " in str(refused.value)  # the real path is shown


def test_a_symlinked_folder_and_dotdot_cannot_escape(world: dict[str, Path]) -> None:
    (world["project"] / "sub" / "up").symlink_to(world["outside"])
    policy = FilePolicy.create()
    # The last one is inside the project by its letters (sub/outside/report.pdf), outside by
    # what it opens: ``..`` after a symlink is the link target's parent.
    for path in ("sub/up/report.pdf", "../outside/report.pdf", "sub/up/../outside/report.pdf"):
        with pytest.raises(PathNotAllowed, match="outside the folders"):
            policy.check(path)
    assert policy.check("sub/up/../project/notes.txt") == world["project"].resolve() / "notes.txt"


def test_hidden_files_go_only_when_named(world: dict[str, Path]) -> None:
    with pytest.raises(PathNotAllowed, match=r"'\.env' in its path is hidden"):
        FilePolicy.create().check(".env")
    assert FilePolicy.create([".env"]).check(".env") == world["project"].resolve() / ".env"


def test_bridge_state_and_trust_folders_are_protected(
    world: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    state = world["project"] / "state"  # not hidden: only the protection keeps it in
    state.mkdir()
    (state / "mcp-token").write_text("secret")
    with pytest.raises(PathNotAllowed, match="protected"):
        FilePolicy.create(protect=[state]).check("state/mcp-token")
    monkeypatch.setenv("BRIDGE_STATE_DIR", str(state))
    with pytest.raises(PathNotAllowed, match="protected"):
        FilePolicy.create().check("state/mcp-token")
    places = protected_locations(world["home"], {"XDG_CONFIG_HOME": str(world["project"])})
    assert world["project"].resolve() / "bridge" in places  # the trust folder
    assert world["home"].resolve() / ".config" / "bridge" in places
    trust = world["project"] / "trust"
    monkeypatch.setenv("BRIDGE_TRUST_DIR", str(trust))
    with pytest.raises(PathNotAllowed, match="protected"):
        FilePolicy.create().check("trust/secret")


def test_bridge_temporary_profiles_are_protected_wherever_bridge_runs(
    world: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    temp = Path(tempfile.gettempdir())
    monkeypatch.chdir(temp)  # bridge started in the temporary folder itself
    with pytest.raises(PathNotAllowed, match="protected"):
        FilePolicy.create().check(temp / "bridge-profile-abc123" / "Default" / "Cookies")
    with pytest.raises(PathNotAllowed, match="protected"):
        FilePolicy.create().check(temp / "bridge-island-abc123" / "secret")


def test_the_pytest_flag_is_the_one_named(world: dict[str, Path]) -> None:
    with pytest.raises(PathNotAllowed, match="--bridge-allow-path"):
        FilePolicy.create(flag="--bridge-allow-path").check("/etc/hostname")


SEGMENTS = st.sampled_from(
    ["sub", "..", ".", "up", "key", "in", "notes.txt", "project", "outside", "report.pdf"]
)


@settings(
    max_examples=300,
    deadline=None,  # file system calls on a shared machine
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@pytest.mark.reliability(39)
@given(parts=st.lists(SEGMENTS, min_size=1, max_size=7), absolute=st.booleans())
def test_what_passes_is_inside_the_project_physically(
    world: dict[str, Path], parts: list[str], absolute: bool
) -> None:
    """Symlinks in and out of the project and ``..`` anywhere: whatever passes is the very
    file the given path opens, and that file is inside the project."""
    project = world["project"]
    for name, to in (
        ("up", world["outside"]),
        ("key", world["home"] / ".ssh" / "id_rsa"),
        ("in", project / "sub"),
    ):
        if not (project / name).is_symlink():
            (project / name).symlink_to(to)
    given_path = os.path.join(str(project) if absolute else "", *parts)
    try:
        allowed = FilePolicy.create().check(given_path)
    except PathNotAllowed:
        return
    assert allowed.is_relative_to(project.resolve())
    assert os.path.realpath(allowed) == str(allowed)  # no symlink left to follow
    opened = project / given_path
    if opened.exists():
        assert os.path.samefile(opened, allowed)
