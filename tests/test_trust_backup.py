"""fix --site-packages and its revert never trust what they read from disk, never patch without a
verified backup, and never report a failed write as success (issue 12, items 1-4 and the manifest,
listing and ownership parts of 9). Real venvs, real processes, tmpfs mounts for full disks."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from trust_support import FIXED, ORIGINAL, Env, fill, make_env, sha, tmpfs

# ---------------------------------------------------------------- 1. the manifest is not trusted


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def patched(env: Env) -> dict[str, object]:
    result = env.fix("fakefetch")
    assert result.returncode == 0, result.stderr
    assert env.target.read_bytes() == FIXED
    return env.entries()["fakefetch/fetching.py"]


@pytest.fixture(scope="module")
def patched_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of an environment ``fix --site-packages`` patched (patched once: the tests
    that start from a patched file each get a copy of it)."""
    folder = tmp_path_factory.mktemp("patched")
    patched(make_env(folder))
    return folder


@pytest.fixture
def patched_env(patched_once: Path, tmp_path: Path) -> Env:
    """A copy of that environment (a venv finds its prefix from the copy's pyvenv.cfg; the
    manifest holds paths relative to the site) with its patched file and manifest entry."""
    shutil.copytree(patched_once / "env", tmp_path / "env", symlinks=True)
    site = next((tmp_path / "env" / "lib").glob("python3*/site-packages"))
    env = Env(tmp_path, tmp_path / "env" / "bin" / "python", site)
    assert env.target.read_bytes() == FIXED and list(env.entries()) == ["fakefetch/fetching.py"]
    return env


def plant(env: Env, key: str, **changes: object) -> None:
    """Add a manifest entry ``key``: a copy of the real one with ``changes``."""
    files = env.entries()
    files[key] = {**files["fakefetch/fetching.py"], **changes}
    env.manifest.write_text(json.dumps({"format": 1, "files": files}))


def hostile_keys(env: Env, victim: Path) -> list[str]:
    escape = os.path.relpath(victim, env.site)
    link = env.site / "fakefetch" / "out"
    link.symlink_to(victim.parent, target_is_directory=True)
    return [escape, str(victim), f"fakefetch/out/{victim.name}", f"fakefetch/../{escape}"]


def test_revert_refuses_keys_outside_the_site_and_restores_the_rest(
    patched_env: Env, tmp_path: Path
) -> None:
    env = patched_env
    victim = tmp_path / "victim.py"
    victim.write_bytes(FIXED)  # holds the patched digest: an unchecked revert would overwrite it
    keys = hostile_keys(env, victim)
    for key in keys:
        plant(env, key)
    result = env.fix("--revert")
    assert result.returncode == 2, result.stderr
    refused = [line for line in result.stderr.splitlines() if line.startswith("refused: ")]
    assert len(refused) == len(keys), result.stderr
    assert all(
        "outside the site" in line or "normalised" in line or "relative" in line for line in refused
    ), refused
    assert victim.read_bytes() == FIXED  # untouched
    assert env.target.read_bytes() == ORIGINAL  # the genuine entry was still reverted
    assert "reverted: " in result.stdout
    assert "internal error" not in result.stderr


def test_backup_names_other_than_files_digest_are_refused(patched_env: Env, tmp_path: Path) -> None:
    env = patched_env
    entry = env.entries()["fakefetch/fetching.py"]
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"secret\n")
    os.chmod(secret, 0o600)
    digest = sha(secret.read_bytes())
    outside = os.path.relpath(secret, env.backups)
    plant(env, "fakefetch/fetching.py", original_sha256=digest, backup=outside)
    result = env.fix("--revert")
    assert result.returncode == 2
    assert "refused: " in result.stderr and "files/<original_sha256>" in result.stderr
    assert env.target.read_bytes() == FIXED  # nothing copied into the package file
    assert entry["backup"] == f"files/{entry['original_sha256']}"


def test_modes_are_masked_to_permission_bits(patched_env: Env) -> None:
    env = patched_env
    plant(env, "fakefetch/fetching.py", mode=0o6777)
    result = env.fix("--revert")
    assert result.returncode == 0, result.stderr
    mode = env.target.stat().st_mode
    assert env.target.read_bytes() == ORIGINAL
    assert not mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX)
    assert stat.S_IMODE(mode) == 0o777


