"""The backup manifest of ``fix --site-packages`` under concurrent runs and after pip changed
the environment (issue 28: item 9, and the ``pip install -U`` / ``pip uninstall`` bug).

Real processes: four ``fix`` runs at once on one environment; packages installed, upgraded
and removed by the real pip (``pip --python``) from wheels the test builds.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trust_support import CLI, FIXED, ORIGINAL, Env, b64, make_env, sha, wheel

NAMES = ("fetch_a", "fetch_b", "fetch_c", "fetch_d")


def add_distribution(env: Env, name: str) -> Path:
    """A distribution ``name`` whose one module is the patchable fixture."""
    package = env.site / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "fetching.py").write_bytes(ORIGINAL)
    info = env.site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "RECORD").write_text(f"{name}/__init__.py,,\n{name}/fetching.py,,\n")
    return package / "fetching.py"


def fix(env: Env, *args: str) -> subprocess.Popen[str]:
    command = [*CLI, "fix", "--site-packages", *args, "--python", str(env.python), "--no-cache"]
    return subprocess.Popen(
        command, cwd=env.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=180)
    return process.returncode, out, err


def test_concurrent_fixes_of_one_environment_keep_every_entry(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    targets = [add_distribution(env, name) for name in NAMES]
    for trial in range(3):
        runs = [fix(env, name) for name in NAMES]
        for code, _, err in map(finish, runs):
            assert code == 0, err
        assert all(target.read_bytes() == FIXED for target in targets)
        entries = env.entries()
        assert sorted(entries) == sorted(f"{name}/fetching.py" for name in NAMES), trial
        code, _, err = finish(fix(env, "--revert"))
        assert code == 0, err
        assert all(target.read_bytes() == ORIGINAL for target in targets)
        assert env.entries() == {}


def test_revert_says_when_a_patched_file_lost_its_entry(tmp_path: Path) -> None:
    """A manifest written by a run that lost another's entry (before the lock): the patched
    file is named, with its backup, and the run exits 2."""
    env = make_env(tmp_path)
    target = add_distribution(env, "fetch_a")
    record = target.parent.parent / "fetch_a-1.0.dist-info" / "RECORD"
    record.write_text(f"fetch_a/fetching.py,sha256={b64(ORIGINAL)},{len(ORIGINAL)}\n")
    code, _, err = finish(fix(env, "fetch_a"))
    assert code == 0, err
    manifest = json.loads(env.manifest.read_text())
    manifest["files"] = {}
    env.manifest.write_text(json.dumps(manifest))
    code, _, err = finish(fix(env, "--revert"))
    assert code == 2
    assert f"{target}: may still be patched but has no manifest entry" in err, err
    assert f"files/{sha(ORIGINAL)}" in err
    assert target.read_bytes() == FIXED  # nothing guessed: the user restores it


def test_a_backup_left_before_the_patch_is_dropped_by_revert(tmp_path: Path) -> None:
    """A fix interrupted after its backup and before the manifest entry (which is written
    before the file is patched) leaves the file as it was: ``--revert`` drops the backup and
    exits 0, also for a file no RECORD lists (its bytes are the backup's)."""
    env = make_env(tmp_path)
    target = add_distribution(env, "fetch_a")  # its RECORD lists no digests
    code, _, err = finish(fix(env, "fetch_a"))
    assert code == 0, err
    manifest = json.loads(env.manifest.read_text())
    manifest["files"] = {}
    env.manifest.write_text(json.dumps(manifest))
    target.write_bytes(ORIGINAL)  # as it was before the patch
    backup = env.manifest.parent / "files" / sha(ORIGINAL)
    assert backup.exists()
    code, _, err = finish(fix(env, "--list-patched"))
    # (the environment holds those bytes twice: fakefetch's module is the same fixture)
    assert code == 0 and f"note: {backup}: a backup with no manifest entry; " in err, err
    assert err.splitlines()[0].endswith("/fetching.py is the original"), err
    code, _, err = finish(fix(env, "--revert"))
    assert code == 0, err
    assert f"dropped: {backup}: a backup with no manifest entry; " in err, err
    assert not backup.exists() and target.read_bytes() == ORIGINAL


def pip(env: Env, *args: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(env.python), *args],
        capture_output=True,
        text=True,
        timeout=180,
    )
    if result.returncode != 0 and "no such option: --python" in result.stderr:
        pytest.skip("this pip has no --python option")
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def pip_installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of an environment with ``fakewheel`` 1.0 installed by pip (installed once:
    each test patches a copy of it)."""
    folder = tmp_path_factory.mktemp("installed")
    env = make_env(folder)
    pip(env, "install", "--no-index", "--no-deps", str(wheel(folder, "1.0", ORIGINAL)))
    return folder


@pytest.fixture
def installed(pip_installed: Path, tmp_path: Path) -> tuple[Env, Path]:
    """An environment with ``fakewheel`` 1.0 installed by pip, patched by lintloader."""
    shutil.copytree(pip_installed / "env", tmp_path / "env", symlinks=True)
    site = next((tmp_path / "env" / "lib").glob("python3*/site-packages"))
    env = Env(tmp_path, tmp_path / "env" / "bin" / "python", site)
    target = env.site / "fakewheel" / "fetching.py"
    code, _, err = finish(fix(env, "fakewheel"))
    assert code == 0, err
    assert target.read_bytes() == FIXED
    return env, target


def test_revert_after_an_upgrade_drops_the_stale_entry(
    installed: tuple[Env, Path], tmp_path: Path
) -> None:
    env, target = installed
    upgraded = ORIGINAL + b"\n# 2.0\n"
    pip(env, "install", "--no-index", "--no-deps", "-U", str(wheel(tmp_path, "2.0", upgraded)))
    assert target.read_bytes() == upgraded
    code, out, err = finish(fix(env, "--revert"))
    assert code == 0, err
    assert f"dropped: {target}: installed again since it was patched" in out
    assert "stale manifest entry was dropped" in out
    assert target.read_bytes() == upgraded  # the new release, untouched
    assert env.entries() == {}
    assert not list((env.backups / "files").iterdir())  # its backup went with it
    again = finish(fix(env, "--revert"))
    assert again[0] == 0, again[2]


def test_revert_after_an_uninstall_drops_the_stale_entry(installed: tuple[Env, Path]) -> None:
    env, target = installed
    pip(env, "uninstall", "-y", "fakewheel")
    assert not target.exists()
    code, out, err = finish(fix(env, "--revert"))
    assert code == 0, err
    assert f"dropped: {target}: no longer installed" in out
    assert "stale manifest entry was dropped" in out
    assert env.entries() == {}


def test_a_hand_edit_is_still_refused(installed: tuple[Env, Path]) -> None:
    """Changed, but not to what pip installed: not stale, the user decides (exit 2)."""
    env, target = installed
    target.write_bytes(FIXED + b"# my edit\n")
    code, _, err = finish(fix(env, "--revert"))
    assert code == 2
    assert "changed since it was patched" in err
    assert len(env.entries()) == 1
