"""The cache is an optimisation, never a point of failure (issue 12, item 7): a cache directory
that is a file, ``/dev/null``, below a file, not writable, or on a full disk costs one warning
and the cache, never the findings. Real processes; a small tmpfs for the full disk."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import run_cli
from trust_support import CLI, ORIGINAL, fill, tmpfs

WARNING = "lintloader: warning: cache directory "


def run_check(root: Path, cache: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli("check", ".", *extra, cwd=root, timeout=120, env={"LINTLOADER_CACHE_DIR": cache})


def assert_findings_and_one_warning(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 1, result.stderr
    assert "LL101" in result.stdout
    assert result.stderr.count(WARNING) == 1, result.stderr
    assert "going on without the cache" in result.stderr
    assert "internal error" not in result.stderr


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "mod.py").write_bytes(ORIGINAL)
    return project


@pytest.mark.parametrize("shape", ["file", "devnull", "below-a-file"])
def test_a_cache_dir_that_is_no_directory_costs_a_warning(
    root: Path, tmp_path: Path, shape: str
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("not a directory\n")
    cache = {"file": str(afile), "devnull": os.devnull, "below-a-file": f"{afile}/sub"}[shape]
    assert_findings_and_one_warning(run_check(root, cache))
    assert_findings_and_one_warning(run_check(root, "unused", "--cache-dir", cache))
    assert afile.read_text() == "not a directory\n"


def test_a_full_disk_under_the_cache_costs_a_warning(root: Path, tmp_path: Path) -> None:
    with tmpfs(tmp_path / "small", "32k") as small:
        fill(small)
        assert_findings_and_one_warning(run_check(root, str(small / "cache")))


def test_fix_goes_on_without_an_unusable_cache(root: Path) -> None:
    result = subprocess.run(
        [*CLI, "fix", "."],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LINTLOADER_CACHE_DIR": os.devnull},
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.count(WARNING) == 1
    assert (root / "mod.py").read_bytes() != ORIGINAL


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can read (pytest's own tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="lintloader-trust-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() != 0 or not shutil.which("setpriv"),
    reason="runs lintloader as 'nobody' (needs root and setpriv)",
)
def test_a_cache_dir_without_permission_costs_a_warning(shared_dir: Path) -> None:
    (shared_dir / "mod.py").write_bytes(ORIGINAL)
    cache = shared_dir / "cache"
    (cache / "locked").mkdir(parents=True)
    cache.chmod(0o755)
    os.chown(cache / "locked", 65534, 65534)  # nobody's own directory, without write permission
    (cache / "locked").chmod(0o500)
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = subprocess.run([*as_nobody, sys.executable, "-c", "import lintloader"], check=False)
    if probe.returncode != 0:
        pytest.skip("user 'nobody' cannot import lintloader from this checkout")
    result = subprocess.run(
        [*as_nobody, *CLI, "check", "."],
        cwd=shared_dir,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LINTLOADER_CACHE_DIR": str(cache / "locked"), "HOME": "/"},
    )
    assert_findings_and_one_warning(result)
    assert "Permission denied" in result.stderr


def test_the_flake8_plugin_goes_on_without_an_unusable_cache(root: Path) -> None:
    pytest.importorskip("flake8", reason="flake8 is not installed (a test dependency)")
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "LL", "mod.py"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LINTLOADER_CACHE_DIR": os.devnull},
    )
    assert "LL101" in result.stdout, result.stderr
    assert result.stderr.count(WARNING) == 1, result.stderr


# -------------------------------------------------- 8. the summary cache follows lintloader's code


def install_copy(where: Path) -> Path:
    """A copy of this checkout's lintloader package (mtimes kept), importable from ``where``."""
    import lintloader

    shutil.copytree(
        Path(lintloader.__file__).parent,
        where / "lintloader",
        copy_function=shutil.copy2,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return where


def check_with(copy: Path, root: Path, cache: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "lintloader", "check", "-v", ".", "--cache-dir", str(cache)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(copy)},
    )
    assert result.returncode == 1 and "LL101" in result.stdout, result.stderr
    which = subprocess.run(
        [sys.executable, "-c", "import lintloader; print(lintloader.__file__)"],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(copy)},
        check=True,
    )
    assert which.stdout.startswith(f"{copy}/lintloader/")  # the copy ran, not the checkout
    return next(line for line in result.stderr.splitlines() if line.startswith("Found "))


def test_summaries_follow_the_analyzer_code_not_only_its_version(
    root: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = install_copy(tmp_path / "first")
    assert "(1 parsed, 0 from cache" in check_with(first, root, cache)
    assert "(0 parsed, 1 from cache" in check_with(first, root, cache)
    # the summarizer changes, the version string does not (an edited checkout, another commit)
    calls = first / "lintloader" / "summary" / "calls.py"
    calls.write_text(calls.read_text() + "\n# a change of the summarizer\n")
    assert "(1 parsed, 0 from cache" in check_with(first, root, cache)
    # the same code installed elsewhere (a second pre-commit environment) shares the summaries
    second = tmp_path / "second"
    shutil.copytree(first, second, copy_function=shutil.copy2)
    # (its code stamp holds other paths, so this is no whole-run replay: the summary is reused)
    assert "(0 parsed, 1 from cache" in check_with(second, root, cache)


@pytest.mark.parametrize("shape", ["world-writable", "foreign"])
def test_a_cache_dir_others_can_write_is_not_used(root: Path, tmp_path: Path, shape: str) -> None:
    """The cache holds pickles: entries another user could plant are never loaded."""
    cache = tmp_path / "cache"
    cache.mkdir()
    if shape == "world-writable":
        cache.chmod(0o777)
    elif os.name != "posix" or os.geteuid() != 0:
        pytest.skip("giving a directory to another user needs root")
    else:
        os.chown(cache, 65534, 65534)
    result = run_check(root, str(cache))
    assert_findings_and_one_warning(result)
    assert "not trusted" in result.stderr
    assert list(cache.iterdir()) == []
