"""``lintloader fix --site-packages`` against a throwaway virtual environment, and the write
guards: backups + manifest, --list-patched, byte-identical --revert, refusing to overwrite a
changed file, installed files untouched without the flag, read-only files, symlinks out of the
scanned root."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import beside_the_sources, run_cli

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "fixtures" / "fix"
PACKAGE_FILE = "fakefetch/fetching.py"


def lintloader(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, "--no-cache", cwd=cwd, timeout=120)


def make_env(root: Path) -> tuple[Path, Path]:
    """A venv (no pip) with a distribution ``fakefetch`` holding the 'close' fixture shape."""
    env = root / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    site = Path(purelib)
    package = site / "fakefetch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    shutil.copy(FIX / "relocate_close.in.py", package / "fetching.py")
    info = site / "fakefetch-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakefetch\nVersion: 1.0\n")
    (info / "RECORD").write_text(
        "fakefetch/__init__.py,,\nfakefetch/fetching.py,,\nfakefetch-1.0.dist-info/RECORD,,\n"
    )
    return python, site


@pytest.fixture
def env(tmp_path: Path) -> tuple[Path, Path]:
    return make_env(tmp_path)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_patch_list_revert_roundtrip(env: tuple[Path, Path], tmp_path: Path) -> None:
    python, site = env
    target = site / PACKAGE_FILE
    original = target.read_bytes()
    os.chmod(target, 0o644)
    subprocess.run(
        [str(python), "-m", "py_compile", str(target)], check=True, env=beside_the_sources()
    )
    assert list((target.parent / "__pycache__").glob("fetching.*.pyc"))  # stale once patched
    result = lintloader(
        "fix", "--site-packages", "fakefetch", "--python", str(python), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    patched = target.read_bytes()
    assert patched == (FIX / "relocate_close.out.py").read_bytes()
    assert not list((target.parent / "__pycache__").glob("fetching.*.pyc"))

    manifest = json.loads((site / ".lintloader-backups" / "manifest.json").read_text())
    entry = manifest["files"][PACKAGE_FILE]
    assert entry["original_sha256"] == hashlib.sha256(original).hexdigest()
    assert entry["patched_sha256"] == hashlib.sha256(patched).hexdigest()
    assert entry["fixes"] == ["relocate"] and entry["user"] and entry["time"]
    assert (site / ".lintloader-backups" / entry["backup"]).read_bytes() == original

    listed = lintloader(
        "fix", "--site-packages", "--list-patched", "--python", str(python), cwd=tmp_path
    )
    assert listed.returncode == 0, listed.stderr
    assert str(target) in listed.stdout and "\tpatched\t" in listed.stdout

    reverted = lintloader(
        "fix", "--site-packages", "--revert", "--python", str(python), cwd=tmp_path
    )
    assert reverted.returncode == 0, reverted.stderr
    assert target.read_bytes() == original
    assert (target.stat().st_mode & 0o777) == 0o644
    again = lintloader(
        "fix", "--site-packages", "--list-patched", "--python", str(python), cwd=tmp_path
    )
    assert again.stdout == "" and "No files patched" in again.stderr


def test_second_patch_keeps_first_backup(env: tuple[Path, Path], tmp_path: Path) -> None:
    python, site = env
    target = site / PACKAGE_FILE
    original = target.read_bytes()
    # a second finding that only the unsafe strategy fixes, added after the first patch
    args = ("fix", "--site-packages", "fakefetch", "--python", str(python))
    assert lintloader(*args, cwd=tmp_path).returncode == 0
    text = target.read_text().replace(
        "        self.it = iter(self.loader)\n",
        "        self.it = iter(self.loader)\n        del self.loader._iterator\n",
    )
    target.write_text(text)
    # a hand edit since the patch: the manifest no longer matches; a new backup is taken
    assert lintloader(*args, "--unsafe-fixes", cwd=tmp_path).returncode == 0
    assert "del self.loader._iterator" not in target.read_text()
    manifest = json.loads((site / ".lintloader-backups" / "manifest.json").read_text())
    entry = manifest["files"][PACKAGE_FILE]
    assert entry["patched_sha256"] == sha(target)
    backup = (site / ".lintloader-backups" / entry["backup"]).read_bytes()
    assert backup == text.encode()  # the state before this patch, not the first original
    assert backup != original


def test_revert_refuses_a_file_changed_since(env: tuple[Path, Path], tmp_path: Path) -> None:
    python, site = env
    target = site / PACKAGE_FILE
    args = ("fix", "--site-packages", "fakefetch", "--python", str(python))
    assert lintloader(*args, cwd=tmp_path).returncode == 0
    target.write_text(target.read_text() + "# edited by hand\n")
    edited = target.read_bytes()
    result = lintloader("fix", "--site-packages", "--revert", "--python", str(python), cwd=tmp_path)
    assert result.returncode == 2
    assert "changed since it was patched" in result.stderr
    assert "not overwriting" in result.stderr
    assert target.read_bytes() == edited


def test_installed_files_are_written_only_with_the_flag(
    env: tuple[Path, Path], tmp_path: Path
) -> None:
    _, site = env
    target = site / PACKAGE_FILE
    before = target.read_bytes()
    result = lintloader("fix", str(site / "fakefetch"), cwd=tmp_path)
    assert result.returncode == 1
    assert "use `lintloader fix --site-packages`" in result.stderr
    assert target.read_bytes() == before
    assert not (site / ".lintloader-backups").exists()
    shown = lintloader("fix", str(site / "fakefetch"), "--diff", cwd=tmp_path)
    assert shown.returncode == 1 and "+++ b/" in shown.stdout


def test_read_only_file_is_reported_and_skipped(tmp_path: Path) -> None:
    target = tmp_path / "mod.py"
    shutil.copy(FIX / "relocate_close.in.py", target)
    os.chmod(target, 0o444)
    result = lintloader("fix", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "permission denied" in result.stderr
    assert target.read_bytes() == (FIX / "relocate_close.in.py").read_bytes()


def test_read_only_directory_is_reported_and_skipped(tmp_path: Path) -> None:
    """A directory without write permission (also refused for root: no write bit at all)."""
    folder = tmp_path / "pkg"
    folder.mkdir()
    target = folder / "mod.py"
    shutil.copy(FIX / "relocate_close.in.py", target)
    os.chmod(folder, 0o555)
    try:
        result = lintloader("fix", ".", cwd=tmp_path)
    finally:
        os.chmod(folder, 0o755)
    assert result.returncode == 1
    assert "permission denied" in result.stderr
    assert target.read_bytes() == (FIX / "relocate_close.in.py").read_bytes()


def test_symlink_leaving_the_root_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    real = outside / "real_mod.py"
    shutil.copy(FIX / "relocate_close.in.py", real)
    project = tmp_path / "project"
    project.mkdir()
    (project / "mod.py").symlink_to(real)
    result = lintloader("fix", ".", cwd=project)
    assert result.returncode == 1
    assert "outside the scanned paths" in result.stderr
    assert real.read_bytes() == (FIX / "relocate_close.in.py").read_bytes()
    assert (project / "mod.py").is_symlink()


def test_symlink_inside_the_root_writes_the_target(tmp_path: Path) -> None:
    real = tmp_path / "real_mod.py"
    shutil.copy(FIX / "relocate_close.in.py", real)
    (tmp_path / "mod.py").symlink_to(real)
    result = lintloader("fix", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "mod.py").is_symlink()
    assert real.read_bytes() == (FIX / "relocate_close.out.py").read_bytes()
