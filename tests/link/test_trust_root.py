"""The person's secret (``bridge.link.trust_root``): where it lives per OS, and reading it
without making or changing it."""

from __future__ import annotations

from pathlib import Path

from bridge.link.tokens import load_or_create_token
from bridge.link.trust_root import ENV_TRUST_DIR, SECRET_FILE, existing_secret, trust_dir


def test_the_secret_folder_per_os() -> None:
    home = Path("/home/ada")
    assert trust_dir({}, platform="linux", home=home) == home / ".config" / "bridge"
    assert trust_dir({"XDG_CONFIG_HOME": "/c"}, platform="linux", home=home) == Path("/c/bridge")
    assert trust_dir({"XDG_CONFIG_HOME": "c"}, platform="linux", home=home) == (
        home / ".config" / "bridge"  # relative: ignored, as before
    )
    assert trust_dir({}, platform="darwin", home=home) == (
        home / "Library" / "Application Support" / "bridge"
    )
    local = {"LOCALAPPDATA": r"C:\Users\ada\AppData\Local"}
    assert trust_dir(local, platform="win32", home=home) == Path(local["LOCALAPPDATA"]) / "bridge"
    named = {ENV_TRUST_DIR: "/t", **local}
    assert all(trust_dir(named, platform=p, home=home) == Path("/t") for p in ("linux", "win32"))


def test_an_existing_secret_is_read_never_made_or_replaced(tmp_path: Path) -> None:
    assert existing_secret(tmp_path / "missing") is None
    private = tmp_path / "trust"
    private.mkdir(mode=0o700)
    assert existing_secret(private) is None and not (private / SECRET_FILE).exists()
    secret, _ = load_or_create_token(private / SECRET_FILE)
    assert existing_secret(private) == secret
    (private / SECRET_FILE).chmod(0o644)  # one bridge would replace: not used, not touched
    assert existing_secret(private) is None
    assert (private / SECRET_FILE).read_text().strip() == secret
    (private / SECRET_FILE).chmod(0o600)
    private.chmod(0o777)  # others may swap the secret: not trusted
    assert existing_secret(private) is None
    private.chmod(0o700)
