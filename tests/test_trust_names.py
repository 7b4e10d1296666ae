"""File names that are not valid UTF-8, or hold a newline (issue 12, item 5): POSIX paths are
bytes. ``check`` (cold and cached), ``fix``, ``fix --site-packages`` and the flake8 plugin all
survive such a file, still print every finding, and escape the name in their output so that a
newline cannot forge an extra line. Real files with such names, real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from trust_support import CLI, FIXED, ORIGINAL, make_env

pytestmark = pytest.mark.skipif(
    sys.platform in ("win32", "darwin"), reason="needs a file system that takes any bytes"
)

UNDECODABLE = b"bad\xff.py"
NEWLINE = b"new\nline.py"


def plant(folder: Path, data: bytes = ORIGINAL) -> None:
    for name in (UNDECODABLE, NEWLINE):
        with open(os.path.join(os.fsencode(folder), name), "wb") as handle:
            handle.write(data)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, timeout=120)


def test_check_reports_both_files_escaped_cold_and_cached(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    plant(project)
    cache = str(tmp_path / "cache")
    for attempt in ("cold", "summaries", "replay"):
        if attempt == "summaries":
            (project / "other.py").write_text("y = 2\n")  # no whole-run replay this time
        result = run("check", "-v", ".", "--cache-dir", cache, cwd=project)
        assert result.returncode == 1, result.stderr
        lines = result.stdout.decode("utf-8").splitlines()
        headline = [line for line in lines if not line.startswith(" ")]
        assert sorted(line.split(":")[0] for line in headline) == ["bad\\xff.py", "new\\nline.py"]
        assert all(": LL101 " in line for line in headline), lines
    assert b"2 from cache" in result.stderr


@pytest.mark.parametrize("output_format", ["json", "sarif", "github", "concise"])
def test_every_format_survives_such_names(tmp_path: Path, output_format: str) -> None:
    plant(tmp_path)
    result = run("check", ".", "--no-cache", "--output-format", output_format, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    text = result.stdout.decode("utf-8")
    assert "bad\\xff.py" in text or "bad\\\\xff.py" in text
    if output_format == "json":
        assert len(json.loads(text)) == 2
    if output_format in ("github", "concise"):
        assert len(text.splitlines()) == 2


def test_fix_writes_both_files_and_names_them_escaped(tmp_path: Path) -> None:
    plant(tmp_path)
    shown = run("fix", ".", "--diff", "--no-cache", cwd=tmp_path)
    assert shown.returncode == 1
    assert b"+++ b/bad\\xff.py" in shown.stdout and b"+++ b/new\\nline.py" in shown.stdout
    result = run("fix", ".", "--no-cache", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert b"Fixed 2 findings in 2 files" in result.stderr
    for name in (UNDECODABLE, NEWLINE):
        with open(os.path.join(os.fsencode(tmp_path), name), "rb") as handle:
            assert handle.read() == FIXED


def test_fix_site_packages_patches_and_reverts_an_undecodable_module(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    target = os.path.join(os.fsencode(env.site / "fakefetch"), UNDECODABLE)
    with open(target, "wb") as handle:
        handle.write(ORIGINAL)
    python = str(env.python)
    # the whole site (a RECORD, being UTF-8, cannot list such a name): found by the walk
    result = run("fix", "--site-packages", "--python", python, "--no-cache", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with open(target, "rb") as handle:
        assert handle.read() == FIXED
    listed = run("fix", "--site-packages", "--list-patched", "--python", python, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert b"fakefetch/bad\\xff.py\tpatched" in listed.stdout
    reverted = run("fix", "--site-packages", "--revert", "--python", python, cwd=tmp_path)
    assert reverted.returncode == 0, reverted.stderr
    with open(target, "rb") as handle:
        assert handle.read() == ORIGINAL


def test_the_flake8_plugin_survives_such_names(tmp_path: Path) -> None:
    """flake8 itself cannot print a name that is not UTF-8 (its formatter encodes strictly), so
    that file holds no finding here; the plugin must analyse it and report the others."""
    pytest.importorskip("flake8", reason="flake8 is not installed (a test dependency)")
    plant(tmp_path)
    with open(os.path.join(os.fsencode(tmp_path), UNDECODABLE), "wb") as handle:
        handle.write(b"import mod\n")
    (tmp_path / "good.py").write_bytes(ORIGINAL)
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "LL", "."],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
        env={**os.environ, "LINTLOADER_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert b"Traceback" not in result.stderr, result.stderr
    assert b"./good.py:12:9: LL101" in result.stdout
    assert b"at new\\nline.py:21" in result.stdout  # our message escapes the name