def test_list_patched_refuses_hostile_entries_and_lists_the_rest(
    patched_env: Env, tmp_path: Path
) -> None:
    env = patched_env
    plant(env, "../../../../etc/passwd.py")
    plant(env, "fakefetch/evil.py", mode="0777")
    result = env.fix("--list-patched")
    assert result.returncode == 2
    assert result.stderr.count("refused: ") == 2, result.stderr
    assert "fakefetch/fetching.py\tpatched" in result.stdout


MALFORMED = [
    b"[]",
    b'"text"',
    b"42",
    b"null",
    b"{",
    b"\xff\xfe not utf-8",
    b'{"format": 2, "files": {}}',
    b'{"format": 1, "files": []}',
    b'{"format": 1, "files": "x"}',
    b'{"format": 1, "files": {"fakefetch/fetching.py": []}}',
    b'{"format": 1, "files": {"fakefetch/fetching.py": null}}',
    b'{"format": 1, "files": {"fakefetch/fetching.py": {"mode": []}}}',
    b'{"format": 1, "files": {"fakefetch/fetching.py": {"original_sha256": 5}}}',
    b"[" * 100000 + b"]" * 100000,
]


@pytest.mark.parametrize("data", MALFORMED, ids=range(len(MALFORMED)))
@pytest.mark.parametrize("action", ["--revert", "--list-patched"])
def test_malformed_manifest_of_any_shape_is_one_refused_line(
    env: Env, data: bytes, action: str
) -> None:
    env.backups.mkdir()
    env.manifest.write_bytes(data)
    result = env.fix(action)
    assert result.returncode == 2, result.stderr
    refused = [line for line in result.stderr.splitlines() if line.startswith("refused: ")]
    assert len(refused) == 1, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert env.manifest.read_bytes() == data  # never rewritten


def test_list_patched_says_when_a_backup_is_missing(patched_env: Env) -> None:
    env = patched_env
    entry = env.entries()["fakefetch/fetching.py"]
    (env.backups / str(entry["backup"])).unlink()
    result = env.fix("--list-patched")
    assert "(MISSING)" in result.stdout, result.stdout


# -------------------------------------------------------------- 2. the existing blob is verified


def blob(env: Env) -> Path:
    return env.backups / "files" / sha(ORIGINAL)


@pytest.mark.parametrize("shape", ["corrupt", "truncated", "symlink", "fifo"])
def test_an_existing_bad_backup_blob_is_rewritten_before_patching(
    env: Env, tmp_path: Path, shape: str
) -> None:
    blob(env).parent.mkdir(parents=True)
    decoy = tmp_path / "decoy"
    decoy.write_bytes(b"not the original\n")
    if shape == "corrupt":
        blob(env).write_bytes(ORIGINAL.replace(b"reset", b"RESET"))
    elif shape == "truncated":
        blob(env).write_bytes(ORIGINAL[:10])
    elif shape == "symlink":
        blob(env).symlink_to(decoy)
    else:
        os.mkfifo(blob(env))
    patched(env)
    assert not blob(env).is_symlink() and blob(env).is_file()
    assert blob(env).read_bytes() == ORIGINAL
    assert decoy.read_bytes() == b"not the original\n"
    reverted = env.fix("--revert")
    assert reverted.returncode == 0, reverted.stderr
    assert env.target.read_bytes() == ORIGINAL


def test_a_backup_that_cannot_be_replaced_means_no_patch(env: Env) -> None:
    blob(env).mkdir(parents=True)  # a directory where the blob goes: cannot be replaced
    result = env.fix("fakefetch")
    assert result.returncode == 2
    assert "fetching.py: not written" in result.stderr
    assert env.target.read_bytes() == ORIGINAL


def test_patching_again_needs_the_first_backup_verified(patched_env: Env) -> None:
    env = patched_env
    entry = env.entries()["fakefetch/fetching.py"]
    # the file as lintloader left it holds a fixable reset again (say a newer rule's finding):
    # the manifest says its patched digest is the one it has now, and the first backup is bad
    blob_path = env.backups / str(entry["backup"])
    blob_path.write_bytes(b"garbage")
    env.target.write_bytes(ORIGINAL)
    files = env.entries()
    files["fakefetch/fetching.py"]["patched_sha256"] = sha(ORIGINAL)  # "patched" == ORIGINAL now
    env.manifest.write_text(json.dumps({"format": 1, "files": files}))
    result = env.fix("fakefetch")
    assert result.returncode == 2, result.stderr
    assert "not patching it again without a verified backup" in result.stderr
    assert env.target.read_bytes() == ORIGINAL


# ------------------------------------------------------- 4. a failed write is never a success


def assert_not_written(env: Env, result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if "not written" in line]
    assert len(lines) == 1 and "fetching.py" in lines[0], result.stderr
    assert "1 file NOT WRITTEN" in result.stderr
    assert env.target.read_bytes() == ORIGINAL


def test_disk_full_in_the_package_directory(env: Env) -> None:
    package = env.site / "fakefetch"
    saved = {p.name: p.read_bytes() for p in package.iterdir() if p.is_file()}
    with tmpfs(package, "64k"):
        for name, data in saved.items():
            (package / name).write_bytes(data)
        fill(package)
        result = env.fix("fakefetch")
        assert_not_written(env, result)
        assert "No space left" in result.stderr
        assert "fakefetch/fetching.py" not in (
            env.entries() if env.manifest.exists() else {}
        )  # the manifest entry was put back
        assert not [p for p in package.iterdir() if p.name.endswith("tmp")]


def test_disk_full_in_the_backup_directory(env: Env) -> None:
    with tmpfs(env.backups, "64k"):
        fill(env.backups)
        result = env.fix("fakefetch")
        assert_not_written(env, result)


@pytest.mark.parametrize("shape", ["garbage", "directory"])
def test_unreadable_manifest_means_no_patch(env: Env, shape: str) -> None:
    env.backups.mkdir()
    if shape == "garbage":
        env.manifest.write_bytes(b"{ not json")
    else:
        env.manifest.mkdir()
    assert_not_written(env, env.fix("fakefetch"))


def test_symlinked_backup_directory_means_no_patch(env: Env, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env.backups.symlink_to(elsewhere, target_is_directory=True)
    assert_not_written(env, env.fix("fakefetch"))
    assert list(elsewhere.iterdir()) == []


# ---------------------------------------------------------- 9. ownership and read-only folders


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="chown needs root")
def test_patched_and_reverted_files_keep_owner_and_group(env: Env) -> None:
    os.chown(env.target, 4321, 8765)
    os.chmod(env.target, 0o640)
    patched(env)
    info = env.target.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (4321, 8765, 0o640)
    assert env.fix("--revert").returncode == 0
    info = env.target.stat()
    assert env.target.read_bytes() == ORIGINAL
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (4321, 8765, 0o640)


def test_read_only_directory_is_not_written_even_by_root(tmp_path: Path) -> None:
    from trust_support import run

    folder = tmp_path / "pkg"
    folder.mkdir()
    target = folder / "mod.py"
    target.write_bytes(ORIGINAL)
    os.chmod(folder, 0o555)
    try:
        result = run("fix", ".", cwd=tmp_path)
    finally:
        os.chmod(folder, 0o755)
    assert result.returncode == 1, result.stderr
    assert "permission denied" in result.stderr
    assert target.read_bytes() == ORIGINAL


# ------------------------------------------------- 3. an edit saved during the fix is not lost

SAVE_DURING_FIX = """
import sys
from pathlib import Path

import lintloader.cli.fix as command

analyse = command.FixRounds.run
target = Path(sys.argv[1])


def analyse_then_user_saves(*args, **kwargs):
    outcome = analyse(*args, **kwargs)
    # the user's editor saves while the fixes are computed
    target.write_bytes(target.read_bytes() + b"# saved meanwhile\\n")
    return outcome


command.FixRounds.run = analyse_then_user_saves
from lintloader.cli.main import main

sys.argv = ["lintloader", *sys.argv[2:]]
main()
"""


@pytest.mark.parametrize("installed", [False, True])
def test_an_edit_saved_while_fix_runs_is_kept(tmp_path: Path, installed: bool) -> None:
    """A real ``fix`` process, in which the file is saved again between the analysis and the
    write (the window where an editor's save was overwritten)."""
    if installed:
        env = make_env(tmp_path)
        target = env.target
        args = ["fix", "--site-packages", "fakefetch", "--python", str(env.python)]
    else:
        target = tmp_path / "mod.py"
        target.write_bytes(ORIGINAL)
        args = ["fix", str(target)]
    result = subprocess.run(
        [sys.executable, "-c", SAVE_DURING_FIX, str(target), *args, "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert "changed on disk while lintloader worked on it; not written" in result.stderr
    assert "1 file changed on disk during the fix, left alone" in result.stderr
    assert target.read_bytes() == ORIGINAL + b"# saved meanwhile\n"
    if installed:
        manifest = target.parent.parent / ".lintloader-backups" / "manifest.json"
        assert not manifest.exists() or "fakefetch/fetching.py" not in manifest.read_text()
